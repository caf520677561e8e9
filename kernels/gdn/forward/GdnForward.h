// The Gated DeltaNet chunked-prefill forward (GDN.md §2, "the faster algebra") as DSL programs:
//   gdn_cumsum         chunk-local cumsum of g (optionally the gate computed in-kernel: g and β),
//                      grid (HV / cumsumHeads, N, chunks of the longest sequence)
//   gdn_chunk_inverse  per chunk: A₀ = (I + StrictLower(diag(β) Kc Kcᵀ))⁻¹ (gate-free), then
//                      a = Γ ∘ A₀ ∘ β_col and aqk = (Qc Kcᵀ) ∘ Γ (lower-inclusive), both bf16
//                      (both: grid (HV, N, chunks of the longest sequence), one chunk a block)
//   gdn_chunk_forward  the state recurrence and the output, one block per (value head, BV columns of
//                      the state, sequence): grid (HV * V / BV, N),
//                      with Vn = a · (Vc − exp(G) ∘ Kc·H): no W or U in global memory.
// Kernels see a packed batch: T tokens of N sequences delimited by cu_seqlens (a fixed-length batch
// [B, T] is the packed batch with cu_seqlens = 0, T, 2T, ...). Layouts (row-major, contiguous):
//   q, k [T, H*K] bf16    v [T, HV*V] bf16    g, beta [T, HV] f32    cu_seqlens [N+1] i64
//   (in-kernel gate: a, b [T, HV] f32, A_log, dt_bias [HV] f32)
//   scratch: gcum [T, HV] f32, beta (computed) [T, HV] f32, a and aqk [T, HV*64] bf16
//   o [T, HV*V] bf16      initial / final state [N*HV*K, V] f32 (state [K][V] per head), or
//                         [N*HV*V, K] with state_v_first ([V][K] per head)
#ifndef QLA_KERNELS_GDN_FORWARD_GDNFORWARD_H
#define QLA_KERNELS_GDN_FORWARD_GDNFORWARD_H

#include "qla/dsl/Kernel.h"

#include <functional>
#include <memory>
#include <string>

namespace qla::gdn {

struct GdnForwardConfig {
  int64_t H = 0, HV = 0, K = 128, V = 128;
  double scale = 0;            // <= 0: K^-1/2
  bool gateInKernel = false;   // g = −exp(A_log)·softplus(a + dt_bias), β = sigmoid(b)
  bool l2normQK = false;       // q, k ← x·rsqrt(Σx² + 1e-6)
  bool initialState = false;
  bool finalState = false;
  bool stateVFirst = false;    // initial / final states stored [V][K] per head instead of [K][V]
  int64_t BV = 64;             // state columns per block of gdn_chunk_forward (a divisor of V)
  // f32 operands of the state products entering the tensor cores as bf16 hi + lo parts:
  // 0 none (every operand rounded to bf16), 1 Y and the state update's Vn (2 more gemms a chunk),
  // 2 also the state H (4 more gemms a chunk). 1 by default: on the H200 (run 39) 2–10 % faster than 2
  // on every shape measured, with the same error against the float64 reference (o 3.28e-3, state ≤ 1.6e-3
  // at 4x8192 to 1x131072; FLA 3.31e-3 / 2.47e-3), and no spills in either forward tile.
  int64_t precise = 1;
  // Blocks of gdn_chunk_inverse an SM must hold at once (caps its registers; 0: no cap; −1: 3, or 2 at
  // K = 256, where 3 blocks' 168 registers spill and 2 blocks' cap does not). It is latency-bound, so
  // more blocks in flight can pay for a few spills.
  int64_t inverseBlocksPerSM = -1;
  int64_t resolvedInverseBlocksPerSM() const { return inverseBlocksPerSM >= 0 ? inverseBlocksPerSM : K > 128 ? 2 : 3; }
  // gdn_chunk_inverse: chunks one block takes in turn (its grid's z is ⌈chunks / inverse_chunks⌉), and with inverse_stages >= 2 its q and k copies pipelined through TMA rings
  // of that many chunks (the next chunk's loads in flight while this one is inverted).
  int64_t inverseChunks = 1;
  int64_t inverseStages = 1;
  // gdn_chunk_inverse: value heads one block takes in turn (a divisor of HV / H: they share the key
  // head, so q and k are loaded once for them); its grid's x is HV / inverse_heads. −1, with the f16
  // merges (with bf16 ones two heads spill): 4 when HV / H is a multiple of 4 and K <= 128 (167
  // registers, no spills; the inverse 478 → 449 µs at (16,64) 4x8192, run 86), else 2 when HV / H is
  // even (8 % faster than one at (16,32) 4x8192, run 66), else 1.
  int64_t inverseHeads = -1;
  int64_t resolvedInverseHeads() const {
    if (inverseHeads > 0)
      return inverseHeads;
    const int64_t sharing = H > 0 ? HV / H : 1;
    return !inverseF16 ? 1 : sharing % 4 == 0 && K <= 128 ? 4 : sharing % 2 == 0 ? 2 : 1;
  }
  // gdn_chunk_inverse's two merges with f16 operands, one gemm a product, instead of bf16 hi + lo parts of
  // the register operand and a bf16 shared one (two gemms and the parts' conversions a product). f16's 11
  // bits on both operands are as accurate (interpreter, T = 2000, six seeds a gate kind: o 3.35e-3 /
  // 3.24e-3 against 3.39e-3 / 3.25e-3) and the inverse 9 % faster (run 65). Its range (65504) holds the
  // chunk inverse's entries while β‖k‖² ≤ 2 (each step I − βkkᵀ is then a contraction: |A₀ᵢⱼ| ≤ 2), as
  // for L2-normalised keys with β ≤ 1, GDN's inputs; beyond, they grow like (β‖k‖² − 1)^(i − j) and
  // overflow to inf (a and o NaN): inverse_f16 = 0 keeps bf16's range.
  bool inverseF16 = true;
  // The chunk inverse A₀ made whole by one op inside the warps (qla.tri_inverse f16_merges): each warp's
  // diagonal 16x16 block by elimination in registers, then the two merges on mma.sync (f16 operands, f32
  // sums) with the blocks exchanged through 18 KB of scratch and three warpgroup barriers — instead of the
  // merges as DSL gemms (wgmma, each operand shared with stmatrix, fences and barriers between). The same
  // products and roundings as inverse_f16's merges. Not yet run on the GPU: off.
  bool inverseInWarps = false;
  // gdn_chunk_inverse with several value heads a block: Kc Kcᵀ and Qc Kcᵀ (they depend on the key head
  // only) made once for them and stashed in shared memory (qla.stash, 32 KB), each head reading them
  // back in 16-byte pieces instead of making them with two 8-step wgmma groups. Static SASS with
  // inverse_in_warps: the head loop 1602 → 1485 instructions, before it 372 → 523. Not yet timed: off.
  bool inverseProductsOnce = false;
  // The context split's segment length in tokens (a multiple of 64) for the planner of
  // qla::gdn::ChunkForward, 0 for its own choice: a host-side setting (no kernel changes), tunable per
  // shape (qlac tune gdn) like the tiles.
  int64_t splitTokens = 0;
  // gdn_chunk_forward's loads of q, k, v, a and aqk: 1 copies them each chunk (bounded at the sequence
  // end); 2 or more pipelines them through TMA rings of that many chunks (qla-pipeline), reading
  // past the sequence end into the next one (those rows are masked out: an inf or NaN there would
  // still reach this sequence's chunk).
  int64_t stages = 1;
  // L2 prefetches of the gate columns (qla.prefetch): gdn_chunk_forward the next chunk's gcum column
  // (K <= 128), gdn_chunk_inverse its block's heads' gcum and β columns before the first head's work.
  // Strided columns, one element a 128-byte line: their loads wait on DRAM where they are used (run 90:
  // the inverse streams 0.5 GB between gdn_cumsum and the forward, so gcum is no longer in L2). Off: run
  // 91 (H100, (16,32) 4x8192) measured the inverse +3 % and the wide forward +6 % with it.
  bool prefetchGates = false;
  // gdn_chunk_forward where it pipelines its loads (stages >= 2; HV % 4 == 0, no roles; with fuse_inverse
  // the aux role reads its gate and β columns from the ring too):
  // the chunk's gate column through the TMA ring with the chunk's other tiles (a 64 x 4 box of gcum, the
  // head's group of four columns: TMA's rows are 16 bytes at least), read from shared memory, instead of
  // a global load of one element a line whose DRAM latency sits on the chunk's chain (run 92). Run 93
  // (H100, (16,32) 4x8192): wide forward 473.7 -> 433.6 us, calls -4 to -7 %.
  bool gateRing = true;
  // gdn_chunk_forward warp-specialized (issue 4): a producer warpgroup issues the TMA loads, a "state"
  // warpgroup runs the recurrence (Xᵀ, Vnᵀ, Hᵀ) and hands Hᵀ and Vnᵀ (bf16) to an "output" warpgroup
  // (Oᵀ and its store), off the chain. Needs stages >= 2, BV = 64 and no in-kernel L2 norm.
  bool roles = false;
  // gdn_chunk_forward with gdn_chunk_inverse's work inside it (issue 4; FlashInfer's structure): a
  // producer warpgroup issues the TMA loads, an "aux" warpgroup makes each chunk's a and aqk
  // (chunkMatrices) and hands them over through shared-memory rings, up to `stages` chunks ahead of the
  // BV / 64 "state" warpgroups (the recurrence and the output). No a / aqk in global memory, no inverse
  // launch; takes β. Needs stages >= 2, no in-kernel L2 norm, K <= 128.
  bool fuseInverse = false;
  // The fused forward's setmaxnreg budgets a thread (0: the default for BV): their sum over the block's
  // warpgroups is at most the block's share of the register file (65536 / threads, in steps of 8).
  // BV = 64 (3 warpgroups, 168 a thread): 32 / 200 / 256, no spills; BV = 128 (4 warpgroups, 128):
  // 24 / 168 / 160, the state warpgroups spill (they need 232 and the inverse's body 168: 656 > 512).
  // Slower than the two kernels today (docs/warp-specialization.md): an option, not the default. On a
  // split call the inverse still runs for the end and transition runs, and the main run makes a and aqk
  // again.
  int64_t loadsRegs = 0, auxRegs = 0, stateRegs = 0;
  struct RoleRegisters {
    int64_t loads, aux, state;
  };
  RoleRegisters resolvedRoleRegisters() const;
  // gdn_chunk_forward in its state-only form (Kernel::dropLoopOutputs: no o): the segment-end and
  // transition runs of the context split (docs/context-split.md).
  bool stateOnly = false;
  // gdn_chunk_forward as one run of the context split, made by qla-context-split from its scan
  // (docs/context-split.md): 1 the segment ends (from a zero state), 2 the transitions (from the
  // identity, v taken as zero; K = V) — both keep only the final state and take `run_chunks` (how many
  // of a block's last chunks run, per state: gdn_split_windows); 3 the chunks' summed log-gates only
  // (`decays`, [segment][chunk][head], what gdn_split_windows reads). Needs initial and final state.
  int64_t splitRun = 0;
  // gdn_cumsum also writes each chunk's summed log-gate, chunk_totals[(sequence · Z + chunk) · HV + head]
  // (Z chunk slots a sequence, the grid's z): the split_run = 3 table, made in passing (the split's
  // GPU path uses this one: the decays run is a serial loop of loads). A chunk's heads are one row, so
  // a block of several heads stores their totals at once.
  bool chunkTotals = false;
  // Every kernel of the set waits for the grid before it first and lets the next one launch early
  // (programmatic dependent launch, Kernel::dependentLaunch): their launches overlap each other's tails.
  bool dependentLaunch = false;
  // The set's broadcasts of gate and beta vectors read them laid out like the rows or columns of the
  // tile they fill (Kernel::sliceBroadcasts) instead of through shared memory. Run 80: the inverse
  // +19 %, the forward +19 % (more loads, exponentials and registers than the barriers it saves).
  bool sliceBroadcasts = false;
  // The forward's warpgroups exchange gate rows and stage Oᵀ each on its own (Kernel::warpgroupLocal):
  // no block barrier in its loop, so the two warpgroups of the wide tile need not run in step. Run 97
  // (H100): wide forward −7 % at (16,32) and (16,64) 4×8192. No effect on one-warpgroup tiles.
  bool warpgroupLocal = true;
  // The wide forward's warpgroups take turns at issuing their gemm groups (Kernel::warpgroupTurns).
  // Run 99 (H200): +15 %, and racecheck reported 2 hazards on that build (not yet explained): off, for
  // experiments only.
  bool warpgroupTurns = false;
  // gdn_chunk_forward's Hᵀ enters its products (Hᵀ·Kcᵀ, Hᵀ·Qcᵀ) from shared memory (one stmatrix of its
  // 16-bit parts a chunk) instead of from registers, and the output is made before the update
  // (share_state_operand); and Hᵀ (f32) is parked in shared memory from its conversion to the update
  // (stash_state: qla.stash, each thread its own 16-byte pieces, no barrier to read back), freeing its
  // registers for the chunk's other products. For K = 256, where Hᵀ is 128 registers a thread: the
  // register form spills 476 B and ptxas serialises its wgmma (C7512); share_state_operand alone 36 B;
  // both none, 246 registers, wgmma not serialised (ptxas 13.0). −1: both on where K > 128 (no roles or
  // fuse_inverse). Chosen for the spills, not yet timed on a GPU (session 19 had no device).
  int64_t shareStateOperand = -1, stashState = -1;
  bool resolvedShareStateOperand() const {
    return shareStateOperand >= 0 ? shareStateOperand != 0 : K > 128 && !roles && !fuseInverse;
  }
  bool resolvedStashState() const { return stashState >= 0 ? stashState != 0 : K > 128 && !roles && !fuseInverse; }
  static constexpr int64_t kChunk = 64;

  /// Throws qla::Error naming the field and what is supported.
  void validate() const;
  double resolvedScale() const;
};

struct GdnForwardKernels {
  std::unique_ptr<dsl::Kernel> cumsum, inverse, forward;
};

/// Parses "H=16,HV=32,K=128,V=128,gate_in_kernel=1,..." over the defaults (H, HV required).
GdnForwardConfig parseGdnForwardConfig(const std::string &settings);
/// `config` with `settings` applied over it, validated.
GdnForwardConfig withGdnSettings(GdnForwardConfig config, const std::string &settings);

/// A new kernel of the GDN forward set, with the set's kernel-wide settings (dependent_launch,
/// slice_broadcasts).
std::unique_ptr<dsl::Kernel> newGdnKernel(const GdnForwardConfig &c, const std::string &name);
std::unique_ptr<dsl::Kernel> buildGdnOffsets(const GdnForwardConfig &c);
std::unique_ptr<dsl::Kernel> buildGdnCumsum(const GdnForwardConfig &c);
/// Value heads one gdn_cumsum block takes (its grid's x is HV over that).
int64_t cumsumHeads(const GdnForwardConfig &c);
std::unique_ptr<dsl::Kernel> buildGdnChunkInverse(const GdnForwardConfig &c);
std::unique_ptr<dsl::Kernel> buildGdnChunkForward(const GdnForwardConfig &c);

/// One chunk's matrices for gdn_chunk_forward (bf16, C×C, rows at or past `valid` zero), from the chunk's
/// q and k tiles and its gate and β columns (C×1, f32): aqk = (Qc Kcᵀ) ∘ Γ, handed to `useAqk` before
/// a = Γ ∘ A₀ ∘ β_col is made (and handed to `useA`). gdn_chunk_inverse stores them; the forward with
/// fuse_inverse makes them in its aux role. `c` gives the inverse's merge precision (inverse_f16).
/// Kc Kcᵀ and Qc Kcᵀ of a chunk (f32, C×C, stashed: qla.stash), when made once for several value heads
/// of one key head.
struct ChunkProducts {
  dsl::Tile kk, qk;
};
void chunkMatrices(dsl::Kernel &k, const GdnForwardConfig &c, const dsl::Tile &qc, const dsl::Tile &kc,
                   const dsl::Tile &g, const dsl::Tile &beta, const dsl::Scalar &valid,
                   const std::function<void(const dsl::Tile &)> &useAqk,
                   const std::function<void(const dsl::Tile &)> &useA, const ChunkProducts *products = nullptr);
/// The exact context split's correction scan over each sequence's segments (docs/context-split.md).
std::unique_ptr<dsl::Kernel> buildGdnSplitCorrect(const GdnForwardConfig &c);
/// Per (value head, segment) of a split batch: where its end run and its transition run start (the
/// truncated split's warm-up window from the summed log-gates, docs/context-split.md).
std::unique_ptr<dsl::Kernel> buildGdnSplitWindows(const GdnForwardConfig &c);
/// The segment batch of a split fixed-length batch (segment cu_seqlens, first segments), on the device.
std::unique_ptr<dsl::Kernel> buildGdnSplitOffsets(const GdnForwardConfig &c);
GdnForwardKernels buildGdnForward(const GdnForwardConfig &c);

} // namespace qla::gdn

#endif

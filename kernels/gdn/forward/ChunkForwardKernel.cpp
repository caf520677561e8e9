// gdn_chunk_forward: per (value head, BV columns of the state, sequence), over the sequence's chunks,
// with the state held transposed, Hᵀ (BV×K, f32), so that every product has the f32 operand as A and
// wgmma reads it from registers (no shared-memory round trip on the recurrence):
//   Xᵀ  = Hᵀ·Kcᵀ              (G along columns: the chunk's tokens)
//   Vnᵀ = Vcᵀ·aᵀ − (Xᵀ ∘ exp(G)ᵀ)·aᵀ   (a = Γ ∘ A₀ ∘ β_col from gdn_chunk_inverse, or made here with
//                                      fuse_inverse; Γ_ij = exp(G_i − G_j);
//                                      Vc, bf16, enters the tensor cores exactly from shared memory)
//   Oᵀ  = scale·[(Hᵀ·Qcᵀ) ∘ exp(G)ᵀ + Vnᵀ·aqkᵀ]   (aqk = (Qc Kcᵀ) ∘ Γ, lower-inclusive)
//   Hᵀ ← exp(G_last)·Hᵀ + (Vnᵀ ∘ exp(G_last − G)ᵀ)·Kc
// Columns past the sequence end hold zeros (stages = 1: bounded copies) or the next sequence's tokens
// (stages >= 2: whole chunks through TMA rings); Vnᵀ ∘ exp(G_last − G)ᵀ is masked to zero there (the
// gate row loads 0 past the end, and with positive log-gates exp(G_last − 0) could overflow: inf · 0
// would poison H), so they add nothing to H; they are not stored.
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Normalize.h"

#include <functional>
#include <optional>

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalar;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnChunkForward(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  const int64_t K = c.K, V = c.V, BV = c.BV, slices = V / BV;
  auto k = newGdnKernel(c, "gdn_chunk_forward");
  if (c.warpgroupLocal && !c.roles && !c.fuseInverse)
    k->warpgroupLocal();
  if (c.warpgroupTurns && !c.roles && !c.fuseInverse && c.BV > 64)
    k->warpgroupTurns();
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto q = k->tensor("q", {-1, c.H * K}, DType::bf16);
  auto keys = k->tensor("k", {-1, c.H * K}, DType::bf16);
  auto v = k->tensor("v", {-1, c.HV * V}, DType::bf16);
  auto gcum = k->tensor("gcum", {-1, c.HV}, DType::f32);
  // With fuse_inverse the aux role makes a and aqk from β (gdn_chunk_inverse's body); else they are inputs.
  std::optional<dsl::Tensor> betaIn, aIn, aqkIn;
  if (c.fuseInverse) {
    betaIn = k->tensor("beta", {-1, c.HV}, DType::f32);
  } else {
    aIn = k->tensor("a", {-1, c.HV * C}, DType::bf16);
    aqkIn = k->tensor("aqk", {-1, c.HV * C}, DType::bf16);
  }
  auto o = k->tensor("o", {-1, c.HV * V}, DType::bf16);
  std::unique_ptr<dsl::Tensor> h0, ht;
  // States are [K][V] per head, or [V][K] with state_v_first (then read and written transposed).
  const int64_t stateCols = c.stateVFirst ? K : V;
  if (c.initialState)
    h0 = std::make_unique<dsl::Tensor>(k->tensor("initial_state", {-1, stateCols}, DType::f32));
  if (c.finalState)
    ht = std::make_unique<dsl::Tensor>(k->tensor("final_state", {-1, stateCols}, DType::f32));
  if (c.roles) // the loads, the recurrence and the output each in a warpgroup of their own
    k->roles({{"loads", 1, 40, true}, {"state", 1, 232}, {"output", 1, 232}});
  else if (c.fuseInverse) // the loads; each chunk's a and aqk, ahead of the chain; the recurrence and the output
    k->roles({{"loads", 1, c.resolvedRoleRegisters().loads, true},
              {"aux", 1, c.resolvedRoleRegisters().aux},
              {"state", BV / 64, c.resolvedRoleRegisters().state}});
  else
    k->threads(128 * (BV / 64)); // one warpgroup per 64 state columns
  k->grid(c.HV * slices, -1);
  // With roles, `body` runs in `role` (with fuse_inverse the state role also makes the output); without,
  // in every warpgroup.
  auto in = [&](const char *role, const std::function<void()> &body) {
    if (c.roles)
      k->inRole(role, body);
    else if (c.fuseInverse)
      k->inRole(std::string(role) == "output" ? "state" : role, body);
    else
      body();
  };

  Index hv = k->blockId(0) / slices, vb = k->blockId(0) - hv * slices, n = k->blockId(1), h = hv / (c.HV / c.H);
  Index vcol = hv * V + vb * BV; // first column of this block's slice of v and o
  Index head = n * c.HV + hv;
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  // States are [K][V] per head, or [V][K] with state_v_first: Hᵀ is read transposed or as is.
  auto loadState = [&] {
    return c.stateVFirst ? k->load(*h0, {head * V + vb * BV, 0}, {BV, K})
                         : k->loadTransposed(*h0, {head * K, vb * BV}, {BV, K});
  };
  Tile state;
  in("state", [&] {
    state = c.initialState ? loadState() : k->fill({BV, K}, DType::f32, 0.0);
  });
  const double scale = c.resolvedScale();
  auto toBf16 = [&](const Tile &t) {
    return k->map({t}, DType::bf16, [](const Scalars &x) { return x[0].to(DType::bf16); });
  };
  auto loPart = [&](const Tile &t, const Tile &hi) {
    return k->map({t, hi}, DType::bf16, [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
  };
  auto zeros = [&](int64_t rows, int64_t cols) { return k->fill({rows, cols}, DType::f32, 0.0); };

  // Pipelined copies read whole chunks: past the sequence end they read the next sequence (or zeros
  // past the tensor's end: TMA), which the masks below keep out of this sequence's results. (The L2 norm's
  // register loads of q and k keep their bounds: keyTile.)
  auto bounded = [&](std::vector<Index> bounds) { return c.stages > 1 ? std::vector<Index>{} : bounds; };
  // A scan (qla.scan: Hᵀ ↦ Hᵀ·M_c + U_c, v the input term), so that qla-context-split can make the
  // context split's runs from this kernel.
  // With gate_ring the chunk's gate column comes through the TMA ring with its other tiles: TMA needs rows
  // of 16 bytes, so the box is the columns of the head's group of four, read from shared memory (a global
  // load of the column, one element a line, put a DRAM round trip on each chunk's chain: run 92).
  const bool gateRing = c.gateRing && c.stages > 1 && !c.roles && c.HV % 4 == 0;
  Index hvGroup = hv / 4 * 4;
  Tile last = k->scan(0, (eos - bos + (C - 1)) / C, c.stages, state, {"v"}, [&](Index chunk, const Tile &Ht) {
    Index t0 = bos + chunk * C;
    Scalar valid = k->scalar(eos - t0); // tokens of this chunk inside the sequence
    std::optional<Tile> gates, betas;
    if (gateRing)
      gates = k->copy(gcum, {t0, hvGroup}, {C, 4});
    if (gateRing && c.fuseInverse) // the aux's β column the same way
      betas = k->copy(*betaIn, {t0, hvGroup}, {C, 4});
    // Loads into registers first, so their latency overlaps the copies (which wait once). With roles,
    // each computing role loads the gates itself.
    auto gateRow = [&] {
      if (!gates)
        return k->loadTransposed(gcum, {t0, hv}, {1, C}, {eos, c.HV});
      // Past the sequence end the box holds the next sequence's gates: zero, as the bounded load reads.
      Tile raw = k->read(*gates, {0, hv - hvGroup}, {1, C}, /*transpose=*/true);
      return k->map({raw, k->iota({1, C}, 1)}, DType::f32,
                    [&](const Scalars &e) { return select(e[1] < valid, e[0], 0.0); });
    };
    Tile gRow, gRowOut;
    in("state", [&] { gRow = gateRow(); });
    if (c.roles)
      k->inRole("output", [&] { gRowOut = gateRow(); });
    else
      gRowOut = gRow;
    // The next chunk's gate column into L2 now: its row loads (one element a 128-byte line) would stall
    // that chunk's first broadcast on a DRAM round trip (the inverse ran in between and evicted gcum).
    // Not at K = 256, where the forward spills already and the prefetch's address adds to it.
    if (c.prefetchGates && !c.roles && !c.fuseInverse && K <= 128)
      k->prefetch(gcum, {t0 + C, hv}, {C, 1}, {eos, c.HV});
    // The chunk's summed log-gate: how fast the state's past fades (declared for the context split).
    // With roles it is loaded (an L2 hit after the ring's copy, not needed until the update): the scan's
    // decay is read in every role, and a scalar read from a ring slot cannot cross roles.
    Scalar gLast = k->scanDecay(gates && !c.fuseInverse ? k->readScalar(*gates, {k->min(eos - t0, C) - 1, hv - hvGroup})
                                                        : k->loadScalar(gcum, {k->min(t0 + (C - 1), eos - 1), hv}));
    Tile qc = keyTile(*k, q, {t0, h * K}, {C, K}, {eos, c.H * K}, c.l2normQK, c.stages > 1);
    Tile kc = keyTile(*k, keys, {t0, h * K}, {C, K}, {eos, c.H * K}, c.l2normQK, c.stages > 1);
    Tile ag, p;
    if (c.fuseInverse) {
      k->inRole("aux", [&] {
        // Past the sequence end the boxes hold the next sequence's rows: chunkMatrices masks those rows.
        Tile g = gates ? k->read(*gates, {0, hv - hvGroup}, {C, 1}) : k->load(gcum, {t0, hv}, {C, 1}, {eos, c.HV});
        Tile beta = betas ? k->read(*betas, {0, hv - hvGroup}, {C, 1}) : k->load(*betaIn, {t0, hv}, {C, 1}, {eos, c.HV});
        chunkMatrices(*k, c, qc, kc, g, beta, k->scalar(eos - t0), [&](const Tile &t) { p = k->share(t); },
                      [&](const Tile &t) { ag = k->share(t); });
      });
    } else {
      ag = k->copy(*aIn, {t0, hv * C}, {C, C}, bounded({eos, c.HV * C}));
      p = k->copy(*aqkIn, {t0, hv * C}, {C, C}, bounded({eos, c.HV * C}));
    }
    Tile vc = k->copy(v, {t0, vcol}, {C, BV}, bounded({eos, c.HV * V}));
    Tile cols = k->iota({BV, C}, 1); // (untagged: qla-assign-roles gives it to its reader, the state)
    // The gate factors once a chunk, per column (64 exponentials, not one per element of each tile that
    // uses them): exp(G_j), and exp(G_last − G_j) for the state update.
    auto expRow = [&](const Tile &g) { return k->map({g}, DType::f32, [](const Scalars &e) { return exp(e[0]); }); };
    Tile eRow, dRow, eRowOut;
    in("state", [&] {
      eRow = expRow(gRow);
      dRow = k->map({gRow}, DType::f32, [&](const Scalars &e) { return exp(gLast - e[0]); });
    });
    if (c.roles)
      k->inRole("output", [&] { eRowOut = expRow(gRowOut); });
    else
      eRowOut = eRow;
    auto columns = [&](const Tile &row) { return k->broadcast(row, {BV, C}, {0, 1}); };

    // With `precise`, Xᵀ ∘ exp(G)ᵀ and the state update's Vn (1), and H (2) enter the tensor cores as
    // bf16 hi + lo parts: their rounding was the largest error term at long sequences (interpreter,
    // T = 3000: o 4.2e-3 with none, 3.4e-3 with the first two, 2.9e-3 with all three).
    // a·b, plus lo·b when lo is given: the bf16 hi + lo form of an f32 operand A.
    auto product = [&](const Tile &a, const std::optional<Tile> &lo, const Tile &b, Tile acc, dsl::Transpose t) {
      Tile r = k->gemm(a, b, acc, t);
      return lo ? k->gemm(*lo, b, r, t) : r;
    };
    Tile hHi, xT, uT, vnT, vnHi, next;
    std::optional<Tile> hLo, parked;
    in("state", [&] {
      hHi = toBf16(Ht);
      if (c.precise >= 2)
        hLo = loPart(Ht, hHi);
      if (c.resolvedStashState()) // Hᵀ's f32 registers free until the update needs them (K = 256: 128 a thread)
        parked = k->stash(Ht);
      if (c.resolvedShareStateOperand()) { // Hᵀ's 16-bit parts enter the tensor cores from shared memory
        hHi = k->share(hHi);
        if (hLo)
          hLo = k->share(*hLo);
      }
      // The gemms are asynchronous (qla-overlap-gemms): the ones written one after another without
      // reading each other's results run together, and the elementwise work written after them that
      // reads none of their results overlaps them.
      xT = product(hHi, hLo, kc, zeros(BV, C), {.b = true});
    });
    Tile qhT;
    in("output", [&] { qhT = product(hHi, hLo, qc, zeros(BV, C), {.b = true}); });
    in("state", [&] {
      uT = k->gemm(vc, ag, zeros(BV, C), {.a = true, .b = true});
      Tile xe = k->map({xT, columns(eRow)}, DType::f32, [](const Scalars &e) { return -(e[1] * e[0]); });
      Tile xeHi = toBf16(xe);
      vnT = product(xeHi, c.precise >= 1 ? std::optional<Tile>(loPart(xe, xeHi)) : std::nullopt, ag, uT, {.b = true});
    });
    auto update = [&] {
      in("state", [&] {
        Tile decayed = k->map({parked ? k->unstash(*parked) : Ht}, DType::f32,
                              [&](const Scalars &e) { return e[0] * exp(gLast); });
        Tile vdT = k->map({vnT, columns(dRow), cols}, DType::f32, [&](const Scalars &e) {
          return select(e[2] < valid, e[0] * e[1], 0.0);
        });
        Tile vdHi = toBf16(vdT);
        next = product(vdHi, c.precise >= 1 ? std::optional<Tile>(loPart(vdT, vdHi)) : std::nullopt, kc, decayed, {});
        if (c.roles) // handed to the output role (without roles it is made where it is used, below)
          vnHi = toBf16(vnT);
      });
    };
    auto output = [&] {
      in("output", [&] {
        // Vnᵀ·aqkᵀ accumulates onto the decayed Hᵀ·Qcᵀ (one accumulator fewer).
        Tile qhDecayed = k->map({qhT, columns(eRowOut)}, DType::f32, [](const Scalars &e) { return e[1] * e[0]; });
        Tile oT = k->gemm(c.roles ? vnHi : toBf16(vnT), p, qhDecayed, {.b = true});
        Tile outT = k->map({oT}, DType::bf16, [&](const Scalars &e) { return (scale * e[0]).to(DType::bf16); });
        k->storeTransposed(outT, o, {t0, vcol}, {eos, c.HV * V});
      });
    };
    // With the state operand shared, Oᵀ is made before the update, so that Hᵀ·Qcᵀ's accumulator is dead
    // while the update's (Hᵀ itself) is live: at K = 256 Hᵀ alone is 128 registers a thread.
    if (c.resolvedShareStateOperand()) {
      output();
      update();
    } else {
      update();
      output();
    }
    return next;
  });
  in("state", [&] {
    if (c.finalState && c.stateVFirst)
      k->store(last, *ht, {head * V + vb * BV, 0});
    else if (c.finalState)
      k->storeTransposed(last, *ht, {head * K, vb * BV});
  });
  if (c.stateOnly)
    k->dropLoopOutputs();
  if (c.splitRun)
    k->contextSplitRun(c.splitRun == 1 ? "ends" : c.splitRun == 2 ? "transition" : "decays", c.HV);
  return k;
}

} // namespace qla::gdn

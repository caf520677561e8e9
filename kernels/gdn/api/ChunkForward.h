// qla::gdn::ChunkForward — the chunked GDN forward with flash-linear-attention's semantics
// (chunk_gated_delta_rule), on device tensors, on the caller's stream. A call allocates nothing
// and never synchronises, so it can be captured in a CUDA graph; scratch comes from the caller
// (workspaceBytes). MLIR-free: the kernels come from `qlac compile` folders or from the JIT
// (ChunkForwardJit.h).
#ifndef QLA_KERNELS_GDN_API_CHUNKFORWARD_H
#define QLA_KERNELS_GDN_API_CHUNKFORWARD_H

#include "gdn/api/SplitPlan.h"
#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/Json.h"

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace qla::gdn {

/// A varlen call's context split, planned on the host from its cu_seqlens (a plan step, like
/// FlashInfer's plan/run): the segment tables go to the device once, here, so the calls that use it
/// allocate nothing and stay capturable. ChunkForward::planVarlen makes it; every call with the same
/// cu_seqlens (and a workspace of workspaceBytes(split)) can pass it. It must outlive the calls and the
/// CUDA graphs captured with it (they hold its tables' address). Whether a call splits comes from the
/// plan; the mode (exact, threshold) from the call's policy.
struct GdnVarlenSplit {
  SplitPlan plan;            // segment cu_seqlens and each sequence's first segment (empty: no split)
  std::vector<int64_t> cuSeqlens; // the call's, as planned
  int64_t mostSegments = 0;  // of one sequence
  int64_t chunkSlots = 0;    // chunks of the longest segment
  int64_t firstOffset = 0;   // bytes from the tables' start to the first segments (256-aligned)
  DeviceBuffer tables;       // [S + 1] segment cu_seqlens, then at firstOffset [N + 1] first segments (i64)
  bool split() const { return plan.split(); }
  int64_t segments() const { return split() ? static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1 : 0; }
  int64_t sequences() const { return static_cast<int64_t>(cuSeqlens.size()) - 1; }
};

/// Device tensors of one call. Unused ones stay default (data == 0). Contiguous, row-major.
struct ChunkForwardTensors {
  TensorArg q, k;           // [B, T, H, K] bf16
  TensorArg v;              // [B, T, HV, V] bf16
  TensorArg g, beta;        // [B, T, HV] f32 (g log-space), unless the gate is computed in-kernel
  TensorArg a, b;           // [B, T, HV] f32, gate in-kernel: g = −exp(A_log)·softplus(a + dt_bias), β = sigmoid(b)
  TensorArg aLog, dtBias;   // [HV] f32, gate in-kernel
  TensorArg initialState;   // [N, HV, K, V] f32 ([N, HV, V, K] with state_v_first), when built with it
  TensorArg finalState;     // [N, HV, K, V] f32 ([N, HV, V, K] with state_v_first), when built with it
  TensorArg cuSeqlens;      // [N + 1] i64, varlen (B == 1); values non-decreasing from 0 to T (not read here)
  // Optional host copy of cu_seqlens (N + 1 values), as engines keep one: when given, its values are
  // validated (0, non-decreasing, ending at T) and the longest sequence sizes the grids instead of T.
  const int64_t *hostCuSeqlens = nullptr;
  TensorArg o;              // [B, T, HV, V] bf16
  // Optional: this call's context-split policy (off, exact, a threshold, a segment length) instead of
  // the one set on the ChunkForward; the workspace must then be sized with the same policy.
  const SplitPolicy *split = nullptr;
  // Optional, varlen calls: the split planned for these cu_seqlens (ChunkForward::planVarlen; needs
  // hostCuSeqlens with the same values). Without it a varlen call runs unsplit.
  const GdnVarlenSplit *varlenSplit = nullptr;
};

/// What the kernels were built for (read from their manifests).
struct ChunkForwardShape {
  int64_t H = 0, HV = 0, K = 0, V = 0, BV = 0;
  bool gateInKernel = false, initialState = false, finalState = false;
  bool stateVFirst = false; // states stored [V][K] per head
  // Chunks and value heads a block of gdn_chunk_inverse takes; 0: its manifest says (the chunks in its
  // config, else 1; the heads from its grid). A nonzero inverseHeads must match the build's grid.
  int64_t inverseChunks = 0, inverseHeads = 0;
};

/// The kernels: manifest + cubin each.
struct ChunkForwardImages {
  static constexpr std::array<const char *, 4> kNames = {"gdn_offsets", "gdn_cumsum", "gdn_chunk_inverse",
                                                         "gdn_chunk_forward"};
  std::array<Json, 4> manifests;
  std::array<std::string, 4> cubins;
  /// Optional: gdn_chunk_forward built with a wider value tile (BV, from its manifest's config), for the
  /// planner (pickForwardTile). Folder name: kWideName.
  static constexpr const char *kWideName = "gdn_chunk_forward_wide";
  Json wideManifest;
  std::string wideCubin;
  /// Optional: the context split's kernels (docs/context-split.md), all or none; with them a call whose
  /// sequences leave SMs idle runs split (planContextSplit). The state and transition forwards are
  /// gdn_chunk_forward's split runs (split_run = 1, 2: qla-context-split), the cumsum the one with chunk totals.
  static constexpr std::array<const char *, 6> kSplitNames = {
      "gdn_split_offsets", "gdn_chunk_forward_state", "gdn_chunk_forward_transition", "gdn_split_correct",
      "gdn_split_cumsum",  "gdn_split_windows"};
  std::array<Json, 6> splitManifests;
  std::array<std::string, 6> splitCubins;
  bool hasSplit() const { return !splitCubins[0].empty(); }
};

/// The planner's choice between value tiles of the state kernel: the wide tile (BV = `wide`, two
/// warpgroups a block sharing q, k and the chunk matrices, one block an SM) when its grid — sequences ×
/// HV × V / BV blocks — still covers at least three quarters of the SMs; else the narrow one (twice the
/// blocks, for batches too small to fill the GPU). Measured on the H200, (16,32) 4x8192: 629 µs at
/// BV = 128 (128 blocks) against 723 µs at BV = 64.
int64_t pickForwardTile(int64_t narrow, int64_t wide, int64_t sequences, int64_t HV, int64_t V, int64_t sms);

class ChunkForward {
public:
  ChunkForward(ChunkForwardImages images, ChunkForwardShape shape);
  /// Loads DIR/<kernel>/{manifest.json,kernel.cubin} for each kernel as written by `qlac compile`.
  static ChunkForward fromDirectory(const std::filesystem::path &dir, ChunkForwardShape shape);

  const ChunkForwardShape &shape() const { return shape_; }
  /// The value tile (BV) of the state kernel a call over `sequences` sequences runs with, judged against
  /// the SM count of the call's split policy when one is given (SplitPolicy::sms, 132 unless set, like
  /// the planner's), else the device's.
  int64_t forwardTile(int64_t sequences, const SplitPolicy *call = nullptr) const;
  /// Segments a fixed-length call of `sequences` x `tokensEach` tokens is cut into (1 each: no split).
  /// Splits only with the split kernels loaded, K = V, states [K][V], built with initial and final state.
  /// With the split kernels loaded and no SM count in the split policy, this (and workspaceBytes) asks
  /// the driver for device 0's SM count.
  int64_t segmentsPerSequence(int64_t sequences, int64_t tokensEach, const SplitPolicy *policy = nullptr) const;
  /// How the context split is planned (planContextSplit): off, a given segment length, the GPU's SM count
  /// (0: the device's), exact or truncated at a log-gate threshold.
  void setSplitPolicy(const SplitPolicy &policy) { splitPolicy_ = policy; }
  const SplitPolicy &splitPolicy() const { return splitPolicy_; }
  /// Scratch bytes for a call over `tokens` tokens (B·T) and `sequences` sequences (N).
  size_t workspaceBytes(int64_t tokens, int64_t sequences, const SplitPolicy *policy = nullptr) const;
  /// The context split of a varlen call with these cu_seqlens (N + 1 values from 0, non-decreasing):
  /// only sequences long enough are cut (planContextSplit), when the call's blocks leave SMs idle. Its
  /// tables are uploaded here (needs a GPU when it splits); no split: an empty plan, no device memory.
  GdnVarlenSplit planVarlen(const std::vector<int64_t> &cuSeqlens, const SplitPolicy *policy = nullptr) const;
  /// planVarlen without the upload: the host tables alone (sizing, tests); needs no GPU when the policy
  /// names the SM count. A call cannot run with it (no device tables).
  GdnVarlenSplit planVarlenOnHost(const std::vector<int64_t> &cuSeqlens, const SplitPolicy *policy = nullptr) const;
  /// Scratch bytes for a varlen call with that split.
  size_t workspaceBytes(const GdnVarlenSplit &split) const;
  /// Throws qla::Error("gdn chunk_forward: argument 'x': expected …, got …") for the first argument
  /// that does not fit; needs no GPU.
  void validate(const ChunkForwardTensors &t) const;
  /// Loads every kernel's module on the current context (what the first call does otherwise): before a
  /// CUDA-graph capture, or to time loading. Needs a GPU.
  void load();
  /// validate(), then the kernels on `stream`. Loads the kernels on the first call.
  void operator()(const ChunkForwardTensors &t, CUdeviceptr workspace, size_t workspaceBytes,
                  CUstream stream = nullptr);

  /// A dry run, for testing a call's orchestration without a GPU: instead of loading and launching,
  /// each launch is checked against its kernel's manifest (KernelSignature::validate: tensor count,
  /// dtypes, shapes, null or misaligned addresses) and reported to `record` (the kernel's folder name,
  /// its tensors, its grid); the split's memset is reported as "memset32" (the tensor; grid[0] the 32-bit
  /// pattern) and its final-state copies as "copy" (destination, source: f32 ranges). Device addresses
  /// may be fake, and a varlen plan's tables need not be on the device. The split policy must name the
  /// SM count.
  using LaunchRecorder =
      std::function<void(const std::string &kernel, const std::vector<TensorArg> &tensors, std::array<uint32_t, 3> grid)>;
  void dryRun(LaunchRecorder record) { dryRun_ = std::move(record); }

private:
  void runSplit(const ChunkForwardTensors &t, const struct ChunkForwardLayout &layout, CUdeviceptr workspace,
                CUstream stream, const GdnVarlenSplit *varlen);
  bool splitEligible() const;
  /// One launch: the kernel `slot` (loaded from `manifest`), or, in a dry run, its signature checked and
  /// the launch recorded under `name`.
  void launch(const char *name, const Json &manifest, std::unique_ptr<CompiledKernel> &slot,
              const std::vector<TensorArg> &tensors, CUstream stream, std::array<uint32_t, 3> grid);
  /// The call's policy: its own when it gives one, else the object's.
  const SplitPolicy &policyFor(const SplitPolicy *call) const { return call ? *call : splitPolicy_; }

  ChunkForwardImages images_;
  ChunkForwardShape shape_;
  std::array<std::unique_ptr<CompiledKernel>, 4> loaded_;
  std::unique_ptr<CompiledKernel> wide_;
  std::array<std::unique_ptr<CompiledKernel>, 6> split_;
  int64_t wideBV_ = 0; // 0: no wide build
  int64_t inverseChunks_ = 1, inverseHeads_ = 1; // chunks and value heads a block of gdn_chunk_inverse takes
  uint32_t inverseGridZ(uint32_t chunks) const {
    return static_cast<uint32_t>((chunks + inverseChunks_ - 1) / inverseChunks_);
  }
  int64_t sms_ = 0;    // of the current device, read on the first call
  SplitPolicy splitPolicy_{.sms = 0};
  LaunchRecorder dryRun_;
};

} // namespace qla::gdn

#endif

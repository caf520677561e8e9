// The context-split planner (issue 5, docs/context-split.md): which sequences of a call to cut into
// segments, and how long the segments are. MLIR-free; a pure function of the call's shape and the GPU.
#ifndef QLA_KERNELS_GDN_API_SPLITPLAN_H
#define QLA_KERNELS_GDN_API_SPLITPLAN_H

#include <cstdint>
#include <vector>

namespace qla::gdn {

struct SplitPlan {
  /// Segment boundaries in tokens, as cu_seqlens of the segment batch (empty: no split).
  std::vector<int64_t> segmentCuSeqlens;
  /// For each sequence, its first segment (sequence i covers segments [first[i], first[i + 1])).
  std::vector<int64_t> firstSegment;
  int64_t segmentTokens = 0;
  bool split() const { return !segmentCuSeqlens.empty(); }
};

struct SplitPolicy {
  int64_t sms = 132;           // streaming multiprocessors of the GPU
  int64_t blocksPerSm = 2;     // state-kernel blocks one SM holds (BV = 64: two)
  int64_t minSegmentChunks = 8; // a segment of fewer chunks costs more in passes than it saves
  int64_t segmentTokens = 0;   // > 0: this length (a multiple of 64), overriding the choice (splits even a full GPU)
  // > 0: the length (a multiple of 64) when the planner decides to split (a tuned split_tokens): the
  // decision stays the planner's, only its length is replaced.
  int64_t segmentTokensWhenSplit = 0;
  // The fewest segments the planner's own length cuts a sequence into. Heads whose gates barely decay
  // (in either mode) take three state passes over a segment (end, transition, main): with two segments
  // that is slower than no split (H200, (16,64) 1x32768: 3.60 ms split exact against 3.02 unsplit;
  // (2,8) 8x1024 0.125 split in two against 0.111 unsplit, runs 23, 27-28, when exact mode took every
  // transition).
  // When at most half the slots are busy and filling them would take fewer segments than this, the
  // planner cuts into bit_ceil(minSegments) segments instead (each still minSegmentChunks long).
  int64_t minSegments = 3;
  bool enabled = true;
  // Truncated mode: a segment whose last chunks' summed log-gate reaches this (≤ 0) starts from its end
  // over those chunks alone; what it leaves out fades by at least e^threshold. Heads that do not reach it
  // within the segment run exact (the segment's transition and the correction).
  double logGateThreshold = -10.0;
  // Exact mode: the same, at `exactLogGateFloor` (≤ −88; −inf: every head's whole-segment transition).
  // What a window at −88 leaves out is the entering state times a decay of at most e^-88 ≈ 6e-39 (the
  // delta rule's factors I − β k kᵀ have norm ≤ 1 for β‖k‖² ≤ 2): below f32's smallest normal number
  // relative to the state, so the result equals the full transition's to f32 rounding, unless the state
  // shrinks by more than 1e31 across the window. Heads whose gates never fall that far (zero decay) take
  // their transitions as before; strongly gated heads cost little more than truncated mode.
  double exactLogGateFloor = -88.0;
  bool exact = false;
};

/// The state kernel has sequences × HV × V / BV blocks; when they leave SMs idle (fewer than
/// sms × blocksPerSm), sequences at least minSegments segments long are cut into segments of one length,
/// chosen so that the segment batch fills the GPU once (a multiple of the 64-token chunk; the shortest
/// one that gives the longest sequence that many segments). `cuSeqlens` are the call's sequence offsets
/// (N + 1 values from 0).
SplitPlan planContextSplit(const std::vector<int64_t> &cuSeqlens, int64_t HV, int64_t V, int64_t BV,
                           const SplitPolicy &policy = {});

} // namespace qla::gdn

#endif

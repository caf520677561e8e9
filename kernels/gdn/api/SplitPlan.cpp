#include "gdn/api/SplitPlan.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace qla::gdn {

namespace {
constexpr int64_t kChunk = 64;
int64_t chunksOf(int64_t tokens) { return (tokens + kChunk - 1) / kChunk; }
} // namespace

SplitPlan planContextSplit(const std::vector<int64_t> &cu, int64_t HV, int64_t V, int64_t BV, const SplitPolicy &policy) {
  if (cu.size() < 2 || cu.front() != 0 || HV <= 0 || BV <= 0 || V % BV != 0)
    throw Error(fmt::format("gdn split plan: expected cu_seqlens of at least two offsets from 0, HV > 0 and BV "
                            "dividing V, got {} offsets, HV = {}, V = {}, BV = {}",
                            cu.size(), HV, V, BV));
  if (!policy.exact && !(policy.logGateThreshold <= 0))
    throw Error(fmt::format("gdn split plan: the log-gate threshold must be <= 0 (a summed log-gate; -10 keeps what "
                            "fades by e^-10), got {}",
                            policy.logGateThreshold));
  if (policy.exact && !(policy.exactLogGateFloor <= -88))
    throw Error(fmt::format("gdn split plan: the exact mode's log-gate floor must be <= -88 (what fades by e^-88 is "
                            "below f32's normal range; -inf takes every transition), got {}",
                            policy.exactLogGateFloor));
  for (int64_t length : {policy.segmentTokens, policy.segmentTokensWhenSplit})
    if (length < 0 || length % kChunk != 0)
      throw Error(fmt::format("gdn split plan: segment length {} must be a multiple of {}", length, kChunk));
  SplitPlan plan;
  const int64_t n = static_cast<int64_t>(cu.size()) - 1, perSequence = HV * (V / BV);
  const int64_t capacity = policy.sms * policy.blocksPerSm;
  if (!policy.enabled || (policy.segmentTokens == 0 && n * perSequence >= capacity))
    return plan;
  int64_t totalChunks = 0, longest = 0;
  for (int64_t i = 0; i < n; ++i) {
    totalChunks += chunksOf(cu[i + 1] - cu[i]);
    longest = std::max(longest, cu[i + 1] - cu[i]);
  }
  const int64_t given = policy.segmentTokens ? policy.segmentTokens : policy.segmentTokensWhenSplit;
  int64_t segmentChunks = given / kChunk;
  if (segmentChunks == 0) {
    // Segments enough to give every block slot one: total chunks over the slots' worth of sequences.
    int64_t slots = std::max<int64_t>(1, capacity / perSequence);
    segmentChunks = std::max(policy.minSegmentChunks, (totalChunks + slots - 1) / slots);
  }
  // With the planner's own length, a sequence is cut only into minSegments or more (fewer lose in exact
  // mode); with a given length, into two or more.
  const int64_t minPieces = given == 0 ? std::max<int64_t>(2, policy.minSegments) : 2;
  if (given == 0 && chunksOf(longest) < minPieces * segmentChunks && 2 * n * perSequence <= capacity) {
    // At most half the slots busy, but filling them would take fewer than minPieces segments: cut the
    // longest sequence into bit_ceil(minPieces) instead (four: with the wide tile's one block an SM,
    // three segments of 64 heads are two waves of longer segments; H200 run 74, (16,64) 1x32768:
    // 2.15 ms unsplit, 1.48 in four segments with decaying gates, 2.22 with zero-decay heads, whose
    // full end and transition runs cost 2.62 in two segments).
    const int64_t pieces = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(minPieces)));
    segmentChunks = std::max(policy.minSegmentChunks, (chunksOf(longest) + pieces - 1) / pieces);
  }
  if (chunksOf(longest) < minPieces * segmentChunks)
    return plan; // nothing long enough to gain from a split
  if (given == 0) {
    // The shortest length that cuts the longest sequence into as many segments: what the device derives
    // from the extents alone for a fixed-length batch (gdn_split_offsets).
    int64_t pieces = (chunksOf(longest) + segmentChunks - 1) / segmentChunks;
    segmentChunks = (chunksOf(longest) + pieces - 1) / pieces;
  }
  plan.segmentTokens = segmentChunks * kChunk;
  plan.segmentCuSeqlens = {0};
  for (int64_t i = 0; i < n; ++i) {
    plan.firstSegment.push_back(static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1);
    int64_t len = cu[i + 1] - cu[i];
    bool cut = chunksOf(len) >= minPieces * segmentChunks; // short sequences stay whole
    for (int64_t at = cu[i] + (cut ? plan.segmentTokens : len); at < cu[i + 1]; at += plan.segmentTokens)
      plan.segmentCuSeqlens.push_back(at);
    plan.segmentCuSeqlens.push_back(cu[i + 1]);
  }
  plan.firstSegment.push_back(static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1);
  return plan;
}

} // namespace qla::gdn

// ChunkForward's context split (docs/context-split.md): when to split, the varlen plans, their checks,
// and the launches of a split call.
#include "gdn/api/ChunkForwardInternal.h"

#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <limits>

namespace qla::gdn {

namespace detail {

/// The split kernels' tensors, in the order runSplit passes them: a package built before a change of
/// these lists (a stale devpkg) fails here, by name, instead of launching on the wrong buffers.
void checkSplitTensors(const ChunkForwardShape &sh, size_t which, const Json &manifest) {
  const std::vector<std::string> state{"cu_seqlens", "q", "k", "v", "gcum", "a", "aqk", "o",
                                       "initial_state", "final_state", "run_chunks"};
  std::vector<std::string> cumsum{"cu_seqlens", sh.gateInKernel ? "a" : "g", "gcum"};
  if (sh.gateInKernel)
    cumsum.insert(cumsum.end(), {"b", "A_log", "dt_bias", "beta"});
  cumsum.push_back("chunk_totals");
  const std::array<std::vector<std::string>, 6> expected{
      std::vector<std::string>{"first_segment", "segment_cu_seqlens", "q"}, state, state,
      {"first_segment", "initial_state", "segment_ends", "transitions", "segment_starts", "transition_run_chunks"},
      cumsum,
      {"first_segment", "segment_cu_seqlens", "chunk_totals", "log_gate_threshold", "end_run_chunks",
       "transition_run_chunks"}};
  std::vector<std::string> got;
  for (const Json &p : manifest.at("params").asArray())
    if (p.at("kind").asString() == "tensor")
      got.push_back(p.at("name").asString());
  if (got != expected[which])
    throw Error(fmt::format("{}: split kernel '{}' takes tensors ({}), expected ({}): rebuild the kernels (pack_gdn.sh "
                            "SPLIT=1)",
                            kWho, ChunkForwardImages::kSplitNames[which], fmt::join(got, ", "),
                            fmt::join(expected[which], ", ")));
}

/// The plan's tables cut its cu_seqlens into segments, and its counts and device tables are the ones
/// runSplit sizes grids and reads by (no allocation: this runs on every call that passes a plan).
bool consistentVarlenSplit(const GdnVarlenSplit &vs, bool onDevice) {
  const std::vector<int64_t> &seg = vs.plan.segmentCuSeqlens, &first = vs.plan.firstSegment, &cu = vs.cuSeqlens;
  const int64_t S = vs.segments(), N = vs.sequences();
  if (S < 1 || N < 1 || static_cast<int64_t>(first.size()) != N + 1 || first[0] != 0 || first[N] != S ||
      seg.front() != 0 || seg.back() != cu.back())
    return false;
  int64_t slots = 0, most = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (first[i + 1] <= first[i] || seg[first[i]] != cu[i])
      return false;
    // A segment with a successor is whole chunks, at least one: its end run covers it (windows count
    // full chunks only) and the correction reads that end.
    for (int64_t j = first[i]; j + 1 < first[i + 1]; ++j)
      if (seg[j + 1] - seg[j] <= 0 || (seg[j + 1] - seg[j]) % kChunk != 0)
        return false;
    most = std::max(most, first[i + 1] - first[i]);
  }
  for (int64_t j = 0; j < S; ++j) {
    if (seg[j + 1] < seg[j])
      return false;
    slots = std::max(slots, (seg[j + 1] - seg[j] + kChunk - 1) / kChunk);
  }
  return std::max<int64_t>(slots, 1) == vs.chunkSlots && most == vs.mostSegments && vs.firstOffset % 16 == 0 &&
         vs.firstOffset >= (S + 1) * 8 &&
         (!onDevice || vs.tables.size() >= static_cast<size_t>(vs.firstOffset + (N + 1) * 8));
}

} // namespace detail

using namespace detail;

bool ChunkForward::splitEligible() const {
  const ChunkForwardShape &sh = shape_;
  return images_.hasSplit() && sh.K == sh.V && !sh.stateVFirst && sh.initialState && sh.finalState;
}

int64_t ChunkForward::segmentsPerSequence(int64_t sequences, int64_t tokensEach, const SplitPolicy *call) const {
  if (!splitEligible() || sequences < 1 || tokensEach < 1)
    return 1;
  std::vector<int64_t> cu;
  for (int64_t i = 0; i <= sequences; ++i)
    cu.push_back(i * tokensEach);
  SplitPolicy policy = policyFor(call);
  if (policy.sms <= 0 && policy.segmentTokens == 0) // a forced segment length needs no SM count
    policy.sms = sms_ ? sms_ : queryDevice().smCount;
  SplitPlan plan = planContextSplit(cu, shape_.HV, shape_.V, shape_.BV, policy);
  return plan.split() ? (static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1) / sequences : 1;
}

GdnVarlenSplit ChunkForward::planVarlenOnHost(const std::vector<int64_t> &cu, const SplitPolicy *call) const {
  if (cu.size() < 2)
    throw Error(fmt::format("{}: planVarlen: argument 'cu_seqlens': expected N + 1 >= 2 values, got {}", kWho,
                            cu.size()));
  if (cu.front() != 0)
    throw Error(fmt::format("{}: planVarlen: argument 'cu_seqlens': expected 0 first, got {}", kWho, cu.front()));
  for (size_t i = 1; i < cu.size(); ++i)
    if (cu[i] < cu[i - 1])
      throw Error(fmt::format("{}: planVarlen: argument 'cu_seqlens': expected non-decreasing values, got {} after {} "
                              "at index {}",
                              kWho, cu[i], cu[i - 1], i));
  GdnVarlenSplit split;
  split.cuSeqlens = cu;
  SplitPolicy policy = policyFor(call);
  if (!splitEligible() || !policy.enabled)
    return split;
  if (policy.sms <= 0 && policy.segmentTokens == 0)
    policy.sms = sms_ ? sms_ : queryDevice().smCount;
  split.plan = planContextSplit(cu, shape_.HV, shape_.V, shape_.BV, policy);
  if (!split.split())
    return split;
  const SplitPlan &p = split.plan;
  for (size_t s = 0; s + 1 < p.segmentCuSeqlens.size(); ++s)
    split.chunkSlots =
        std::max(split.chunkSlots, (p.segmentCuSeqlens[s + 1] - p.segmentCuSeqlens[s] + kChunk - 1) / kChunk);
  for (size_t i = 0; i + 1 < p.firstSegment.size(); ++i)
    split.mostSegments = std::max(split.mostSegments, p.firstSegment[i + 1] - p.firstSegment[i]);
  split.chunkSlots = std::max<int64_t>(split.chunkSlots, 1);
  split.firstOffset = alignUp(static_cast<int64_t>(p.segmentCuSeqlens.size()) * 8); // launches want 16-byte alignment
  return split;
}

GdnVarlenSplit ChunkForward::planVarlen(const std::vector<int64_t> &cuSeqlens, const SplitPolicy *call) const {
  GdnVarlenSplit split = planVarlenOnHost(cuSeqlens, call);
  if (split.split()) {
    std::vector<int64_t> tables(split.firstOffset / 8 + split.plan.firstSegment.size(), 0);
    std::copy(split.plan.segmentCuSeqlens.begin(), split.plan.segmentCuSeqlens.end(), tables.begin());
    std::copy(split.plan.firstSegment.begin(), split.plan.firstSegment.end(), tables.begin() + split.firstOffset / 8);
    split.tables = DeviceBuffer(tables.size() * sizeof(int64_t));
    split.tables.upload(tables.data(), tables.size() * sizeof(int64_t));
    // A pageable copy may still be in flight when it returns: done before any call on another stream.
    Driver &drv = Driver::get();
    drv.check(drv.cuCtxSynchronize(), "gdn chunk_forward: planVarlen's upload");
  }
  return split;
}

size_t ChunkForward::workspaceBytes(const GdnVarlenSplit &split) const {
  const int64_t N = split.sequences(), T = split.cuSeqlens.empty() ? 0 : split.cuSeqlens.back();
  return static_cast<size_t>(workspaceLayout(shape_, T, N, true, split.segments(), split.chunkSlots).total);
}

void ChunkForward::runSplit(const ChunkForwardTensors &t, const ChunkForwardLayout &l, CUdeviceptr workspace, CUstream stream,
                            const GdnVarlenSplit *vs) {
  // docs/context-split.md: the segment batch's offsets on the device; cumsum and inverse over it (they
  // are chunk-local); each segment's end from zero (E) and its transition (A); the correction
  // S_{s+1} = A_s·S_s + E_s from each sequence's initial state; the forward over every segment from its
  // start; each sequence's last segment's final state copied out.
  const ChunkForwardShape &sh = shape_;
  const auto &names = ChunkForwardImages::kSplitNames;
  Sizes s = sizesOf(t);
  // A varlen call's segment tables come planned (planVarlen: only long sequences cut, their segment
  // counts differ); a fixed-length batch's are made on the device (gdn_split_offsets), m a sequence.
  const int64_t T = s.tokens, N = s.N, S = l.segments, m = vs ? vs->mostSegments : S / N;
  const int64_t segmentChunks =
      vs ? vs->chunkSlots : (s.T + m * kChunk - 1) / (m * kChunk); // gdn_split_offsets' length, in chunks
  auto packed = [](const TensorArg &x, DType d, std::vector<int64_t> shape) { return TensorArg{x.data, d, shape, {}}; };
  auto scratch = [&](int64_t offset, DType d, std::vector<int64_t> shape) {
    return TensorArg{workspace + static_cast<CUdeviceptr>(offset), d, shape, {}};
  };
  auto u32 = [](int64_t x) { return static_cast<uint32_t>(x); };
  // (A dry run's plan may have no device tables: a stand-in address, never dereferenced.)
  const CUdeviceptr tables = vs ? (vs->tables.ptr() ? vs->tables.ptr() : CUdeviceptr{1} << 40) : 0;
  TensorArg segCu = vs ? TensorArg{tables, DType::i64, {S + 1}, {}} : scratch(l.segmentOffsets, DType::i64, {S + 1});
  TensorArg first = vs ? TensorArg{tables + static_cast<CUdeviceptr>(vs->firstOffset), DType::i64, {N + 1}, {}}
                       : scratch(l.firstSegment, DType::i64, {N + 1});
  TensorArg q = packed(t.q, DType::bf16, {T, sh.H * sh.K}), k = packed(t.k, DType::bf16, {T, sh.H * sh.K});
  TensorArg v = packed(t.v, DType::bf16, {T, sh.HV * sh.V}), o = packed(t.o, DType::bf16, {T, sh.HV * sh.V});
  TensorArg gcum = scratch(l.gcum, DType::f32, {T, sh.HV});
  TensorArg a = scratch(l.a, DType::bf16, {T, sh.HV * kChunk}), aqk = scratch(l.aqk, DType::bf16, {T, sh.HV * kChunk});
  TensorArg beta = sh.gateInKernel ? scratch(l.beta, DType::f32, {T, sh.HV}) : packed(t.beta, DType::f32, {T, sh.HV});
  const std::vector<int64_t> states{S * sh.HV * sh.K, sh.V};
  TensorArg ends = scratch(l.ends, DType::f32, states), starts = scratch(l.starts, DType::f32, states);
  TensorArg finals = scratch(l.finals, DType::f32, states);
  TensorArg transitions = scratch(l.transitions, DType::f32, {S * sh.HV * sh.K, sh.K});
  const uint32_t hv = u32(sh.HV), segs = u32(S), chunks = u32(segmentChunks);
  if (static_cast<int64_t>(chunks) != l.chunkSlots)
    throw Error(fmt::format("{}: internal: the split's segments have {} chunks, the workspace {}", kWho, chunks,
                            l.chunkSlots));
  TensorArg totals = scratch(l.chunkTotals, DType::f32, {S * l.chunkSlots, sh.HV});
  TensorArg threshold = scratch(l.threshold, DType::f32, {1});
  TensorArg endRuns = scratch(l.endRuns, DType::i64, {S * sh.HV});
  TensorArg transitionRuns = scratch(l.transitionRuns, DType::i64, {S * sh.HV});
  Driver &drv = Driver::get();
  // The threshold goes to the device as a 32-bit pattern (a memset: no host memory, capturable).
  const SplitPolicy &policy = policyFor(t.split);
  const float limit = static_cast<float>(policy.exact ? policy.exactLogGateFloor : policy.logGateThreshold);
  if (dryRun_)
    dryRun_("memset32", {threshold}, {std::bit_cast<uint32_t>(limit), 1, 0});
  else
    drv.check(drv.cuMemsetD32Async(threshold.data, std::bit_cast<uint32_t>(limit), 1, stream),
              "gdn chunk_forward: the split's log-gate threshold");

  if (!vs)
    launch(names[0], images_.splitManifests[0], split_[0], {first, segCu, q}, stream, {u32(S + 1), 1, 1});
  std::vector<TensorArg> cumsum{segCu, packed(sh.gateInKernel ? t.a : t.g, DType::f32, {T, sh.HV}), gcum};
  if (sh.gateInKernel) {
    cumsum.push_back(packed(t.b, DType::f32, {T, sh.HV}));
    cumsum.push_back(t.aLog);
    cumsum.push_back(t.dtBias);
    cumsum.push_back(beta);
  }
  cumsum.push_back(totals);
  launch(names[4], images_.splitManifests[4], split_[4], cumsum, stream, {0, segs, chunks}); // x: its build's
  launch("gdn_chunk_inverse", images_.manifests[2], loaded_[2], {segCu, q, k, gcum, beta, a, aqk}, stream,
         {hv / u32(inverseHeads_), segs, inverseGridZ(chunks)});
  launch(names[5], images_.splitManifests[5], split_[5], {first, segCu, totals, threshold, endRuns, transitionRuns},
         stream, {hv, u32(N), u32(m)});
  // The end and transition runs (gdn_chunk_forward split_run = 1, 2, made by qla-context-split, with the
  // main forward's BV: pack_gdn.sh) read their initial-state tensor only for the states' places: `starts`
  // has its shape and is not written before the correction.
  launch(names[1], images_.splitManifests[1], split_[1], {segCu, q, k, v, gcum, a, aqk, o, starts, ends, endRuns},
         stream, {u32(sh.HV * (sh.V / sh.BV)), segs, 1});
  launch(names[2], images_.splitManifests[2], split_[2],
         {segCu, q, k, v, gcum, a, aqk, o, starts, transitions, transitionRuns}, stream,
         {u32(sh.HV * (sh.K / sh.BV)), segs, 1});
  launch(names[3], images_.splitManifests[3], split_[3],
         {first, packed(t.initialState, DType::f32, {N * sh.HV * sh.K, sh.V}), ends, transitions, starts,
          transitionRuns},
         stream,
         {0, u32(N), 1}); // x: its build's (value heads × column slices)
  const int64_t bv = forwardTile(S, t.split);
  const std::vector<TensorArg> mainRun =
      fusesInverse(bv == sh.BV ? images_.manifests[3] : images_.wideManifest)
          ? std::vector<TensorArg>{segCu, q, k, v, gcum, beta, o, starts, finals} // makes a and aqk itself
          : std::vector<TensorArg>{segCu, q, k, v, gcum, a, aqk, o, starts, finals};
  if (bv == sh.BV)
    launch("gdn_chunk_forward", images_.manifests[3], loaded_[3], mainRun, stream, {u32(sh.HV * (sh.V / bv)), segs, 1});
  else
    launch(ChunkForwardImages::kWideName, images_.wideManifest, wide_, mainRun, stream,
           {u32(sh.HV * (sh.V / bv)), segs, 1});
  const size_t headStates = static_cast<size_t>(sh.HV * sh.K * sh.V) * 4;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t lastSegment = vs ? vs->plan.firstSegment[i + 1] - 1 : (i + 1) * m - 1;
    const CUdeviceptr to = t.finalState.data + i * headStates,
                      from = workspace + static_cast<CUdeviceptr>(l.finals) + lastSegment * headStates;
    if (dryRun_) { // a copy of headStates bytes, as two f32 ranges
      const int64_t count = static_cast<int64_t>(headStates / 4);
      dryRun_("copy", {TensorArg{to, DType::f32, {count}, {}}, TensorArg{from, DType::f32, {count}, {}}}, {0, 0, 0});
      continue;
    }
    drv.check(drv.cuMemcpyDtoDAsync(to, from, headStates, stream),
              "gdn chunk_forward: copy of a split sequence's final state");
  }
}

} // namespace qla::gdn

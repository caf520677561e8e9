#include "gdn/forward/ExactSplit.h"
#include "gdn/api/SplitPlan.h"
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Interpret.h"
#include "gdn/reference/HostTensor.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <limits>

namespace qla::gdn {

namespace {

HostTensor hostOf(const Tensor &t, std::vector<int64_t> shape, bool bf16 = false) {
  HostTensor h{std::move(shape), t.data};
  if (bf16)
    for (double &x : h.data)
      x = roundToBf16(x);
  return h;
}

HostTensor zeros(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return HostTensor{std::move(shape), std::vector<double>(n, 0.0)};
}

} // namespace

GdnOutputs interpretGdnForwardSplit(const GdnProblem &p, const GdnInputs &in, int64_t segmentTokens,
                                    double logGateThreshold, int64_t precise, int64_t inverseF16) {
  constexpr int64_t C = GdnForwardConfig::kChunk;
  if (p.K != p.V || p.stateVFirst)
    throw Error(fmt::format("gdn context split: K = V with states [K][V] is supported (the transitions run from a "
                            "K x K identity state), got K = {}, V = {}, state_v_first = {}",
                            p.K, p.V, p.stateVFirst ? 1 : 0));
  if (segmentTokens <= 0 || segmentTokens % C != 0)
    throw Error(fmt::format("gdn context split: segment length {} must be a positive multiple of {}", segmentTokens, C));
  validateGdn(p, in, "gdn context split (interpreter)");
  const int64_t K = p.K, V = p.V, HV = p.HV, N = p.numSequences(), T = p.B * p.T, square = K * V;
  std::vector<int64_t> cu = p.cuSeqlens;
  if (!p.varlen())
    for (int64_t i = 0; i <= N; ++i)
      cu.push_back(i * p.T);
  SplitPlan plan = planContextSplit(cu, HV, V, 64, {.segmentTokens = segmentTokens});
  if (!plan.split())
    throw Error(fmt::format("gdn context split: no sequence is two segments of {} tokens long", segmentTokens));
  const int64_t S = static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1;
  int64_t slots = 1, most = 1; // chunk slots of the longest segment; most segments of a sequence
  for (int64_t s = 0; s < S; ++s)
    slots = std::max(slots, (plan.segmentCuSeqlens[s + 1] - plan.segmentCuSeqlens[s] + C - 1) / C);
  for (int64_t i = 0; i < N; ++i)
    most = std::max(most, plan.firstSegment[i + 1] - plan.firstSegment[i]);

  // The same kernels and the same order as ChunkForward's split on the GPU (docs/context-split.md).
  GdnForwardConfig c = forwardConfigFor(p);
  if (precise >= 0)
    c.precise = precise;
  if (inverseF16 >= 0)
    c.inverseF16 = inverseF16 != 0;
  c.initialState = c.finalState = true;
  HostTensor segCu{{S + 1}, std::vector<double>(plan.segmentCuSeqlens.begin(), plan.segmentCuSeqlens.end())};
  HostTensor first{{N + 1}, std::vector<double>(plan.firstSegment.begin(), plan.firstSegment.end())};
  HostTensor q = hostOf(in.q, {T, p.H * K}, true), k = hostOf(in.k, {T, p.H * K}, true);
  HostTensor v = hostOf(in.v, {T, HV * V}, true);
  HostTensor gcum = zeros({T, HV}), a = zeros({T, HV * C}), aqk = zeros({T, HV * C}), o = zeros({T, HV * V});
  HostTensor beta = c.gateInKernel ? zeros({T, HV}) : hostOf(in.beta, {T, HV});
  HostTensor totals = zeros({S * slots, HV}), threshold{{1}, {logGateThreshold}};
  GdnForwardConfig withTotals = c;
  withTotals.chunkTotals = true;
  if (c.gateInKernel) {
    HostTensor ga = hostOf(in.a, {T, HV}), gb = hostOf(in.b, {T, HV});
    HostTensor aLog = hostOf(in.aLog, {HV}), dtBias = hostOf(in.dtBias, {HV});
    buildGdnCumsum(withTotals)->interpret({&segCu, &ga, &gcum, &gb, &aLog, &dtBias, &beta, &totals},
                                          {0, S, slots});
  } else {
    HostTensor g = hostOf(in.g, {T, HV});
    buildGdnCumsum(withTotals)->interpret({&segCu, &g, &gcum, &totals}, {0, S, slots});
  }
  buildGdnChunkInverse(c)->interpret({&segCu, &q, &k, &gcum, &beta, &a, &aqk},
                                     {HV / c.resolvedInverseHeads(), S, slots});
  // How many of each segment's last chunks its end run and its transition run take (a warm-up window,
  // the whole segment, none).
  HostTensor endRuns = zeros({S * HV}), transitionRuns = zeros({S * HV});
  buildGdnSplitWindows(c)->interpret({&first, &segCu, &totals, &threshold, &endRuns, &transitionRuns}, {HV, N, most});
  // Each segment's end from zero over its run (E_s), and its transition (A_s; zero where truncated):
  // gdn_chunk_forward's runs made by qla-context-split (their initial-state tensor is only read for
  // the states' places, so any tensor of that shape serves).
  GdnForwardConfig ends = c, transition = c;
  ends.splitRun = 1;
  transition.splitRun = 2;
  // The runs' outputs start as NaN: a state no run wrote (a run of no iteration stores nothing) must
  // never be read, and a read of one shows in every check after.
  auto poisoned = [](std::vector<int64_t> shape) {
    return HostTensor{shape, std::vector<double>(shape[0] * shape[1], std::numeric_limits<double>::quiet_NaN())};
  };
  HostTensor endRows = poisoned({S * HV * K, V}), transitionRows = poisoned({S * HV * K, K}), unread = zeros({S * HV * K, V});
  const std::array<int64_t, 3> stateGrid{HV * (V / c.BV), S, 1};
  buildGdnChunkForward(ends)->interpret({&segCu, &q, &k, &v, &gcum, &a, &aqk, &o, &unread, &endRows, &endRuns}, stateGrid);
  buildGdnChunkForward(transition)
      ->interpret({&segCu, &q, &k, &v, &gcum, &a, &aqk, &o, &unread, &transitionRows, &transitionRuns}, stateGrid);
  // The correction: each sequence's first segment from its initial state, then S_{s+1} = A_s·S_s + E_s.
  HostTensor initial{{N * HV * K, V}, p.useInitialState ? in.initialState.data : std::vector<double>(N * HV * square, 0.0)};
  HostTensor starts = zeros({S * HV * K, V});
  buildGdnSplitCorrect(c)->interpret({&first, &initial, &endRows, &transitionRows, &starts, &transitionRuns},
                                     {0, N, 1});
  // Every segment from its start; a sequence's final state is its last segment's.
  HostTensor finals = zeros({S * HV * K, V});
  buildGdnChunkForward(c)->interpret({&segCu, &q, &k, &v, &gcum, &a, &aqk, &o, &starts, &finals}, stateGrid);
  GdnOutputs out;
  out.o = Tensor(in.v.shape, std::move(o.data));
  if (p.outputFinalState) {
    out.finalState = Tensor(p.stateShape());
    for (int64_t i = 0; i < N; ++i)
      std::copy_n(finals.data.begin() + (plan.firstSegment[i + 1] - 1) * HV * square, HV * square,
                  out.finalState.data.begin() + i * HV * square);
  }
  return out;
}

} // namespace qla::gdn

#include "gdn/forward/ExactSplit.h"
#include "gdn/api/SplitPlan.h"
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Interpret.h"
#include "gdn/reference/HostTensor.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>

namespace qla::gdn {

namespace {

/// `t` ([B, T, …]) seen as one packed batch ([1, B·T, …]): the same data.
Tensor packedBatch(const Tensor &t, int64_t tokens) {
  if (!t.defined())
    return t;
  std::vector<int64_t> shape{1, tokens};
  shape.insert(shape.end(), t.shape.begin() + 2, t.shape.end());
  return Tensor(shape, t.data);
}

} // namespace

GdnOutputs interpretGdnForwardSplit(const GdnProblem &p, const GdnInputs &in, int64_t segmentTokens) {
  constexpr int64_t C = GdnForwardConfig::kChunk;
  if (p.K != p.V || p.stateVFirst)
    throw Error(fmt::format("gdn exact split: K = V with states [K][V] is supported (the transitions run from a "
                            "K x K identity state), got K = {}, V = {}, state_v_first = {}",
                            p.K, p.V, p.stateVFirst ? 1 : 0));
  if (segmentTokens <= 0 || segmentTokens % C != 0)
    throw Error(fmt::format("gdn exact split: segment length {} must be a positive multiple of {}", segmentTokens, C));
  const int64_t K = p.K, HV = p.HV, N = p.numSequences(), tokens = p.B * p.T, square = K * K;
  std::vector<int64_t> cu = p.cuSeqlens;
  if (!p.varlen())
    for (int64_t i = 0; i <= N; ++i)
      cu.push_back(i * p.T);
  SplitPlan plan = planContextSplit(cu, HV, p.V, 64, {.segmentTokens = segmentTokens});
  if (!plan.split())
    throw Error(fmt::format("gdn exact split: no sequence is two segments of {} tokens long", segmentTokens));

  // The batch as segments: one packed varlen batch whose sequences are the segments.
  GdnProblem segments = p;
  segments.B = 1;
  segments.T = tokens;
  segments.cuSeqlens = plan.segmentCuSeqlens;
  segments.useInitialState = segments.outputFinalState = true;
  GdnInputs base = in;
  for (Tensor *t : {&base.q, &base.k, &base.v, &base.g, &base.beta, &base.a, &base.b})
    *t = packedBatch(*t, tokens);
  const int64_t S = segments.numSequences();

  // 1. Each segment's end from a zero state: E_s.
  GdnInputs fromZero = base;
  fromZero.initialState = Tensor(segments.stateShape());
  Tensor ends = interpretGdnForward(segments, fromZero, 1, ForwardRun::stateOnly).finalState;
  // 2. Transitions: from the identity with v = 0 the end state is A_s itself (the transition form of
  // the forward makes the identity itself and never reads v).
  GdnProblem fromIdentity = segments;
  fromIdentity.useInitialState = false;
  GdnInputs noInitial = base;
  noInitial.initialState = Tensor();
  Tensor transitions = interpretGdnForward(fromIdentity, noInitial, 1, ForwardRun::transition).finalState;
  // 3. Correction: each sequence's first segment starts from its initial state, the next ones from
  // S_{s+1} = A_s·S_s + E_s (gdn_split_correct).
  HostTensor first{{N + 1}, std::vector<double>(plan.firstSegment.begin(), plan.firstSegment.end())};
  HostTensor initial{{N * HV * K, p.V}, p.useInitialState ? in.initialState.data : std::vector<double>(N * HV * square, 0.0)};
  HostTensor endRows{{S * HV * K, p.V}, ends.data}, transitionRows{{S * HV * K, K}, transitions.data};
  HostTensor startRows{{S * HV * K, p.V}, std::vector<double>(S * HV * square, 0.0)};
  buildGdnSplitCorrect(forwardConfigFor(p))
      ->interpret({&first, &initial, &endRows, &transitionRows, &startRows}, {HV * (p.V / 64), N, 1});
  GdnInputs main = base;
  main.initialState = Tensor(segments.stateShape(), std::move(startRows.data));
  // 4. Every segment from its corrected start; a sequence's final state is its last segment's.
  GdnOutputs run = interpretGdnForward(segments, main), out;
  out.o = Tensor(in.v.shape, std::move(run.o.data));
  if (p.outputFinalState) {
    out.finalState = Tensor(p.stateShape());
    for (int64_t i = 0; i < N; ++i) {
      int64_t last = plan.firstSegment[i + 1] - 1;
      std::copy_n(run.finalState.data.begin() + last * HV * square, HV * square,
                  out.finalState.data.begin() + i * HV * square);
    }
  }
  return out;
}

} // namespace qla::gdn

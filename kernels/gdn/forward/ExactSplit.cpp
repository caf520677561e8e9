#include "gdn/forward/ExactSplit.h"
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Interpret.h"
#include "gdn/reference/HostTensor.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>

namespace qla::gdn {

GdnOutputs interpretGdnForwardSplit(const GdnProblem &p, const GdnInputs &in, int64_t segmentTokens) {
  constexpr int64_t C = GdnForwardConfig::kChunk;
  if (p.B != 1 || p.varlen() || p.K != p.V || p.stateVFirst)
    throw Error(fmt::format("gdn exact split: one sequence (B = 1, no cu_seqlens) with K = V and states [K][V] is "
                            "supported, got B = {}, {} cu_seqlens, K = {}, V = {}, state_v_first = {}",
                            p.B, p.cuSeqlens.size(), p.K, p.V, p.stateVFirst ? 1 : 0));
  if (segmentTokens <= 0 || segmentTokens % C != 0)
    throw Error(fmt::format("gdn exact split: segment length {} must be a positive multiple of {}", segmentTokens, C));
  const int64_t K = p.K, HV = p.HV;
  GdnProblem segments = p;
  segments.cuSeqlens = {0};
  while (segments.cuSeqlens.back() < p.T)
    segments.cuSeqlens.push_back(std::min(p.T, segments.cuSeqlens.back() + segmentTokens));
  segments.useInitialState = segments.outputFinalState = true;
  const int64_t S = segments.numSequences(), square = K * K;

  // 1. Each segment's end from a zero state: E_s.
  GdnInputs fromZero = in;
  fromZero.initialState = Tensor(segments.stateShape());
  Tensor ends = interpretGdnForward(segments, fromZero, 1, /*stateOnly=*/true).finalState;
  // 2. Transitions: from the identity with v = 0 the end state is A_s itself.
  GdnInputs fromIdentity = in;
  fromIdentity.v = Tensor(in.v.shape);
  fromIdentity.initialState = Tensor(segments.stateShape());
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < HV; ++h)
      for (int64_t i = 0; i < K; ++i)
        fromIdentity.initialState.data[(s * HV + h) * square + i * K + i] = 1.0;
  Tensor transitions = interpretGdnForward(segments, fromIdentity, 1, /*stateOnly=*/true).finalState;
  // 3. Correction: S_0 = the initial state, S_{s+1} = A_s·S_s + E_s (gdn_split_correct).
  GdnForwardConfig config = forwardConfigFor(p);
  HostTensor initial{{HV * K, p.V}, p.useInitialState ? in.initialState.data : std::vector<double>(HV * square, 0.0)};
  HostTensor endRows{{S * HV * K, p.V}, ends.data}, transitionRows{{S * HV * K, K}, transitions.data};
  HostTensor startRows{{S * HV * K, p.V}, std::vector<double>(S * HV * square, 0.0)};
  buildGdnSplitCorrect(config)->interpret({&initial, &endRows, &transitionRows, &startRows}, {HV * (p.V / 64), 1, 1});
  GdnInputs main = in;
  main.initialState = Tensor(segments.stateShape(), std::move(startRows.data));
  // 4. Every segment from its corrected start; the sequence's final state is its last segment's.
  GdnOutputs run = interpretGdnForward(segments, main), out;
  out.o = Tensor({1, p.T, HV, p.V}, std::move(run.o.data));
  if (p.outputFinalState)
    out.finalState = Tensor(p.stateShape(), std::vector<double>(run.finalState.data.end() - HV * square,
                                                                run.finalState.data.end()));
  return out;
}

} // namespace qla::gdn

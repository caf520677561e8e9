#include "gdn/forward/ExactSplit.h"
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Interpret.h"

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
  auto at = [&](const Tensor &t, int64_t s, int64_t h) { return t.data.data() + (s * HV + h) * square; };

  // 1. Each segment's end from a zero state: E_s.
  GdnInputs fromZero = in;
  fromZero.initialState = Tensor(segments.stateShape());
  Tensor ends = interpretGdnForward(segments, fromZero).finalState;
  // 2. Transitions: from the identity with v = 0 the end state is A_s itself.
  GdnInputs fromIdentity = in;
  fromIdentity.v = Tensor(in.v.shape);
  fromIdentity.initialState = Tensor(segments.stateShape());
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < HV; ++h)
      for (int64_t i = 0; i < K; ++i)
        fromIdentity.initialState.data[(s * HV + h) * square + i * K + i] = 1.0;
  Tensor transitions = interpretGdnForward(segments, fromIdentity).finalState;
  // 3. Correction: S_0 = the initial state, S_{s+1} = A_s·S_s + E_s (float64, K x K times K x V).
  GdnInputs main = in;
  main.initialState = Tensor(segments.stateShape());
  for (int64_t h = 0; h < HV; ++h) {
    double *first = main.initialState.data.data() + h * square;
    if (p.useInitialState)
      std::copy_n(in.initialState.data.data() + h * square, square, first);
    for (int64_t s = 0; s + 1 < S; ++s) {
      const double *a = at(transitions, s, h), *e = at(ends, s, h), *cur = at(main.initialState, s, h);
      double *next = main.initialState.data.data() + ((s + 1) * HV + h) * square;
      for (int64_t i = 0; i < K; ++i)
        for (int64_t j = 0; j < K; ++j) {
          double sum = e[i * K + j];
          for (int64_t m = 0; m < K; ++m)
            sum += a[i * K + m] * cur[m * K + j];
          next[i * K + j] = sum;
        }
    }
  }
  // 4. Every segment from its corrected start; the sequence's final state is its last segment's.
  GdnOutputs run = interpretGdnForward(segments, main), out;
  out.o = Tensor({1, p.T, HV, p.V}, std::move(run.o.data));
  if (p.outputFinalState)
    out.finalState = Tensor(p.stateShape(), std::vector<double>(run.finalState.data.end() - HV * square,
                                                                run.finalState.data.end()));
  return out;
}

} // namespace qla::gdn

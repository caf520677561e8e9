// GDN.md §1, token by token, in float64.
#include <cmath>

#include "gdn/reference/Chain.h"
#include "gdn/reference/GdnReference.h"

namespace qla::gdn {

GdnOutputs gdnRecurrentReference(const GdnProblem& p, const GdnInputs& in) {
  validateGdn(p, in);
  GdnOutputs out;
  out.o = Tensor({p.B, p.T, p.HV, p.V});
  if (p.outputFinalState)
    out.finalState = Tensor(p.stateShape());
  const double scale = p.resolvedScale();
  const std::int64_t K = p.K, V = p.V;
  const auto seqs = detail::sequences(p);
  std::vector<double> u(V);

  for (std::int64_t n = 0; n < static_cast<std::int64_t>(seqs.size()); ++n)
    for (std::int64_t hv = 0; hv < p.HV; ++hv) {
      const std::int64_t h = detail::qkHead(p, hv);
      std::vector<double> s = detail::loadState(p, in, n, hv); // [K][V]
      for (std::int64_t row = seqs[n].bos; row < seqs[n].eos; ++row) {
        const std::vector<double> q = detail::qkRow(p, in.q, row, h);
        const std::vector<double> k = detail::qkRow(p, in.k, row, h);
        const double* v = detail::vRow(p, in, row, hv);
        const detail::Gate gate = detail::gateAt(p, in, row, hv);

        const double decay = std::exp(gate.g);
        for (double& x : s)
          x *= decay;
        // u = β (v − Sᵀk)
        for (std::int64_t j = 0; j < V; ++j) {
          double sk = 0;
          for (std::int64_t i = 0; i < K; ++i)
            sk += s[i * V + j] * k[i];
          u[j] = gate.beta * (v[j] - sk);
        }
        for (std::int64_t i = 0; i < K; ++i)
          for (std::int64_t j = 0; j < V; ++j)
            s[i * V + j] += k[i] * u[j];
        // o = scale · Sᵀq
        double* o = out.o.data.data() + (row * p.HV + hv) * V;
        for (std::int64_t j = 0; j < V; ++j) {
          double sq = 0;
          for (std::int64_t i = 0; i < K; ++i)
            sq += s[i * V + j] * q[i];
          o[j] = scale * sq;
        }
      }
      if (p.outputFinalState)
        detail::storeState(p, s, n, hv, out.finalState);
    }
  return out;
}

} // namespace qla::gdn

#include "gdn/reference/Chain.h"

#include <cmath>

namespace qla::gdn::detail {

std::vector<Sequence> sequences(const GdnProblem& p) {
  std::vector<Sequence> out;
  if (p.varlen()) {
    for (std::size_t n = 0; n + 1 < p.cuSeqlens.size(); ++n)
      out.push_back({p.cuSeqlens[n], p.cuSeqlens[n + 1]});
  } else {
    for (std::int64_t b = 0; b < p.B; ++b)
      out.push_back({b * p.T, (b + 1) * p.T});
  }
  return out;
}

std::vector<double> qkRow(const GdnProblem& p, const Tensor& x, std::int64_t row, std::int64_t h) {
  const double* src = x.data.data() + (row * p.H + h) * p.K;
  std::vector<double> out(src, src + p.K);
  if (p.l2normQK) {
    double sumSq = 0;
    for (double value : out)
      sumSq += value * value;
    const double inv = 1.0 / std::sqrt(sumSq + 1e-6);
    for (double& value : out)
      value *= inv;
  }
  return out;
}

Gate gateAt(const GdnProblem& p, const GdnInputs& in, std::int64_t row, std::int64_t hv) {
  const std::int64_t i = row * p.HV + hv;
  if (!p.gateInKernel)
    return {in.g.data[i], in.beta.data[i]};
  const double x = in.a.data[i] + in.dtBias.data[hv];
  const double softplus = x > 20 ? x : std::log1p(std::exp(x));
  return {-std::exp(in.aLog.data[hv]) * softplus, 1.0 / (1.0 + std::exp(-in.b.data[i]))};
}

std::vector<double> loadState(const GdnProblem& p, const GdnInputs& in, std::int64_t n,
                              std::int64_t hv) {
  std::vector<double> s(p.K * p.V, 0.0);
  if (!p.useInitialState)
    return s;
  const double* src = in.initialState.data.data() + (n * p.HV + hv) * p.K * p.V;
  for (std::int64_t i = 0; i < p.K; ++i)
    for (std::int64_t j = 0; j < p.V; ++j)
      s[i * p.V + j] = p.stateVFirst ? src[j * p.K + i] : src[i * p.V + j];
  return s;
}

void storeState(const GdnProblem& p, const std::vector<double>& s, std::int64_t n, std::int64_t hv,
                Tensor& out) {
  double* dst = out.data.data() + (n * p.HV + hv) * p.K * p.V;
  for (std::int64_t i = 0; i < p.K; ++i)
    for (std::int64_t j = 0; j < p.V; ++j)
      (p.stateVFirst ? dst[j * p.K + i] : dst[i * p.V + j]) = s[i * p.V + j];
}

} // namespace qla::gdn::detail

namespace qla::gdn {

GdnGate gdnGateValues(const GdnProblem& p, const GdnInputs& in) {
  validateGdn(p, in);
  GdnGate out{Tensor({p.B, p.T, p.HV}), Tensor({p.B, p.T, p.HV})};
  for (std::int64_t row = 0; row < p.B * p.T; ++row)
    for (std::int64_t hv = 0; hv < p.HV; ++hv) {
      const detail::Gate gate = detail::gateAt(p, in, row, hv);
      out.g.data[row * p.HV + hv] = gate.g;
      out.beta.data[row * p.HV + hv] = gate.beta;
    }
  return out;
}

} // namespace qla::gdn

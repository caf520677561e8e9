// GDN.md §2 in float64: per chunk, T = (I + A)⁻¹, W, U, Vn = U − W·H, O and H_next.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gdn/reference/Chain.h"
#include "gdn/reference/GdnReference.h"
#include "qla/runtime/Error.h"

namespace qla::gdn {

namespace {

// One chunk of one chain, rows [c0, c0 + L); h is the [K][V] state at the chunk start and
// becomes the state at its end.
void chunkStep(const GdnProblem& p, const GdnInputs& in, std::int64_t c0, std::int64_t L,
               std::int64_t hv, double scale, std::vector<double>& h, Tensor& o) {
  const std::int64_t K = p.K, V = p.V, qkh = detail::qkHead(p, hv);
  Tensor kc({L, K});
  std::vector<double> qc(L * K), vc(L * V), beta(L), g(L);
  for (std::int64_t i = 0; i < L; ++i) {
    const std::vector<double> q = detail::qkRow(p, in.q, c0 + i, qkh);
    const std::vector<double> k = detail::qkRow(p, in.k, c0 + i, qkh);
    std::copy(q.begin(), q.end(), qc.begin() + i * K);
    std::copy(k.begin(), k.end(), kc.data.begin() + i * K);
    const double* v = detail::vRow(p, in, c0 + i, hv);
    std::copy(v, v + V, vc.begin() + i * V);
    const detail::Gate gate = detail::gateAt(p, in, c0 + i, hv);
    beta[i] = gate.beta;
    g[i] = gate.g;
  }
  const std::vector<double> G = chunkLocalCumsum(g);
  const Tensor t = unitLowerInverse(chunkStrictLowerA(kc, beta, G));
  const std::vector<double>& kd = kc.data;

  // W = T·diag(β·exp(G))·Kc, U = T·diag(β)·Vc
  std::vector<double> w(L * K, 0.0), u(L * V, 0.0);
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      const double tw = t.data[i * L + j] * beta[j] * std::exp(G[j]);
      const double tu = t.data[i * L + j] * beta[j];
      for (std::int64_t c = 0; c < K; ++c)
        w[i * K + c] += tw * kd[j * K + c];
      for (std::int64_t c = 0; c < V; ++c)
        u[i * V + c] += tu * vc[j * V + c];
    }
  // Vn = U − W·H
  std::vector<double> vn = u;
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t m = 0; m < K; ++m)
      for (std::int64_t c = 0; c < V; ++c)
        vn[i * V + c] -= w[i * K + m] * h[m * V + c];
  // O = scale·[diag(exp(G))·Qc·H + LowerIncl((Qc Kcᵀ) ∘ Γ)·Vn]
  for (std::int64_t i = 0; i < L; ++i) {
    double* oi = o.data.data() + ((c0 + i) * p.HV + hv) * V;
    std::vector<double> acc(V, 0.0);
    const double eg = std::exp(G[i]);
    for (std::int64_t m = 0; m < K; ++m)
      for (std::int64_t c = 0; c < V; ++c)
        acc[c] += eg * qc[i * K + m] * h[m * V + c];
    for (std::int64_t j = 0; j <= i; ++j) {
      double qk = 0;
      for (std::int64_t m = 0; m < K; ++m)
        qk += qc[i * K + m] * kd[j * K + m];
      const double coef = qk * std::exp(G[i] - G[j]);
      for (std::int64_t c = 0; c < V; ++c)
        acc[c] += coef * vn[j * V + c];
    }
    for (std::int64_t c = 0; c < V; ++c)
      oi[c] = scale * acc[c];
  }
  // H_next = exp(G_last)·H + (diag(exp(G_last − G))·Kc)ᵀ·Vn
  const double gLast = G[L - 1];
  for (double& x : h)
    x *= std::exp(gLast);
  for (std::int64_t j = 0; j < L; ++j) {
    const double d = std::exp(gLast - G[j]);
    for (std::int64_t m = 0; m < K; ++m)
      for (std::int64_t c = 0; c < V; ++c)
        h[m * V + c] += d * kd[j * K + m] * vn[j * V + c];
  }
}

} // namespace

GdnOutputs gdnChunkedReference(const GdnProblem& p, const GdnInputs& in, std::int64_t chunk) {
  if (chunk <= 0)
    throw Error(fmt::format("gdn reference: argument 'chunk': expected a positive chunk size, got "
                            "{}", chunk));
  validateGdn(p, in);
  GdnOutputs out;
  out.o = Tensor({p.B, p.T, p.HV, p.V});
  if (p.outputFinalState)
    out.finalState = Tensor(p.stateShape());
  const double scale = p.resolvedScale();
  const auto seqs = detail::sequences(p);
  for (std::int64_t n = 0; n < static_cast<std::int64_t>(seqs.size()); ++n)
    for (std::int64_t hv = 0; hv < p.HV; ++hv) {
      std::vector<double> h = detail::loadState(p, in, n, hv);
      for (std::int64_t c0 = seqs[n].bos; c0 < seqs[n].eos; c0 += chunk)
        chunkStep(p, in, c0, std::min(chunk, seqs[n].eos - c0), hv, scale, h, out.o);
      if (p.outputFinalState)
        detail::storeState(p, h, n, hv, out.finalState);
    }
  return out;
}

} // namespace qla::gdn

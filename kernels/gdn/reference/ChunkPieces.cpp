// The per-chunk pieces of GDN.md §2 that kernels compute separately (cumsum, A, (I + A)⁻¹).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gdn/reference/Chain.h"
#include "gdn/reference/GdnReference.h"
#include "qla/runtime/Error.h"

namespace qla::gdn {

std::vector<double> chunkLocalCumsum(std::span<const double> g) {
  std::vector<double> G(g.size());
  double sum = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    G[i] = sum += g[i];
  return G;
}

Tensor chunkStrictLowerA(const Tensor& kc, std::span<const double> beta,
                         std::span<const double> G) {
  if (kc.shape.size() != 2)
    throw Error(fmt::format("chunkStrictLowerA: argument 'kc': expected a [L, K] tensor, got {}",
                            shapeString(kc.shape)));
  const std::int64_t L = kc.shape[0], K = kc.shape[1];
  if (static_cast<std::int64_t>(beta.size()) != L || static_cast<std::int64_t>(G.size()) != L)
    throw Error(fmt::format("chunkStrictLowerA: expected beta and G of L = {} entries, got {} and "
                            "{}", L, beta.size(), G.size()));
  Tensor a({L, L});
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = 0; j < i; ++j) { // below the diagonal only: exp(G_i − G_j) may overflow above
      double kk = 0;
      for (std::int64_t c = 0; c < K; ++c)
        kk += kc.data[i * K + c] * kc.data[j * K + c];
      a.data[i * L + j] = beta[i] * kk * std::exp(G[i] - G[j]);
    }
  return a;
}

Tensor unitLowerInverse(const Tensor& a) {
  if (a.shape.size() != 2 || a.shape[0] != a.shape[1])
    throw Error(fmt::format("unitLowerInverse: argument 'A': expected a square [L, L] tensor, got "
                            "{}", shapeString(a.shape)));
  const std::int64_t L = a.shape[0];
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = i; j < L; ++j)
      if (a.data[i * L + j] != 0)
        throw Error(fmt::format("unitLowerInverse: argument 'A': expected a strictly lower "
                                "triangular matrix, got A[{}][{}] = {}", i, j, a.data[i * L + j]));
  // (I + A) T = I, row by row: T_i = e_i − Σ_{m<i} A_im T_m.
  Tensor t({L, L});
  for (std::int64_t i = 0; i < L; ++i) {
    t.data[i * L + i] = 1;
    for (std::int64_t m = 0; m < i; ++m) {
      const double aim = a.data[i * L + m];
      for (std::int64_t j = 0; j <= m; ++j)
        t.data[i * L + j] -= aim * t.data[m * L + j];
    }
  }
  return t;
}

namespace {

void requireChunk(std::string_view who, std::int64_t chunk) {
  if (chunk <= 0)
    throw Error(fmt::format("{}: argument 'chunk': expected a positive chunk size, got {}", who,
                            chunk));
}

} // namespace

Tensor gdnChunkLocalCumsum(const GdnProblem& p, const GdnInputs& in, std::int64_t chunk) {
  requireChunk("gdn chunk cumsum", chunk);
  const GdnGate gate = gdnGateValues(p, in);
  Tensor out({p.B, p.T, p.HV});
  for (const detail::Sequence& seq : detail::sequences(p))
    for (std::int64_t c0 = seq.bos; c0 < seq.eos; c0 += chunk)
      for (std::int64_t hv = 0; hv < p.HV; ++hv) {
        double sum = 0;
        for (std::int64_t row = c0; row < std::min(c0 + chunk, seq.eos); ++row)
          out.data[row * p.HV + hv] = sum += gate.g.data[row * p.HV + hv];
      }
  return out;
}

Tensor gdnChunkInverse(const GdnProblem& p, const GdnInputs& in, std::int64_t chunk, bool gated) {
  requireChunk("gdn chunk inverse", chunk);
  validateGdn(p, in);
  Tensor out({p.B, p.T, p.HV, chunk});
  for (const detail::Sequence& seq : detail::sequences(p))
    for (std::int64_t c0 = seq.bos; c0 < seq.eos; c0 += chunk)
      for (std::int64_t hv = 0; hv < p.HV; ++hv) {
        const std::int64_t L = std::min(chunk, seq.eos - c0);
        Tensor kc({L, p.K});
        std::vector<double> beta(L), g(L, 0.0);
        for (std::int64_t i = 0; i < L; ++i) {
          const std::vector<double> k = detail::qkRow(p, in.k, c0 + i, detail::qkHead(p, hv));
          std::copy(k.begin(), k.end(), kc.data.begin() + i * p.K);
          const detail::Gate gate = detail::gateAt(p, in, c0 + i, hv);
          beta[i] = gate.beta;
          if (gated)
            g[i] = gate.g;
        }
        const Tensor t = unitLowerInverse(chunkStrictLowerA(kc, beta, chunkLocalCumsum(g)));
        for (std::int64_t i = 0; i < L; ++i)
          for (std::int64_t j = 0; j <= i; ++j)
            out.data[((c0 + i) * p.HV + hv) * chunk + j] = t.data[i * L + j];
      }
  return out;
}

} // namespace qla::gdn

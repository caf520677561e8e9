#include "gdn/reference/GdnRandom.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace qla::gdn {

namespace {

// std::normal_distribution differs between standard libraries; Box–Muller on mt19937_64's
// specified output does not.
class Rng {
public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1p-53; } // (0, 1)
  double normal() {
    if (haveSpare_) {
      haveSpare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double phi = 2.0 * std::numbers::pi * uniform();
    spare_ = r * std::sin(phi);
    haveSpare_ = true;
    return r * std::cos(phi);
  }

private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool haveSpare_ = false;
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

Tensor normal(Rng& rng, std::vector<std::int64_t> shape) {
  Tensor t(std::move(shape));
  for (double& x : t.data)
    x = rng.normal();
  return t;
}

void normaliseRows(Tensor& t) {
  const std::int64_t K = t.shape.back();
  for (std::size_t r = 0; r < t.data.size(); r += K) {
    double sumSq = 0;
    for (std::int64_t i = 0; i < K; ++i)
      sumSq += t.data[r + i] * t.data[r + i];
    const double inv = 1.0 / std::sqrt(sumSq);
    for (std::int64_t i = 0; i < K; ++i)
      t.data[r + i] *= inv;
  }
}

} // namespace

double mixedDecayALog(std::int64_t hv, double uniform01) {
  if (hv % 4 == 0)
    return -std::numeric_limits<double>::infinity();
  if (hv % 4 == 1)
    return std::log(16.0);
  return std::log(1.0 + 15.0 * uniform01);
}

GdnInputs gdnRandomInputs(const GdnProblem& p, const GdnRandomOptions& options) {
  validateGdnProblem(p, "gdn random inputs");
  Rng rng(options.seed);
  GdnInputs in;
  in.q = normal(rng, {p.B, p.T, p.H, p.K});
  in.k = normal(rng, {p.B, p.T, p.H, p.K});
  if (!p.l2normQK) {
    normaliseRows(in.q);
    normaliseRows(in.k);
  }
  in.v = normal(rng, {p.B, p.T, p.HV, p.V});

  const bool mixed = p.gateInKernel || options.gate == GdnGateKind::mixedDecay;
  Tensor a, aLog({p.HV}), dtBias({p.HV});
  if (mixed) {
    a = normal(rng, {p.B, p.T, p.HV});
    for (std::int64_t hv = 0; hv < p.HV; ++hv) {
      aLog.data[hv] = mixedDecayALog(hv, rng.uniform());
      const double dt = std::exp(std::log(1e-3) + rng.uniform() * (std::log(1e-1) - std::log(1e-3)));
      dtBias.data[hv] = std::log(std::expm1(dt));
    }
  }
  Tensor b = normal(rng, {p.B, p.T, p.HV});
  if (p.gateInKernel) {
    in.a = std::move(a);
    in.b = std::move(b);
    in.aLog = std::move(aLog);
    in.dtBias = std::move(dtBias);
  } else {
    in.g = Tensor({p.B, p.T, p.HV});
    for (std::size_t i = 0; i < in.g.data.size(); ++i) {
      const std::int64_t hv = static_cast<std::int64_t>(i) % p.HV;
      in.g.data[i] = mixed ? -std::exp(aLog.data[hv]) * softplus(a.data[i] + dtBias.data[hv])
                           : -softplus(-rng.normal()); // logsigmoid(x) = −softplus(−x)
    }
    in.beta = std::move(b);
    for (double& x : in.beta.data)
      x = sigmoid(x);
  }
  if (p.useInitialState)
    in.initialState = normal(rng, p.stateShape());
  return in;
}

GdnInputs roundInputsForKernel(GdnInputs in) {
  for (Tensor* t : {&in.q, &in.k, &in.v, &in.a, &in.b})
    *t = roundToBf16(std::move(*t));
  for (Tensor* t : {&in.g, &in.beta, &in.aLog, &in.dtBias, &in.initialState})
    *t = roundToFloat(std::move(*t));
  return in;
}

} // namespace qla::gdn

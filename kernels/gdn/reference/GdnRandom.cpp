#include "gdn/reference/GdnRandom.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <thread>

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

// fn(begin, end) over [0, n) in pieces of `grain`, on the machine's cores (long inputs take seconds).
template <typename Fn>
void parallelFor(std::size_t n, std::size_t grain, const Fn& fn) {
  const std::size_t pieces = (n + grain - 1) / grain;
  const std::size_t workers = std::min<std::size_t>(pieces, std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    fn(std::size_t(0), n);
    return;
  }
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      for (std::size_t piece = w; piece < pieces; piece += workers)
        fn(piece * grain, std::min(n, (piece + 1) * grain));
    });
  for (std::thread& t : threads)
    t.join();
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Standard normals in blocks of 2^16 values, each from its own stream seeded by (seed, tensor, block):
// the same numbers for a seed whatever the number of threads.
constexpr std::size_t kBlock = std::size_t(1) << 16;
Tensor normal(std::uint64_t seed, std::uint64_t tensor, std::vector<std::int64_t> shape) {
  Tensor t(std::move(shape));
  parallelFor(t.data.size(), kBlock, [&](std::size_t begin, std::size_t end) {
    Rng rng(splitmix64(seed ^ splitmix64((tensor << 40) ^ (begin / kBlock))));
    for (std::size_t i = begin; i < end; ++i)
      t.data[i] = rng.normal();
  });
  return t;
}

void normaliseRows(Tensor& t) {
  const std::size_t K = static_cast<std::size_t>(t.shape.back());
  parallelFor(t.data.size() / K, kBlock / K, [&](std::size_t rowBegin, std::size_t rowEnd) {
    for (std::size_t r = rowBegin * K; r < rowEnd * K; r += K) {
      double sumSq = 0;
      for (std::size_t i = 0; i < K; ++i)
        sumSq += t.data[r + i] * t.data[r + i];
      const double inv = 1.0 / std::sqrt(sumSq);
      for (std::size_t i = 0; i < K; ++i)
        t.data[r + i] *= inv;
    }
  });
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
  Rng rng(options.seed); // the per-head values; the tensors from streams of their own (normal above)
  const std::uint64_t seed = options.seed;
  GdnInputs in;
  in.q = normal(seed, 0, {p.B, p.T, p.H, p.K});
  in.k = normal(seed, 1, {p.B, p.T, p.H, p.K});
  if (!p.l2normQK) {
    normaliseRows(in.q);
    normaliseRows(in.k);
  }
  in.v = normal(seed, 2, {p.B, p.T, p.HV, p.V});

  const bool mixed = p.gateInKernel || options.gate == GdnGateKind::mixedDecay;
  Tensor a, aLog({p.HV}), dtBias({p.HV});
  if (mixed) {
    a = normal(seed, 3, {p.B, p.T, p.HV});
    for (std::int64_t hv = 0; hv < p.HV; ++hv) {
      aLog.data[hv] = mixedDecayALog(hv, rng.uniform());
      const double dt = std::exp(std::log(1e-3) + rng.uniform() * (std::log(1e-1) - std::log(1e-3)));
      dtBias.data[hv] = std::log(std::expm1(dt));
    }
  }
  Tensor b = normal(seed, 4, {p.B, p.T, p.HV});
  if (p.gateInKernel) {
    in.a = std::move(a);
    in.b = std::move(b);
    in.aLog = std::move(aLog);
    in.dtBias = std::move(dtBias);
  } else {
    in.g = mixed ? Tensor({p.B, p.T, p.HV}) : normal(seed, 5, {p.B, p.T, p.HV});
    for (std::size_t i = 0; i < in.g.data.size(); ++i) {
      const std::int64_t hv = static_cast<std::int64_t>(i) % p.HV;
      in.g.data[i] = mixed ? -std::exp(aLog.data[hv]) * softplus(a.data[i] + dtBias.data[hv])
                           : -softplus(-in.g.data[i]); // logsigmoid(x) = −softplus(−x)
    }
    in.beta = std::move(b);
    for (double& x : in.beta.data)
      x = sigmoid(x);
  }
  if (p.useInitialState)
    in.initialState = normal(seed, 6, p.stateShape());
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

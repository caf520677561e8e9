// The per-chunk pieces kernels will be tested against: cumsum, A, (I + A)⁻¹.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "GdnTestUtil.h"
#include "qla/runtime/Error.h"

using namespace qla::gdn;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("chunk-local cumsum is inclusive", "[gdn][chunk]") {
  CHECK(chunkLocalCumsum(std::vector<double>{1, 2, 3, -0.5}) == std::vector<double>{1, 3, 6, 5.5});
  CHECK(chunkLocalCumsum(std::vector<double>{}).empty());
}

TEST_CASE("A is strictly lower, β_i·(k_i·k_j)·exp(G_i − G_j)", "[gdn][chunk]") {
  const Tensor kc({3, 2}, {1, 0, 2, 1, 0, 3});
  const std::vector<double> beta{0.5, 0.25, 0.75}, G{0, -1, -3};
  const Tensor a = chunkStrictLowerA(kc, beta, G);
  REQUIRE(a.shape == std::vector<std::int64_t>{3, 3});
  const std::vector<double> expected{0, 0, 0,                                           //
                                     0.25 * 2 * std::exp(-1.0), 0, 0,                   //
                                     0.75 * 0 * std::exp(-3.0), 0.75 * 3 * std::exp(-2.0), 0};
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(a.data[i] == Catch::Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("A is masked before exponentiating: no inf or NaN under strong decay", "[gdn][chunk]") {
  // exp(G_j − G_i) above the diagonal would be exp(+2000) = inf, and inf·0 = NaN.
  const Tensor kc({3, 1}, {1, 1, 1});
  const Tensor a = chunkStrictLowerA(kc, std::vector<double>{1, 1, 1},
                                     std::vector<double>{0, -1000, -2000});
  for (double x : a.data)
    CHECK(std::isfinite(x));
  CHECK(a.data == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor t = unitLowerInverse(a);
  CHECK(t.data == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEST_CASE("(I + A)⁻¹ by forward substitution", "[gdn][chunk]") {
  SECTION("3×3 by hand") {
    const double a = 0.5, b = -2, c = 3;
    const Tensor t = unitLowerInverse(Tensor({3, 3}, {0, 0, 0, a, 0, 0, b, c, 0}));
    CHECK(t.data == std::vector<double>{1, 0, 0, -a, 1, 0, a * c - b, -c, 1});
  }
  SECTION("64×64: (I + A)·T = I") {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(-0.2, 0.2);
    const std::int64_t L = 64;
    Tensor a({L, L});
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j < i; ++j)
        a.data[i * L + j] = u(rng);
    const Tensor t = unitLowerInverse(a);
    double worst = 0;
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j < L; ++j) {
        double x = t.data[i * L + j]; // (I + A)·T = T + A·T
        for (std::int64_t m = 0; m < L; ++m)
          x += a.data[i * L + m] * t.data[m * L + j];
        worst = std::max(worst, std::abs(x - (i == j ? 1.0 : 0.0)));
        if (j > i)
          CHECK(t.data[i * L + j] == 0);
      }
    CHECK(worst < 1e-12);
  }
  SECTION("rejects a non-square or non-strictly-lower matrix") {
    CHECK_THROWS_WITH(unitLowerInverse(Tensor({2, 3})), ContainsSubstring("expected a square"));
    CHECK_THROWS_WITH(unitLowerInverse(Tensor({2, 2}, {0, 1, 0, 0})),
                      ContainsSubstring("expected a strictly lower triangular matrix, got A[0][1] = 1"));
    CHECK_THROWS_WITH(unitLowerInverse(Tensor({2, 2}, {1, 0, 0, 0})),
                      ContainsSubstring("got A[0][0] = 1"));
  }
}

namespace {

const GdnProblem kVarlen{.B = 1, .T = 300, .H = 1, .HV = 2, .K = 64, .V = 64,
                         .cuSeqlens = {0, 1, 65, 130, 300}, .l2normQK = true,
                         .gateInKernel = true};

// Start row of the chunk holding `row`: chunks restart at every sequence start.
std::int64_t chunkStart(const GdnProblem& p, std::int64_t row, std::int64_t chunk) {
  std::size_t n = 0;
  while (p.cuSeqlens[n + 1] <= row)
    ++n;
  return p.cuSeqlens[n] + (row - p.cuSeqlens[n]) / chunk * chunk;
}

} // namespace

TEST_CASE("gdnChunkLocalCumsum restarts at every chunk and sequence start", "[gdn][chunk]") {
  const GdnInputs in = gdnRandomInputs(kVarlen, {.seed = 4});
  const GdnGate gate = gdnGateValues(kVarlen, in);
  const Tensor G = gdnChunkLocalCumsum(kVarlen, in, 64);
  REQUIRE(G.shape == std::vector<std::int64_t>{1, 300, 2});
  for (std::int64_t row = 0; row < 300; ++row)
    for (std::int64_t hv = 0; hv < 2; ++hv) {
      double sum = 0;
      for (std::int64_t s = chunkStart(kVarlen, row, 64); s <= row; ++s)
        sum += gate.g.data[s * 2 + hv];
      INFO("row " << row << " head " << hv);
      CHECK(G.data[row * 2 + hv] == Catch::Approx(sum).epsilon(1e-14).margin(1e-300));
    }
  // Head 0 of the mixed gate has no decay.
  CHECK(G.data[100 * 2] == 0);
}

TEST_CASE("gdnChunkInverse inverts I + A of each chunk; the gated one is Γ ∘ A₀-inverse",
          "[gdn][chunk]") {
  const GdnInputs in = gdnRandomInputs(kVarlen, {.seed = 8});
  const GdnGate gate = gdnGateValues(kVarlen, in);
  const Tensor G = gdnChunkLocalCumsum(kVarlen, in, 64);
  const Tensor gated = gdnChunkInverse(kVarlen, in, 64, true);
  const Tensor ungated = gdnChunkInverse(kVarlen, in, 64, false);
  REQUIRE(gated.shape == std::vector<std::int64_t>{1, 300, 2, 64});
  const std::int64_t K = kVarlen.K, C = 64;
  std::vector<double> kn(in.k.data); // L2-normalised as the problem says
  for (std::int64_t row = 0; row < 300; ++row) {
    double s = 0;
    for (std::int64_t c = 0; c < K; ++c)
      s += kn[row * K + c] * kn[row * K + c];
    for (std::int64_t c = 0; c < K; ++c)
      kn[row * K + c] /= std::sqrt(s + 1e-6);
  }
  double worstInverse = 0, worstIdentity = 0;
  for (std::int64_t row = 0; row < 300; ++row) {
    const std::int64_t c0 = chunkStart(kVarlen, row, C), i = row - c0;
    for (std::int64_t hv = 0; hv < 2; ++hv) {
      // Row i of A, built here from its definition.
      std::vector<double> a(i, 0.0);
      for (std::int64_t m = 0; m < i; ++m) {
        double kk = 0;
        for (std::int64_t c = 0; c < K; ++c)
          kk += kn[row * K + c] * kn[(c0 + m) * K + c];
        a[m] = gate.beta.data[row * 2 + hv] * kk *
               std::exp(G.data[row * 2 + hv] - G.data[(c0 + m) * 2 + hv]);
      }
      const double* t = &gated.data[(row * 2 + hv) * C];
      const double* t0 = &ungated.data[(row * 2 + hv) * C];
      for (std::int64_t j = 0; j < C; ++j) {
        double x = t[j]; // row i of (I + A)·T
        for (std::int64_t m = 0; m < i; ++m)
          x += a[m] * gated.data[((c0 + m) * 2 + hv) * C + j];
        worstInverse = std::max(worstInverse, std::abs(x - (i == j ? 1.0 : 0.0)));
        if (j > i)
          REQUIRE(t[j] == 0); // upper part and columns past a partial chunk's end
        else
          worstIdentity = std::max(
              worstIdentity,
              std::abs(t[j] - std::exp(G.data[row * 2 + hv] - G.data[(c0 + j) * 2 + hv]) * t0[j]));
      }
    }
  }
  CHECK(worstInverse < 1e-12);
  CHECK(worstIdentity < 1e-12);
}

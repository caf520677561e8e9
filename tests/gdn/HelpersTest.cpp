// Tensors, relL2, bf16 rounding and the random inputs.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <limits>

#include "GdnTestUtil.h"
#include "qla/runtime/Error.h"

using namespace qla::gdn;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("Tensor shapes", "[gdn][helpers]") {
  CHECK(Tensor({2, 3}).data.size() == 6);
  CHECK(shapeString(std::vector<std::int64_t>{2, 64, 4}) == "[2, 64, 4]");
  CHECK_FALSE(Tensor().defined());
  CHECK(Tensor({0, 3}).defined());
  CHECK_THROWS_WITH(Tensor({2, 2}, {1, 2, 3}), ContainsSubstring("shape [2, 2] needs 4 values, got 3"));
  CHECK_THROWS_AS(Tensor({-1, 2}), qla::Error);
}

TEST_CASE("relL2 is ‖a − ref‖ / ‖ref‖", "[gdn][helpers]") {
  CHECK(relL2(std::vector<double>{3, 5}, std::vector<double>{3, 4}) == 0.2);
  CHECK(relL2(std::vector<double>{3, 4}, std::vector<double>{3, 4}) == 0);
  CHECK(relL2(std::vector<double>{0, 0}, std::vector<double>{0, 0}) == 0);
  CHECK(std::isinf(relL2(std::vector<double>{1, 0}, std::vector<double>{0, 0})));
  CHECK(std::isnan(relL2(std::vector<double>{NAN, 0}, std::vector<double>{1, 0})));
  CHECK(std::isnan(relL2(std::vector<double>{1, 0}, std::vector<double>{1, NAN})));
  CHECK_THROWS_WITH(relL2(std::vector<double>{1}, std::vector<double>{1, 2}),
                    ContainsSubstring("equal size, got 1 and 2"));
  CHECK_THROWS_WITH(relL2(Tensor({2, 1}), Tensor({1, 2})),
                    ContainsSubstring("equal shape, got [2, 1] and [1, 2]"));
}

TEST_CASE("bf16 rounding: nearest-even through float", "[gdn][helpers]") {
  CHECK(roundToBf16(1.0) == 1.0);
  CHECK(roundToBf16(-3.5) == -3.5);
  CHECK(roundToBf16(1 + 0x1p-9) == 1.0);              // below half an ulp (2^-7)
  CHECK(roundToBf16(1 + 0x1p-8 + 0x1p-12) == 1 + 0x1p-7); // above half
  CHECK(roundToBf16(1 + 0x1p-8) == 1.0);              // tie: to even (1.0)
  CHECK(roundToBf16(1 + 3 * 0x1p-8) == 1 + 0x1p-6);   // tie: to even (up)
  // Through float: 2^-40 is lost on the way to float, then the tie goes to even.
  CHECK(roundToBf16(1 + 0x1p-8 + 0x1p-40) == 1.0);
  CHECK(roundToBf16(0.1) == 0.10009765625);
  CHECK(roundToBf16(std::numeric_limits<float>::max()) == std::numeric_limits<double>::infinity());
  CHECK(roundToBf16(-std::numeric_limits<double>::infinity()) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(roundToBf16(NAN)));
  CHECK(roundToBf16(0x1p-133) == 0x1p-133); // the smallest bf16 subnormal
  CHECK(roundToBf16(0x1p-135) == 0);
  CHECK(roundToFloat(0.1) == static_cast<double>(0.1f));
  CHECK(roundToBf16(Tensor({2}, {1 + 0x1p-9, 2.0})).data == std::vector<double>{1.0, 2.0});
}

TEST_CASE("random inputs: seeded, normalised, gates as the peers draw them", "[gdn][helpers]") {
  const GdnProblem p{.B = 2, .T = 200, .H = 2, .HV = 8, .K = 64, .V = 32, .useInitialState = true};
  const GdnInputs a = gdnRandomInputs(p, {.seed = 1});
  CHECK(gdnRandomInputs(p, {.seed = 1}).v.data == a.v.data);
  CHECK(gdnRandomInputs(p, {.seed = 2}).v.data != a.v.data);
  CHECK_NOTHROW(validateGdn(p, a));

  SECTION("q and k rows have unit norm; v is N(0, 1)") {
    for (const Tensor* t : {&a.q, &a.k})
      for (std::size_t r = 0; r < t->data.size(); r += 64) {
        double s = 0;
        for (std::size_t i = 0; i < 64; ++i)
          s += t->data[r + i] * t->data[r + i];
        REQUIRE(std::abs(s - 1) < 1e-12);
      }
    double mean = 0, sq = 0;
    for (double x : a.v.data)
      mean += x, sq += x * x;
    mean /= double(a.v.data.size());
    sq /= double(a.v.data.size());
    CHECK(std::abs(mean) < 0.03);
    CHECK(std::abs(sq - 1) < 0.05);
  }
  SECTION("logsigmoid gate: g < 0, β in (0, 1)") {
    for (std::size_t i = 0; i < a.g.data.size(); ++i) {
      REQUIRE(a.g.data[i] < 0);
      REQUIRE(a.beta.data[i] > 0);
      REQUIRE(a.beta.data[i] < 1);
    }
  }
  SECTION("with l2norm in kernel, q and k are left raw") {
    GdnProblem raw = p;
    raw.l2normQK = true;
    const GdnInputs r = gdnRandomInputs(raw, {.seed = 1});
    double s = 0;
    for (std::size_t i = 0; i < 64; ++i)
      s += r.q.data[i] * r.q.data[i];
    CHECK(std::abs(s - 1) > 1e-3);
  }
  SECTION("mixed decay: no-decay heads exactly 0, A = 16 heads the strongest") {
    const GdnInputs m = gdnRandomInputs(p, {.seed = 1, .gate = GdnGateKind::mixedDecay});
    std::vector<double> meanG(p.HV, 0.0);
    for (std::size_t i = 0; i < m.g.data.size(); ++i) {
      REQUIRE(m.g.data[i] <= 0);
      meanG[i % p.HV] += m.g.data[i];
    }
    for (std::int64_t hv = 0; hv < p.HV; ++hv) {
      INFO("head " << hv << " mean g " << meanG[hv] / 400);
      if (hv % 4 == 0)
        CHECK(meanG[hv] == 0);
      else
        CHECK(meanG[hv] < 0);
    }
    CHECK(mixedDecayALog(1, 0.3) == std::log(16.0));
    CHECK(mixedDecayALog(4, 0.3) == -std::numeric_limits<double>::infinity());
    CHECK(mixedDecayALog(2, 0.0) == 0); // A = 1
  }
  SECTION("gate in kernel: a, b, A_log, dt_bias instead of g and β") {
    GdnProblem gk = p;
    gk.gateInKernel = true;
    const GdnInputs in = gdnRandomInputs(gk, {.seed = 1});
    CHECK_NOTHROW(validateGdn(gk, in));
    CHECK(in.aLog.data[0] == -std::numeric_limits<double>::infinity());
    CHECK(in.aLog.data[1] == std::log(16.0));
    for (double d : in.dtBias.data) { // softplus(dt_bias) in [1e-3, 1e-1]
      CHECK(std::log1p(std::exp(d)) >= 1e-3 * (1 - 1e-12));
      CHECK(std::log1p(std::exp(d)) <= 1e-1 * (1 + 1e-12));
    }
  }
  SECTION("rounded for a kernel: bf16 q, k, v; float g, β, state") {
    const GdnInputs r = roundInputsForKernel(a);
    CHECK(r.q.data != a.q.data);
    for (double x : r.q.data)
      REQUIRE(roundToBf16(x) == x);
    for (double x : r.v.data)
      REQUIRE(roundToBf16(x) == x);
    bool someNotBf16 = false;
    for (double x : r.g.data) {
      REQUIRE(roundToFloat(x) == x);
      someNotBf16 |= roundToBf16(x) != x;
    }
    CHECK(someNotBf16);
    for (double x : r.initialState.data)
      REQUIRE(roundToFloat(x) == x);
  }
}

// Cases computed by hand, so that a mistake shared by both references still shows.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "GdnTestUtil.h"

using namespace qla::gdn;

namespace {

// Runs the recurrence and the chunked form (chunks of 64 and of 1) and checks each against
// `o` and `finalState` to 1e-14.
void checkAll(const GdnProblem& p, const GdnInputs& in, const std::vector<double>& o,
              const std::vector<double>& finalState) {
  const GdnOutputs results[] = {gdnRecurrentReference(p, in), gdnChunkedReference(p, in, 64),
                                gdnChunkedReference(p, in, 1)};
  for (const GdnOutputs& r : results) {
    REQUIRE(r.o.data.size() == o.size());
    for (std::size_t i = 0; i < o.size(); ++i)
      CHECK(r.o.data[i] == Catch::Approx(o[i]).epsilon(1e-14).margin(1e-14));
    REQUIRE(r.finalState.data.size() == finalState.size());
    for (std::size_t i = 0; i < finalState.size(); ++i)
      CHECK(r.finalState.data[i] == Catch::Approx(finalState[i]).epsilon(1e-14).margin(1e-14));
  }
}

} // namespace

TEST_CASE("one token from a zero state: o = scale·β·(k·q)·v, S = β·k vᵀ", "[gdn][reference]") {
  const GdnProblem p{.B = 1, .T = 1, .H = 1, .HV = 1, .K = 2, .V = 2, .scale = 0.25,
                     .outputFinalState = true};
  GdnInputs in;
  in.q = Tensor({1, 1, 1, 2}, {1, 2});
  in.k = Tensor({1, 1, 1, 2}, {3, 4});
  in.v = Tensor({1, 1, 1, 2}, {1, -2});
  in.g = Tensor({1, 1, 1}, {-0.7}); // decays a zero state: no effect
  in.beta = Tensor({1, 1, 1}, {0.5});
  // k·q = 11: o = 0.25·0.5·11·(1, −2); S = k (β v)ᵀ = (3, 4)ᵀ (0.5, −1).
  checkAll(p, in, {1.375, -2.75}, {1.5, -3, 2, -4});
}

TEST_CASE("two tokens from an initial state, decay and delta-rule erasure", "[gdn][reference]") {
  GdnProblem p{.B = 1, .T = 2, .H = 1, .HV = 1, .K = 2, .V = 2, .scale = 1,
               .useInitialState = true, .outputFinalState = true};
  GdnInputs in;
  in.q = Tensor({1, 2, 1, 2}, {0, 1, 1, 0});
  in.k = Tensor({1, 2, 1, 2}, {1, 0, 0, 1});
  in.v = Tensor({1, 2, 1, 2}, {1, 1, 0, 0});
  in.g = Tensor({1, 2, 1}, {std::log(0.5), 0});
  in.beta = Tensor({1, 2, 1}, {0.5, 1});
  in.initialState = Tensor({1, 1, 2, 2}, {1, 2, 3, 4}); // S[K][V]
  // Token 0: S = 0.5·S0 = [[0.5, 1], [1.5, 2]]; Sᵀk = (0.5, 1); u = 0.5·((1, 1) − (0.5, 1)) =
  // (0.25, 0); S = [[0.75, 1], [1.5, 2]]; o = Sᵀq = row 1 = (1.5, 2).
  // Token 1: no decay; Sᵀk = row 1 = (1.5, 2); u = (0, 0) − (1.5, 2): β = 1 erases row 1;
  // S = [[0.75, 1], [0, 0]]; o = row 0 = (0.75, 1).
  SECTION("[K][V] state") { checkAll(p, in, {1.5, 2, 0.75, 1}, {0.75, 1, 0, 0}); }
  SECTION("[V][K] state") {
    p.stateVFirst = true;
    in.initialState = Tensor({1, 1, 2, 2}, {1, 3, 2, 4});
    checkAll(p, in, {1.5, 2, 0.75, 1}, {0.75, 0, 1, 0});
  }
}

TEST_CASE("scale defaults to K^-1/2", "[gdn][reference]") {
  GdnProblem p{.B = 1, .T = 1, .H = 1, .HV = 1, .K = 4, .V = 1};
  GdnInputs in;
  in.q = Tensor({1, 1, 1, 4}, {1, 0, 0, 0});
  in.k = in.q;
  in.v = Tensor({1, 1, 1, 1}, {2});
  in.g = Tensor({1, 1, 1}, {0});
  in.beta = Tensor({1, 1, 1}, {1});
  // o = scale·β·(k·q)·v = 2·scale; K^-1/2 = 0.5.
  CHECK(p.resolvedScale() == 0.5);
  checkAll(p, in, {1}, {});
  p.scale = -3; // <= 0 means the default too
  checkAll(p, in, {1}, {});
  p.scale = 0.1;
  checkAll(p, in, {0.2}, {});
}

TEST_CASE("l2norm in kernel: x·(Σx² + 1e-6)^-1/2", "[gdn][reference]") {
  const GdnProblem p{.B = 1, .T = 1, .H = 1, .HV = 1, .K = 2, .V = 1, .scale = 1, .l2normQK = true};
  GdnInputs in;
  in.q = Tensor({1, 1, 1, 2}, {3, 4});
  in.k = Tensor({1, 1, 1, 2}, {0, 2});
  in.v = Tensor({1, 1, 1, 1}, {1});
  in.g = Tensor({1, 1, 1}, {0});
  in.beta = Tensor({1, 1, 1}, {1});
  // k̂·q̂ = 8 / (√(25 + 1e-6)·√(4 + 1e-6)); without the epsilon it would be 0.8 exactly.
  const double expected = 8 / (std::sqrt(25 + 1e-6) * std::sqrt(4 + 1e-6));
  CHECK(std::abs(expected - 0.8) > 1e-8);
  for (const GdnOutputs& r : {gdnRecurrentReference(p, in), gdnChunkedReference(p, in)})
    CHECK(r.o.data[0] == Catch::Approx(expected).epsilon(1e-15));
}

TEST_CASE("in-kernel gate: g = −exp(A_log)·softplus(a + dt_bias), β = sigmoid(b)",
          "[gdn][reference]") {
  // K = V = 1, q = k = 1, S0 = 4, v = 3: S = e^g·4 + β·(3 − e^g·4), o = S.
  GdnProblem p{.B = 1, .T = 1, .H = 1, .HV = 3, .K = 1, .V = 1, .scale = 1,
               .useInitialState = true, .outputFinalState = true, .gateInKernel = true};
  GdnInputs in;
  in.q = Tensor({1, 1, 1, 1}, {1});
  in.k = in.q;
  in.v = Tensor({1, 1, 3, 1}, {3, 3, 3});
  in.b = Tensor({1, 1, 3}, {0, std::log(3.0), 0}); // β = 0.5, 0.75, 0.5
  in.initialState = Tensor({1, 3, 1, 1}, {4, 4, 4});
  // Head 0: A = 2, softplus(0) = ln 2: g = −2 ln 2, decay 1/4: S = 1 + 0.5·2 = 2.
  // Head 1: A_log = −inf: no decay: S = 4 + 0.75·(3 − 4) = 3.25.
  // Head 2: a + dt_bias = 30 > 20: softplus = 30 exactly, A = 0.1: g = −3.
  in.a = Tensor({1, 1, 3}, {0.5, 0.5, 29.5});
  in.dtBias = Tensor({3}, {-0.5, -0.5, 0.5});
  in.aLog = Tensor({3}, {std::log(2.0), -std::numeric_limits<double>::infinity(), std::log(0.1)});
  const double g2 = -std::exp(std::log(0.1)) * 30.0;
  const double s2 = std::exp(g2) * 4 + 0.5 * (3 - std::exp(g2) * 4);
  checkAll(p, in, {2, 3.25, s2}, {2, 3.25, s2});

  const GdnGate gate = gdnGateValues(p, in);
  CHECK(gate.g.data[0] == Catch::Approx(-2 * std::log(2.0)).epsilon(1e-15));
  CHECK(gate.g.data[1] == 0);
  CHECK(gate.g.data[2] == g2); // the linear branch, not log1p(exp(30))
  CHECK(gate.beta.data[0] == 0.5);
  CHECK(gate.beta.data[1] == Catch::Approx(0.75).epsilon(1e-15));
  CHECK(gate.beta.data[2] == 0.5);
}

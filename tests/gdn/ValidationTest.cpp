// Every argument rule, through every entry point that validates.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <functional>
#include <limits>

#include "GdnTestUtil.h"
#include "qla/runtime/Error.h"

using namespace qla::gdn;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

namespace {

const GdnProblem kBase{.B = 1, .T = 4, .H = 1, .HV = 2, .K = 8, .V = 4, .useInitialState = true,
                       .outputFinalState = true};

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const qla::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The message each validating entry point gives, which must be the same.
std::string validationError(const GdnProblem& p, const GdnInputs& in) {
  const std::string message = errorOf([&] { validateGdn(p, in); });
  CHECK(errorOf([&] { gdnRecurrentReference(p, in); }) == message);
  CHECK(errorOf([&] { gdnChunkedReference(p, in); }) == message);
  CHECK(errorOf([&] { gdnGateValues(p, in); }) == message);
  CHECK(errorOf([&] { gdnChunkInverse(p, in); }) == message);
  return message;
}

} // namespace

TEST_CASE("valid inputs pass", "[gdn][validation]") {
  const GdnProblem p = kBase;
  CHECK_NOTHROW(validateGdn(p, gdnRandomInputs(p)));
  GdnProblem varlen = kBase;
  varlen.T = 10, varlen.cuSeqlens = {0, 3, 3, 10};
  CHECK_NOTHROW(validateGdn(varlen, gdnRandomInputs(varlen)));
}

TEST_CASE("problem rules", "[gdn][validation]") {
  const GdnInputs in = gdnRandomInputs(kBase);
  using Edit = std::function<void(GdnProblem&)>;
  const auto [edit, expected] = GENERATE(
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.K = 0; },
                                   "gdn reference: argument 'K': expected a positive value, got 0"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.V = -1; },
                                   "gdn reference: argument 'V': expected a positive value, got -1"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.B = 0; },
                                   "gdn reference: argument 'B': expected a positive value, got 0"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.H = 0; },
                                   "gdn reference: argument 'H': expected a positive value, got 0"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.T = -2; },
                                   "gdn reference: argument 'T': expected a non-negative token "
                                   "count, got -2"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.H = 2, p.HV = 3; },
                                   "gdn reference: argument 'HV': expected a multiple of H = 2, "
                                   "got 3"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.scale = std::numeric_limits<double>::quiet_NaN(); },
                                   "gdn reference: argument 'scale': expected a finite value"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.B = 2, p.cuSeqlens = {0, 4}; },
                                   "gdn reference: argument 'B': expected 1 with cu_seqlens, got 2"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.cuSeqlens = {4}; },
                                   "gdn reference: argument 'cu_seqlens': expected at least 2 "
                                   "offsets (N + 1), got 1"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.cuSeqlens = {1, 4}; },
                                   "gdn reference: argument 'cu_seqlens': expected to start at 0, "
                                   "got 1"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.cuSeqlens = {0, 3, 2, 4}; },
                                   "gdn reference: argument 'cu_seqlens': expected non-decreasing "
                                   "offsets, got 2 after 3 at index 2"},
      std::pair<Edit, std::string>{[](GdnProblem& p) { p.cuSeqlens = {0, 2, 5}; },
                                   "gdn reference: argument 'cu_seqlens': expected to end at T = 4, "
                                   "got 5"});
  GdnProblem p = kBase;
  edit(p);
  CHECK_THAT(validationError(p, in), ContainsSubstring(expected));
  CHECK_THAT(errorOf([&] { validateGdnProblem(p, "someone"); }),
             ContainsSubstring("someone: argument '"));
}

TEST_CASE("tensor rules", "[gdn][validation]") {
  const GdnInputs valid = gdnRandomInputs(kBase);
  SECTION("wrong shape") {
    GdnInputs in = valid;
    in.q = Tensor({1, 4, 1, 7});
    CHECK_THAT(validationError(kBase, in),
               Equals("gdn reference: argument 'q': expected shape [B, T, H, K] = [1, 4, 1, 8], "
                      "got [1, 4, 1, 7]"));
  }
  SECTION("missing tensor") {
    GdnInputs in = valid;
    in.v = {};
    CHECK_THAT(validationError(kBase, in),
               Equals("gdn reference: argument 'v': expected a tensor of shape [B, T, HV, V] = "
                      "[1, 4, 2, 4], got none"));
  }
  SECTION("data not matching the shape") {
    GdnInputs in = valid;
    in.beta.data.pop_back();
    CHECK_THAT(validationError(kBase, in),
               Equals("gdn reference: argument 'beta': expected 8 values for shape [1, 4, 2], got 7"));
  }
  SECTION("g given with the gate in kernel") {
    GdnProblem p = kBase;
    p.gateInKernel = true;
    GdnInputs in = gdnRandomInputs(p);
    in.g = valid.g;
    CHECK_THAT(validationError(p, in),
               Equals("gdn reference: argument 'g': expected no tensor (gate computed in kernel), "
                      "got shape [1, 4, 2]"));
  }
  SECTION("A_log missing with the gate in kernel") {
    GdnProblem p = kBase;
    p.gateInKernel = true;
    GdnInputs in = gdnRandomInputs(p);
    in.aLog = {};
    CHECK_THAT(validationError(p, in), ContainsSubstring("argument 'A_log': expected a tensor of "
                                                         "shape [HV] = [2], got none"));
  }
  SECTION("a given without the gate in kernel") {
    GdnInputs in = valid;
    in.a = valid.g;
    CHECK_THAT(validationError(kBase, in),
               ContainsSubstring("argument 'a': expected no tensor (gate not computed in kernel)"));
  }
  SECTION("initial state for the wrong number of sequences") {
    GdnProblem p = kBase;
    p.cuSeqlens = {0, 1, 2, 4}; // N = 3
    CHECK_THAT(validationError(p, valid),
               Equals("gdn reference: argument 'initial_state': expected shape [N, HV, K, V] = "
                      "[3, 2, 8, 4], got [1, 2, 8, 4]"));
  }
  SECTION("initial state in the other layout") {
    GdnProblem p = kBase;
    p.stateVFirst = true;
    CHECK_THAT(validationError(p, valid),
               Equals("gdn reference: argument 'initial_state': expected shape [N, HV, V, K] = "
                      "[1, 2, 4, 8], got [1, 2, 8, 4]"));
  }
  SECTION("initial state given but not used") {
    GdnProblem p = kBase;
    p.useInitialState = false;
    CHECK_THAT(validationError(p, valid),
               ContainsSubstring("argument 'initial_state': expected no tensor (useInitialState is "
                                 "false)"));
  }
}

TEST_CASE("chunk size must be positive", "[gdn][validation]") {
  const GdnInputs in = gdnRandomInputs(kBase);
  CHECK_THAT(errorOf([&] { gdnChunkedReference(kBase, in, 0); }),
             Equals("gdn reference: argument 'chunk': expected a positive chunk size, got 0"));
  CHECK_THAT(errorOf([&] { gdnChunkInverse(kBase, in, -1); }),
             ContainsSubstring("argument 'chunk': expected a positive chunk size, got -1"));
  CHECK_THAT(errorOf([&] { gdnChunkLocalCumsum(kBase, in, 0); }),
             ContainsSubstring("argument 'chunk': expected a positive chunk size, got 0"));
}

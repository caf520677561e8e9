// The recurrence (GDN.md §1) and the chunked form (§2) are independent derivations of the same
// outputs: in float64 they agree to rounding.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>

#include <vector>

#include "GdnTestUtil.h"

using namespace qla::gdn;
using qla::gdn::test::Case;

namespace {

std::vector<Case> lengthAndSizeCases() {
  std::vector<Case> cases;
  for (std::int64_t T : {1, 63, 64, 65, 200})
    for (auto [K, V] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {128, 128}, {64, 128},
                        {128, 64}})
      cases.push_back({fmt::format("T={} K={} V={}", T, K, V),
                       GdnProblem{.B = 2, .T = T, .H = 1, .HV = 2, .K = K, .V = V,
                                  .useInitialState = true, .outputFinalState = true}});
  return cases;
}

std::vector<Case> featureCases() {
  const GdnProblem base{.B = 1, .T = 130, .H = 1, .HV = 2, .K = 64, .V = 64,
                        .useInitialState = true, .outputFinalState = true};
  std::vector<Case> cases;
  auto add = [&](std::string name, auto&& edit, GdnGateKind gate = GdnGateKind::logsigmoid) {
    GdnProblem p = base;
    edit(p);
    cases.push_back({std::move(name), p, gate});
  };
  add("GVA H=2 HV=4", [](GdnProblem& p) { p.H = 2, p.HV = 4; });
  add("varlen [0,1,65,130,300]", [](GdnProblem& p) { p.T = 300, p.cuSeqlens = {0, 1, 65, 130, 300}; });
  add("varlen with empty sequences", [](GdnProblem& p) { p.T = 100, p.cuSeqlens = {0, 0, 64, 64, 100}; });
  add("varlen without initial state", [](GdnProblem& p) {
    p.T = 300, p.cuSeqlens = {0, 1, 65, 130, 300}, p.useInitialState = false;
  });
  add("no initial state", [](GdnProblem& p) { p.useInitialState = false; });
  add("stateVFirst K=64 V=128", [](GdnProblem& p) { p.stateVFirst = true, p.V = 128; });
  add("stateVFirst K=128 V=64", [](GdnProblem& p) { p.stateVFirst = true, p.K = 128; });
  add("l2norm in kernel", [](GdnProblem& p) { p.l2normQK = true; });
  add("gate in kernel, zero and strong decay heads", [](GdnProblem& p) { p.gateInKernel = true, p.HV = 4; });
  add("mixed-decay g", [](GdnProblem& p) { p.HV = 4; }, GdnGateKind::mixedDecay);
  add("scale 0.3", [](GdnProblem& p) { p.scale = 0.3; });
  add("batch of 3", [](GdnProblem& p) { p.B = 3, p.T = 65; });
  add("everything at once", [](GdnProblem& p) {
    p.T = 300, p.cuSeqlens = {0, 1, 65, 130, 300}, p.H = 2, p.HV = 4, p.V = 128;
    p.stateVFirst = true, p.l2normQK = true, p.gateInKernel = true, p.scale = 0.3;
  });
  return cases;
}

void checkAgreement(const Case& c, std::int64_t chunk, std::uint64_t seed) {
  INFO(c.name << ", chunk " << chunk << ", seed " << seed);
  const GdnInputs in = gdnRandomInputs(c.problem, {.seed = seed, .gate = c.gate});
  const GdnOutputs rec = gdnRecurrentReference(c.problem, in);
  const GdnOutputs chk = gdnChunkedReference(c.problem, in, chunk);
  qla::gdn::test::requireMeaningful(rec.o, "o");
  CHECK(relL2(chk.o, rec.o) <= 1e-10);
  REQUIRE(rec.finalState.defined() == c.problem.outputFinalState);
  REQUIRE(chk.finalState.defined() == c.problem.outputFinalState);
  if (c.problem.outputFinalState) {
    qla::gdn::test::requireMeaningful(rec.finalState, "final state");
    CHECK(relL2(chk.finalState, rec.finalState) <= 1e-10);
  }
}

} // namespace

TEST_CASE("chunked form equals the recurrence across lengths and sizes", "[gdn][reference]") {
  const std::vector<Case> cases = lengthAndSizeCases();
  const auto i = GENERATE_COPY(range<std::size_t>(0, cases.size()));
  checkAgreement(cases[i], 64, 1 + i);
}

TEST_CASE("chunked form equals the recurrence for every option", "[gdn][reference]") {
  const std::vector<Case> cases = featureCases();
  const auto i = GENERATE_COPY(range<std::size_t>(0, cases.size()));
  checkAgreement(cases[i], 64, 100 + i);
}

TEST_CASE("chunked form equals the recurrence for other chunk sizes", "[gdn][reference]") {
  const auto chunk = GENERATE(as<std::int64_t>{}, 1, 16, 48, 1000);
  const Case c{"varlen, GVA, in-kernel gate",
               GdnProblem{.B = 1, .T = 300, .H = 2, .HV = 4, .K = 64, .V = 64,
                          .cuSeqlens = {0, 1, 65, 130, 300}, .useInitialState = true,
                          .outputFinalState = true, .gateInKernel = true}};
  checkAgreement(c, chunk, 7);
}

TEST_CASE("without outputFinalState no final state is produced", "[gdn][reference]") {
  const GdnProblem p{.B = 1, .T = 70, .H = 1, .HV = 1, .K = 64, .V = 64, .useInitialState = true};
  const GdnInputs in = gdnRandomInputs(p, {.seed = 3});
  CHECK_FALSE(gdnRecurrentReference(p, in).finalState.defined());
  CHECK_FALSE(gdnChunkedReference(p, in).finalState.defined());
  // o does not depend on the flag.
  GdnProblem withState = p;
  withState.outputFinalState = true;
  CHECK(relL2(gdnRecurrentReference(p, in).o, gdnRecurrentReference(withState, in).o) == 0);
}

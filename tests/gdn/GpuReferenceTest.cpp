// The GPU recurrence: its source compiles through NVRTC anywhere; on a GPU it matches the CPU
// recurrence; without one it says so.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>

#include "GdnTestUtil.h"
#include "gdn/reference/GpuReference.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Nvrtc.h"

using namespace qla::gdn;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using qla::gdn::test::Case;

TEST_CASE("GPU reference source compiles with NVRTC for any K", "[gdn][gpu-reference]") {
  std::string why;
  REQUIRE(qla::nvrtcAvailable(&why));
  const auto K = GENERATE(as<std::int64_t>{}, 1, 64, 100, 128, 256);
  INFO("K = " << K);
  const qla::NvrtcResult result = compileGdnGpuReference(K);
  CHECK_THAT(result.ptx, ContainsSubstring(".entry gdn_reference"));
  CHECK_THAT(result.ptx, ContainsSubstring(".target sm_90a"));
  CHECK(result.log.empty());
}

TEST_CASE("GPU reference source needs its row count", "[gdn][gpu-reference]") {
  CHECK_THROWS_WITH(qla::compileCudaToPtx(gdnGpuReferenceSource(), "gdn.cu"),
                    ContainsSubstring("QLA_GDN_ROWS"));
  CHECK_THROWS_WITH(compileGdnGpuReference(0),
                    ContainsSubstring("gdn gpu reference: argument 'K': expected a positive value"));
}

TEST_CASE("GPU reference checks its pointers before needing a GPU", "[gdn][gpu-reference]") {
  const GdnProblem p{.B = 1, .T = 4, .H = 1, .HV = 1, .K = 8, .V = 8, .gateInKernel = true};
  GdnDevicePointers d;
  d.q = d.k = d.v = d.o = 0x1000;
  d.a = d.b = d.aLog = d.dtBias = 0x1000;
  SECTION("missing") {
    d.v = 0;
    CHECK_THROWS_WITH(gdnGpuReference(p, d),
                      "gdn gpu reference: argument 'v': expected a device pointer, got 0");
  }
  SECTION("unexpected") {
    d.g = 0x2000;
    CHECK_THROWS_WITH(gdnGpuReference(p, d), "gdn gpu reference: argument 'g': expected 0 (gate "
                                             "computed in kernel), got a pointer");
  }
  SECTION("problem") {
    GdnProblem bad = p;
    bad.HV = 3, bad.H = 2;
    CHECK_THROWS_WITH(gdnGpuReference(bad, d), StartsWith("gdn gpu reference: argument 'HV'"));
  }
  SECTION("host inputs are validated too") {
    CHECK_THROWS_WITH(gdnGpuReference(p, GdnInputs{}),
                      StartsWith("gdn gpu reference: argument 'q': expected a tensor"));
  }
}

TEST_CASE("GPU reference without a GPU throws a clear error", "[gdn][gpu-reference]") {
  if (qla::Driver::get().available())
    SKIP("a GPU is present");
  const GdnProblem p{.B = 1, .T = 4, .H = 1, .HV = 1, .K = 8, .V = 8};
  const GdnInputs in = gdnRandomInputs(p);
  CHECK_THROWS_WITH(gdnGpuReference(p, in), StartsWith("gdn gpu reference: needs a GPU: no GPU: "));
  GdnDevicePointers d;
  d.q = d.k = d.v = d.g = d.beta = d.o = 0x1000;
  CHECK_THROWS_WITH(gdnGpuReference(p, d), StartsWith("gdn gpu reference: needs a GPU: no GPU: "));
}

TEST_CASE("GPU reference matches the CPU recurrence", "[gdn][gpu-reference]") {
  if (!qla::Driver::get().available())
    SKIP(qla::Driver::get().unavailableReason());
  const GdnProblem base{.B = 2, .T = 130, .H = 1, .HV = 2, .K = 64, .V = 64,
                        .useInitialState = true, .outputFinalState = true};
  std::vector<Case> cases;
  auto add = [&](std::string name, auto&& edit, GdnGateKind gate = GdnGateKind::logsigmoid) {
    GdnProblem p = base;
    edit(p);
    cases.push_back({std::move(name), p, gate});
  };
  add("base", [](GdnProblem&) {});
  add("T=1", [](GdnProblem& p) { p.T = 1; });
  add("K=V=128", [](GdnProblem& p) { p.K = p.V = 128; });
  add("K=V=256", [](GdnProblem& p) { p.K = p.V = 256; });
  add("odd K=100 V=50", [](GdnProblem& p) { p.K = 100, p.V = 50; });
  add("GVA H=2 HV=4", [](GdnProblem& p) { p.H = 2, p.HV = 4; });
  add("varlen", [](GdnProblem& p) { p.B = 1, p.T = 300, p.cuSeqlens = {0, 1, 65, 65, 130, 300}; });
  add("no initial state, no final state", [](GdnProblem& p) {
    p.useInitialState = false, p.outputFinalState = false;
  });
  add("stateVFirst K=64 V=128", [](GdnProblem& p) { p.stateVFirst = true, p.V = 128; });
  add("l2norm", [](GdnProblem& p) { p.l2normQK = true; });
  add("gate in kernel", [](GdnProblem& p) { p.gateInKernel = true, p.HV = 4; });
  add("mixed decay", [](GdnProblem& p) { p.HV = 4; }, GdnGateKind::mixedDecay);
  add("scale", [](GdnProblem& p) { p.scale = 0.3; });
  add("everything, long", [](GdnProblem& p) {
    p.B = 1, p.T = 2000, p.cuSeqlens = {0, 1, 700, 2000}, p.H = 2, p.HV = 4, p.K = p.V = 128;
    p.stateVFirst = true, p.l2normQK = true, p.gateInKernel = true, p.scale = 0.3;
  });
  const auto i = GENERATE_COPY(range<std::size_t>(0, cases.size()));
  const Case& c = cases[i];
  INFO(c.name);
  const GdnInputs in = gdnRandomInputs(c.problem, {.seed = 50 + i, .gate = c.gate});
  const GdnOutputs cpu = gdnRecurrentReference(c.problem, in);
  const GdnOutputs gpu = gdnGpuReference(c.problem, in);
  qla::gdn::test::requireMeaningful(cpu.o, "o");
  CHECK(relL2(gpu.o, cpu.o) <= 1e-12);
  REQUIRE(gpu.finalState.defined() == c.problem.outputFinalState);
  if (c.problem.outputFinalState)
    CHECK(relL2(gpu.finalState, cpu.finalState) <= 1e-12);
}

// Hidden: how long the GPU reference takes on a benchmark shape (run with "[.gpu-timing]").
TEST_CASE("GPU reference timing, (H, HV) = (16, 32), 1×8192, K = V = 128", "[.gpu-timing]") {
  if (!qla::Driver::get().available())
    SKIP(qla::Driver::get().unavailableReason());
  const GdnProblem p{.B = 1, .T = 8192, .H = 16, .HV = 32, .K = 128, .V = 128,
                     .useInitialState = true, .outputFinalState = true, .gateInKernel = true};
  const GdnInputs in = gdnRandomInputs(p, {.seed = 1});
  gdnGpuReference(p, in); // compiles and loads the module
  const auto start = std::chrono::steady_clock::now();
  const GdnOutputs out = gdnGpuReference(p, in);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("gdnGpuReference (uploads and downloads included): " << seconds << " s");
  qla::gdn::test::requireMeaningful(out.o, "o");
}

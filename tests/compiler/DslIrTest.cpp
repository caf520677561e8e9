// DSL -> tile IR: the GEMM program builds the ops and attributes the compiler expects.
#include "gemm/Gemm.h"

#include "qla/dsl/Kernel.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

using qla::kernels::buildGemm;
using qla::kernels::parseGemmConfig;

namespace {

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size()))
    ++n;
  return n;
}

} // namespace

TEST_CASE("the GEMM program builds copies, a gemm and a pipelined loop", "[dsl]") {
  auto k = buildGemm(parseGemmConfig("M=1000,N=700,K=520,stages=3"));
  std::string ir = k->ir();
  INFO(ir);
  CHECK(k->name() == "gemm");
  // Arguments: A (M x K), B (N x K), C (M x N), with their DSL names.
  CHECK(ir.find("%arg0: !qla.tensor<1000x520xbf16> {qla.name = \"A\"}") != std::string::npos);
  CHECK(ir.find("%arg1: !qla.tensor<700x520xbf16> {qla.name = \"B\"}") != std::string::npos);
  CHECK(ir.find("%arg2: !qla.tensor<1000x700xbf16> {qla.name = \"C\"}") != std::string::npos);
  // Launch shape: ceil(700 / 256) x ceil(1000 / 128) blocks of two warpgroups.
  CHECK(ir.find("qla.block = array<i64: 256, 1, 1>") != std::string::npos);
  CHECK(ir.find("qla.grid = array<i64: 3, 8, 1>") != std::string::npos);
  CHECK(count(ir, "qla.kernel") == 1);
  // The loop runs ceil(520 / 64) = 9 steps with 3 stages.
  CHECK(ir.find("= arith.constant 9 : index") != std::string::npos);
  CHECK(count(ir, "qla.for ") == 1);
  CHECK(ir.find("} {stages = 3 : i64}") != std::string::npos);
  CHECK(count(ir, "qla.copy ") == 2);
  CHECK(ir.find("-> !qla.tile<128x64xbf16, smem>") != std::string::npos);
  CHECK(ir.find("-> !qla.tile<256x64xbf16, smem>") != std::string::npos);
  CHECK(count(ir, "qla.gemm ") == 1);
  CHECK(ir.find("{transpose_b} : !qla.tile<128x64xbf16, smem>, !qla.tile<256x64xbf16, smem>, "
                "!qla.tile<128x256xf32, frag> -> !qla.tile<128x256xf32, frag>") != std::string::npos);
  CHECK(ir.find("qla.fill 0.000000e+00 : f32 : !qla.tile<128x256xf32, frag>") != std::string::npos);
  // The epilogue: f32 -> bf16 and a store.
  CHECK(ir.find("qla.map") != std::string::npos);
  CHECK(ir.find("arith.truncf") != std::string::npos);
  CHECK(ir.find("qla.store") != std::string::npos);
  CHECK(count(ir, "qla.block_id") == 2);
  // Tile IR only: nothing of the lowering yet.
  CHECK(ir.find("nvgpu") == std::string::npos);
  CHECK(ir.find("tma_load") == std::string::npos);
}

TEST_CASE("GEMM configs show up in the IR", "[dsl]") {
  SECTION("stages") {
    for (int stages : {2, 5, 7}) { // 7 x 256 x 64 x 2 bytes fit in 227 KiB
      auto k = buildGemm(parseGemmConfig("M=512,N=512,K=512,BN=128,stages=" + std::to_string(stages)));
      CHECK(k->ir().find("} {stages = " + std::to_string(stages) + " : i64}") != std::string::npos);
    }
  }
  SECTION("a 64-row tile uses one warpgroup") {
    auto k = buildGemm(parseGemmConfig("M=512,N=512,K=512,BM=64,BN=128,stages=2"));
    std::string ir = k->ir();
    CHECK(ir.find("qla.block = array<i64: 128, 1, 1>") != std::string::npos);
    CHECK(ir.find("qla.grid = array<i64: 4, 8, 1>") != std::string::npos);
    CHECK(ir.find("!qla.tile<64x128xf32, frag>") != std::string::npos);
  }
}

TEST_CASE("parseGemmConfig reads settings over the defaults", "[dsl]") {
  auto c = parseGemmConfig("M=4096,N=2048,K=1024,BN=128,stages=3");
  CHECK(c.M == 4096);
  CHECK(c.N == 2048);
  CHECK(c.K == 1024);
  CHECK(c.BM == 128);
  CHECK(c.BN == 128);
  CHECK(c.BK == 64);
  CHECK(c.stages == 3);
  CHECK(c.str() == "M=4096,N=2048,K=1024,BM=128,BN=128,BK=64,stages=3");
}

TEST_CASE("roles: the kernel declares them, inRole tags what it builds, channels it cannot lower are refused",
          "[dsl][roles]") {
  using qla::dsl::DType;
  qla::dsl::Kernel k("roles_demo");
  auto a = k.tensor("a", {4096, 64}, DType::bf16);
  auto o = k.tensor("o", {4096, 64}, DType::f32);
  k.roles({{"loads", 1, 40, true}, {"math", 2, 232}});
  k.grid(1);
  qla::dsl::Tile t = k.copy(a, {0, 0}, {64, 64});
  k.inRole("math", [&] {
    qla::dsl::Tile r = k.gemm(t, t, k.fill({64, 64}, DType::f32, 0.0), {.b = true});
    k.store(k.map({r}, DType::f32, [](const qla::dsl::Scalars &e) { return e[0] * 2.0; }), o, {0, 0});
  });
  std::string ir = k.ir();
  INFO(ir);
  // Three warpgroups: the block is set from the roles.
  CHECK(ir.find("qla.block = array<i64: 384, 1, 1>") != std::string::npos);
  CHECK(ir.find("#qla.role<\"loads\", warpgroups = 1, registers = 40, producer = true>") != std::string::npos);
  CHECK(ir.find("#qla.role<\"math\", warpgroups = 2, registers = 232>") != std::string::npos);
  // fill, gemm, map and store are in "math" (the map's body is not tagged); the copy has no role yet.
  CHECK(count(ir, "qla.role = \"math\"") == 4);
  CHECK(count(ir, "qla.role = \"loads\"") == 0);
  CHECK_THROWS_WITH(k.inRole("nope", [] {}), Catch::Matchers::ContainsSubstring("inRole('nope'): no such role"));
  // The copy is not in a loop, so no producer loop fills a ring for it: its channel cannot be lowered.
  CHECK_THROWS_WITH(k.compile(), Catch::Matchers::ContainsSubstring("DslIrTest.cpp:95: this channel is not lowered: "
                                                                    "its value is not a copy that a producer loop puts"));
  qla::dsl::Kernel bad("bad_roles");
  CHECK_THROWS_WITH(bad.roles({{"x", 1, 100}}),
                    Catch::Matchers::ContainsSubstring("role 'x' is invalid: role 'x': registers must be 0 (no "
                                                       "budget) or a multiple of 8 from 24 to 256 (setmaxnreg), got 100"));
  CHECK_THROWS_WITH(bad.roles({{"x", 2, 232}, {"y", 1, 232}}),
                    Catch::Matchers::ContainsSubstring("the roles do not verify: the roles' register budgets need "
                                                       "89088 registers"));
}

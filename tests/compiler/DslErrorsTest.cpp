// Errors in GEMM configs name the field; misuse of the DSL names the DSL source line.
#include "gemm/Gemm.h"

#include "qla/dsl/Kernel.h"
#include "qla/runtime/Error.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

using Catch::Matchers::ContainsSubstring;
using qla::dsl::DType;
using qla::dsl::Index;
using qla::dsl::Kernel;
using qla::dsl::Tiles;
using qla::kernels::buildGemm;
using qla::kernels::parseGemmConfig;

namespace {

/// The message of the qla::Error that `f` throws (fails the test if it throws nothing or another type).
template <typename F>
std::string errorOf(F &&f) {
  try {
    f();
  } catch (const qla::Error &e) {
    return e.what();
  }
  FAIL("no qla::Error was thrown");
  return {};
}

std::string gemmError(const std::string &settings) {
  return errorOf([&] { buildGemm(parseGemmConfig(settings)); });
}

/// "DslErrorsTest.cpp:<line>", the location the DSL reports for a call on `line` of this file.
std::string here(int line) { return "DslErrorsTest.cpp:" + std::to_string(line); }

} // namespace

TEST_CASE("bad GEMM configs are rejected naming the field", "[dsl][errors]") {
  CHECK_THAT(gemmError("M=0,N=64,K=64"), ContainsSubstring("M, N and K must be positive"));
  CHECK_THAT(gemmError("M=64,N=-1,K=64"), ContainsSubstring("M, N and K must be positive"));
  CHECK_THAT(gemmError("M=64,N=64,K=100"), ContainsSubstring("K must be a multiple of 8") &&
                                               ContainsSubstring("got 100"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,BK=32"), ContainsSubstring("BK must be 64") && ContainsSubstring("got 32"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,BM=96"), ContainsSubstring("BM must be 64, 128 or 256, got 96"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,BN=264"),
             ContainsSubstring("BN must be a multiple of 16 up to 256, got 264"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,BN=24"), ContainsSubstring("BN must be a multiple of 16"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,stages=1"), ContainsSubstring("stages must be 2 to 8, got 1"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,stages=9"), ContainsSubstring("stages must be 2 to 8, got 9"));
  // 8 x (256 + 256) x 64 x 2 bytes of shared memory.
  CHECK_THAT(gemmError("M=64,N=64,K=64,BM=256,BN=256,stages=8"),
             ContainsSubstring("need 524288 bytes of shared memory") && ContainsSubstring("227 KiB"));
  // The roles' register budgets (tunable): only with roles, multiples of 8 in [24, 256], within 64K a block.
  CHECK_THAT(gemmError("M=64,N=64,K=64,mma_regs=240"), ContainsSubstring("register budgets of specialize's roles"));
  CHECK_THAT(gemmError("M=64,N=64,K=64,specialize=1,loads_regs=20"),
             ContainsSubstring("loads_regs = 20 must be a multiple of 8 from 24 to 256"));
  CHECK_THAT(gemmError("M=128,N=64,K=64,specialize=1,mma_regs=248"),
             ContainsSubstring("loads 40 + mma 248 x 2 warpgroups exceed the block's 64512 registers"));
  // 512 a thread-slot fits 65536 but not the 168-register cap of 384 threads (setmaxnreg would wait forever).
  CHECK_THAT(gemmError("M=128,N=64,K=64,specialize=1,loads_regs=32,mma_regs=240"),
             ContainsSubstring("exceed the block's 64512 registers (168 a thread x 384 threads)"));
  CHECK_NOTHROW(buildGemm(parseGemmConfig("M=128,N=64,K=64,specialize=1,loads_regs=24,mma_regs=240")));
  // specialize = 2 runs 512 threads under a 128-register cap: a 64 x 256 accumulator (128 registers) does
  // not assemble (ptxas C7602), BN = 128 does.
  CHECK_THAT(gemmError("M=4096,N=4096,K=4096,specialize=2"),
             ContainsSubstring("BN = 256 needs 128 accumulator registers a thread") &&
                 ContainsSubstring("specialize = 2's 512 threads are capped at 128 registers each: use BN <= 128"));
  CHECK_NOTHROW(buildGemm(parseGemmConfig("M=4096,N=4096,K=4096,BN=128,specialize=2")));
  CHECK_NOTHROW(buildGemm(parseGemmConfig("M=4096,N=4096,K=4096,specialize=1")));
}

TEST_CASE("bad GEMM settings are rejected naming the setting", "[dsl][errors]") {
  CHECK_THAT(errorOf([] { parseGemmConfig("M=64,BX=2"); }),
             ContainsSubstring("unknown setting 'BX'") && ContainsSubstring("known: M, N, K, BM, BN, BK, stages"));
  CHECK_THAT(errorOf([] { parseGemmConfig("M=abc"); }),
             ContainsSubstring("setting 'M' needs an integer value, got 'abc'"));
  CHECK_THAT(errorOf([] { parseGemmConfig("K=12x"); }), ContainsSubstring("setting 'K' needs an integer value"));
  CHECK_THAT(errorOf([] { parseGemmConfig("M=64,stages"); }), ContainsSubstring("setting 'stages' is not KEY=VALUE"));
}

TEST_CASE("DSL misuse is reported at the DSL line", "[dsl][errors]") {
  Kernel k("misuse");
  auto A = k.tensor("A", {256, 64}, DType::bf16);
  auto B = k.tensor("B", {128, 64}, DType::bf16);
  auto C = k.tensor("C", {256, 128}, DType::f32);
  k.threads(128);

  SECTION("gemm with mismatched shapes") {
    auto a = k.copy(A, {0, 0}, {64, 64});
    auto b = k.copy(B, {0, 0}, {128, 32}); // K = 32, A has K = 64
    auto acc = k.fill({64, 128}, DType::f32, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.gemm(a, b, acc, {.b = true}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("kernel 'misuse'") &&
                      ContainsSubstring("gemm shapes do not agree") && ContainsSubstring("B\xe1\xb5\x80 128x32"));
  }
  SECTION("gemm with an accumulator of the wrong shape") {
    auto a = k.copy(A, {0, 0}, {64, 64});
    auto b = k.copy(B, {0, 0}, {128, 64});
    auto acc = k.fill({64, 64}, DType::f32, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.gemm(a, b, acc, {.b = true}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("expected acc 64x128"));
  }
  SECTION("gemm accumulating in bf16") {
    auto a = k.copy(A, {0, 0}, {64, 64});
    auto b = k.copy(B, {0, 0}, {128, 64});
    auto acc = k.fill({64, 128}, DType::bf16, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.gemm(a, b, acc, {.b = true}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("gemm accumulates in f32"));
  }
  SECTION("gemm with a transposed register A") {
    auto a = k.fill({64, 64}, DType::bf16, 0.0);
    auto b = k.copy(B, {0, 0}, {128, 64});
    auto acc = k.fill({64, 128}, DType::f32, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.gemm(a, b, acc, {.a = true, .b = true}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("gemm takes B in shared memory"));
  }
  SECTION("gemm with B in registers") {
    auto a = k.copy(A, {0, 0}, {64, 64});
    auto b = k.fill({128, 64}, DType::bf16, 0.0);
    auto acc = k.fill({64, 128}, DType::f32, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.gemm(a, b, acc, {.b = true}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("gemm takes B in shared memory"));
  }
  SECTION("copy with the wrong number of offsets") {
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.copy(A, {0}, {64, 64}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("copy of 'A' needs 2 offsets"));
  }
  SECTION("store of the wrong dtype") {
    auto acc = k.fill({64, 128}, DType::bf16, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.store(acc, C, {0, 0}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("cannot store a bf16 tile into 'C' (f32)"));
  }
  SECTION("store with the wrong number of offsets") {
    auto acc = k.fill({64, 128}, DType::f32, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.store(acc, C, {0, 0, 0}); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("store into 'C' needs 2 offsets, got 3"));
  }
  SECTION("cast of a shared tile") {
    auto a = k.copy(A, {0, 0}, {64, 64});
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.cast(a, DType::f32); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("cast applies to register fragments"));
  }
  SECTION("threads not a whole number of warpgroups") {
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.threads(96); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("threads must be a multiple of 128 up to 1024, got 96"));
  }
  SECTION("blockId out of range") {
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.blockId(3); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("blockId dimension must be 0, 1 or 2, got 3"));
  }
  SECTION("a tensor with a zero dimension") {
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.tensor("D", {0, 16}, DType::f32); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("tensor 'D' has a non-positive dimension"));
  }
  SECTION("a loop body returning the wrong number of tiles") {
    auto acc = k.fill({64, 128}, DType::f32, 0.0);
    int line = __LINE__ + 1;
    std::string e = errorOf([&] { k.loop(0, 4, 1, 2, {acc}, [&](Index, const Tiles &) { return Tiles{}; }); });
    CHECK_THAT(e, ContainsSubstring(here(line)) && ContainsSubstring("loop body returns 0 tiles for 1 carried"));
  }
}

TEST_CASE("a compiler error names the DSL line of the op it is about", "[dsl][errors]") {
  // B used untransposed (K x N) is read MN-major from a TMA-pipelined tile (stored as the tensor is laid
  // out), which wgmma cannot do with 64-byte rows: qla-assign-layouts refuses the gemm, and compile() says
  // where it is.
  Kernel k("transposed_pipelined_b");
  auto A = k.tensor("A", {256, 256}, DType::bf16);
  auto B = k.tensor("B", {256, 32}, DType::bf16);
  auto C = k.tensor("C", {256, 32}, DType::bf16);
  k.threads(128);
  k.grid(1, 4);
  int line = 0;
  Tiles acc = k.loop(0, 4, 1, /*stages=*/2, {k.fill({64, 32}, DType::f32, 0.0)}, [&](Index i, const Tiles &acc) {
    auto a = k.copy(A, {0, i * 64}, {64, 64});
    auto b = k.copy(B, {i * 64, 0}, {64, 32});
    line = __LINE__ + 1;
    return Tiles{k.gemm(a, b, acc[0], {})};
  });
  k.store(k.cast(acc[0], DType::bf16), C, {0, 0});
  std::string e = errorOf([&] { k.compile(); });
  CHECK_THAT(e, ContainsSubstring("kernel 'transposed_pipelined_b'") && ContainsSubstring("lowering failed") &&
                    ContainsSubstring(here(line) + ": 'qla.gemm' op reads a TMA-pipelined tile in a transposed role"));
}

TEST_CASE("a kernel over the shared-memory budget is reported at its DSL line", "[dsl][errors]") {
  int line = __LINE__ + 1;
  Kernel k("too_big");
  auto A = k.tensor("A", {1024, 1024}, DType::bf16);
  auto B = k.tensor("B", {1024, 1024}, DType::bf16);
  auto C = k.tensor("C", {1024, 1024}, DType::bf16);
  k.threads(256);
  // 8 stages x (256 + 256) x 128 bf16 = 1 MiB of rings.
  Tiles acc = k.loop(0, 8, 1, /*stages=*/8, {k.fill({256, 256}, DType::f32, 0.0)}, [&](Index i, const Tiles &acc) {
    auto a = k.copy(A, {0, i * 128}, {256, 128});
    auto b = k.copy(B, {0, i * 128}, {256, 128});
    return Tiles{k.gemm(a, b, acc[0], {.b = true})};
  });
  k.store(k.cast(acc[0], DType::bf16), C, {0, 0});
  std::string e = errorOf([&] { k.compile(); });
  CHECK_THAT(e, ContainsSubstring(here(line) + ": shared memory needed (1049600 bytes) exceeds the budget of "
                                                 "232448 bytes"));
}

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>

#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/TensorMap.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using qla::DType;
using qla::TensorMapSpec;

namespace {

// Validation never dereferences the address, so any aligned value will do.
void* const kAligned = reinterpret_cast<void*>(std::uintptr_t(0x7f0000001000));

// A bf16 [4096, 1024] row-major matrix read in 64x64 tiles with 128-byte swizzle.
TensorMapSpec validSpec() {
  TensorMapSpec spec;
  spec.dtype = DType::bf16;
  spec.globalDims = {1024, 4096};
  spec.globalStridesBytes = {1024 * 2};
  spec.box = {64, 64};
  spec.swizzleBytes = 128;
  return spec;
}

std::string failure(const TensorMapSpec& spec, const void* address = kAligned) {
  try {
    qla::validateTensorMap(spec, address, "gemm", "A");
  } catch (const qla::Error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("dtype names, sizes and parsing", "[runtime][tensormap]") {
  CHECK(qla::dtypeName(DType::bf16) == "bf16");
  CHECK(qla::dtypeName(DType::i8) == "i8");
  CHECK(qla::dtypeBytes(DType::bf16) == 2);
  CHECK(qla::dtypeBytes(DType::f16) == 2);
  CHECK(qla::dtypeBytes(DType::f32) == 4);
  CHECK(qla::dtypeBytes(DType::f64) == 8);
  CHECK(qla::dtypeBytes(DType::i32) == 4);
  CHECK(qla::dtypeBytes(DType::i8) == 1);
  for (DType d : {DType::bf16, DType::f16, DType::f32, DType::f64, DType::i32, DType::i8})
    CHECK(qla::parseDType(qla::dtypeName(d)) == d);
  CHECK_THROWS_WITH(qla::parseDType("fp8"),
                    ContainsSubstring("unknown dtype 'fp8'") && ContainsSubstring("bf16, f16"));
}

TEST_CASE("valid tensor maps pass validation", "[runtime][tensormap]") {
  CHECK(failure(validSpec()) == "no error");

  TensorMapSpec rank1;
  rank1.dtype = DType::f32;
  rank1.globalDims = {1000};
  rank1.box = {256};
  CHECK(failure(rank1) == "no error");

  TensorMapSpec rank5;
  rank5.dtype = DType::i8;
  rank5.globalDims = {64, 3, 4, 5, 6};
  rank5.globalStridesBytes = {64, 192, 768, 3840};
  rank5.box = {32, 1, 2, 3, 4};
  rank5.swizzleBytes = 32;
  CHECK(failure(rank5) == "no error");
}

TEST_CASE("tensor map validation names kernel, argument and the broken rule", "[runtime][tensormap]") {
  TensorMapSpec spec = validSpec();

  SECTION("rank") {
    spec.globalDims = {};
    spec.globalStridesBytes = {};
    spec.box = {};
    CHECK_THAT(failure(spec), StartsWith("gemm: argument 'A': ") &&
                                  ContainsSubstring("expected a tensor of rank 1 to 5") &&
                                  ContainsSubstring("got rank 0"));
    spec.globalDims = {16, 2, 2, 2, 2, 2};
    CHECK_THAT(failure(spec), ContainsSubstring("got rank 6"));
  }
  SECTION("stride count") {
    spec.globalStridesBytes = {2048, 4096};
    CHECK_THAT(failure(spec), ContainsSubstring("expected 1 global strides") &&
                                  ContainsSubstring("got 2"));
  }
  SECTION("box count") {
    spec.box = {64};
    CHECK_THAT(failure(spec), ContainsSubstring("expected 2 box sizes for a rank-2 tensor, got 1"));
  }
  SECTION("null address") {
    CHECK_THAT(failure(spec, nullptr), ContainsSubstring("expected a non-null global address"));
  }
  SECTION("misaligned address") {
    const void* misaligned = static_cast<const char*>(kAligned) + 8;
    CHECK_THAT(failure(spec, misaligned),
               ContainsSubstring("expected a 16-byte aligned global address") &&
                   ContainsSubstring("0x7f0000001008") && ContainsSubstring("8 bytes past"));
  }
  SECTION("zero dimension") {
    spec.globalDims = {1024, 0};
    CHECK_THAT(failure(spec), ContainsSubstring("expected globalDims[1] between 1 and 2^32, got 0"));
  }
  SECTION("dimension above 2^32") {
    spec.globalDims = {(std::uint64_t(1) << 32) + 1, 2};
    CHECK_THAT(failure(spec),
               ContainsSubstring("expected globalDims[0] between 1 and 2^32, got 4294967297"));
  }
  SECTION("stride not a multiple of 16") {
    spec.globalDims = {1002, 4096};
    spec.globalStridesBytes = {2004};
    CHECK_THAT(failure(spec), ContainsSubstring("expected globalStridesBytes[0] (the byte stride of "
                                                "dim 1) to be a multiple of 16, got 2004"));
  }
  SECTION("stride too large") {
    spec.globalStridesBytes = {std::uint64_t(1) << 40};
    CHECK_THAT(failure(spec), ContainsSubstring("below 2^40, got 1099511627776"));
  }
  SECTION("box entry zero") {
    spec.box = {64, 0};
    CHECK_THAT(failure(spec), ContainsSubstring("expected box[1] between 1 and 256, got 0"));
  }
  SECTION("box entry above 256") {
    spec.swizzleBytes = 0;
    spec.box = {64, 512};
    CHECK_THAT(failure(spec), ContainsSubstring("expected box[1] between 1 and 256, got 512"));
  }
  SECTION("inner box bytes not a multiple of 16") {
    spec.box = {12, 64};
    CHECK_THAT(failure(spec), ContainsSubstring("inner box extent (box[0] = 12 x 2 bytes = 24 "
                                                "bytes) to be a multiple of 16 bytes"));
  }
  SECTION("unknown swizzle") {
    spec.swizzleBytes = 48;
    CHECK_THAT(failure(spec), ContainsSubstring("expected swizzleBytes of 0, 32, 64 or 128, got 48"));
  }
  SECTION("inner box wider than the swizzle span") {
    spec.box = {128, 64};
    CHECK_THAT(failure(spec), ContainsSubstring("(box[0] = 128 x 2 bytes = 256 bytes) to fit the "
                                                "128-byte swizzle span"));
    spec.box = {32, 64};
    spec.swizzleBytes = 32;
    CHECK_THAT(failure(spec), ContainsSubstring("64 bytes) to fit the 32-byte swizzle span"));
    spec.swizzleBytes = 0; // no swizzle: any width up to 256 elements
    CHECK(failure(spec) == "no error");
  }
  SECTION("NaN fill on an integer dtype") {
    spec.dtype = DType::i32;
    spec.box = {32, 64};
    spec.oobZeroFill = false;
    CHECK_THAT(failure(spec),
               ContainsSubstring("expected a floating-point dtype for NaN out-of-bounds fill, got i32"));
  }
  SECTION("invalid dtype value") {
    spec.dtype = static_cast<DType>(42);
    CHECK_THAT(failure(spec), ContainsSubstring("TMA-supported dtype") && ContainsSubstring("42"));
  }
}

TEST_CASE("encodeTensorMap validates before it needs the driver", "[runtime][tensormap]") {
  TensorMapSpec spec = validSpec();
  spec.box = {12, 64};
  CHECK_THROWS_WITH(qla::encodeTensorMap(spec, kAligned, "gemm", "A"),
                    ContainsSubstring("gemm: argument 'A'") && ContainsSubstring("multiple of 16"));
  if (!qla::Driver::get().available()) {
    CHECK_THROWS_WITH(qla::encodeTensorMap(validSpec(), kAligned, "gemm", "A"),
                      ContainsSubstring("no GPU"));
  }
}

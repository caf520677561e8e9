#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <string>

#include "qla/runtime/Error.h"
#include "qla/runtime/Nvjitlink.h"
#include "qla/runtime/Nvrtc.h"

using Catch::Matchers::ContainsSubstring;

namespace {
constexpr const char* kDoubleKernel =
    R"(extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2; })";
}

TEST_CASE("NVRTC compiles CUDA C++ to sm_90a PTX", "[runtime][nvrtc]") {
  std::string why;
  const bool available = qla::nvrtcAvailable(&why);
  INFO(why);
  REQUIRE(available);
  CHECK_FALSE(qla::nvrtcVersion().empty());

  const qla::NvrtcResult result = qla::compileCudaToPtx(kDoubleKernel, "double.cu");
  CHECK_THAT(result.ptx, ContainsSubstring(".entry k"));
  CHECK_THAT(result.ptx, ContainsSubstring(".target sm_90a"));
  CHECK(result.ptx.back() != '\0');

  // And the PTX links.
  const std::string cubin = qla::linkPtxToCubin(result.ptx, "sm_90a");
  CHECK(cubin.substr(0, 4) == "\x7f" "ELF");
}

TEST_CASE("NVRTC default options and overrides", "[runtime][nvrtc]") {
  const auto defaults = qla::defaultNvrtcOptions();
  CHECK(std::find(defaults.begin(), defaults.end(), "-arch=compute_90a") != defaults.end());
  CHECK(std::find(defaults.begin(), defaults.end(), "-std=c++17") != defaults.end());

  // A user -arch replaces the default one.
  const auto result = qla::compileCudaToPtx(kDoubleKernel, "double.cu", {"-arch=compute_80"});
  CHECK_THAT(result.ptx, ContainsSubstring(".target sm_80"));

  // A user -std replaces the default: C++20 concepts compile only with it.
  const char* cpp20 = R"(template <typename T> concept Small = sizeof(T) <= 4;
    template <Small T> __device__ T twice(T v) { return v * 2; }
    extern "C" __global__ void k(int* x) { x[0] = twice(x[0]); })";
  CHECK_THROWS_AS(qla::compileCudaToPtx(cpp20, "concepts.cu"), qla::Error);
  CHECK_THAT(qla::compileCudaToPtx(cpp20, "concepts.cu", {"-std=c++20"}).ptx,
             ContainsSubstring(".entry k"));
}

TEST_CASE("NVRTC compile errors carry the log", "[runtime][nvrtc]") {
  try {
    qla::compileCudaToPtx("extern \"C\" __global__ void k(float* x) { x[0] = ; }", "broken.cu");
    FAIL("broken source compiled");
  } catch (const qla::Error& e) {
    const std::string message = e.what();
    CHECK_THAT(message, ContainsSubstring("NVRTC: compiling 'broken.cu' failed"));
    CHECK_THAT(message, ContainsSubstring("NVRTC_ERROR_COMPILATION"));
    CHECK_THAT(message, ContainsSubstring("broken.cu(1): error"));
  }
}

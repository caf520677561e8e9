#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <string>

#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"
#include "qla/runtime/Launch.h"

using Catch::Matchers::ContainsSubstring;
using qla::LaunchConfig;

namespace {

// Configuration checks run before any driver call, so a stand-in handle is never used.
const CUfunction kFunction = reinterpret_cast<CUfunction>(std::uintptr_t(0x1000));

std::string launchError(const LaunchConfig& config, CUfunction f = kFunction) {
  try {
    qla::launch(f, config, nullptr, "chunk_fwd");
  } catch (const qla::Error& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("launch rejects impossible configurations with the kernel's name", "[runtime][launch]") {
  LaunchConfig c;
  c.grid[0] = 132;
  c.block[0] = 384;

  SECTION("null function") {
    CHECK_THAT(launchError(c, nullptr), ContainsSubstring("launch of 'chunk_fwd': the CUfunction is null"));
  }
  SECTION("block too wide") {
    c.block[0] = 2048;
    CHECK_THAT(launchError(c), ContainsSubstring("launch of 'chunk_fwd': expected block.x between 1 "
                                                 "and 1024, got block [2048, 1, 1]"));
  }
  SECTION("block z too deep") {
    c.block[0] = 1;
    c.block[2] = 65;
    CHECK_THAT(launchError(c), ContainsSubstring("expected block.z between 1 and 64"));
  }
  SECTION("too many threads") {
    c.block[0] = 32;
    c.block[1] = 32;
    c.block[2] = 2;
    CHECK_THAT(launchError(c), ContainsSubstring("expected at most 1024 threads per block, got block "
                                                 "[32, 32, 2] = 2048 threads"));
  }
  SECTION("empty grid") {
    c.grid[0] = 0;
    CHECK_THAT(launchError(c), ContainsSubstring("expected grid.x between 1 and 2147483647, got grid "
                                                 "[0, 1, 1]"));
  }
  SECTION("grid y too large") {
    c.grid[1] = 70000;
    CHECK_THAT(launchError(c), ContainsSubstring("expected grid.y between 1 and 65535"));
  }
  SECTION("grid not a multiple of the cluster") {
    c.cluster[0] = 5;
    CHECK_THAT(launchError(c), ContainsSubstring("expected grid [132, 1, 1] to be a multiple of the "
                                                 "cluster shape [5, 1, 1]"));
  }
  SECTION("cluster too large") {
    c.grid[0] = 128;
    c.cluster[0] = 16;
    CHECK_THAT(launchError(c), ContainsSubstring("expected at most 8 blocks per cluster"));
  }
  SECTION("zero cluster") {
    c.cluster[1] = 0;
    CHECK_THAT(launchError(c), ContainsSubstring("expected cluster.y of at least 1"));
  }
  SECTION("a valid configuration reaches the driver") {
    if (qla::Driver::get().available())
      SKIP("a GPU is present; GpuTest.cpp launches real kernels");
    CHECK_THAT(launchError(c), ContainsSubstring("no GPU"));
  }
}

TEST_CASE("a manifest's dependent_launch reaches the launch configuration", "[runtime][launch]") {
  auto configOf = [](const char* extra) {
    qla::Json manifest = qla::Json::parse(std::string(R"({"kernel": "k", "entry": "k", "grid": [4, 1, 1],
      "block": [128, 1, 1], "smem_bytes": 0, "params": [])") + extra + "}");
    return qla::KernelSignature(manifest).launchConfig();
  };
  CHECK_FALSE(configOf("").dependentLaunch);
  CHECK(configOf(R"(, "dependent_launch": true)").dependentLaunch);
  CHECK_FALSE(configOf(R"(, "dependent_launch": false)").dependentLaunch);
}

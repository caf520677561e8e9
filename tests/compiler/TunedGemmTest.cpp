// The GEMM reading the tuning database: which tuned config suits a product's shape.
#include "gemm/TunedGemm.h"

#include <catch2/catch_test_macros.hpp>

using namespace qla;
using namespace qla::kernels;

TEST_CASE("the GEMM takes the tiles tuned for the nearest shape on its GPU", "[gemm][tuning]") {
  DeviceInfo h200{.name = "NVIDIA H200", .smCount = 132};
  TuningDb db = TuningDb::load("/nonexistent/tuning.json");
  auto add = [&](const std::string &shape, const std::string &tiles, double ms, bool pass = true) {
    db.record(h200, {"gemm", shape, shape + (tiles.empty() ? "" : "," + tiles), ms, 1e-3, pass, "2026-12-03"});
  };
  add("M=8192,N=8192,K=8192", "", 1.80);
  add("M=8192,N=8192,K=8192", "BN=256,stages=3", 1.68);
  add("M=8192,N=8192,K=8192", "BN=128,stages=5", 1.50, false); // fastest, but failed its check
  add("M=4096,N=4096,K=4096", "specialize=1", 0.200);
  add("M=4096,N=4096,K=4096", "", 0.201);
  const std::string gpu = TuningDb::gpuKey(h200);

  std::optional<GemmConfig> c = tunedGemm(db, gpu, 8192, 8192, 8192);
  REQUIRE(c);
  CHECK(c->BN == 256);
  CHECK(c->stages == 3);
  // Nearest tuned shape (log scale), with this product's extents.
  c = tunedGemm(db, gpu, 6144, 8192, 8192);
  REQUIRE(c);
  CHECK((c->M == 6144 && c->BN == 256 && c->stages == 3));
  c = tunedGemm(db, gpu, 2048, 4096, 4096);
  REQUIRE(c);
  CHECK((c->M == 2048 && c->specialize == 1));
  // Nothing tuned on another GPU; tiles that do not fit the shape (K not a multiple of 8) are not taken.
  CHECK_FALSE(tunedGemm(db, TuningDb::gpuKey(DeviceInfo{.name = "NVIDIA H100", .smCount = 132}), 8192, 8192, 8192));
  CHECK_FALSE(tunedGemm(db, gpu, 8192, 8192, 8191));
  // Without a GPU (this test's machine may have none) or a database: the default tiles.
  GemmConfig d = tunedGemmConfig(512, 256, 128, "/nonexistent/tuning.json");
  CHECK((d.M == 512 && d.N == 256 && d.K == 128 && d.BN == GemmConfig{}.BN && d.stages == GemmConfig{}.stages));
}

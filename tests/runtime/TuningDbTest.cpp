#include "qla/runtime/Error.h"
#include "qla/runtime/TuningDb.h"

#include "TempDir.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <fstream>

TEST_CASE("tuning database: record, find, best, and a round trip through the file", "[runtime][tuning]") {
  qla::test::TempDir tmp;
  auto file = tmp.path() / "tuning.json";
  qla::TuningDb db = qla::TuningDb::load(file); // absent: empty
  CHECK(db.gpus().empty());
  qla::DeviceInfo h200{.name = "NVIDIA H200", .smCount = 132, .smemPerBlockOptin = 232448, .l2Bytes = 62914560,
                       .clockKHz = 1980000};
  const std::string gpu = qla::TuningDb::gpuKey(h200), shape = "M=4096,N=4096,K=4096";
  db.record(h200, {"gemm", shape, shape + ",BN=256,stages=4", 0.200, 1e-3, true, "2026-12-03"});
  db.record(h200, {"gemm", shape, shape + ",BN=128,stages=3", 0.190, 1e-3, true, "2026-12-03"});
  db.record(h200, {"gemm", shape, shape + ",BN=64,stages=2", 0.150, 0.5, false, "2026-12-03"}); // fast, wrong
  db.record(h200, {"gemm", shape, shape + ",BN=256,stages=4", 0.195, 1e-3, true, "2026-12-04"}); // re-timed
  // A NaN error (an output NaN) is saved as null and never passes, whatever the entry said.
  db.record(h200, {"gemm", shape, shape + ",BN=32,stages=2", 0.100, std::nan(""), true, "2026-12-04"});
  db.save(file);

  qla::TuningDb back = qla::TuningDb::load(file);
  CHECK(back.gpus() == std::vector<std::string>{gpu});
  CHECK(back.entries(gpu).size() == 4);
  auto nan = back.find(gpu, "gemm", shape, shape + ",BN=32,stages=2");
  REQUIRE(nan);
  CHECK(std::isnan(nan->error));
  CHECK_FALSE(nan->pass);
  auto found = back.find(gpu, "gemm", shape, shape + ",BN=256,stages=4");
  REQUIRE(found);
  CHECK(found->ms == 0.195);
  CHECK_FALSE(back.find(gpu, "gemm", shape, shape + ",BN=16"));
  CHECK_FALSE(back.find("another GPU", "gemm", shape, shape + ",BN=256,stages=4"));
  auto best = back.best(gpu, "gemm", shape);
  REQUIRE(best);
  CHECK(best->config == shape + ",BN=128,stages=3"); // the failing faster one does not count
  CHECK_FALSE(back.best(gpu, "gemm", "M=1,N=1,K=1"));

  std::ofstream(tmp.path() / "bad.json") << "{\"version\": 7}";
  CHECK_THROWS_WITH(qla::TuningDb::load(tmp.path() / "bad.json"),
                    Catch::Matchers::ContainsSubstring("not a tuning database"));
}

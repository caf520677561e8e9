#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Module.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

TEST_CASE("without a GPU the driver reports why and every GPU call throws", "[runtime][driver]") {
  qla::Driver& driver = qla::Driver::get();
  CHECK(&driver == &qla::Driver::get());
  if (driver.available()) {
    CHECK(driver.unavailableReason().empty());
    SKIP("a GPU is present: " << driver.deviceCount() << " device(s), driver "
                              << driver.driverVersion());
  }
  const std::string& reason = driver.unavailableReason();
  CHECK_THAT(reason, StartsWith("no GPU: "));
  CHECK_THAT(reason, ContainsSubstring("libcuda") || ContainsSubstring("device") ||
                         ContainsSubstring("cuInit"));
  CHECK(driver.driverVersion() == 0);
  CHECK(driver.deviceCount() == 0);

  CHECK_THROWS_WITH(driver.requireAvailable(), reason);
  CHECK_THROWS_WITH(driver.ensureContext(), reason);
  CHECK_THROWS_WITH(qla::queryDevice(), reason);
  CHECK_THROWS_WITH(qla::DeviceBuffer(1024), reason);
  CHECK_THROWS_WITH(qla::LoadedModule(".version 8.0\n", "m"), reason);
  // An empty or null-size buffer needs no driver call but must still not pretend to work.
  qla::DeviceBuffer empty;
  CHECK(empty.ptr() == 0);
  CHECK_THROWS_WITH(empty.upload("x", 1), ContainsSubstring("1 bytes do not fit in a buffer of 0"));
}

TEST_CASE("driver check() turns CUresult codes into named errors", "[runtime][driver]") {
  qla::Driver& driver = qla::Driver::get();
  CHECK_NOTHROW(driver.check(CUDA_SUCCESS, "cuNothing"));
  if (!driver.cuGetErrorName) {
    // libcuda is absent: the numeric code is all there is.
    CHECK_THROWS_WITH(driver.check(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc(16 bytes)"),
                      "cuMemAlloc(16 bytes) failed: CUresult 1");
  } else {
    CHECK_THROWS_WITH(driver.check(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc(16 bytes)"),
                      StartsWith("cuMemAlloc(16 bytes) failed: CUDA_ERROR_INVALID_VALUE"));
  }
}

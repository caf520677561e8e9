#include "gemm/TunedGemm.h"

#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <cmath>

namespace qla::kernels {

std::optional<GemmConfig> tunedGemm(const TuningDb &db, const std::string &gpu, int64_t M, int64_t N, int64_t K) {
  std::optional<std::pair<double, std::string>> nearest;
  for (const TuningEntry &e : db.entries(gpu)) {
    if (e.kernel != "gemm" || !e.pass)
      continue;
    GemmConfig s;
    try {
      s = parseGemmConfig(e.shape);
    } catch (const Error &) {
      continue; // not a shape this reads
    }
    if (s.M <= 0 || s.N <= 0 || s.K <= 0)
      continue;
    double distance = std::abs(std::log(double(s.M) / M)) + std::abs(std::log(double(s.N) / N)) +
                      std::abs(std::log(double(s.K) / K));
    if (!nearest || distance < nearest->first)
      nearest = {distance, e.shape};
  }
  if (!nearest)
    return std::nullopt;
  std::optional<TuningEntry> best = db.best(gpu, "gemm", nearest->second);
  if (!best)
    return std::nullopt;
  try {
    GemmConfig c = parseGemmConfig(best->config);
    c.M = M;
    c.N = N;
    c.K = K;
    (void)buildGemm(c); // the tiles must suit this shape (throws otherwise)
    return c;
  } catch (const Error &) {
    return std::nullopt;
  }
}

GemmConfig tunedGemmConfig(int64_t M, int64_t N, int64_t K, const std::filesystem::path &dbPath) {
  GemmConfig fallback;
  fallback.M = M;
  fallback.N = N;
  fallback.K = K;
  Driver &drv = Driver::get();
  if (!drv.available())
    return fallback;
  drv.ensureContext();
  try {
    TuningDb db = TuningDb::load(dbPath.empty() ? TuningDb::defaultPath() : dbPath);
    if (auto gpu = db.gpuFor(queryDevice(), "gemm"))
      if (auto c = tunedGemm(db, *gpu, M, N, K))
        return *c;
  } catch (const Error &) { // not a tuning database: as if none
  }
  return fallback;
}

} // namespace qla::kernels

#include "gdn/api/TunedConfig.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace qla::gdn {

std::string gdnTuningShape(int64_t H, int64_t HV, int64_t K, int64_t V, int64_t B, int64_t T) {
  return fmt::format("H={},HV={},K={},V={},B={},T={}", H, HV, K, V, B, T);
}

std::optional<TuningEntry> tunedGdnForward(const TuningDb &db, const std::string &gpu, int64_t H, int64_t HV, int64_t K,
                                           int64_t V, int64_t B, int64_t T) {
  const std::string heads = fmt::format("H={},HV={},K={},V={},", H, HV, K, V);
  // Candidate shapes: those tuned for these heads, by (different B, log distance of tokens).
  std::optional<std::pair<std::pair<bool, double>, std::string>> nearest;
  for (const TuningEntry &e : db.entries(gpu)) {
    if (e.kernel != "gdn_forward" || e.shape.rfind(heads, 0) != 0 || !e.pass)
      continue;
    int64_t b = 0, t = 0;
    std::stringstream ss(e.shape.substr(heads.size()));
    try {
      for (std::string item; std::getline(ss, item, ',');) {
        if (item.rfind("B=", 0) == 0)
          b = std::stoll(item.substr(2));
        else if (item.rfind("T=", 0) == 0)
          t = std::stoll(item.substr(2));
      }
    } catch (const std::exception &) {
      continue; // not a shape this reads: not a candidate
    }
    if (b <= 0 || t <= 0)
      continue;
    const bool sameB = b == B;
    const double distance = sameB ? std::abs(std::log(double(t) / double(T)))
                                  : std::abs(std::log(double(b * t) / double(B * T)));
    std::pair<bool, double> rank{!sameB, distance};
    if (!nearest || rank < nearest->first)
      nearest = {{rank, e.shape}};
  }
  if (!nearest)
    return std::nullopt;
  return db.best(gpu, "gdn_forward", nearest->second);
}

} // namespace qla::gdn

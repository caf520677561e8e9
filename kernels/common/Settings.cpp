#include "common/Settings.h"

#include "qla/runtime/Error.h"

#include <cmath>
#include <fmt/format.h>
#include <sstream>

namespace qla::kernels {

void applySettings(std::string_view text, std::string_view who, const std::vector<Setting> &settings) {
  std::stringstream ss{std::string(text)};
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty())
      continue;
    auto eq = item.find('=');
    if (eq == std::string::npos)
      throw Error(fmt::format("{}: setting '{}' is not KEY=VALUE", who, item));
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    auto it = std::find_if(settings.begin(), settings.end(), [&](const Setting &s) { return s.key == key; });
    if (it == settings.end()) {
      std::vector<std::string> known;
      for (const Setting &s : settings)
        known.push_back(s.key);
      throw Error(fmt::format("{}: unknown setting '{}' (known: {})", who, key, fmt::join(known, ", ")));
    }
    double v = 0;
    size_t used = 0;
    try {
      v = std::stod(value, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != value.size() || !std::isfinite(v) || (it->integer && v != std::floor(v)))
      throw Error(fmt::format("{}: setting '{}' needs {} value, got '{}'", who, key,
                              it->integer ? "an integer" : "a numeric", value));
    it->set(v);
  }
}

} // namespace qla::kernels

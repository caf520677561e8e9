// "KEY=VALUE,..." settings of kernel configurations (qlac --set), parsed in one place.
#ifndef QLA_KERNELS_COMMON_SETTINGS_H
#define QLA_KERNELS_COMMON_SETTINGS_H

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace qla::kernels {

struct Setting {
  std::string key;
  std::function<void(double)> set;
  bool integer = true;
};

/// Applies every KEY=VALUE of `text`; throws qla::Error naming `who` and the setting for a malformed
/// item, an unknown key (listing the known ones) or a value that is not a number (or an integer).
void applySettings(std::string_view text, std::string_view who, const std::vector<Setting> &settings);

} // namespace qla::kernels

#endif

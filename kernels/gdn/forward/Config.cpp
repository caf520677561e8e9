#include "gdn/forward/GdnForward.h"

#include "qla/runtime/Error.h"

#include <cmath>
#include <sstream>
#include <fmt/format.h>

namespace qla::gdn {

void GdnForwardConfig::validate() const {
  auto fail = [](const std::string &what) { return Error("gdn forward: " + what); };
  if (H <= 0 || HV <= 0 || HV % H != 0)
    throw fail(fmt::format("HV must be a positive multiple of H, got H = {}, HV = {}", H, HV));
  for (auto [name, d] : {std::pair{"K", K}, std::pair{"V", V}})
    if (d != 64 && d != 128 && d != 256)
      throw fail(fmt::format("{} = {} is not supported (supported: 64, 128, 256)", name, d));
  if (BV <= 0 || V % BV != 0 || BV % 16 != 0)
    throw fail(fmt::format("BV = {} must be a multiple of 16 that divides V = {}", BV, V));
  if (stateVFirst)
    throw fail("state_v_first is not supported yet (supported: states stored [K][V])");
  if (!std::isfinite(scale))
    throw fail("scale must be finite");
}

double GdnForwardConfig::resolvedScale() const { return scale > 0 ? scale : 1.0 / std::sqrt(double(K)); }

GdnForwardConfig parseGdnForwardConfig(const std::string &settings) {
  GdnForwardConfig c;
  std::stringstream ss(settings);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty())
      continue;
    auto eq = item.find('=');
    if (eq == std::string::npos)
      throw Error(fmt::format("gdn forward: setting '{}' is not KEY=VALUE", item));
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    double v = 0;
    try {
      size_t used = 0;
      v = std::stod(value, &used);
      if (used != value.size())
        throw std::invalid_argument(value);
    } catch (...) {
      throw Error(fmt::format("gdn forward: setting '{}' needs a number, got '{}'", key, value));
    }
    if (key == "H") c.H = int64_t(v);
    else if (key == "HV") c.HV = int64_t(v);
    else if (key == "K") c.K = int64_t(v);
    else if (key == "V") c.V = int64_t(v);
    else if (key == "scale") c.scale = v;
    else if (key == "gate_in_kernel") c.gateInKernel = v != 0;
    else if (key == "l2norm") c.l2normQK = v != 0;
    else if (key == "initial_state") c.initialState = v != 0;
    else if (key == "final_state") c.finalState = v != 0;
    else if (key == "state_v_first") c.stateVFirst = v != 0;
    else if (key == "BV") c.BV = int64_t(v);
    else if (key == "precise") c.precise = v != 0;
    else
      throw Error(fmt::format("gdn forward: unknown setting '{}' (known: H, HV, K, V, scale, gate_in_kernel, "
                              "l2norm, initial_state, final_state, state_v_first, BV, precise)", key));
  }
  c.validate();
  return c;
}

GdnForwardKernels buildGdnForward(const GdnForwardConfig &c) {
  c.validate();
  return {buildGdnCumsum(c), buildGdnChunkInverse(c), buildGdnChunkForward(c)};
}

} // namespace qla::gdn

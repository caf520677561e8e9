#include "gdn/forward/GdnForward.h"

#include "qla/runtime/Error.h"

#include <cmath>
#include <fmt/format.h>

namespace qla::gdn {

void GdnForwardConfig::validate() const {
  auto fail = [](const std::string &what) { return Error("gdn forward: " + what); };
  if (H <= 0 || HV <= 0 || HV % H != 0)
    throw fail(fmt::format("HV must be a positive multiple of H, got H = {}, HV = {}", H, HV));
  for (auto [name, d] : {std::pair{"K", K}, std::pair{"V", V}})
    if (d != 64 && d != 128 && d != 256)
      throw fail(fmt::format("{} = {} is not supported (supported: 64, 128, 256)", name, d));
  if (stateVFirst)
    throw fail("state_v_first is not supported yet (supported: states stored [K][V])");
  if (!std::isfinite(scale))
    throw fail("scale must be finite");
}

double GdnForwardConfig::resolvedScale() const { return scale > 0 ? scale : 1.0 / std::sqrt(double(K)); }

GdnForwardKernels buildGdnForward(const GdnForwardConfig &c) {
  c.validate();
  return {buildGdnCumsum(c), buildGdnChunkInverse(c), buildGdnChunkForward(c)};
}

} // namespace qla::gdn

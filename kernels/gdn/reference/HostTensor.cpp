#include "gdn/reference/HostTensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "qla/runtime/Error.h"

namespace qla::gdn {

std::int64_t numel(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t extent : shape) {
    if (extent < 0)
      throw Error(fmt::format("tensor: expected non-negative extents, got {}", shapeString(shape)));
    n *= extent;
  }
  return n;
}

std::string shapeString(std::span<const std::int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

Tensor::Tensor(std::vector<std::int64_t> shapeIn) : shape(std::move(shapeIn)) {
  data.assign(static_cast<std::size_t>(gdn::numel(shape)), 0.0);
}

Tensor::Tensor(std::vector<std::int64_t> shapeIn, std::vector<double> dataIn)
    : shape(std::move(shapeIn)), data(std::move(dataIn)) {
  if (static_cast<std::int64_t>(data.size()) != gdn::numel(shape))
    throw Error(fmt::format("tensor: shape {} needs {} values, got {}", shapeString(shape),
                            gdn::numel(shape), data.size()));
}

std::int64_t Tensor::numel() const { return gdn::numel(shape); }

double relL2(std::span<const double> a, std::span<const double> ref) {
  if (a.size() != ref.size())
    throw Error(fmt::format("relL2: expected tensors of equal size, got {} and {}", a.size(),
                            ref.size()));
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - ref[i]) * (a[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  if (std::isnan(diff) || std::isnan(norm))
    return std::numeric_limits<double>::quiet_NaN();
  if (norm == 0)
    return diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff / norm);
}

double relL2(const Tensor& a, const Tensor& ref) {
  if (a.shape != ref.shape)
    throw Error(fmt::format("relL2: expected tensors of equal shape, got {} and {}",
                            shapeString(a.shape), shapeString(ref.shape)));
  return relL2(std::span<const double>(a.data), std::span<const double>(ref.data));
}

double roundToFloat(double x) { return static_cast<double>(static_cast<float>(x)); }

double roundToBf16(double x) {
  const float f = static_cast<float>(x);
  if (std::isnan(f))
    return x;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a carry out of the
  // mantissa bumps the exponent, which is right (up to +inf).
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  return static_cast<double>(std::bit_cast<float>(bits));
}

Tensor roundToBf16(Tensor t) {
  for (double& x : t.data)
    x = roundToBf16(x);
  return t;
}

Tensor roundToFloat(Tensor t) {
  for (double& x : t.data)
    x = roundToFloat(x);
  return t;
}

} // namespace qla::gdn

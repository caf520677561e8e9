// Dense row-major host tensors of doubles and the numeric helpers the GDN tests share.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace qla::gdn {

struct Tensor {
  std::vector<std::int64_t> shape; // empty: the tensor is not given
  std::vector<double> data;        // row-major, numel(shape) values

  Tensor() = default;
  // Zero-filled. Throws qla::Error for a negative extent.
  explicit Tensor(std::vector<std::int64_t> shape);
  // Throws qla::Error unless data.size() == numel(shape).
  Tensor(std::vector<std::int64_t> shape, std::vector<double> data);

  bool defined() const { return !shape.empty(); }
  std::int64_t numel() const;
};

// Product of the extents (1 for an empty shape).
std::int64_t numel(std::span<const std::int64_t> shape);
// "[2, 64, 4, 128]"
std::string shapeString(std::span<const std::int64_t> shape);

// ‖a − ref‖₂ / ‖ref‖₂. 0 when both are zero, +inf when only ref is; NaN anywhere gives NaN.
// Throws qla::Error when the sizes (or, for tensors, the shapes) differ.
double relL2(std::span<const double> a, std::span<const double> ref);
double relL2(const Tensor& a, const Tensor& ref);

// The value a kernel sees after the input is stored in bf16 (or fp32): double → float with
// round-to-nearest-even, then float → bf16 with round-to-nearest-even. NaN stays NaN, overflow
// gives ±inf.
double roundToBf16(double x);
double roundToFloat(double x);
Tensor roundToBf16(Tensor t);
Tensor roundToFloat(Tensor t);

} // namespace qla::gdn

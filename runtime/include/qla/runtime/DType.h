#pragma once

#include <cstddef>
#include <string_view>

namespace qla {

enum class DType { bf16, f16, f32, f64, i32, i8, i64 };

// "bf16", "f16", "f32", "f64", "i32", "i8".
std::string_view dtypeName(DType dtype);
// Size of one element in bytes. Throws qla::Error for a value outside the enum.
std::size_t dtypeBytes(DType dtype);
bool isFloatingPoint(DType dtype);
// Inverse of dtypeName; throws qla::Error naming the accepted spellings.
DType parseDType(std::string_view name);

} // namespace qla

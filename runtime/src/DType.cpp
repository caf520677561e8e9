#include "qla/runtime/DType.h"

#include <fmt/format.h>

#include <array>

#include "qla/runtime/Error.h"

namespace qla {

namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t bytes;
  bool floatingPoint;
};

constexpr std::array<DTypeInfo, 7> kDTypes = {{
    {DType::bf16, "bf16", 2, true},
    {DType::f16, "f16", 2, true},
    {DType::f32, "f32", 4, true},
    {DType::f64, "f64", 8, true},
    {DType::i64, "i64", 8, false},
    {DType::i32, "i32", 4, false},
    {DType::i8, "i8", 1, false},
}};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& entry : kDTypes)
    if (entry.dtype == dtype)
      return entry;
  throw Error(fmt::format("invalid DType value {}", static_cast<int>(dtype)));
}

} // namespace

std::string_view dtypeName(DType dtype) { return info(dtype).name; }

std::size_t dtypeBytes(DType dtype) { return info(dtype).bytes; }

bool isFloatingPoint(DType dtype) { return info(dtype).floatingPoint; }

DType parseDType(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes)
    if (entry.name == name)
      return entry.dtype;
  throw Error(fmt::format("unknown dtype '{}' (expected one of bf16, f16, f32, f64, i64, i32, i8)", name));
}

} // namespace qla

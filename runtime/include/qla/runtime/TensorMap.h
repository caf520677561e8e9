#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "qla/runtime/DType.h"

namespace qla {

// A tiled TMA descriptor request. Dimensions are listed innermost (contiguous) first.
struct TensorMapSpec {
  DType dtype = DType::bf16;
  std::vector<std::uint64_t> globalDims;         // rank entries, innermost first
  std::vector<std::uint64_t> globalStridesBytes; // rank-1 entries: byte strides of dims 1..rank-1
  std::vector<std::uint32_t> box;                // rank entries, innermost first
  int swizzleBytes = 0;                          // 0, 32, 64 or 128
  bool oobZeroFill = true; // false: out-of-bounds elements read as NaN (floating-point dtypes only)
};

// Checks every requirement of cuTensorMapEncodeTiled: rank 1..5, a 16-byte aligned address,
// strides multiples of 16 and below 2^40, dims 1..2^32, box entries 1..256, the inner box extent a
// multiple of 16 bytes and, with swizzling, no wider than the swizzle span. Throws qla::Error
// "<kernel>: argument '<arg>': expected …, got …" for the first violated rule.
void validateTensorMap(const TensorMapSpec& spec, const void* globalAddress, std::string_view kernel,
                       std::string_view arg);

// validateTensorMap, then cuTensorMapEncodeTiled (L2 promotion 256 B, no interleave, element
// strides 1). Needs the driver, not a context.
CUtensorMap encodeTensorMap(const TensorMapSpec& spec, void* globalAddress, std::string_view kernel,
                            std::string_view arg);

} // namespace qla

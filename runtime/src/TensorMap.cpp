#include "qla/runtime/TensorMap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstring>

#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

namespace qla {

namespace {

constexpr std::size_t kMaxRank = 5;
constexpr std::uint64_t kMaxDim = std::uint64_t(1) << 32;
constexpr std::uint64_t kStrideLimit = std::uint64_t(1) << 40;
constexpr std::uint32_t kMaxBox = 256;

bool isKnownDType(DType dtype) {
  switch (dtype) {
  case DType::bf16:
  case DType::f16:
  case DType::f32:
  case DType::f64:
  case DType::i32:
  case DType::i8: return true;
  }
  return false;
}

CUtensorMapDataType tensorMapDataType(DType dtype) {
  switch (dtype) {
  case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case DType::i8: return CU_TENSOR_MAP_DATA_TYPE_UINT8; // TMA copies bytes; signedness is moot
  }
  throw Error(fmt::format("invalid DType value {}", static_cast<int>(dtype)));
}

CUtensorMapSwizzle tensorMapSwizzle(int swizzleBytes) {
  switch (swizzleBytes) {
  case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
  case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
  case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
  default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

std::string describe(const TensorMapSpec& spec) {
  return fmt::format("dtype {}, globalDims [{}], globalStridesBytes [{}], box [{}], swizzle {} B",
                     dtypeName(spec.dtype), fmt::join(spec.globalDims, ", "),
                     fmt::join(spec.globalStridesBytes, ", "), fmt::join(spec.box, ", "),
                     spec.swizzleBytes);
}

} // namespace

void validateTensorMap(const TensorMapSpec& spec, const void* globalAddress, std::string_view kernel,
                       std::string_view arg) {
  auto fail = [&](const std::string& expectation) {
    throw Error(fmt::format("{}: argument '{}': {}", kernel, arg, expectation));
  };

  if (!isKnownDType(spec.dtype))
    fail(fmt::format("expected a TMA-supported dtype (bf16, f16, f32, f64, i32, i8), got dtype "
                     "value {}",
                     static_cast<int>(spec.dtype)));
  const std::size_t elementBytes = dtypeBytes(spec.dtype);

  const std::size_t rank = spec.globalDims.size();
  if (rank < 1 || rank > kMaxRank)
    fail(fmt::format("expected a tensor of rank 1 to {} for a TMA descriptor, got rank {}", kMaxRank,
                     rank));
  if (spec.globalStridesBytes.size() != rank - 1)
    fail(fmt::format("expected {} global strides (the byte strides of dims 1..{}) for a rank-{} "
                     "tensor, got {}",
                     rank - 1, rank - 1, rank, spec.globalStridesBytes.size()));
  if (spec.box.size() != rank)
    fail(fmt::format("expected {} box sizes for a rank-{} tensor, got {}", rank, rank,
                     spec.box.size()));

  const auto address = reinterpret_cast<std::uintptr_t>(globalAddress);
  if (address == 0)
    fail("expected a non-null global address");
  if (address % 16 != 0)
    fail(fmt::format("expected a 16-byte aligned global address, got {:#x} ({} bytes past a 16-byte "
                     "boundary)",
                     address, address % 16));

  for (std::size_t i = 0; i < rank; ++i)
    if (spec.globalDims[i] < 1 || spec.globalDims[i] > kMaxDim)
      fail(fmt::format("expected globalDims[{}] between 1 and 2^32, got {}", i, spec.globalDims[i]));

  for (std::size_t i = 0; i + 1 < rank; ++i) {
    const std::uint64_t stride = spec.globalStridesBytes[i];
    if (stride % 16 != 0)
      fail(fmt::format("expected globalStridesBytes[{}] (the byte stride of dim {}) to be a multiple "
                       "of 16, got {}",
                       i, i + 1, stride));
    if (stride >= kStrideLimit)
      fail(fmt::format("expected globalStridesBytes[{}] (the byte stride of dim {}) below 2^40, got "
                       "{}",
                       i, i + 1, stride));
  }

  for (std::size_t i = 0; i < rank; ++i)
    if (spec.box[i] < 1 || spec.box[i] > kMaxBox)
      fail(fmt::format("expected box[{}] between 1 and {}, got {}", i, kMaxBox, spec.box[i]));

  const std::uint64_t innerBoxBytes = std::uint64_t(spec.box[0]) * elementBytes;
  if (innerBoxBytes % 16 != 0)
    fail(fmt::format("expected the inner box extent (box[0] = {} x {} bytes = {} bytes) to be a "
                     "multiple of 16 bytes",
                     spec.box[0], elementBytes, innerBoxBytes));

  if (spec.swizzleBytes != 0 && spec.swizzleBytes != 32 && spec.swizzleBytes != 64 &&
      spec.swizzleBytes != 128)
    fail(fmt::format("expected swizzleBytes of 0, 32, 64 or 128, got {}", spec.swizzleBytes));
  if (spec.swizzleBytes != 0 && innerBoxBytes > static_cast<std::uint64_t>(spec.swizzleBytes))
    fail(fmt::format("expected the inner box extent (box[0] = {} x {} bytes = {} bytes) to fit the "
                     "{}-byte swizzle span",
                     spec.box[0], elementBytes, innerBoxBytes, spec.swizzleBytes));

  if (!spec.oobZeroFill && !isFloatingPoint(spec.dtype))
    fail(fmt::format("expected a floating-point dtype for NaN out-of-bounds fill, got {}",
                     dtypeName(spec.dtype)));
}

CUtensorMap encodeTensorMap(const TensorMapSpec& spec, void* globalAddress, std::string_view kernel,
                            std::string_view arg) {
  validateTensorMap(spec, globalAddress, kernel, arg);
  Driver& drv = Driver::get();
  drv.requireAvailable();

  const std::size_t rank = spec.globalDims.size();
  std::array<cuuint64_t, kMaxRank> dims{};
  std::array<cuuint64_t, kMaxRank> strides{};
  std::array<cuuint32_t, kMaxRank> box{};
  std::array<cuuint32_t, kMaxRank> elementStrides{};
  for (std::size_t i = 0; i < rank; ++i) {
    dims[i] = spec.globalDims[i];
    box[i] = spec.box[i];
    elementStrides[i] = 1;
    if (i + 1 < rank)
      strides[i] = spec.globalStridesBytes[i];
  }

  CUtensorMap map;
  std::memset(&map, 0, sizeof(map));
  const CUresult result = drv.cuTensorMapEncodeTiled(
      &map, tensorMapDataType(spec.dtype), static_cast<cuuint32_t>(rank), globalAddress, dims.data(),
      strides.data(), box.data(), elementStrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
      tensorMapSwizzle(spec.swizzleBytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      spec.oobZeroFill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
                       : CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
  drv.check(result, fmt::format("{}: argument '{}': cuTensorMapEncodeTiled ({})", kernel, arg,
                                describe(spec))
                        .c_str());
  return map;
}

} // namespace qla

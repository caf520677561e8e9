// A compiled kernel described by its manifest.json: validates launch arguments against the ABI,
// encodes its TMA descriptors (cached per pointer, shape and strides) and launches it.
// This is all an ahead-of-time deployment needs: no MLIR, no compiler.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "qla/runtime/DType.h"
#include "qla/runtime/Json.h"
#include "qla/runtime/Launch.h"
#include "qla/runtime/Module.h"

namespace qla {

/// A tensor in device memory, as a launch argument. Strides are in elements; empty means row-major.
struct TensorArg {
  CUdeviceptr data = 0;
  DType dtype = DType::bf16;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

class CompiledKernel {
public:
  /// `image` is a cubin or PTX; the module is loaded now (needs a GPU).
  CompiledKernel(const Json& manifest, std::string_view image);
  /// Loads DIR/manifest.json and DIR/kernel.cubin as written by `qlac compile`, checking their sha256.
  static std::unique_ptr<CompiledKernel> fromDirectory(const std::filesystem::path& dir);

  const std::string& name() const { return name_; }
  const LaunchConfig& launchConfig() const { return config_; }

  /// Throws qla::Error naming the kernel, the argument and the expectation when `tensors` do not
  /// match the ABI (count, dtype, shape, strides, 16-byte alignment for TMA).
  void validate(const std::vector<TensorArg>& tensors) const;
  void launch(const std::vector<TensorArg>& tensors, CUstream stream = nullptr);

private:
  struct Param {
    bool isTensorMap = false;
    std::string name;
    DType dtype = DType::bf16;
    std::vector<std::int64_t> shape, strides;   // tensors
    std::size_t tensor = 0;                      // tensor maps
    std::vector<std::uint32_t> box;              // tensor maps, innermost first
    int swizzle = 0;
  };
  struct CachedMap {
    CUdeviceptr data = 0;
    std::vector<std::int64_t> shape, strides;
    CUtensorMap map; // 128-byte aligned by its type
  };

  std::string name_, entry_;
  std::vector<Param> params_;
  std::size_t numTensors_ = 0;
  LaunchConfig config_;
  LoadedModule module_;
  CUfunction function_ = nullptr;
  std::mutex mapsMutex_;
  std::vector<std::unique_ptr<CachedMap>> maps_; // one per tensor-map parameter
};

} // namespace qla

// A compiled kernel described by its manifest.json: validates launch arguments against the ABI,
// encodes its TMA descriptors (cached per pointer, shape and strides) and launches it.
// This is all an ahead-of-time deployment needs: no MLIR, no compiler.
#pragma once

#include <cuda.h>

#include <array>
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

/// What a kernel's manifest says it takes; checks launch arguments against it. Needs no GPU.
class KernelSignature {
public:
  explicit KernelSignature(const Json& manifest);

  struct Param {
    enum class Kind { Tensor, TensorMap, Dim } kind = Kind::Tensor;
    bool isTensorMap = false;
    std::string name;
    DType dtype = DType::bf16;
    std::vector<std::int64_t> shape, strides;   // tensors; -1 for dynamic
    std::size_t tensor = 0;                      // tensor maps and dims
    std::vector<std::uint32_t> box;              // tensor maps, innermost first
    int swizzle = 0;
    std::size_t dim = 0;                         // dims: which extent of `tensor` (an i64 parameter)
  };

  const std::string& kernel() const { return kernel_; }
  const std::string& entry() const { return entry_; }
  const std::vector<Param>& params() const { return params_; }
  std::size_t numTensors() const { return numTensors_; }
  std::size_t numTensorMaps() const { return numTensorMaps_; }
  /// grid, block and dynamic shared memory; the stream is left null. A grid extent of 0 is given at
  /// launch.
  const LaunchConfig& launchConfig() const { return config_; }

  /// Throws qla::Error naming the kernel, the argument and the expectation when `tensors` do not
  /// match (count, dtype, shape, strides, null or not 16-byte aligned pointers).
  void validate(const std::vector<TensorArg>& tensors) const;

private:
  std::string kernel_, entry_;
  std::vector<Param> params_;
  std::size_t numTensors_ = 0, numTensorMaps_ = 0;
  LaunchConfig config_;
};

class CompiledKernel {
public:
  /// `image` is a cubin or PTX; the module is loaded now (needs a GPU).
  CompiledKernel(const Json& manifest, std::string_view image);
  /// Loads DIR/manifest.json and DIR/kernel.cubin as written by `qlac compile`, checking their sha256.
  static std::unique_ptr<CompiledKernel> fromDirectory(const std::filesystem::path& dir);

  const std::string& name() const { return signature_.kernel(); }
  const KernelSignature& signature() const { return signature_; }
  /// `grid` replaces the manifest's grid where nonzero; it must for extents given at launch.
  void launch(const std::vector<TensorArg>& tensors, CUstream stream = nullptr,
              std::array<std::uint32_t, 3> grid = {0, 0, 0});

private:
  struct CachedMap {
    CUdeviceptr data = 0;
    std::vector<std::int64_t> shape, strides;
    CUtensorMap map; // 128-byte aligned by its type
  };

  KernelSignature signature_;
  LoadedModule module_;
  CUfunction function_ = nullptr;
  std::mutex mapsMutex_;
  std::vector<std::unique_ptr<CachedMap>> maps_; // one per tensor-map parameter
  // The launch's argument arrays, sized once (guarded by mapsMutex_ like the maps): no allocation per launch.
  std::vector<void*> args_;
  std::vector<CUdeviceptr> pointers_;
  std::vector<std::int64_t> extents_;
};

} // namespace qla

// What a compiled kernel expects at launch, as plain C++ (no MLIR): read from the module's qla.abi.
#ifndef QLA_PIPELINE_KERNELABI_H
#define QLA_PIPELINE_KERNELABI_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace qla {

struct KernelParam {
  enum class Kind { Tensor, TensorMap, Dim } kind;
  std::string name;                // tensors: the DSL argument name
  std::string dtype;               // tensors: "bf16", "f32", ...
  std::vector<int64_t> shape;      // tensors: -1 for dynamic
  std::vector<int64_t> strides;    // tensors: in elements
  int64_t tensor = -1;             // tensor maps, dims: index of the tensor parameter
  int64_t dim = -1;                // dims: which extent of the tensor (an i64 parameter)
  std::vector<int64_t> box;        // tensor maps: innermost first
  int64_t swizzle = 0;             // tensor maps: bytes
};

struct KernelAbi {
  std::string entry;
  std::vector<KernelParam> params;
  std::array<int64_t, 3> grid{1, 1, 1};  // -1: given at launch
  std::array<int64_t, 3> block{128, 1, 1};
  int64_t smemBytes = 0;
  bool dependentLaunch = false; // launched with programmatic stream serialization (qla.dependent_launch)
};

} // namespace qla

#endif

// A tensor on the host for the CPU interpreter: row-major values, held as double. No MLIR here.
#ifndef QLA_INTERPRETER_HOSTTENSOR_H
#define QLA_INTERPRETER_HOSTTENSOR_H

#include <cstdint>
#include <vector>

namespace qla {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

} // namespace qla

#endif

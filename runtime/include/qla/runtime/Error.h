#pragma once

#include <stdexcept>
#include <string>

namespace qla {

// The one exception type of QLA. Messages name what failed (kernel, argument, file) and what was
// expected, e.g. "gemm: argument 'A': expected a bf16 tensor of shape [4096, 1024], got [4096, 1000]".
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  explicit Error(const char* message) : std::runtime_error(message) {}
};

} // namespace qla

#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qla {

struct NvrtcResult {
  std::string ptx;
  std::string log; // compiler warnings; empty when there were none
};

// The options every compilation starts from: -arch=compute_90a, -std=c++17 and, when that folder
// exists, --include-path=/usr/local/cuda/include.
std::vector<std::string> defaultNvrtcOptions();

// CUDA C++ -> PTX with NVRTC (libnvrtc.so.13, loaded with dlopen on first use). Needs no GPU.
// `options` are appended to the defaults; an -arch/--gpu-architecture or -std/--std option given
// there replaces the default one. `name` names the source in diagnostics. Throws qla::Error
// carrying the NVRTC log when compilation fails, or when the library cannot be loaded.
NvrtcResult compileCudaToPtx(std::string_view source, std::string_view name,
                             const std::vector<std::string>& options = {});

// "13.0"; throws qla::Error when the library cannot be loaded.
std::string nvrtcVersion();

// Whether libnvrtc could be loaded; *why says why not.
bool nvrtcAvailable(std::string* why = nullptr);

} // namespace qla

#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>

namespace qla {

struct LaunchConfig {
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t dynamicSmemBytes = 0;
  CUstream stream = nullptr;
  // Thread-block cluster shape; {1, 1, 1} launches without clusters.
  std::uint32_t cluster[3] = {1, 1, 1};
  // Programmatic stream serialization: the kernel may launch while the one before it on the stream
  // finishes. Only for kernels that wait for it themselves first (built with dependentLaunch: the
  // manifest's "dependent_launch").
  bool dependentLaunch = false;
};

// Launches `function` with `params` (cuLaunchKernel's kernelParams: one pointer per argument).
// Checks grid, block, cluster and shared-memory limits first and throws qla::Error naming
// `kernelName` and the violated limit. Above 48 KiB of dynamic shared memory it raises
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, once per function and size.
void launch(CUfunction function, const LaunchConfig& config, void** params,
            std::string_view kernelName);

// Drops what launch() remembers about `function`; LoadedModule calls it when it unloads, since
// the driver may hand the same handle to a later function.
void forgetLaunchState(CUfunction function) noexcept;

} // namespace qla

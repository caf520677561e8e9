#include "qla/runtime/Launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

namespace qla {

namespace {

constexpr std::uint32_t kDefaultDynamicSmemLimit = 48 * 1024;
constexpr std::uint32_t kMaxThreadsPerBlock = 1024;
constexpr std::uint32_t kMaxBlock[3] = {1024, 1024, 64};
constexpr std::uint32_t kMaxGrid[3] = {0x7fffffffu, 65535, 65535};
constexpr std::uint32_t kMaxPortableClusterSize = 8;

// The dynamic shared-memory size each function has been opted in to.
class SmemOptIns {
public:
  static SmemOptIns& get() {
    static SmemOptIns instance;
    return instance;
  }

  bool covers(CUfunction f, std::uint32_t bytes) const {
    std::shared_lock lock(mutex_);
    auto it = sizes_.find(f);
    return it != sizes_.end() && it->second >= bytes;
  }
  void record(CUfunction f, std::uint32_t bytes) {
    std::unique_lock lock(mutex_);
    std::uint32_t& size = sizes_[f];
    size = std::max(size, bytes);
  }
  void forget(CUfunction f) {
    std::unique_lock lock(mutex_);
    sizes_.erase(f);
  }

private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<CUfunction, std::uint32_t> sizes_;
};

int deviceSmemOptinLimit() {
  static const int limit = [] {
    Driver& drv = Driver::get();
    CUdevice device = 0;
    drv.check(drv.cuDeviceGet(&device, 0), "cuDeviceGet(0)");
    int value = 0;
    drv.check(drv.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                       device),
              "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
    return value;
  }();
  return limit;
}

std::string dims(const std::uint32_t (&d)[3]) { return fmt::format("[{}, {}, {}]", d[0], d[1], d[2]); }

void checkConfig(const LaunchConfig& c, std::string_view kernel) {
  static constexpr const char* kAxis[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (c.block[i] == 0 || c.block[i] > kMaxBlock[i])
      throw Error(fmt::format("launch of '{}': expected block.{} between 1 and {}, got block {}",
                              kernel, kAxis[i], kMaxBlock[i], dims(c.block)));
    if (c.grid[i] == 0 || c.grid[i] > kMaxGrid[i])
      throw Error(fmt::format("launch of '{}': expected grid.{} between 1 and {}, got grid {}",
                              kernel, kAxis[i], kMaxGrid[i], dims(c.grid)));
    if (c.cluster[i] == 0)
      throw Error(fmt::format("launch of '{}': expected cluster.{} of at least 1, got cluster {}",
                              kernel, kAxis[i], dims(c.cluster)));
    if (c.grid[i] % c.cluster[i] != 0)
      throw Error(fmt::format("launch of '{}': expected grid {} to be a multiple of the cluster "
                              "shape {} (axis {})",
                              kernel, dims(c.grid), dims(c.cluster), kAxis[i]));
  }
  const std::uint64_t threads = std::uint64_t(c.block[0]) * c.block[1] * c.block[2];
  if (threads > kMaxThreadsPerBlock)
    throw Error(fmt::format("launch of '{}': expected at most {} threads per block, got block {} = "
                            "{} threads",
                            kernel, kMaxThreadsPerBlock, dims(c.block), threads));
  const std::uint64_t clusterSize = std::uint64_t(c.cluster[0]) * c.cluster[1] * c.cluster[2];
  if (clusterSize > kMaxPortableClusterSize)
    throw Error(fmt::format("launch of '{}': expected at most {} blocks per cluster (the portable "
                            "limit), got cluster {} = {} blocks",
                            kernel, kMaxPortableClusterSize, dims(c.cluster), clusterSize));
}

} // namespace

void forgetLaunchState(CUfunction function) noexcept {
  try {
    SmemOptIns::get().forget(function);
  } catch (...) {
    // Only allocation failure can get here; a stale entry is then harmless until reuse.
  }
}

void launch(CUfunction function, const LaunchConfig& config, void** params,
            std::string_view kernelName) {
  if (!function)
    throw Error(fmt::format("launch of '{}': the CUfunction is null", kernelName));
  checkConfig(config, kernelName);
  Driver& drv = Driver::get();
  drv.ensureContext();

  // Static shared memory counts towards the 48 KiB default too, so opt in for any dynamic amount.
  if (config.dynamicSmemBytes > 0 &&
      !SmemOptIns::get().covers(function, config.dynamicSmemBytes)) {
    const int limit = deviceSmemOptinLimit();
    if (config.dynamicSmemBytes > static_cast<std::uint32_t>(limit))
      throw Error(fmt::format("launch of '{}': expected at most {} bytes of dynamic shared memory "
                              "(the device's opt-in limit), got {}",
                              kernelName, limit, config.dynamicSmemBytes));
    drv.check(drv.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(config.dynamicSmemBytes)),
              fmt::format("launch of '{}': cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {})",
                          kernelName, config.dynamicSmemBytes)
                  .c_str());
    SmemOptIns::get().record(function, config.dynamicSmemBytes);
  }

  const bool clustered = config.cluster[0] * config.cluster[1] * config.cluster[2] > 1;
  CUresult result;
  if (!clustered && !config.dependentLaunch) {
    result = drv.cuLaunchKernel(function, config.grid[0], config.grid[1], config.grid[2],
                                config.block[0], config.block[1], config.block[2],
                                config.dynamicSmemBytes, config.stream, params, nullptr);
  } else {
    CUlaunchAttribute attributes[2] = {};
    unsigned count = 0;
    if (clustered) {
      attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attributes[count].value.clusterDim.x = config.cluster[0];
      attributes[count].value.clusterDim.y = config.cluster[1];
      attributes[count++].value.clusterDim.z = config.cluster[2];
    }
    if (config.dependentLaunch) {
      attributes[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attributes[count++].value.programmaticStreamSerializationAllowed = 1;
    }
    CUlaunchConfig launchConfig = {};
    launchConfig.gridDimX = config.grid[0];
    launchConfig.gridDimY = config.grid[1];
    launchConfig.gridDimZ = config.grid[2];
    launchConfig.blockDimX = config.block[0];
    launchConfig.blockDimY = config.block[1];
    launchConfig.blockDimZ = config.block[2];
    launchConfig.sharedMemBytes = config.dynamicSmemBytes;
    launchConfig.hStream = config.stream;
    launchConfig.attrs = attributes;
    launchConfig.numAttrs = count;
    result = drv.cuLaunchKernelEx(&launchConfig, function, params, nullptr);
  }
  if (result != CUDA_SUCCESS)
    drv.check(result, fmt::format("launch of '{}' (grid {}, block {}, cluster {}, {} bytes of "
                                  "dynamic shared memory)",
                                  kernelName, dims(config.grid), dims(config.block),
                                  dims(config.cluster), config.dynamicSmemBytes)
                          .c_str());
}

} // namespace qla


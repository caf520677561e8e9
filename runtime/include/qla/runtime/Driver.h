#pragma once

#include <cuda.h>

#include <mutex>
#include <string>

#include "qla/runtime/DynamicLibrary.h"

namespace qla {

// Every driver entry point the runtime uses. cuda.h #defines some names to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2, cuStreamDestroy -> cuStreamDestroy_v2, ...); the macro expands
// both here and at call sites, so `Driver::get().cuMemAlloc(...)` calls the member holding the
// symbol the driver exports under that versioned name, with the matching signature.
#define QLA_DRIVER_FUNCTIONS(X)                                                                    \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleLoadDataEx)                                                                            \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncSetAttribute)                                                                            \
  X(cuFuncGetAttribute)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuLaunchKernelEx)                                                                              \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemsetD8)                                                                                    \
  X(cuMemsetD16)                                                                                   \
  X(cuMemsetD32)                                                                                   \
  X(cuMemcpyDtoDAsync)                                                                             \
  X(cuMemsetD32Async)                                                                              \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamSynchronize)                                                                           \
  X(cuEventCreate)                                                                                 \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventElapsedTime)                                                                            \
  X(cuEventDestroy)                                                                                \
  X(cuTensorMapEncodeTiled)                                                                        \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuGraphInstantiate)                                                                            \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphDestroy)                                                                                \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)

// The CUDA driver, loaded with dlopen so that binaries start on machines without one.
// get() never throws; on a machine without a usable GPU available() is false and
// unavailableReason() says why. Everything else that needs the GPU throws qla::Error.
class Driver {
public:
  static Driver& get() noexcept;

  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  bool available() const noexcept { return available_; }
  // Empty when available; otherwise starts with "no GPU: ".
  const std::string& unavailableReason() const noexcept { return reason_; }
  // Throws qla::Error carrying unavailableReason() when the driver is not usable.
  void requireAvailable() const;

  // Throws qla::Error("<what> failed: CUDA_ERROR_… (description)") unless result is CUDA_SUCCESS.
  void check(CUresult result, const char* what) const;
  // "CUDA_ERROR_…" (or the numeric value when the name is unknown).
  std::string errorName(CUresult result) const;

  // Version reported by cuDriverGetVersion (e.g. 13000), 0 when unavailable.
  int driverVersion() const noexcept { return driverVersion_; }
  int deviceCount() const noexcept { return deviceCount_; }
  // The path of the loaded libcuda, empty when it was not found.
  const std::string& libraryPath() const noexcept { return library_.name(); }

  // Retains the primary context of device 0 once per process and makes it current on the calling
  // thread (once per thread). Thread-safe. The context lives until the process exits.
  void ensureContext();
  // ensureContext(), then the primary context.
  CUcontext context();

#define QLA_DRIVER_DECLARE_MEMBER(fn) decltype(&::fn) fn = nullptr;
  QLA_DRIVER_FUNCTIONS(QLA_DRIVER_DECLARE_MEMBER)
#undef QLA_DRIVER_DECLARE_MEMBER

private:
  Driver() noexcept;
  void initialize();

  DynamicLibrary library_;
  bool available_ = false;
  std::string reason_;
  int driverVersion_ = 0;
  int deviceCount_ = 0;

  std::mutex contextMutex_;
  CUcontext primaryContext_ = nullptr;
};

} // namespace qla

#include "qla/runtime/Driver.h"

#include <fmt/format.h>

#include "qla/runtime/Error.h"

#define QLA_STRINGIFY_EXPANDED(x) QLA_STRINGIFY(x)
#define QLA_STRINGIFY(x) #x

namespace qla {

namespace {

template <typename Fn> void resolve(const DynamicLibrary& lib, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(lib.symbol(name));
}

} // namespace

Driver& Driver::get() noexcept {
  static Driver driver;
  return driver;
}

Driver::Driver() noexcept {
  try {
    initialize();
  } catch (const std::exception& e) {
    available_ = false;
    reason_ = fmt::format("no GPU: driver initialisation failed: {}", e.what());
  }
}

void Driver::initialize() {
  std::string dlerrors;
  library_ = DynamicLibrary::open({"libcuda.so.1"}, &dlerrors);
  if (!library_.loaded()) {
    reason_ = fmt::format("no GPU: libcuda.so.1 could not be loaded ({})", dlerrors);
    return;
  }

  // QLA_STRINGIFY_EXPANDED names the symbol after cuda.h's versioning macros, e.g. "cuMemAlloc_v2".
#define QLA_DRIVER_RESOLVE(fn) resolve(library_, fn, QLA_STRINGIFY_EXPANDED(fn));
  QLA_DRIVER_FUNCTIONS(QLA_DRIVER_RESOLVE)
#undef QLA_DRIVER_RESOLVE
  // cuEventElapsedTime_v2 appeared in driver 12.8; the original has the same signature.
  if (!cuEventElapsedTime)
    resolve(library_, cuEventElapsedTime, "cuEventElapsedTime");

  std::string missing;
#define QLA_DRIVER_MISSING(fn)                                                                     \
  if (!fn)                                                                                         \
    missing += (missing.empty() ? "" : ", ") + std::string(QLA_STRINGIFY_EXPANDED(fn));
  QLA_DRIVER_FUNCTIONS(QLA_DRIVER_MISSING)
#undef QLA_DRIVER_MISSING
  if (!missing.empty()) {
    reason_ = fmt::format("no GPU: the CUDA driver in {} is too old: it lacks {}", library_.name(),
                          missing);
    return;
  }

  if (CUresult r = cuInit(0); r != CUDA_SUCCESS) {
    reason_ = fmt::format("no GPU: cuInit failed: {}", errorName(r));
    return;
  }
  if (CUresult r = cuDriverGetVersion(&driverVersion_); r != CUDA_SUCCESS) {
    reason_ = fmt::format("no GPU: cuDriverGetVersion failed: {}", errorName(r));
    return;
  }
  if (CUresult r = cuDeviceGetCount(&deviceCount_); r != CUDA_SUCCESS) {
    reason_ = fmt::format("no GPU: cuDeviceGetCount failed: {}", errorName(r));
    return;
  }
  if (deviceCount_ == 0) {
    reason_ = "no GPU: the CUDA driver reports no device";
    return;
  }
  available_ = true;
}

void Driver::requireAvailable() const {
  if (!available_)
    throw Error(reason_);
}

std::string Driver::errorName(CUresult result) const {
  const char* name = nullptr;
  if (cuGetErrorName && cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
    return name;
  return fmt::format("CUresult {}", static_cast<int>(result));
}

void Driver::check(CUresult result, const char* what) const {
  if (result == CUDA_SUCCESS)
    return;
  const char* description = nullptr;
  if (cuGetErrorString && cuGetErrorString(result, &description) == CUDA_SUCCESS && description)
    throw Error(fmt::format("{} failed: {} ({})", what, errorName(result), description));
  throw Error(fmt::format("{} failed: {}", what, errorName(result)));
}

void Driver::ensureContext() {
  // Contexts are current per thread, so each thread binds the primary context once.
  thread_local bool bound = false;
  if (bound)
    return;
  requireAvailable();
  CUcontext ctx = nullptr;
  {
    std::lock_guard lock(contextMutex_);
    if (!primaryContext_) {
      CUdevice device = 0;
      check(cuDeviceGet(&device, 0), "cuDeviceGet(0)");
      check(cuDevicePrimaryCtxRetain(&primaryContext_, device), "cuDevicePrimaryCtxRetain(device 0)");
    }
    ctx = primaryContext_;
  }
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  bound = true;
}

CUcontext Driver::context() {
  ensureContext();
  std::lock_guard lock(contextMutex_);
  return primaryContext_;
}

} // namespace qla

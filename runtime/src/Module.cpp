#include "qla/runtime/Module.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Launch.h"

namespace qla {

LoadedModule::LoadedModule(std::string_view image, std::string_view name) : name_(name) {
  if (image.empty())
    throw Error(fmt::format("module '{}': the image is empty", name_));
  Driver& drv = Driver::get();
  drv.ensureContext();

  // PTX must be NUL-terminated; a std::string copy guarantees it for every kind of image.
  const std::string data(image);
  char errorLog[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {errorLog, reinterpret_cast<void*>(static_cast<std::uintptr_t>(sizeof(errorLog)))};
  const CUresult result = drv.cuModuleLoadDataEx(&module_, data.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    module_ = nullptr;
    const std::string log(errorLog, strnlen(errorLog, sizeof(errorLog)));
    try {
      drv.check(result, fmt::format("module '{}': cuModuleLoadDataEx", name_).c_str());
    } catch (const Error& e) {
      if (log.empty())
        throw;
      throw Error(fmt::format("{}\n{}", e.what(), log));
    }
  }
}

LoadedModule::~LoadedModule() { unload(); }

LoadedModule::LoadedModule(LoadedModule&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), name_(std::move(other.name_)) {
  std::lock_guard lock(other.functionsMutex_);
  functions_ = std::move(other.functions_);
}

LoadedModule& LoadedModule::operator=(LoadedModule&& other) noexcept {
  if (this != &other) {
    unload();
    module_ = std::exchange(other.module_, nullptr);
    name_ = std::move(other.name_);
    std::scoped_lock lock(functionsMutex_, other.functionsMutex_);
    functions_ = std::move(other.functions_);
  }
  return *this;
}

void LoadedModule::unload() noexcept {
  {
    std::lock_guard lock(functionsMutex_);
    for (CUfunction f : functions_)
      forgetLaunchState(f);
    functions_.clear();
  }
  if (module_)
    Driver::get().cuModuleUnload(module_); // nothing to do about a failure in a destructor
  module_ = nullptr;
}

CUfunction LoadedModule::function(std::string_view kernelName) const {
  if (!module_)
    throw Error(fmt::format("module '{}': not loaded (moved from)", name_));
  Driver& drv = Driver::get();
  drv.ensureContext();
  const std::string kernel(kernelName);
  CUfunction f = nullptr;
  const CUresult result = drv.cuModuleGetFunction(&f, module_, kernel.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    throw Error(fmt::format("module '{}' has no kernel named '{}'", name_, kernel));
  drv.check(result, fmt::format("module '{}': cuModuleGetFunction('{}')", name_, kernel).c_str());
  std::lock_guard lock(functionsMutex_);
  functions_.push_back(f);
  return f;
}

} // namespace qla

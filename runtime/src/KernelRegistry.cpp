#include "qla/runtime/KernelRegistry.h"

#include <fmt/format.h>

#include <mutex>

#include "qla/runtime/Error.h"

namespace qla {

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry registry;
  return registry;
}

CUfunction KernelRegistry::find(std::string_view key) const {
  std::shared_lock lock(mutex_);
  auto it = kernels_.find(key);
  return it == kernels_.end() ? nullptr : it->second.function;
}

CUfunction KernelRegistry::insert(std::string_view key, RegisteredKernel kernel) {
  if (!kernel.function)
    throw Error(fmt::format("KernelRegistry: cannot register a null function under '{}'", key));
  std::unique_lock lock(mutex_);
  auto [it, inserted] = kernels_.try_emplace(std::string(key), std::move(kernel));
  return it->second.function;
}

CUfunction KernelRegistry::getOrLoad(std::string_view key,
                                     const std::function<RegisteredKernel()>& load) {
  if (CUfunction f = find(key))
    return f;
  return insert(key, load());
}

std::size_t KernelRegistry::size() const {
  std::shared_lock lock(mutex_);
  return kernels_.size();
}

void KernelRegistry::clear() {
  std::unordered_map<std::string, RegisteredKernel, KeyHash, std::equal_to<>> dropped;
  {
    std::unique_lock lock(mutex_);
    dropped.swap(kernels_);
  }
  // Modules unload here, outside the lock.
}

} // namespace qla

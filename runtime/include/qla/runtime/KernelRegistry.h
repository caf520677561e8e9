#pragma once

#include <cuda.h>

#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "qla/runtime/Module.h"

namespace qla {

struct RegisteredKernel {
  CUfunction function = nullptr;
  // Keeps the function's module loaded for as long as the entry exists.
  std::shared_ptr<const LoadedModule> module;
};

// Maps a key — (kernel id, specialisation), built by the caller — to a loaded function. A warm
// lookup takes a shared lock and does one hash-map find on the key, nothing else.
// Thread-safe. Entries live until clear().
class KernelRegistry {
public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // The process-wide registry.
  static KernelRegistry& instance();

  // nullptr when `key` is not registered.
  CUfunction find(std::string_view key) const;

  // Registers `kernel` under `key` unless the key is present; returns the registered function
  // (another thread's, if it registered first). Throws qla::Error for a null function.
  CUfunction insert(std::string_view key, RegisteredKernel kernel);

  // find(key), else calls `load` without holding the lock and inserts its result. Two threads
  // missing at once may both load; the first insert wins and the other module is released.
  CUfunction getOrLoad(std::string_view key, const std::function<RegisteredKernel()>& load);

  std::size_t size() const;

  // Drops every entry (modules unload once nothing else holds them). Callers must ensure no
  // launch of a registered function is in flight or about to start.
  void clear();

private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
      return std::hash<std::string_view>{}(key);
    }
  };

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, RegisteredKernel, KeyHash, std::equal_to<>> kernels_;
};

} // namespace qla

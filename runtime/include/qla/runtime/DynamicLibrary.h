#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace qla {

// A shared library opened with dlopen. It is never closed: the CUDA libraries are process-lifetime
// singletons and closing them while handles (modules, programs) still exist would be unsafe.
class DynamicLibrary {
public:
  DynamicLibrary() = default;

  // Tries each name with the loader's search path, then under /usr/local/cuda/lib64/.
  // Returns an unloaded library on failure and sets *error to every dlerror() seen.
  static DynamicLibrary open(std::initializer_list<const char*> names, std::string* error);

  bool loaded() const { return handle_ != nullptr; }
  // The path or name that was opened successfully.
  const std::string& name() const { return name_; }
  // nullptr when the symbol does not exist.
  void* symbol(const char* name) const;

private:
  void* handle_ = nullptr;
  std::string name_;
};

} // namespace qla

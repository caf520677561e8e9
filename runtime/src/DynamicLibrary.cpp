#include "qla/runtime/DynamicLibrary.h"

#include <dlfcn.h>

namespace qla {

namespace {
constexpr const char* kCudaLibDir = "/usr/local/cuda/lib64/";
}

DynamicLibrary DynamicLibrary::open(std::initializer_list<const char*> names, std::string* error) {
  std::string errors;
  auto attempt = [&](const std::string& candidate) -> void* {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      if (!errors.empty())
        errors += "; ";
      errors += why ? why : candidate + ": unknown dlopen error";
    }
    return handle;
  };
  DynamicLibrary lib;
  for (const char* name : names) {
    if ((lib.handle_ = attempt(name))) {
      lib.name_ = name;
      return lib;
    }
  }
  for (const char* name : names) {
    std::string path = std::string(kCudaLibDir) + name;
    if ((lib.handle_ = attempt(path))) {
      lib.name_ = path;
      return lib;
    }
  }
  if (error)
    *error = errors;
  return lib;
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ ? dlsym(handle_, name) : nullptr;
}

} // namespace qla

#pragma once

#include <cuda.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace qla {

// A module loaded into the primary context of device 0 (cuModuleLoadDataEx); unloaded on
// destruction. Functions obtained from it are valid only while it lives. Move-only.
class LoadedModule {
public:
  // `image` is a cubin, a fatbin or PTX text (the driver JIT-compiles PTX). `name` identifies the
  // module in error messages. Throws qla::Error, with the JIT error log where there is one.
  explicit LoadedModule(std::string_view image, std::string_view name = "module");
  ~LoadedModule();

  LoadedModule(LoadedModule&& other) noexcept;
  LoadedModule& operator=(LoadedModule&& other) noexcept;
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  // Throws qla::Error "module '<name>' has no kernel named '<kernel>'" when absent.
  CUfunction function(std::string_view kernelName) const;
  CUmodule handle() const { return module_; }
  const std::string& name() const { return name_; }

private:
  void unload() noexcept;

  CUmodule module_ = nullptr;
  std::string name_;
  // Functions handed out, so that launch() forgets its per-function state when they die.
  mutable std::mutex functionsMutex_;
  mutable std::vector<CUfunction> functions_;
};

} // namespace qla

// JIT: a DSL kernel -> cache key -> disk cache (PTX, cubin, manifest) -> loaded kernel.
#ifndef QLA_DSL_JIT_H
#define QLA_DSL_JIT_H

#include "qla/dsl/Kernel.h"
#include "qla/runtime/DiskCache.h"

#include <string>

namespace qla::dsl {

/// Version tag of cache folders: the compiler version and target.
std::string cacheVersionTag();
/// sha256 of the kernel's structural hash, the options, the compiler version and nvJitLink's version.
std::string cacheKey(const Kernel &kernel, const CompileOptions &options);

struct BuiltKernel {
  CacheEntry entry;          // kernel.ptx, kernel.cubin, manifest.json
  std::string key;
  bool cacheHit = false;
  double seconds = 0;        // lookup or DSL -> cubin
};

/// Looks the kernel up in `cache`, or compiles it to PTX and cubin (nvJitLink) and publishes it.
/// Needs no GPU.
BuiltKernel buildKernel(const Kernel &kernel, DiskCache &cache, const CompileOptions &options = {});

} // namespace qla::dsl

#endif

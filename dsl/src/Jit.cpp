// The cache-or-compile path from a DSL kernel to a cubin on disk.
#include "qla/dsl/Jit.h"

#include "qla/runtime/Json.h"
#include "qla/runtime/Nvjitlink.h"
#include "qla/runtime/Sha256.h"

#include "CompilerHash.h" // generated

#include "llvm/Config/llvm-config.h"

#include <cuda.h>

#include <chrono>
#include <fmt/format.h>

namespace qla::dsl {

namespace {
// The hash of the compiler's sources (cmake/CompilerHash.cmake): the tile IR's hash in the key cannot see
// a change to a pass or a lowering.
constexpr const char *kCompilerVersion = "qla-0.1.0-" QLA_COMPILER_HASH;
} // namespace

std::string cacheVersionTag() { return std::string(kCompilerVersion) + "+sm_90a"; }

// The toolkit the runtime was built against (CUDA_VERSION of its cuda.h) stands for the nvJitLink that
// links the cubin: asking the library itself would load it (≈ 5 ms) on every warm-cache load. The
// entry's manifest records the nvJitLink that actually linked it.
// LLVM's version too: an upgrade of the LLVM 22 packages can change the NVPTX backend's PTX.
std::string cacheKey(const Kernel &kernel, const CompileOptions &options) {
  return sha256Hex(fmt::format("{}\n{}\nptx={}\ncuda={}\nllvm={}\n", kCompilerVersion, kernel.structuralHash(),
                               options.ptxFeatures, CUDA_VERSION, LLVM_VERSION_STRING));
}

BuiltKernel buildKernel(const Kernel &kernel, DiskCache &cache, const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  BuiltKernel out;
  out.key = cacheKey(kernel, options);
  if (std::optional<CacheEntry> hit = cache.lookup(out.key)) {
    out.entry = std::move(*hit);
    out.cacheHit = true;
    out.seconds = elapsed();
    return out;
  }
  CompiledPtx ptx = kernel.compile(options);
  std::string cubin = linkPtxToCubin(ptx.ptx, "sm_90a");
  Json manifest = Json::parse(ptx.manifestJson);
  manifest.set("key", out.key);
  manifest.set("nvjitlink", nvJitLinkVersion());
  out.entry = cache.publish(out.key, {{"kernel.ptx", ptx.ptx}, {"kernel.cubin", cubin}}, manifest);
  out.seconds = elapsed();
  return out;
}

void Kernel::launch(const std::vector<TensorArg> &tensors, CUstream stream) {
  if (!loaded_) {
    DiskCache cache(DiskCache::defaultRoot(), cacheVersionTag());
    BuiltKernel built = buildKernel(*this, cache);
    loaded_ = std::make_unique<CompiledKernel>(built.entry.manifest, built.entry.files.at("kernel.cubin"));
  }
  loaded_->launch(tensors, stream);
}

} // namespace qla::dsl

// qlac load gdn --set S: the GDN forward kernel set as a caller gets it through the JIT
// (qla::gdn::buildChunkForward with the planner's kernels: DSL -> cache key -> disk cache, compiled on
// a miss), then its modules loaded on the GPU; prints the time of each part. Run twice, the second
// process measures issue 6's "load from a warm disk cache" (< 20 ms).
#include "Commands.h"

#include "gdn/api/ChunkForwardJit.h"
#include "gdn/forward/GdnForward.h"
#include "qla/dsl/Jit.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace qlac {

int loadCommand(const Args &args) {
  std::string kernel, settings;
  int repeat = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size())
        throw qla::Error(fmt::format("load: {} needs a value", a));
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      fmt::print("usage: qlac load gdn --set K=V,... [--repeat N]\n\n"
                 "Builds the GDN forward kernel set through the JIT, as qla::gdn::buildChunkForward does for\n"
                 "a caller (the planner's kernels included): each kernel's DSL program is built, keyed and\n"
                 "looked up in the disk cache ($QLA_CACHE_DIR, else ~/.cache/qla), compiled on a miss; then\n"
                 "the modules are loaded on the GPU (when there is one). Prints the time of each part; the\n"
                 "first build in a fresh process after a warm cache is the warm-cache load time.\n");
      return 0;
    }
    if (a == "--set")
      settings = value();
    else if (a == "--repeat")
      repeat = std::max(1, std::atoi(value().c_str()));
    else if (kernel.empty() && a.rfind("--", 0) != 0)
      kernel = a;
    else
      throw qla::Error(fmt::format("load: unknown option '{}' (see 'qlac load --help')", a));
  }
  if (kernel != "gdn")
    throw qla::Error(fmt::format("load: kernel '{}' is not a kernel set (load: gdn)", kernel));
  qla::Driver &drv = qla::Driver::get();
  const bool gpu = drv.available();
  if (gpu)
    drv.ensureContext(); // the context is the process's, not the load's: created before the clock starts
  const qla::gdn::GdnForwardConfig config = qla::gdn::parseGdnForwardConfig(settings);
  const size_t kernels = qla::gdn::gdnForwardPackage(config, /*plannerKernels=*/true).size();
  qla::DiskCache cache(qla::DiskCache::defaultRoot(), qla::dsl::cacheVersionTag()); // the one buildChunkForward uses
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  for (int r = 0; r < repeat; ++r) {
    const size_t cachedBefore = cache.keys().size();
    auto t0 = std::chrono::steady_clock::now();
    qla::gdn::ChunkForward fwd = qla::gdn::buildChunkForward(config, /*plannerKernels=*/true);
    auto t1 = std::chrono::steady_clock::now();
    const size_t cachedAfter = cache.keys().size();
    const size_t compiled = std::min(kernels, cachedAfter > cachedBefore ? cachedAfter - cachedBefore : 0);
    if (gpu)
      fwd.load();
    auto t2 = std::chrono::steady_clock::now();
    fmt::print("gdn forward set ({} kernels, {} compiled, {} from the disk cache; {}): built {:.2f} ms, modules {}, "
               "total {:.2f} ms\n",
               kernels, compiled, kernels - compiled, settings, ms(t0, t1), gpu ? fmt::format("loaded {:.2f} ms", ms(t1, t2)) : std::string("not loaded (no GPU)"),
               ms(t0, t2));
  }
  return 0;
}

} // namespace qlac

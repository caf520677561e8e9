#include "gdn/api/ChunkForwardJit.h"

#include "gdn/api/TunedConfig.h"
#include "qla/dsl/Jit.h"
#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <algorithm>
#include <future>

namespace qla::gdn {

ChunkForwardShape chunkForwardShape(const GdnForwardConfig &c) {
  return {c.H,          c.HV,         c.K,          c.V,           c.BV,           c.gateInKernel,
          c.initialState, c.finalState, c.stateVFirst, c.inverseChunks, c.resolvedInverseHeads()};
}

std::vector<GdnPackageKernel> gdnForwardPackage(const GdnForwardConfig &c, bool plannerKernels) {
  std::vector<GdnPackageKernel> set;
  for (const char *k : ChunkForwardImages::kNames)
    set.push_back({k, k, ""});
  if (!plannerKernels)
    return set;
  // The wide state kernel (BV = 128, TMA rings of two chunks): at K = 256 its rings of q and k do not fit
  // in shared memory beside the exchanges' scratch (328 KB), so K = 256 runs the narrow one only.
  if (c.BV == 64 && c.stages == 1 && c.V % 128 == 0 && c.K <= 128 && !c.roles)
    set.push_back({ChunkForwardImages::kWideName, "gdn_chunk_forward", "BV=128,stages=2"});
  // The context split: K = V up to 128 (at 256 its correction's 256x256 transition tiles take 328 KB of
  // shared memory; those calls run unsplit).
  if (c.K == c.V && c.K <= 128 && !c.stateVFirst && !c.roles && c.initialState && c.finalState) {
    const auto &names = ChunkForwardImages::kSplitNames; // offsets, state, transition, correct, cumsum, windows
    set.push_back({names[0], "gdn_split_offsets", ""});
    // (The end and transition runs read a and aqk from gdn_chunk_inverse even when the main run makes its own.)
    set.push_back({names[1], "gdn_chunk_forward", c.fuseInverse ? "split_run=1,fuse_inverse=0" : "split_run=1"});
    set.push_back({names[2], "gdn_chunk_forward", c.fuseInverse ? "split_run=2,fuse_inverse=0" : "split_run=2"});
    set.push_back({names[3], "gdn_split_correct", ""});
    set.push_back({names[4], "gdn_cumsum", "chunk_totals=1"});
    set.push_back({names[5], "gdn_split_windows", ""});
  }
  return set;
}

std::unique_ptr<dsl::Kernel> buildGdnKernel(const std::string &kernel, const GdnForwardConfig &c) {
  if (kernel == "gdn_offsets")
    return buildGdnOffsets(c);
  if (kernel == "gdn_cumsum")
    return buildGdnCumsum(c);
  if (kernel == "gdn_chunk_inverse")
    return buildGdnChunkInverse(c);
  if (kernel == "gdn_chunk_forward")
    return buildGdnChunkForward(c);
  if (kernel == "gdn_split_correct")
    return buildGdnSplitCorrect(c);
  if (kernel == "gdn_split_offsets")
    return buildGdnSplitOffsets(c);
  if (kernel == "gdn_split_windows")
    return buildGdnSplitWindows(c);
  throw Error("gdn forward: unknown kernel '" + kernel + "'");
}

ChunkForward buildChunkForward(const GdnForwardConfig &c, bool plannerKernels) {
  c.validate();
  DiskCache cache(DiskCache::defaultRoot(), dsl::cacheVersionTag());
  const std::vector<GdnPackageKernel> set = gdnForwardPackage(c, plannerKernels);
  std::vector<std::unique_ptr<dsl::Kernel>> kernels;
  for (const GdnPackageKernel &k : set)
    kernels.push_back(buildGdnKernel(k.kernel, k.settings.empty() ? c : withGdnSettings(c, k.settings)));
  // The kernels compile side by side: each has its own MLIR context, and the cache is thread-safe.
  std::vector<std::future<dsl::BuiltKernel>> builds;
  for (auto &k : kernels)
    builds.push_back(std::async(std::launch::async, [&cache, &k] { return dsl::buildKernel(*k, cache); }));
  ChunkForwardImages images;
  for (size_t i = 0; i < set.size(); ++i) {
    dsl::BuiltKernel built = builds[i].get();
    const std::string &folder = set[i].folder;
    std::string cubin = built.entry.files.at("kernel.cubin");
    if (i < ChunkForwardImages::kNames.size()) {
      images.manifests[i] = built.entry.manifest;
      images.cubins[i] = std::move(cubin);
    } else if (folder == ChunkForwardImages::kWideName) {
      images.wideManifest = built.entry.manifest;
      images.wideManifest.set("config", "BV=" + std::to_string(withGdnSettings(c, set[i].settings).BV));
      images.wideCubin = std::move(cubin);
    } else {
      const auto &names = ChunkForwardImages::kSplitNames;
      size_t j = std::find(names.begin(), names.end(), folder) - names.begin();
      images.splitManifests[j] = built.entry.manifest;
      images.splitCubins[j] = std::move(cubin);
    }
  }
  ChunkForward fwd(std::move(images), chunkForwardShape(c));
  if (c.splitTokens > 0)
    fwd.setSplitPolicy({.sms = 0, .segmentTokensWhenSplit = c.splitTokens});
  return fwd;
}

GdnForwardConfig withTunedTiles(GdnForwardConfig config, const std::string &tuned) {
  GdnForwardConfig t = parseGdnForwardConfig(tuned);
  config.BV = t.BV;
  config.stages = t.stages;
  config.inverseBlocksPerSM = t.inverseBlocksPerSM;
  config.inverseChunks = t.inverseChunks;
  config.inverseStages = t.inverseStages;
  config.inverseHeads = t.inverseHeads;
  if (config.splitTokens == 0) // a length the caller chose stays
    config.splitTokens = t.splitTokens;
  config.validate();
  return config;
}

ChunkForward buildTunedChunkForward(const GdnForwardConfig &config, int64_t B, int64_t T,
                                    const std::filesystem::path &dbPath, std::string *tunedFrom) {
  Driver &drv = Driver::get();
  if (drv.available()) {
    drv.ensureContext();
    std::optional<TuningDb> loaded;
    try {
      loaded = TuningDb::load(dbPath.empty() ? TuningDb::defaultPath() : dbPath);
    } catch (const Error &) { // not a tuning database (or another version): as if none
    }
    const TuningDb db = loaded ? std::move(*loaded) : TuningDb::load("");
    if (auto gpu = db.gpuFor(queryDevice(), "gdn_forward"))
      if (auto e = tunedGdnForward(db, *gpu, config.H, config.HV, config.K, config.V, B, T)) {
        GdnForwardConfig tuned = config;
        try {
          tuned = withTunedTiles(config, e->config);
        } catch (const Error &) { // tiles this call's options do not allow (e.g. roles): untuned
          return buildChunkForward(config, true);
        }
        // A tuned segment length holds for the tuned shape only; elsewhere the planner picks its own.
        if (e->shape != gdnTuningShape(config.H, config.HV, config.K, config.V, B, T))
          tuned.splitTokens = config.splitTokens;
        if (tunedFrom)
          *tunedFrom = e->shape + ": " + e->config;
        return buildChunkForward(tuned, true);
      }
  }
  return buildChunkForward(config, true);
}

} // namespace qla::gdn

#include "gdn/api/ChunkForwardJit.h"

#include "gdn/api/TunedConfig.h"
#include "qla/dsl/Jit.h"
#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <future>

namespace qla::gdn {

ChunkForwardShape chunkForwardShape(const GdnForwardConfig &c) {
  return {c.H, c.HV, c.K, c.V, c.BV, c.gateInKernel, c.initialState, c.finalState, c.stateVFirst, c.inverseChunks, c.inverseHeads};
}

ChunkForward buildChunkForward(const GdnForwardConfig &c) {
  c.validate();
  DiskCache cache(DiskCache::defaultRoot(), dsl::cacheVersionTag());
  std::unique_ptr<dsl::Kernel> kernels[] = {buildGdnOffsets(c), buildGdnCumsum(c), buildGdnChunkInverse(c),
                                            buildGdnChunkForward(c)};
  // The kernels compile side by side: each has its own MLIR context, and the cache is thread-safe.
  std::future<dsl::BuiltKernel> builds[4];
  for (size_t i = 0; i < 4; ++i)
    builds[i] = std::async(std::launch::async, [&, i] { return dsl::buildKernel(*kernels[i], cache); });
  ChunkForwardImages images;
  for (size_t i = 0; i < 4; ++i) {
    dsl::BuiltKernel built = builds[i].get();
    images.manifests[i] = built.entry.manifest;
    images.cubins[i] = built.entry.files.at("kernel.cubin");
  }
  return ChunkForward(std::move(images), chunkForwardShape(c));
}

GdnForwardConfig withTunedTiles(GdnForwardConfig config, const std::string &tuned) {
  GdnForwardConfig t = parseGdnForwardConfig(tuned);
  config.BV = t.BV;
  config.stages = t.stages;
  config.inverseBlocksPerSM = t.inverseBlocksPerSM;
  config.inverseChunks = t.inverseChunks;
  config.inverseStages = t.inverseStages;
  config.inverseHeads = t.inverseHeads;
  config.validate();
  return config;
}

ChunkForward buildTunedChunkForward(const GdnForwardConfig &config, int64_t B, int64_t T,
                                    const std::filesystem::path &dbPath, std::string *tunedFrom) {
  Driver &drv = Driver::get();
  if (drv.available()) {
    drv.ensureContext();
    TuningDb db = TuningDb::load(dbPath.empty() ? TuningDb::defaultPath() : dbPath);
    if (auto gpu = db.gpuFor(queryDevice()))
      if (auto e = tunedGdnForward(db, *gpu, config.H, config.HV, config.K, config.V, B, T)) {
        GdnForwardConfig tuned = config;
        try {
          tuned = withTunedTiles(config, e->config);
        } catch (const Error &) { // tiles this call's options do not allow (e.g. roles): untuned
          return buildChunkForward(config);
        }
        if (tunedFrom)
          *tunedFrom = e->shape + ": " + e->config;
        return buildChunkForward(tuned);
      }
  }
  return buildChunkForward(config);
}

} // namespace qla::gdn

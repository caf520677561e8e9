#include "gdn/api/ChunkForwardJit.h"

#include "qla/dsl/Jit.h"

#include <future>

namespace qla::gdn {

ChunkForwardShape chunkForwardShape(const GdnForwardConfig &c) {
  return {c.H, c.HV, c.K, c.V, c.BV, c.gateInKernel, c.initialState, c.finalState, c.stateVFirst, c.inverseChunks};
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

} // namespace qla::gdn

// Builds a ChunkForward from the DSL programs: compiled on first use, cached on disk (needs the
// compiler, no GPU).
#ifndef QLA_KERNELS_GDN_API_CHUNKFORWARDJIT_H
#define QLA_KERNELS_GDN_API_CHUNKFORWARDJIT_H

#include "gdn/api/ChunkForward.h"
#include "gdn/forward/GdnForward.h"

#include <memory>
#include <string>
#include <vector>

namespace qla::gdn {

ChunkForwardShape chunkForwardShape(const GdnForwardConfig &config);

/// One kernel of the folder ChunkForward::fromDirectory loads: its folder, its DSL program (as qlac names
/// it) and the settings it adds to the set's config.
struct GdnPackageKernel {
  std::string folder, kernel, settings;
};
/// The forward's kernel set for `config`: the four kernels; with `plannerKernels` also the wide state
/// kernel where the planner would take it (BV = 64, V a multiple of 128, no TMA rings: BV = 128 with
/// two stages) and the context split's kernels where the split applies (K = V, states [K][V], no roles,
/// initial and final state). What qlac tune gdn builds and scripts/device/pack_gdn.sh packs.
std::vector<GdnPackageKernel> gdnForwardPackage(const GdnForwardConfig &config, bool plannerKernels);
std::unique_ptr<dsl::Kernel> buildGdnKernel(const std::string &kernel, const GdnForwardConfig &config);

/// The kernel set compiled (side by side, through the disk cache); `plannerKernels` as gdnForwardPackage.
ChunkForward buildChunkForward(const GdnForwardConfig &config, bool plannerKernels = false);

/// `config` with the tile settings of a tuned build (BV, stages, inverse_blocks_per_sm, inverse_chunks,
/// inverse_stages, inverse_heads, split_tokens) taken from `tuned` (a config string of `qlac tune gdn`); what the call computes
/// (heads, gates, norms, states, precision) stays the caller's.
GdnForwardConfig withTunedTiles(GdnForwardConfig config, const std::string &tuned);
/// buildChunkForward (with the planner's kernels, as qlac tune gdn timed them) with the tiles tuned on
/// this GPU for calls of B sequences of T tokens (a tuned split_tokens only when B and T are the tuned shape's)
/// (tunedGdnForward over TuningDb::defaultPath(), or `db`); `config` as it is when nothing was tuned
/// for its heads on this GPU, or there is no GPU. `tunedFrom` (optional) receives the entry used.
ChunkForward buildTunedChunkForward(const GdnForwardConfig &config, int64_t B, int64_t T,
                                    const std::filesystem::path &db = {}, std::string *tunedFrom = nullptr);

} // namespace qla::gdn

#endif

// Builds a ChunkForward from the DSL programs: compiled on first use, cached on disk (needs the
// compiler, no GPU).
#ifndef QLA_KERNELS_GDN_API_CHUNKFORWARDJIT_H
#define QLA_KERNELS_GDN_API_CHUNKFORWARDJIT_H

#include "gdn/api/ChunkForward.h"
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

ChunkForwardShape chunkForwardShape(const GdnForwardConfig &config);
ChunkForward buildChunkForward(const GdnForwardConfig &config);

/// `config` with the tile settings of a tuned build (BV, stages, inverse_blocks_per_sm, inverse_chunks,
/// inverse_stages) taken from `tuned` (a config string of `qlac tune gdn`); what the call computes
/// (heads, gates, norms, states, precision) stays the caller's.
GdnForwardConfig withTunedTiles(GdnForwardConfig config, const std::string &tuned);
/// buildChunkForward with the tiles tuned on this GPU for calls of B sequences of T tokens
/// (tunedGdnForward over TuningDb::defaultPath(), or `db`); `config` as it is when nothing was tuned
/// for its heads on this GPU, or there is no GPU. `tunedFrom` (optional) receives the entry used.
ChunkForward buildTunedChunkForward(const GdnForwardConfig &config, int64_t B, int64_t T,
                                    const std::filesystem::path &db = {}, std::string *tunedFrom = nullptr);

} // namespace qla::gdn

#endif

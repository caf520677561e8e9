// Builds a ChunkForward from the DSL programs: compiled on first use, cached on disk (needs the
// compiler, no GPU).
#ifndef QLA_KERNELS_GDN_API_CHUNKFORWARDJIT_H
#define QLA_KERNELS_GDN_API_CHUNKFORWARDJIT_H

#include "gdn/api/ChunkForward.h"
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

ChunkForwardShape chunkForwardShape(const GdnForwardConfig &config);
ChunkForward buildChunkForward(const GdnForwardConfig &config);

} // namespace qla::gdn

#endif

// Internals shared by ChunkForward's sources (not part of its interface): the call's sizes, the
// workspace's layout, and the checks of the context split's kernels and plans.
#ifndef QLA_KERNELS_GDN_API_CHUNKFORWARDINTERNAL_H
#define QLA_KERNELS_GDN_API_CHUNKFORWARDINTERNAL_H

#include "gdn/api/ChunkForward.h"

namespace qla::gdn {

/// Where the scratch of one call lies in the caller's workspace.
struct ChunkForwardLayout {
  int64_t offsets = 0, gcum = 0, beta = 0, a = 0, aqk = 0, total = 0;
  // The context split (segments > 0): the segment batch's offsets, each sequence's first segment, and
  // per segment its end from zero, its transition, its corrected start and its final state.
  int64_t segments = 0, segmentOffsets = 0, firstSegment = 0, ends = 0, transitions = 0, starts = 0, finals = 0;
  // gdn_split_windows' inputs and outputs: each chunk's summed log-gate (chunkSlots a segment), the
  // threshold, and how many of each (segment, head)'s last chunks its end run and transition run take.
  int64_t chunkSlots = 0, chunkTotals = 0, threshold = 0, endRuns = 0, transitionRuns = 0;
};

namespace detail {

inline constexpr int64_t kChunk = 64;
inline constexpr const char *kWho = "gdn chunk_forward";

inline int64_t alignUp(int64_t x) { return (x + 255) / 256 * 256; }

struct Sizes {
  int64_t B, T, N, tokens;
  bool varlen;
  int64_t longest; // tokens of the longest sequence (an upper bound, T, without host cu_seqlens)
};

/// The call's batch from q's shape and cu_seqlens (checked: monotone, ending at T).
Sizes sizesOf(const ChunkForwardTensors &t);
/// Where each scratch buffer of a call lies; `segments` > 0 adds the context split's.
ChunkForwardLayout workspaceLayout(const ChunkForwardShape &sh, int64_t tokens, int64_t sequences, bool varlen,
                                   int64_t segments = 0, int64_t chunkSlots = 0);
/// The split kernel `which` (ChunkForwardImages::kSplitNames) takes the tensors runSplit passes.
void checkSplitTensors(const ChunkForwardShape &sh, size_t which, const Json &manifest);
/// The plan's tables cut its cu_seqlens into segments, and its counts and device tables are the ones
/// runSplit sizes grids and reads by.
bool consistentVarlenSplit(const GdnVarlenSplit &vs, bool onDevice);
/// Whether a gdn_chunk_forward build fuses the inverse (its tensors: β in the place of a and aqk); throws
/// qla::Error naming the tensors when they are neither list.
bool fusesInverse(const Json &forwardManifest);

} // namespace detail
} // namespace qla::gdn

#endif

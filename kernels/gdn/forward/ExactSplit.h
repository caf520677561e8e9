// The context split of long sequences on the CPU interpreter, with the kernels and the order of
// ChunkForward's split on the GPU (docs/context-split.md): cumsum (with chunk totals) and inverse over
// the segment batch; gdn_split_windows; each segment's end state from zero over its run (E_s: the
// state-only form of gdn_chunk_forward, qla-drop-loop-outputs) and its transition (A_s: the transition
// form, from the identity with v taken as zero; zero where the window truncates); the correction
// S_{s+1} = A_s·S_s + E_s (gdn_split_correct); the main run of every segment from its S_s.
#ifndef QLA_KERNELS_GDN_FORWARD_EXACTSPLIT_H
#define QLA_KERNELS_GDN_FORWARD_EXACTSPLIT_H

#include "gdn/reference/GdnReference.h"

#include <limits>

namespace qla::gdn {

/// Any batch (B sequences or cu_seqlens) with K = V and states [K][V]; sequences at least two segments
/// long are cut into segments of `segmentTokens` (a positive multiple of the chunk, 64), the others stay
/// whole (planContextSplit). `logGateThreshold`: −inf takes every head's transition (the exact split
/// with no floor); a finite value the windowed one (−10: truncated; −88: the GPU's exact mode, whose
/// dropped terms are below f32 rounding, docs/context-split.md §6), where a segment whose last chunks' summed log-gate reaches it starts from its end over
/// those chunks alone (gdn_split_windows). `precise` and `inverseF16` >= 0 override the kernels' defaults
/// (GdnForwardConfig). Throws qla::Error naming what is not supported.
GdnOutputs interpretGdnForwardSplit(const GdnProblem &problem, const GdnInputs &inputs, int64_t segmentTokens,
                                    double logGateThreshold = -std::numeric_limits<double>::infinity(),
                                    int64_t precise = -1, int64_t inverseF16 = -1);

} // namespace qla::gdn

#endif

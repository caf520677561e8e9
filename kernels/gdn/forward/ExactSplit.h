// The exact context split of one long sequence, orchestrated on the host over the unchanged GDN
// kernels on the CPU interpreter (docs/context-split.md). It checks the generic decomposition that
// the qla-context-split pass (issue 5) is to build into kernels: each segment's end state from zero
// (E_s), with the state-only form of gdn_chunk_forward (qla-drop-loop-outputs), and its transition
// (A_s) with the transition form (state-only, from the identity, v taken as zero); the correction
// S_{s+1} = A_s·S_s + E_s (gdn_split_correct); the main run of every segment from its S_s.
#ifndef QLA_KERNELS_GDN_FORWARD_EXACTSPLIT_H
#define QLA_KERNELS_GDN_FORWARD_EXACTSPLIT_H

#include "gdn/reference/GdnReference.h"

namespace qla::gdn {

/// Any batch (B sequences or cu_seqlens) with K = V and states [K][V]; sequences at least two segments
/// long are cut into segments of `segmentTokens` (a positive multiple of the chunk, 64), the others stay
/// whole (planContextSplit). Throws qla::Error naming what is not supported.
GdnOutputs interpretGdnForwardSplit(const GdnProblem &problem, const GdnInputs &inputs, int64_t segmentTokens);

} // namespace qla::gdn

#endif

// gdn_split_offsets: the segment batch of a context-split fixed-length batch, written on the device (so
// the split needs no host copy and stays capturable in a CUDA graph): N sequences of T tokens, m
// segments each, of L = 64·⌈T / (64·m)⌉ tokens (the last one shorter), all from the extents —
//   segment_cu[j] = i·T + min(w·L, T) for j = i·m + w (j = 0 … N·m), first_segment[i] = i·m.
// The same plan as planContextSplit's for such a batch (it picks that L for the m it chooses).
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalars;

std::unique_ptr<dsl::Kernel> buildGdnSplitOffsets(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  auto k = newGdnKernel(c, "gdn_split_offsets");
  auto first = k->tensor("first_segment", {-1}, DType::i64); // [N + 1]
  auto segCu = k->tensor("segment_cu_seqlens", {-1}, DType::i64); // [N·m + 1]
  auto q = k->tensor("q", {-1, c.H * c.K}, DType::bf16);   // its rows give N·T
  k->threads(128);
  k->grid(-1); // N·m + 1 blocks, one offset each
  Index j = k->blockId(0), n = k->dim(first, 0) - 1, segments = k->dim(segCu, 0) - 1;
  Index m = segments / n, T = k->dim(q, 0) / n;
  Index L = (T + (m * C - 1)) / (m * C) * C;
  Index i = j / m, w = j - i * m;
  Index offset = i * T + k->min(w * L, T);
  auto value = [&](Index x) {
    return k->map({k->iota({1}, 0)}, DType::i64, [&](const Scalars &e) { return (e[0] + k->scalar(x)).to(DType::i64); });
  };
  k->store(value(offset), segCu, {j});
  k->store(value(j * m), first, {j}, {n + 1}); // blocks past N write nothing there
  return k;
}

} // namespace qla::gdn

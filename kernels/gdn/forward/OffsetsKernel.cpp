// gdn_offsets: cu_seqlens = 0, T, 2T, ..., N·T for a fixed-length batch, written on the device so
// that the forward needs no host copy (and stays capturable in a CUDA graph).
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalars;

std::unique_ptr<dsl::Kernel> buildGdnOffsets(const GdnForwardConfig &c) {
  c.validate();
  auto k = newGdnKernel(c, "gdn_offsets");
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto q = k->tensor("q", {-1, c.H * c.K}, DType::bf16);
  k->threads(128);
  k->grid(-1); // N + 1 blocks, one offset each
  Index i = k->blockId(0), n = k->dim(cu, 0) - 1;
  Index offset = i * (k->dim(q, 0) / n);
  auto value = k->map({k->iota({1}, 0)}, DType::i64,
                      [&](const Scalars &x) { return (x[0] + k->scalar(offset)).to(DType::i64); });
  k->store(value, cu, {i});
  return k;
}

} // namespace qla::gdn

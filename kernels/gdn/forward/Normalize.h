// Loading q/k tiles for gemms, L2-normalised per row when the kernel is asked to.
#ifndef QLA_KERNELS_GDN_FORWARD_NORMALIZE_H
#define QLA_KERNELS_GDN_FORWARD_NORMALIZE_H

#include "qla/dsl/Kernel.h"

namespace qla::gdn {

/// A [rows, cols] box of `t` in shared memory; with l2norm, each row x becomes x·rsqrt(Σx² + 1e-6).
/// `pipelined`: the plain copy goes without bounds (a TMA ring reads whole chunks, zeros past the
/// tensor's end); the L2 norm's register load keeps them (it would read past the tensor otherwise).
dsl::Tile keyTile(dsl::Kernel &k, const dsl::Tensor &t, std::vector<dsl::Index> offsets,
                  std::vector<int64_t> shape, std::vector<dsl::Index> bounds, bool l2norm, bool pipelined);

} // namespace qla::gdn

#endif

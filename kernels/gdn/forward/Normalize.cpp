#include "gdn/forward/Normalize.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Scalars;

dsl::Tile keyTile(dsl::Kernel &k, const dsl::Tensor &t, std::vector<dsl::Index> offsets, std::vector<int64_t> shape,
                  std::vector<dsl::Index> bounds, bool l2norm, bool pipelined) {
  if (!l2norm)
    return k.copy(t, std::move(offsets), shape, pipelined ? std::vector<dsl::Index>{} : std::move(bounds));
  auto x = k.map({k.load(t, std::move(offsets), shape, std::move(bounds))}, DType::f32,
                 [](const Scalars &v) { return v[0].to(DType::f32); });
  auto sq = k.map({x}, DType::f32, [](const Scalars &v) { return v[0] * v[0]; });
  auto inv = k.broadcast(k.map({k.reduce(sq, 1, dsl::Reduce::add)}, DType::f32,
                               [](const Scalars &v) { return rsqrt(v[0] + 1e-6); }),
                         shape, {0});
  return k.share(k.map({x, inv}, DType::bf16, [](const Scalars &v) { return (v[0] * v[1]).to(DType::bf16); }));
}

} // namespace qla::gdn

// gdn_split_correct: the correction scan of the exact context split (docs/context-split.md). For each
// sequence n cut into segments first[n] … first[n + 1] − 1, with E_s each segment's end state from zero
// and A_s its transition (per value head, states [K][V]): S_first = the sequence's initial state, then
// S_{s+1} = A_s·S_s + E_s. Per (value head, 64 state columns, sequence), held transposed like
// gdn_chunk_forward's state (Sᵀ, 64×K, f32):
//   S_{s+1}ᵀ = S_sᵀ·A_sᵀ + E_sᵀ
// with both f32 operands entering the tensor cores as bf16 hi + lo parts (hi·hi + hi·lo + lo·hi).
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnSplitCorrect(const GdnForwardConfig &c) {
  c.validate();
  const int64_t K = c.K, V = c.V, BV = 64, slices = V / BV;
  auto k = std::make_unique<dsl::Kernel>("gdn_split_correct");
  auto first = k->tensor("first_segment", {-1}, DType::i64);         // [sequences + 1]
  auto initial = k->tensor("initial_state", {-1, V}, DType::f32);    // [sequences · HV · K, V]
  auto ends = k->tensor("segment_ends", {-1, V}, DType::f32);        // [segments · HV · K, V]
  auto transitions = k->tensor("transitions", {-1, K}, DType::f32);  // [segments · HV · K, K]
  auto starts = k->tensor("segment_starts", {-1, V}, DType::f32);    // [segments · HV · K, V]
  k->threads(128);
  k->grid(c.HV * slices, -1); // (value head and columns, sequence)
  Index hv = k->blockId(0) / slices, vb = k->blockId(0) - hv * slices, n = k->blockId(1);
  Index begin = k->loadIndex(first, {n}), end = k->loadIndex(first, {n + 1});
  auto hi = [&](const Tile &t) { return k->map({t}, DType::bf16, [](const Scalars &e) { return e[0].to(DType::bf16); }); };
  auto lo = [&](const Tile &t, const Tile &h) {
    return k->map({t, h}, DType::bf16, [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
  };
  Tile s0 = k->loadTransposed(initial, {(n * c.HV + hv) * K, vb * BV}, {BV, K});
  k->storeTransposed(s0, starts, {(begin * c.HV + hv) * K, vb * BV});
  k->loop(begin, end - 1, 1, 1, {s0}, [&](Index s, const Tiles &carried) {
    Index row = (s * c.HV + hv) * K;
    Tile sHi = hi(carried[0]), sLo = lo(carried[0], sHi);
    Tile a = k->load(transitions, {row, 0}, {K, K});
    Tile aHi = hi(a);
    Tile aHiShared = k->share(aHi), aLoShared = k->share(lo(a, aHi));
    Tile next = k->gemm(sHi, aHiShared, k->loadTransposed(ends, {row, vb * BV}, {BV, K}), {.b = true});
    next = k->gemm(sHi, aLoShared, next, {.b = true});
    next = k->gemm(sLo, aHiShared, next, {.b = true});
    k->storeTransposed(next, starts, {row + c.HV * K, vb * BV});
    return Tiles{next};
  });
  return k;
}

} // namespace qla::gdn

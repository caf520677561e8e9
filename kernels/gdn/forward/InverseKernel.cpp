// gdn_chunk_inverse: A₀ = (I + StrictLower(diag(β) Kc Kcᵀ))⁻¹ for every chunk, gate-free (the gate
// is applied elementwise by gdn_chunk_forward).
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Normalize.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalars;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnChunkInverse(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  auto k = std::make_unique<dsl::Kernel>("gdn_chunk_inverse");
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto keys = k->tensor("k", {-1, c.H * c.K}, DType::bf16);
  auto betaIn = k->tensor("beta", {-1, c.HV}, DType::f32);
  auto ainv = k->tensor("ainv", {-1, c.HV * C}, DType::f32);
  k->threads(128);
  k->grid(c.HV, -1, -1); // (value head, sequence, chunk): chunks are independent here

  Index hv = k->blockId(0), n = k->blockId(1), chunkId = k->blockId(2), h = hv / (c.HV / c.H);
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  // Blocks past the sequence's last chunk run no iteration (the grid's z extent is an upper bound).
  k->loop(chunkId, k->min(chunkId + 1, (eos - bos + (C - 1)) / C), 1, 1, {}, [&](Index chunk, const Tiles &) {
    Index t0 = bos + chunk * C;
    auto kc = keyTile(*k, keys, {t0, h * c.K}, {C, c.K}, {eos, c.H * c.K}, c.l2normQK);
    auto kk = k->gemm(kc, kc, k->fill({C, C}, DType::f32, 0.0), {.b = true});
    auto beta = k->broadcast(k->load(betaIn, {t0, hv}, {C, 1}, {eos, c.HV}), {C, C}, {0, 1});
    auto rows = k->iota({C, C}, 0), cols = k->iota({C, C}, 1);
    auto a = k->map({kk, beta, rows, cols}, DType::f32,
                    [](const Scalars &x) { return select(x[2] > x[3], x[0] * x[1], 0.0); });
    k->store(k->triInverse(a), ainv, {t0, hv * C}, {eos, c.HV * C});
    return Tiles{};
  });
  return k;
}

} // namespace qla::gdn

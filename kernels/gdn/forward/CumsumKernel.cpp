// gdn_cumsum: G = chunk-local inclusive cumsum of g, per (value head, sequence); with the in-kernel
// gate, g = −exp(A_log)·softplus(a + dt_bias) and β = sigmoid(b) first.
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalar;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnCumsum(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  auto k = std::make_unique<dsl::Kernel>("gdn_cumsum");
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto gIn = k->tensor(c.gateInKernel ? "a" : "g", {-1, c.HV}, DType::f32);
  auto gcum = k->tensor("gcum", {-1, c.HV}, DType::f32);
  std::unique_ptr<dsl::Tensor> bIn, betaOut, aLog, dtBias;
  if (c.gateInKernel) {
    bIn = std::make_unique<dsl::Tensor>(k->tensor("b", {-1, c.HV}, DType::f32));
    aLog = std::make_unique<dsl::Tensor>(k->tensor("A_log", {c.HV}, DType::f32));
    dtBias = std::make_unique<dsl::Tensor>(k->tensor("dt_bias", {c.HV}, DType::f32));
    betaOut = std::make_unique<dsl::Tensor>(k->tensor("beta", {-1, c.HV}, DType::f32));
  }
  std::unique_ptr<dsl::Tensor> totals;
  if (c.chunkTotals)
    totals = std::make_unique<dsl::Tensor>(k->tensor("chunk_totals", {-1, 1}, DType::f32));
  k->threads(128);
  k->grid(c.HV, -1, -1); // (value head, sequence, chunk): chunks are independent here

  Index hv = k->blockId(0), n = k->blockId(1), chunkId = k->blockId(2);
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  // Blocks past the sequence's last chunk run no iteration (the grid's z extent is an upper bound).
  k->loop(chunkId, k->min(chunkId + 1, (eos - bos + (C - 1)) / C), 1, 1, {}, [&](Index chunk, const Tiles &) {
    Index t0 = bos + chunk * C;
    auto g = k->load(gIn, {t0, hv}, {C, 1}, {eos, c.HV});
    if (c.gateInKernel) {
      Scalar decay = exp(k->loadScalar(*aLog, {hv})), bias = k->loadScalar(*dtBias, {hv});
      g = k->map({g}, DType::f32, [&](const Scalars &x) {
        Scalar z = x[0] + bias;
        return -decay * select(z > 20.0, z, log1p(exp(z)));
      });
      auto b = k->load(*bIn, {t0, hv}, {C, 1}, {eos, c.HV});
      auto beta = k->map({b}, DType::f32, [](const Scalars &x) { return 1.0 / (1.0 + exp(-x[0])); });
      k->store(beta, *betaOut, {t0, hv}, {eos, c.HV});
    }
    k->store(k->cumsum(g, 0), gcum, {t0, hv}, {eos, c.HV});
    if (totals) { // rows [sequence][head][chunk slot], Z slots a sequence (the grid's z): the table the
                  // context-split pass's decays run makes from any scan (gdn_chunk_forward split_run = 3)
      Index sequences = k->dim(cu, 0) - 1, slots = k->dim(*totals, 0) / (sequences * c.HV);
      Tile sum = k->broadcast(k->reduce(g, 0, dsl::Reduce::add), {1, 1}, {0});
      k->store(sum, *totals, {(n * c.HV + hv) * slots + chunk, 0});
    }
    return Tiles{};
  });
  return k;
}

} // namespace qla::gdn

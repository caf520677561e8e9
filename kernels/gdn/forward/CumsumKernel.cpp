// gdn_cumsum: G = chunk-local inclusive cumsum of g, per (value head, sequence); with the in-kernel
// gate, g = −exp(A_log)·softplus(a + dt_bias) and β = sigmoid(b) first. One block takes a chunk of
// cumsumHeads heads: its rows of g are contiguous (one head a block read 4 of every 32 bytes, and 16 K
// blocks of a 64-token column each left the kernel latency-bound: 27 µs on (16,32) 4x8192).
#include "gdn/forward/GdnForward.h"

#include <numeric>

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

int64_t cumsumHeads(const GdnForwardConfig &c) { return std::gcd<int64_t>(c.HV, 32); }

std::unique_ptr<dsl::Kernel> buildGdnCumsum(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  const int64_t heads = cumsumHeads(c);
  auto k = newGdnKernel(c, "gdn_cumsum");
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
  // Rows [sequence][chunk slot] of HV heads (Z slots a sequence, the grid's z): the table the
  // context-split pass's decays run makes from any scan (gdn_chunk_forward split_run = 3, its states
  // HV to a row), made here in passing.
  std::unique_ptr<dsl::Tensor> totals;
  if (c.chunkTotals)
    totals = std::make_unique<dsl::Tensor>(k->tensor("chunk_totals", {-1, c.HV}, DType::f32));
  k->threads(128);
  k->grid(c.HV / heads, -1, -1); // (heads, sequence, chunk): chunks are independent here

  Index hv = k->blockId(0) * heads, n = k->blockId(1), chunkId = k->blockId(2);
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  // Blocks past the sequence's last chunk run no iteration (the grid's z extent is an upper bound).
  k->loop(chunkId, k->min(chunkId + 1, (eos - bos + (C - 1)) / C), 1, 1, {}, [&](Index chunk, const Tiles &) {
    Index t0 = bos + chunk * C;
    auto g = k->load(gIn, {t0, hv}, {C, heads}, {eos, c.HV});
    if (c.gateInKernel) {
      auto perHead = [&](const dsl::Tensor &t) { return k->broadcast(k->load(t, {hv}, {heads}), {C, heads}, {1}); };
      g = k->map({g, perHead(*aLog), perHead(*dtBias)}, DType::f32, [&](const Scalars &x) {
        dsl::Scalar z = x[0] + x[2];
        return -exp(x[1]) * select(z > 20.0, z, log1p(exp(z)));
      });
      auto b = k->load(*bIn, {t0, hv}, {C, heads}, {eos, c.HV});
      auto beta = k->map({b}, DType::f32, [](const Scalars &x) { return 1.0 / (1.0 + exp(-x[0])); });
      k->store(beta, *betaOut, {t0, hv}, {eos, c.HV});
    }
    k->store(k->cumsum(g, 0), gcum, {t0, hv}, {eos, c.HV});
    if (totals) {
      Index sequences = k->dim(cu, 0) - 1, slots = k->dim(*totals, 0) / sequences;
      k->store(k->broadcast(k->reduce(g, 0, dsl::Reduce::add), {1, heads}, {1}), *totals, {n * slots + chunk, hv});
    }
    return Tiles{};
  });
  return k;
}

} // namespace qla::gdn

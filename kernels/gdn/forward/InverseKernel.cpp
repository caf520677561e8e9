// gdn_chunk_inverse: the chunk-local matrices of gdn_chunk_forward, every chunk independently:
//   A₀  = (I + StrictLower(diag(β) Kc Kcᵀ))⁻¹                       (gate-free inverse)
//   a   = Γ ∘ A₀ ∘ β_col     (the gated inverse with β: Γ ∘ A₀ is the inverse with the gate, GDN.md §2)
//   aqk = (Qc Kcᵀ) ∘ Γ      (lower-inclusive; Γ_ij = exp(G_i − G_j), rows inside the sequence)
// Both are written as bf16, the precision gdn_chunk_forward's tensor cores take them in; computing them
// here, where chunks run in parallel, keeps Γ and Qc Kcᵀ off the forward kernel's sequential chain.
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Normalize.h"

#include <functional>
#include <optional>
#include <vector>

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalar;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

namespace {

/// (I + N)⁻¹ for N strictly lower-triangular (C×C, f32): the 16×16 diagonal blocks by substitution,
/// then two merges on the tensor cores. With X_s the inverses of the s×s diagonal blocks and N_s the
/// blocks of N below them inside each 2s×2s diagonal block, X_2s = X_s − (X_s·N_s)·X_s: the standard
/// recursive triangular inverse (as stable as substitution). With `f16` (inverse_f16) both operands of
/// each product enter as f16: one gemm a product. Else the register operand enters as bf16 hi + lo parts
/// and the shared one as bf16 (hi·b + lo·b): two gemms a product instead of three (also splitting the
/// shared operand) for 1–3 % more error in o and the state (interpreter, T = 1000, eight seeds: o 2.74e-3
/// against 2.70e-3, state 2.19e-3 against 2.13e-3); bf16 operands alone cost 1–5 %.
Tile invertOnTensorCores(dsl::Kernel &k, const Tile &n, const Tile &rows, const Tile &cols, bool f16) {
  constexpr int64_t C = GdnForwardConfig::kChunk;
  const DType half = f16 ? DType::f16 : DType::bf16;
  // The 16-bit operand: the whole f32 value as f16, or its bf16 hi part.
  auto narrow = [&](const Tile &t) { return k.map({t}, half, [&](const Scalars &e) { return e[0].to(half); }); };
  auto lo = [&](const Tile &t, const Tile &h) {
    return k.map({t, h}, DType::bf16, [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
  };
  // a·b with a in registers (f32; as bf16 hi + lo parts, or one f16) and b a shared 16-bit tile, summed
  // over the 16-wide slices of K where neither factor is zero by its block structure.
  auto product = [&](const Tile &a, const Tile &b, std::vector<int64_t> kSlices) {
    Tile aHi = narrow(a);
    Tile r = k.gemm(aHi, b, k.fill({C, C}, DType::f32, 0.0), {}, kSlices);
    return f16 ? r : k.gemm(lo(a, aHi), b, r, {}, kSlices);
  };
  // The merges for s = 16 and 32, unrolled (the masks' bounds constant: fewer instructions and spills
  // than a loop of two, for 0.15 s more compile time).
  Tile x = k.triInverse(n, 16);
  // N_s (16-bit, in shared memory) for both merges, made before them so that N (32 f32 registers a
  // thread) is dead while they run: the row in the lower s-block of a 2s-block, the column in the upper
  // one. The 2s-blocks start at 0 and 32 for s = 16; for s = 32 the one at 32 is empty.
  std::vector<Tile> nsShared;
  for (int s : {16, 32})
    nsShared.push_back(k.share(k.map({n, rows, cols}, half, [&](const Scalars &e) {
      Scalar out = 0.0;
      for (int b : {0, 32})
        if (b + s < C)
          out = select(e[1] >= b + s && e[1] < b + s + s && e[2] >= b && e[2] < b + s, e[0], out);
      return out.to(half);
    })));
  // Half of each product's K is zero: N_s has rows only in the lower s-block of each 2s-block (slices
  // 1, 3 for s = 16; 2, 3 for s = 32), so X_s·N_s has columns only in the upper ones (0, 2; 0, 1).
  const std::vector<std::vector<int64_t>> rowsOfN = {{1, 3}, {2, 3}}, colsOfU = {{0, 2}, {0, 1}};
  for (int level = 0; level < 2; ++level) {
    // (X_s·N_s)·X_s: each register operand dies at its product; X_s is shared once for its second use.
    Tile xs = k.share(narrow(x));
    Tile u = product(x, nsShared[level], rowsOfN[level]); // X_s·N_s
    Tile xt = product(u, xs, colsOfU[level]);             // X_s·N_s·X_s
    x = k.map({x, xt}, DType::f32, [](const Scalars &e) { return e[0] - e[1]; });
  }
  return x;
}

/// body(j) for the block's value heads j = 0 … heads − 1: one copy of the code in a loop (none for one).
void headLoop(dsl::Kernel &k, int64_t heads, const std::function<void(Index)> &body) {
  if (heads == 1) {
    body(Index(0));
    return;
  }
  k.loop(0, heads, 1, 1, {}, [&](Index j, const Tiles &) {
    body(j);
    return Tiles{};
  });
}

} // namespace

void chunkMatrices(dsl::Kernel &k, const GdnForwardConfig &c, const Tile &qc, const Tile &kc, const Tile &g,
                   const Tile &beta, const Scalar &valid, const std::function<void(const Tile &)> &useAqk,
                   const std::function<void(const Tile &)> &useA, const ChunkProducts *products) {
  constexpr int64_t C = GdnForwardConfig::kChunk;
  // Made once for the block's heads, the products wait in shared memory (64 registers held across the
  // heads would spill), stashed by their own threads: each head reads them back, 16 bytes a load.
  Tile kk = products ? k.unstash(products->kk) : k.gemm(kc, kc, k.fill({C, C}, DType::f32, 0.0), {.b = true});
  Tile qk = products ? k.unstash(products->qk) : k.gemm(qc, kc, k.fill({C, C}, DType::f32, 0.0), {.b = true});
  Tile rows = k.iota({C, C}, 0), cols = k.iota({C, C}, 1);
  // Γ is written at each use; `cse` merges the two identical maps (one set of 32 exponentials a thread
  // in the PTX), so Γ is live across the inverse, within the 168-register cap without spills.
  auto gamma = [&] {
    return k.map({k.broadcast(g, {C, C}, {0, 1}), k.broadcast(g, {C, C}, {1, 0}), rows, cols}, DType::f32,
                 [&](const Scalars &e) { return select(e[2] >= e[3] && e[2] < valid, exp(e[0] - e[1]), 0.0); });
  };
  // aqk is used before the inverse is made, so that it is not live across it.
  useAqk(k.map({qk, gamma()}, DType::bf16, [](const Scalars &e) { return (e[0] * e[1]).to(DType::bf16); }));
  Tile n = k.map({kk, k.broadcast(beta, {C, C}, {0, 1}), rows, cols}, DType::f32,
                 [&](const Scalars &x) { return select(x[2] > x[3] && x[2] < valid, x[0] * x[1], 0.0); });
  Tile a0 = c.inverseInWarps ? k.triInverse(n, 0, /*f16Merges=*/true) : invertOnTensorCores(k, n, rows, cols, c.inverseF16);
  useA(k.map({a0, gamma(), k.broadcast(beta, {C, C}, {1, 0})}, DType::bf16,
             [](const Scalars &e) { return (e[0] * e[1] * e[2]).to(DType::bf16); }));
}

std::unique_ptr<dsl::Kernel> buildGdnChunkInverse(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  auto k = newGdnKernel(c, "gdn_chunk_inverse");
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto q = k->tensor("q", {-1, c.H * c.K}, DType::bf16);
  auto keys = k->tensor("k", {-1, c.H * c.K}, DType::bf16);
  auto gcum = k->tensor("gcum", {-1, c.HV}, DType::f32);
  auto betaIn = k->tensor("beta", {-1, c.HV}, DType::f32);
  auto aOut = k->tensor("a", {-1, c.HV * C}, DType::bf16);
  auto aqkOut = k->tensor("aqk", {-1, c.HV * C}, DType::bf16);
  k->threads(128);
  if (c.resolvedInverseBlocksPerSM() > 0)
    k->minBlocksPerSM(c.resolvedInverseBlocksPerSM());
  // (inverse_heads value heads of one key head, sequence, inverse_chunks chunks): chunks are independent.
  const int64_t heads = c.resolvedInverseHeads();
  k->grid(c.HV / heads, -1, -1);

  Index hvFirst = k->blockId(0) * heads, n = k->blockId(1), h = hvFirst / (c.HV / c.H);
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  Index first = k->blockId(2) * c.inverseChunks;
  // Pipelined copies (inverse_stages >= 2, keyTile) read whole chunks: past the sequence end they read
  // the next sequence (or zeros past the tensor's end); the masks below keep those rows out.
  // Blocks past the sequence's last chunk run no iteration (the grid's z extent is an upper bound).
  Index last = k->min(first + c.inverseChunks, (eos - bos + (C - 1)) / C);
  k->loop(first, last, 1, c.inverseStages, {}, [&](Index chunk, const Tiles &) {
    Index t0 = bos + chunk * C;
    // q and k once for the block's value heads (they share the key head); Kc Kcᵀ and Qc Kcᵀ are made
    // again for each head (held across the heads, their 64 registers would spill).
    Tile qc = keyTile(*k, q, {t0, h * c.K}, {C, c.K}, {eos, c.H * c.K}, c.l2normQK, c.inverseStages > 1);
    Tile kc = keyTile(*k, keys, {t0, h * c.K}, {C, c.K}, {eos, c.H * c.K}, c.l2normQK, c.inverseStages > 1);
    // The gate and β columns of the block's heads into L2 before the first head's work: each head's
    // column loads (one element a line) would otherwise wait on DRAM after the previous head's work.
    std::optional<ChunkProducts> products;
    if (c.inverseProductsOnce && heads > 1) {
      // Both gemms issued before either stash, so the second runs while the first is stored.
      Tile kk = k->gemm(kc, kc, k->fill({C, C}, DType::f32, 0.0), {.b = true});
      Tile qk = k->gemm(qc, kc, k->fill({C, C}, DType::f32, 0.0), {.b = true});
      products = ChunkProducts{k->stash(kk), k->stash(qk)};
    }
    if (c.prefetchGates && heads > 1) {
      k->prefetch(gcum, {t0, hvFirst}, {C, heads}, {eos, c.HV});
      k->prefetch(betaIn, {t0, hvFirst}, {C, heads}, {eos, c.HV});
    }
    headLoop(*k, heads, [&](Index j) {
    Index hv = hvFirst + j;
    Tile g = k->load(gcum, {t0, hv}, {C, 1}, {eos, c.HV});
    Tile beta = k->load(betaIn, {t0, hv}, {C, 1}, {eos, c.HV});
    chunkMatrices(
        *k, c, qc, kc, g, beta, k->scalar(eos - t0),
        [&](const Tile &aqk) { k->store(aqk, aqkOut, {t0, hv * C}, {eos, c.HV * C}); },
        [&](const Tile &a) { k->store(a, aOut, {t0, hv * C}, {eos, c.HV * C}); }, products ? &*products : nullptr);
    });
    return Tiles{};
  });
  return k;
}

} // namespace qla::gdn

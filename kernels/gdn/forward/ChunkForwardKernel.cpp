// gdn_chunk_forward: per (value head, sequence), over the sequence's chunks, with state H (K×V, f32):
//   X  = Kc·H                 Y  = Vc − exp(G) ∘ X
//   Vn = a·Y                  (a = Γ ∘ A₀ ∘ β_col from gdn_chunk_inverse; Γ_ij = exp(G_i − G_j))
//   O  = scale·[exp(G) ∘ (Qc·H) + aqk·Vn]   (aqk = (Qc Kcᵀ) ∘ Γ, lower-inclusive, from gdn_chunk_inverse)
//   H  ← exp(G_last)·H + Kcᵀ·(exp(G_last − G) ∘ Vn)
// Rows past the sequence end load as zero (a and aqk are zero there and in their columns), exp(G_last − G)
// is masked to them (there G is 0, and exp(G_last − 0) can overflow: inf · 0 would poison H), so they add
// nothing to H; they are not stored.
#include "gdn/forward/GdnForward.h"
#include "gdn/forward/Normalize.h"

#include <optional>

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalar;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnChunkForward(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  const int64_t K = c.K, V = c.V, BV = c.BV, slices = V / BV;
  auto k = std::make_unique<dsl::Kernel>("gdn_chunk_forward");
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto q = k->tensor("q", {-1, c.H * K}, DType::bf16);
  auto keys = k->tensor("k", {-1, c.H * K}, DType::bf16);
  auto v = k->tensor("v", {-1, c.HV * V}, DType::bf16);
  auto gcum = k->tensor("gcum", {-1, c.HV}, DType::f32);
  auto aIn = k->tensor("a", {-1, c.HV * C}, DType::bf16);
  auto aqkIn = k->tensor("aqk", {-1, c.HV * C}, DType::bf16);
  auto o = k->tensor("o", {-1, c.HV * V}, DType::bf16);
  std::unique_ptr<dsl::Tensor> h0, ht;
  // States are [K][V] per head, or [V][K] with state_v_first (then read and written transposed).
  const int64_t stateCols = c.stateVFirst ? K : V;
  if (c.initialState)
    h0 = std::make_unique<dsl::Tensor>(k->tensor("initial_state", {-1, stateCols}, DType::f32));
  if (c.finalState)
    ht = std::make_unique<dsl::Tensor>(k->tensor("final_state", {-1, stateCols}, DType::f32));
  k->threads(128);
  k->grid(c.HV * slices, -1);

  Index hv = k->blockId(0) / slices, vb = k->blockId(0) - hv * slices, n = k->blockId(1), h = hv / (c.HV / c.H);
  Index vcol = hv * V + vb * BV; // first column of this block's slice of v and o
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  Index head = n * c.HV + hv;
  auto loadState = [&] {
    return c.stateVFirst ? k->loadTransposed(*h0, {head * V + vb * BV, 0}, {K, BV})
                         : k->load(*h0, {head * K, vb * BV}, {K, BV});
  };
  Tile state = c.initialState ? loadState() : k->fill({K, BV}, DType::f32, 0.0);
  const double scale = c.resolvedScale();
  auto toBf16 = [&](const Tile &t) {
    return k->map({t}, DType::bf16, [](const Scalars &x) { return x[0].to(DType::bf16); });
  };
  auto zeros = [&](int64_t rows, int64_t cols) { return k->fill({rows, cols}, DType::f32, 0.0); };

  Tiles last = k->loop(0, (eos - bos + (C - 1)) / C, 1, 1, {state}, [&](Index chunk, const Tiles &carried) {
    const Tile &H = carried[0];
    Index t0 = bos + chunk * C;
    // Loads into registers first, so their latency overlaps the copies of q and k (which wait once).
    Tile vc = k->load(v, {t0, vcol}, {C, BV}, {eos, c.HV * V});
    Tile g = k->load(gcum, {t0, hv}, {C, 1}, {eos, c.HV});
    Scalar gLast = k->loadScalar(gcum, {k->min(t0 + (C - 1), eos - 1), hv});
    Tile qc = keyTile(*k, q, {t0, h * K}, {C, K}, {eos, c.H * K}, c.l2normQK);
    Tile kc = keyTile(*k, keys, {t0, h * K}, {C, K}, {eos, c.H * K}, c.l2normQK);
    Tile ag = k->copy(aIn, {t0, hv * C}, {C, C}, {eos, c.HV * C});
    Tile p = k->copy(aqkIn, {t0, hv * C}, {C, C}, {eos, c.HV * C});
    Tile rowsV = k->iota({C, BV}, 0);
    Scalar valid = k->scalar(eos - t0); // rows of this chunk inside the sequence

    // With `precise`, Y and the state update's Vn (1), and H (2) enter the tensor cores as bf16 hi + lo
    // parts: their rounding was the largest error term at long sequences (interpreter, T = 3000: o 4.2e-3
    // with none, 3.4e-3 with Y and Vn, 2.9e-3 with all three; each contributes about equally).
    Tile hHi = toBf16(H);
    Tile hLo = k->map({H, hHi}, DType::bf16,
                      [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
    Tile hs = k->share(hHi);
    std::optional<Tile> hsLo;
    if (c.precise >= 2)
      hsLo = k->share(hLo);
    // a·b, plus a·lo when lo is given: the bf16 hi + lo form of an f32 operand.
    auto product = [&](const Tile &a, const Tile &b, const std::optional<Tile> &lo, Tile acc, dsl::Transpose t) {
      Tile r = k->gemm(a, b, acc, t);
      return lo ? k->gemm(a, *lo, r, t) : r;
    };
    // The gemms are asynchronous (qla-overlap-gemms): the ones written one after another without
    // reading each other's results run together, and the elementwise work written after them that
    // reads none of their results overlaps them. Fragments are made where they are used, so that
    // few are live at once.
    Tile x = product(kc, hs, hsLo, zeros(C, BV), {});
    Tile y = k->map({vc, x, k->broadcast(g, {C, BV}, {0, 1})}, DType::f32,
                    [](const Scalars &e) { return e[0].to(DType::f32) - exp(e[2]) * e[1]; });
    Tile yHi = toBf16(y);
    Tile yLo = k->map({y, yHi}, DType::bf16,
                      [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
    Tile vn = product(ag, k->share(yHi), c.precise >= 1 ? std::optional<Tile>(k->share(yLo)) : std::nullopt,
                      zeros(C, BV), {});
    Tile qh = product(qc, hs, hsLo, zeros(C, BV), {});
    Tile decayed = k->map({H}, DType::f32, [&](const Scalars &e) { return e[0] * exp(gLast); });

    // The state update takes exp(G_last − G) ∘ Vn as bf16 hi + lo parts too.
    Tile vns = k->share(toBf16(vn));
    Tile vdf = k->map({vn, k->broadcast(g, {C, BV}, {0, 1}), rowsV}, DType::f32, [&](const Scalars &e) {
      return select(e[2] < valid, e[0] * exp(gLast - e[1]), 0.0);
    });
    Tile vdHi = toBf16(vdf);
    Tile vdLo = k->map({vdf, vdHi}, DType::bf16,
                       [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
    Tile next = product(kc, k->share(vdHi), c.precise >= 1 ? std::optional<Tile>(k->share(vdLo)) : std::nullopt, decayed,
                        {.a = true});
    Tile pv = k->gemm(p, vns, zeros(C, BV), {});
    Tile out = k->map({qh, pv, k->broadcast(g, {C, BV}, {0, 1})}, DType::bf16, [&](const Scalars &e) {
      return (scale * (exp(e[2]) * e[0] + e[1])).to(DType::bf16);
    });
    k->store(out, o, {t0, vcol}, {eos, c.HV * V});
    return Tiles{next};
  });
  if (c.finalState && c.stateVFirst)
    k->storeTransposed(last[0], *ht, {head * V + vb * BV, 0});
  else if (c.finalState)
    k->store(last[0], *ht, {head * K, vb * BV});
  return k;
}

} // namespace qla::gdn

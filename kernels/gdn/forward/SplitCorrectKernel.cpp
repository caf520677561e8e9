// gdn_split_correct: the correction scan of the exact context split (docs/context-split.md). For each
// sequence n cut into segments first[n] … first[n + 1] − 1, with E_s each segment's end state from zero
// and A_s its transition (per value head, states [K][V]): S_first = the sequence's initial state, then
// S_{s+1} = A_s·S_s + E_s. Per (value head, 8 state columns, sequence), S held as stored (K×8, f32), so
// that a segment's end and start are plain row loads and stores (no transposing through shared memory):
// the product takes A_s and S_s from shared memory, each f32 operand as bf16 hi + lo parts
// (hi·hi + lo·hi + hi·lo).
// A segment whose transition run ran no chunk (gdn_split_windows: its window reached the log-gate
// threshold, so the transition is zero) takes S_{s+1} = E_s without loading A_s or multiplying: in the
// truncated mode that is every segment whose window reached the threshold (heads that decay slower take
// the product: their transition runs ran), and the scan is then loads and stores only (with the product
// it was a quarter of a (2,8) 1x32768 call: run 57). A non-finite S_s does not reach S_{s+1} there, as it
// would not through the decay the window dropped.
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnSplitCorrect(const GdnForwardConfig &c) {
  c.validate();
  // Steps at once: their ends and run counts are loaded together before the first is applied (they do
  // not depend on the state), so U steps wait on one global round trip, not U: the steps are the chain,
  // and each block moves little (K × BV f32 a step), so the round trips were its time (run 69: 25 µs for
  // the 15 steps of a (2,8) 1x32768 call, ≈ 1.6 µs a step, at U = 1 and BV = 64). BV = 8 spreads a
  // head's columns over V / 8 blocks and keeps the U ends small (8 registers a thread each) beside the
  // product's A (128): U = 3 fits in 204 registers; U = 4 (BV = 16 or 8) and U = 3 at BV = 16 spill.
  constexpr int64_t U = 3, BV = 8;
  const int64_t K = c.K, V = c.V, slices = V / BV;
  auto k = newGdnKernel(c, "gdn_split_correct");
  auto first = k->tensor("first_segment", {-1}, DType::i64);         // [sequences + 1]
  auto initial = k->tensor("initial_state", {-1, V}, DType::f32);    // [sequences · HV · K, V]
  auto ends = k->tensor("segment_ends", {-1, V}, DType::f32);        // [segments · HV · K, V]
  auto transitions = k->tensor("transitions", {-1, K}, DType::f32);  // [segments · HV · K, K]
  auto starts = k->tensor("segment_starts", {-1, V}, DType::f32);    // [segments · HV · K, V]
  auto runs = k->tensor("transition_run_chunks", {-1}, DType::i64);  // [segments · HV]
  k->threads(128);
  k->grid(c.HV * slices, -1); // (value head and columns, sequence)
  Index hv = k->blockId(0) / slices, vb = k->blockId(0) - hv * slices, n = k->blockId(1);
  Index begin = k->loadIndex(first, {n}), end = k->loadIndex(first, {n + 1});
  auto hi = [&](const Tile &t) { return k->map({t}, DType::bf16, [](const Scalars &e) { return e[0].to(DType::bf16); }); };
  auto lo = [&](const Tile &t, const Tile &h) {
    return k->map({t, h}, DType::bf16, [](const Scalars &e) { return (e[0] - e[1].to(DType::f32)).to(DType::bf16); });
  };
  auto rowOf = [&](Index s) { return (s * c.HV + hv) * K; };
  auto segmentEnd = [&](Index s) { return k->load(ends, {rowOf(s), vb * BV}, {K, BV}); };
  Tile s0 = k->load(initial, {(n * c.HV + hv) * K, vb * BV}, {K, BV});
  k->store(s0, starts, {rowOf(begin), vb * BV});
  // Steps s = begin … end − 2 make S_{s+1}; a group's steps past the last are clamped to it and apply
  // nothing (their loops run no iteration), so their stores write the last step's S again, in place.
  Index last = end - 2;
  k->loop(0, (end - 1 - begin + (U - 1)) / U, 1, 1, {s0}, [&](Index group, const Tiles &carried) {
    std::vector<Index> step, product;
    std::vector<Tile> endState;
    for (int64_t u = 0; u < U; ++u) {
      step.push_back(k->min(begin + group * U + u, last));
      endState.push_back(segmentEnd(step[u]));
      product.push_back(k->min(k->loadIndex(runs, {step[u] * c.HV + hv}), Index(1)));
    }
    Tile state = carried[0];
    for (int64_t u = 0; u < U; ++u) {
      // 1 while the step exists (begin + group·U + u ≤ last), else 0.
      Index beyond = begin + group * U + u - last;
      Index applies = Index(1) - k->min(beyond - k->min(beyond, Index(0)), Index(1));
      // Two loops of one iteration or none (no branches in the DSL): E_s when the transition is zero, else
      // E_s + A_s·S_s (E_s loaded again there after A_s is shared: A's 128 registers a thread).
      state = k->loop(0, (Index(1) - product[u]) * applies, 1, 1, {state},
                      [&, u](Index, const Tiles &) { return Tiles{endState[u]}; })[0];
      state = k->loop(0, product[u] * applies, 1, 1, {state}, [&, u](Index, const Tiles &current) {
        Tile sHi = hi(current[0]);
        Tile sHiShared = k->share(sHi), sLoShared = k->share(lo(current[0], sHi));
        Tile a = k->load(transitions, {rowOf(step[u]), 0}, {K, K});
        Tile aHi = hi(a);
        Tile aHiShared = k->share(aHi), aLoShared = k->share(lo(a, aHi));
        Tile sum = k->gemm(aHiShared, sHiShared, segmentEnd(step[u]), {});
        sum = k->gemm(aLoShared, sHiShared, sum, {});
        return Tiles{k->gemm(aHiShared, sLoShared, sum, {})};
      })[0];
      k->store(state, starts, {rowOf(step[u]) + c.HV * K, vb * BV});
    }
    return Tiles{state};
  });
  return k;
}

} // namespace qla::gdn

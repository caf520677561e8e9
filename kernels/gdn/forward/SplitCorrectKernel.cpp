// gdn_split_correct: the correction scan of the exact context split (docs/context-split.md). For each
// sequence n cut into segments first[n] … first[n + 1] − 1, with E_s each segment's end state from zero
// and A_s its transition (per value head, states [K][V]): S_first = the sequence's initial state, then
// S_{s+1} = A_s·S_s + E_s. Per (value head, 64 state columns, sequence), S held as stored (K×64, f32), so
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
  const int64_t K = c.K, V = c.V, BV = 64, slices = V / BV;
  auto k = std::make_unique<dsl::Kernel>("gdn_split_correct");
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
  Tile s0 = k->load(initial, {(n * c.HV + hv) * K, vb * BV}, {K, BV});
  k->store(s0, starts, {(begin * c.HV + hv) * K, vb * BV});
  k->loop(begin, end - 1, 1, 1, {s0}, [&](Index s, const Tiles &carried) {
    Index row = (s * c.HV + hv) * K;
    auto segmentEnd = [&] { return k->load(ends, {row, vb * BV}, {K, BV}); };
    // Two loops of one iteration or none (no branches in the DSL): E_s when the transition is zero, else
    // E_s + A_s·S_s. E_s is loaded before the run count is known, so the two loads' latencies overlap
    // (the steps are a dependent chain); the product path loads it again after A_s is shared (A's 128
    // registers a thread and E's 64 are never live together).
    Tile endState = segmentEnd();
    Index product = k->min(k->loadIndex(runs, {s * c.HV + hv}), Index(1));
    Tile withoutProduct = k->loop(0, Index(1) - product, 1, 1, {carried[0]},
                                  [&](Index, const Tiles &) { return Tiles{endState}; })[0];
    Tile next = k->loop(0, product, 1, 1, {withoutProduct}, [&](Index, const Tiles &state) {
      Tile sHi = hi(state[0]);
      Tile sHiShared = k->share(sHi), sLoShared = k->share(lo(state[0], sHi));
      Tile a = k->load(transitions, {row, 0}, {K, K});
      Tile aHi = hi(a);
      Tile aHiShared = k->share(aHi), aLoShared = k->share(lo(a, aHi));
      Tile sum = k->gemm(aHiShared, sHiShared, segmentEnd(), {});
      sum = k->gemm(aLoShared, sHiShared, sum, {});
      return Tiles{k->gemm(aHiShared, sLoShared, sum, {})};
    })[0];
    k->store(next, starts, {row + c.HV * K, vb * BV});
    return Tiles{next};
  });
  return k;
}

} // namespace qla::gdn

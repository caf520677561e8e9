// gdn_split_windows: how many of each segment's last chunks its end run and its transition run take in
// a context-split batch (docs/context-split.md; the runs are gdn_chunk_forward with split_run = 1, 2).
// Per (value head, sequence, segment of the sequence), from the chunks' summed log-gates, a table
// [segment][chunk][head] (gdn_cumsum's chunk_totals, or the same table from qla-context-split's decays
// run of gdn_chunk_forward, split_run = 3, made from the log-decay its scan declares):
//   the last segment of a sequence: neither run (nothing reads its end or its transition);
//   otherwise the shortest window of its last chunks whose summed log-gate is at most the threshold
//   (the state entering the window fades by at least e^threshold across it, so the segment's end is its
//   end from zero over the window): the end run starts there and the transition run runs no chunk
//   (a zero transition); when the whole segment does not reach the threshold (a head that barely decays,
//   or any head at a threshold of −inf), the end run and the transition run cover the whole segment.
// The log-gates must be ≤ 0 (they are: a decay factor ≤ 1), so suffix sums only fall going back and
// the chunks still above the threshold are the last ones.
// Grid (HV, sequences, most segments of a sequence); chunk counts as i64 at [segment · HV + head] (the
// runs' state index).
#include "gdn/forward/GdnForward.h"

namespace qla::gdn {

using dsl::DType;
using dsl::Index;
using dsl::Scalar;
using dsl::Scalars;
using dsl::Tile;
using dsl::Tiles;

std::unique_ptr<dsl::Kernel> buildGdnSplitWindows(const GdnForwardConfig &c) {
  c.validate();
  constexpr int64_t C = GdnForwardConfig::kChunk;
  constexpr int64_t G = 64; // chunk totals read at once
  auto k = newGdnKernel(c, "gdn_split_windows");
  auto first = k->tensor("first_segment", {-1}, DType::i64);       // [sequences + 1]
  auto segCu = k->tensor("segment_cu_seqlens", {-1}, DType::i64);  // [segments + 1]
  auto totals = k->tensor("chunk_totals", {-1, c.HV}, DType::f32); // [segments · Z, HV]
  auto threshold = k->tensor("log_gate_threshold", {1}, DType::f32);
  auto endRuns = k->tensor("end_run_chunks", {-1}, DType::i64);    // [segments · HV]
  auto transitionRuns = k->tensor("transition_run_chunks", {-1}, DType::i64);
  k->threads(128);
  k->grid(c.HV, -1, -1);
  Index hv = k->blockId(0), n = k->blockId(1), w = k->blockId(2);
  Index begin = k->loadIndex(first, {n}), count = k->loadIndex(first, {n + 1}) - begin;
  Index segments = k->dim(segCu, 0) - 1, slots = k->dim(totals, 0) / segments;
  // Blocks past the sequence's segments (the grid's z is an upper bound) compute and store nothing.
  auto clampToBit = [&](Index x) { return k->min(x - k->min(x, 0), 1); }; // 0 when x <= 0, else 1
  Index valid = clampToBit(count - w);
  Index s = begin + k->min(w, count - 1); // an existing segment even when not valid
  Index notLast = clampToBit(count - 1 - w);
  Index segStart = k->loadIndex(segCu, {s}), segEnd = k->loadIndex(segCu, {s + 1});
  Index chunks = (segEnd - segStart) / C * notLast; // only full chunks: a segment with a successor has no other
  Index base = s * slots; // the segment's first row
  Index tiles = (chunks + (G - 1)) / G;
  auto zero = [&] { return k->fill({1}, DType::f32, 0.0); };
  auto read = [&](Index j0) { return k->load(totals, {base + j0, hv}, {G, 1}, {base + chunks, c.HV}); };
  Tile total = k->loop(0, tiles, 1, 1, {zero()}, [&](Index t, const Tiles &carried) {
    return Tiles{k->map({carried[0], k->reduce(read(t * G), 0, dsl::Reduce::add)}, DType::f32,
                        [](const Scalars &e) { return e[0] + e[1]; })};
  })[0];
  // Chunks j whose suffix sum (chunks j … chunks−1) is still above the threshold: the window is one more.
  Scalar limit = k->loadScalar(threshold, {0});
  Tiles counted = k->loop(0, tiles, 1, 1, {zero(), zero()}, [&](Index t, const Tiles &carried) {
    Index j0 = t * G;
    Tile x = read(j0);
    Tile inclusive = k->cumsum(x, 0);
    Tile before = k->broadcast(carried[0], {G, 1}, {1});
    Tile all = k->broadcast(total, {G, 1}, {1});
    Tile above = k->map({all, before, inclusive, x, k->iota({G, 1}, 0)}, DType::f32, [&](const Scalars &e) {
      Scalar suffix = e[0] - (e[1] + e[2] - e[3]);
      return select(e[4] + k->scalar(j0) < k->scalar(chunks) && suffix > limit, 1.0, 0.0);
    });
    Tile sum = k->reduce(x, 0, dsl::Reduce::add);
    return Tiles{k->map({carried[0], sum}, DType::f32, [](const Scalars &e) { return e[0] + e[1]; }),
                 k->map({carried[1], k->reduce(above, 0, dsl::Reduce::add)}, DType::f32,
                        [](const Scalars &e) { return e[0] + e[1]; })};
  });
  Tile aboveCount = counted[1];
  // `chunks` is 0 for a sequence's last segment: neither run takes a chunk there.
  auto runChunks = [&](bool transition) {
    return k->map({aboveCount}, DType::i64, [&, transition](const Scalars &e) {
      Scalar cnt = e[0].to(DType::i32), all = k->scalar(chunks);
      return select(cnt >= all, all, transition ? Scalar(0) : cnt + 1).to(DType::i64);
    });
  };
  Index row = s * c.HV + hv, bound = valid * (segments * c.HV);
  k->store(runChunks(false), endRuns, {row}, {bound});
  k->store(runChunks(true), transitionRuns, {row}, {bound});
  return k;
}

} // namespace qla::gdn

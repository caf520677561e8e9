// qla-context-split on a recurrence that is not GDN: a decayed linear-attention state (as in RetNet or
// Mamba-2 with a scalar decay per chunk), Hᵀ ← exp(d_c)·Hᵀ + Vcᵀ·Kc, written once as a scan. The pass
// makes its segment-end and transition runs; with the correction scan (gdn_split_correct, generic over
// square states) and the main run over the segments, the final states equal the unsplit run's.
#include "gdn/forward/GdnForward.h"
#include "qla/dsl/Kernel.h"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <random>

using qla::HostTensor;
using namespace qla::dsl;

namespace {

constexpr int64_t kC = 64, kD = 64, kHeads = 2; // chunk, K = V, heads

/// The scan kernel; `form` empty for the plain kernel, else a qla-context-split form.
std::unique_ptr<Kernel> decayedState(const std::string &form) {
  auto k = std::make_unique<Kernel>("decayed_state");
  auto cu = k->tensor("cu_seqlens", {-1}, DType::i64);
  auto keys = k->tensor("k", {-1, kHeads * kD}, DType::bf16);
  auto v = k->tensor("v", {-1, kHeads * kD}, DType::bf16);
  auto d = k->tensor("decay", {-1, kHeads}, DType::f32); // a chunk's log-decay at its last token's row
  auto h0 = k->tensor("initial_state", {-1, kD}, DType::f32);
  auto ht = k->tensor("final_state", {-1, kD}, DType::f32);
  k->threads(128);
  k->grid(kHeads, -1);
  Index h = k->blockId(0), n = k->blockId(1), state = n * kHeads + h;
  Index bos = k->loadIndex(cu, {n}), eos = k->loadIndex(cu, {n + 1});
  Tile start = k->loadTransposed(h0, {state * kD, 0}, {kD, kD});
  Tile last = k->scan(0, (eos - bos + (kC - 1)) / kC, 1, start, {"v"}, [&](Index c, const Tile &ht_) {
    Index t0 = bos + c * kC;
    Scalar decay = k->scanDecay(k->loadScalar(d, {k->min(t0 + (kC - 1), eos - 1), h}));
    Tile kc = k->copy(keys, {t0, h * kD}, {kC, kD}, {eos, kHeads * kD});
    Tile vc = k->copy(v, {t0, h * kD}, {kC, kD}, {eos, kHeads * kD});
    Tile decayed = k->map({ht_}, DType::f32, [&](const Scalars &e) { return e[0] * exp(decay); });
    return k->gemm(vc, kc, decayed, {.a = true});
  });
  k->storeTransposed(last, ht, {state * kD, 0});
  if (!form.empty())
    k->contextSplitRun(form);
  return k;
}

HostTensor random(std::vector<int64_t> shape, std::mt19937 &gen, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  HostTensor t{shape, {}};
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  for (int64_t i = 0; i < n; ++i) // bf16-exact values (8 bits of mantissa), so every product is exact-ish
    t.data.push_back(std::round(dist(gen) * 128) / 128);
  return t;
}

HostTensor zeros(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return HostTensor{shape, std::vector<double>(n, 0.0)};
}

double relL2(const std::vector<double> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

} // namespace

TEST_CASE("qla-context-split splits a recurrence that is not GDN: a decayed linear-attention state",
          "[context-split][interpreter]") {
  std::mt19937 gen(std::random_device{}());
  const int64_t T = 320; // five chunks, in segments of two (the last one chunk)
  HostTensor keys = random({T, kHeads * kD}, gen, -0.2, 0.2), v = random({T, kHeads * kD}, gen, -1, 1);
  // Head 0 decays slowly (−0.05 a chunk: its past matters across segments), head 1 not at all.
  HostTensor decay = random({T, kHeads}, gen, -0.1, 0.0);
  for (int64_t t = 0; t < T; ++t)
    decay.data[t * kHeads + 1] = 0.0;
  HostTensor h0 = random({kHeads * kD, kD}, gen, -1, 1);

  // Unsplit: one sequence.
  HostTensor cu{{2}, {0, double(T)}}, whole = zeros({kHeads * kD, kD});
  decayedState("")->interpret({&cu, &keys, &v, &decay, &h0, &whole}, {kHeads, 1, 1});

  // Split: segments [0, 128), [128, 256), [256, 320); each segment's end from zero and its transition
  // (both over the whole segment: run_chunks = 2, 2, 1), the correction, the main run from the starts.
  const int64_t S = 3;
  HostTensor segCu{{S + 1}, {0, 128, 256, 320}}, runs{{S * kHeads}, {2, 2, 2, 2, 1, 1}};
  HostTensor unread = zeros({S * kHeads * kD, kD}), ends = zeros({S * kHeads * kD, kD}),
             transitions = zeros({S * kHeads * kD, kD});
  decayedState("ends")->interpret({&segCu, &keys, &v, &decay, &unread, &ends, &runs}, {kHeads, S, 1});
  decayedState("transition")->interpret({&segCu, &keys, &v, &decay, &unread, &transitions, &runs}, {kHeads, S, 1});
  qla::gdn::GdnForwardConfig c;
  c.H = 1;
  c.HV = kHeads;
  c.K = c.V = kD;
  HostTensor first{{2}, {0, double(S)}}, starts = zeros({S * kHeads * kD, kD});
  qla::gdn::buildGdnSplitCorrect(c)->interpret({&first, &h0, &ends, &transitions, &starts, &runs}, {0, 1, 1}); // x: its build's
  HostTensor finals = zeros({S * kHeads * kD, kD});
  decayedState("")->interpret({&segCu, &keys, &v, &decay, &starts, &finals}, {kHeads, S, 1});
  std::vector<double> split(finals.data.end() - kHeads * kD * kD, finals.data.end());
  double err = relL2(split, whole.data);
  INFO("split vs unsplit final state: " << err);
  CHECK(err <= 1e-4);
  // Transition runs of no chunk (windows that reached the threshold) make the correction skip the
  // transitions, given or not: ends only, and the non-decaying head is far off.
  HostTensor noRuns = zeros({S * kHeads}), starts2 = zeros({S * kHeads * kD, kD}),
             finals2 = zeros({S * kHeads * kD, kD});
  qla::gdn::buildGdnSplitCorrect(c)->interpret({&first, &h0, &ends, &transitions, &starts2, &noRuns}, {0, 1, 1});
  decayedState("")->interpret({&segCu, &keys, &v, &decay, &starts2, &finals2}, {kHeads, S, 1});
  std::vector<double> wrong(finals2.data.end() - kHeads * kD * kD, finals2.data.end());
  CHECK(relL2(wrong, whole.data) > 1e-2);
  // Per (segment, head): the non-decaying head 1 keeps its transitions, head 0 skips them. Head 1 stays
  // exact (its counts are read at s · heads + 1, not head 0's) and head 0, whose past matters, is off.
  HostTensor mixedRuns{{S * kHeads}, {0, 2, 0, 2, 0, 1}}, starts3 = zeros({S * kHeads * kD, kD}),
      finals3 = zeros({S * kHeads * kD, kD});
  qla::gdn::buildGdnSplitCorrect(c)->interpret({&first, &h0, &ends, &transitions, &starts3, &mixedRuns},
                                               {0, 1, 1});
  decayedState("")->interpret({&segCu, &keys, &v, &decay, &starts3, &finals3}, {kHeads, S, 1});
  auto headOf = [&](const HostTensor &states, int64_t head) {
    auto from = states.data.end() - (kHeads - head) * kD * kD;
    return std::vector<double>(from, from + kD * kD);
  };
  CHECK(relL2(headOf(finals3, 1), headOf(whole, 1)) <= 1e-4);
  CHECK(relL2(headOf(finals3, 0), headOf(whole, 0)) > 1e-2);
}

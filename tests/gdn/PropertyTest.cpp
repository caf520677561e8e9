// How the options relate: GVA head mapping, varlen and batches as independent sequences, the
// [V][K] state layout as a transpose. Each side is a separately built problem.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <functional>
#include <vector>

#include "GdnTestUtil.h"

using namespace qla::gdn;

namespace {

using Reference = std::function<GdnOutputs(const GdnProblem&, const GdnInputs&)>;

Reference pickReference(bool chunked) {
  if (chunked)
    return [](const GdnProblem& p, const GdnInputs& in) { return gdnChunkedReference(p, in); };
  return gdnRecurrentReference;
}

// Rows [r0, r1) of the token axis of a [B, T, ...] tensor, as a [1, r1 − r0, ...] tensor.
Tensor tokenRows(const Tensor& t, std::int64_t r0, std::int64_t r1) {
  if (!t.defined())
    return {};
  std::vector<std::int64_t> shape = t.shape;
  const std::int64_t perRow = numel(shape) / (shape[0] * shape[1]);
  shape[0] = 1;
  shape[1] = r1 - r0;
  return Tensor(shape, std::vector<double>(t.data.begin() + r0 * perRow, t.data.begin() + r1 * perRow));
}

// Entry n of the leading axis, keeping it as an axis of 1.
Tensor leading(const Tensor& t, std::int64_t n) {
  if (!t.defined())
    return {};
  std::vector<std::int64_t> shape = t.shape;
  const std::int64_t per = numel(shape) / shape[0];
  shape[0] = 1;
  return Tensor(shape, std::vector<double>(t.data.begin() + n * per, t.data.begin() + (n + 1) * per));
}

// Sequence [bos, eos) of `in` as a B = 1 fixed-length problem starting from state n.
std::pair<GdnProblem, GdnInputs> oneSequence(const GdnProblem& p, const GdnInputs& in,
                                             std::int64_t n, std::int64_t bos, std::int64_t eos) {
  GdnProblem q = p;
  q.B = 1, q.T = eos - bos, q.cuSeqlens.clear();
  GdnInputs s = in;
  for (Tensor* t : {&s.q, &s.k, &s.v, &s.g, &s.beta, &s.a, &s.b})
    *t = tokenRows(*t, bos, eos);
  s.initialState = leading(in.initialState, n);
  return {q, s};
}

void requireSlice(const Tensor& whole, std::int64_t offset, const Tensor& part) {
  REQUIRE(offset + part.data.size() <= whole.data.size());
  CHECK(relL2(std::span<const double>(whole.data).subspan(offset, part.data.size()),
              std::span<const double>(part.data)) == 0);
}

} // namespace

TEST_CASE("varlen and batched sequences are independent runs from their own state",
          "[gdn][reference]") {
  const bool chunked = GENERATE(false, true);
  const bool varlen = GENERATE(false, true);
  INFO((chunked ? "chunked" : "recurrent") << (varlen ? ", varlen" : ", batched"));
  GdnProblem p{.B = 3, .T = 70, .H = 1, .HV = 2, .K = 64, .V = 32, .useInitialState = true,
               .outputFinalState = true, .gateInKernel = true};
  if (varlen)
    p.B = 1, p.T = 300, p.cuSeqlens = {0, 1, 65, 130, 130, 300};
  const GdnInputs in = gdnRandomInputs(p, {.seed = 11});
  const Reference run = pickReference(chunked);
  const GdnOutputs whole = run(p, in);
  for (std::int64_t n = 0; n < p.numSequences(); ++n) {
    const std::int64_t bos = varlen ? p.cuSeqlens[n] : n * p.T;
    const std::int64_t eos = varlen ? p.cuSeqlens[n + 1] : (n + 1) * p.T;
    INFO("sequence " << n);
    const auto [sp, sin] = oneSequence(p, in, n, bos, eos);
    const GdnOutputs part = run(sp, sin);
    requireSlice(whole.o, bos * p.HV * p.V, part.o);
    requireSlice(whole.finalState, n * p.HV * p.K * p.V, part.finalState);
  }
}

TEST_CASE("GVA: value head hv reads q/k head hv / (HV / H)", "[gdn][reference]") {
  const bool chunked = GENERATE(false, true);
  const GdnProblem p{.B = 1, .T = 65, .H = 2, .HV = 4, .K = 64, .V = 64, .useInitialState = true,
                     .outputFinalState = true};
  const GdnInputs in = gdnRandomInputs(p, {.seed = 5});
  const Reference run = pickReference(chunked);
  const GdnOutputs whole = run(p, in);
  for (std::int64_t hv = 0; hv < p.HV; ++hv) {
    const std::int64_t h = hv / 2;
    INFO("value head " << hv << " reads q/k head " << h);
    GdnProblem one = p;
    one.H = 1, one.HV = 1;
    GdnInputs s;
    s.q = Tensor({1, p.T, 1, p.K});
    s.k = Tensor({1, p.T, 1, p.K});
    s.v = Tensor({1, p.T, 1, p.V});
    s.g = Tensor({1, p.T, 1});
    s.beta = Tensor({1, p.T, 1});
    s.initialState = Tensor({1, 1, p.K, p.V});
    for (std::int64_t t = 0; t < p.T; ++t) {
      for (std::int64_t i = 0; i < p.K; ++i) {
        s.q.data[t * p.K + i] = in.q.data[(t * p.H + h) * p.K + i];
        s.k.data[t * p.K + i] = in.k.data[(t * p.H + h) * p.K + i];
      }
      for (std::int64_t j = 0; j < p.V; ++j)
        s.v.data[t * p.V + j] = in.v.data[(t * p.HV + hv) * p.V + j];
      s.g.data[t] = in.g.data[t * p.HV + hv];
      s.beta.data[t] = in.beta.data[t * p.HV + hv];
    }
    std::copy_n(in.initialState.data.begin() + hv * p.K * p.V, p.K * p.V, s.initialState.data.begin());
    const GdnOutputs part = run(one, s);
    for (std::int64_t t = 0; t < p.T; ++t)
      requireSlice(whole.o, (t * p.HV + hv) * p.V, tokenRows(part.o, t, t + 1));
    requireSlice(whole.finalState, hv * p.K * p.V, part.finalState);
  }
}

TEST_CASE("stateVFirst stores the transposed state and leaves o unchanged", "[gdn][reference]") {
  const bool chunked = GENERATE(false, true);
  const GdnProblem kv{.B = 2, .T = 65, .H = 1, .HV = 2, .K = 64, .V = 32, .useInitialState = true,
                      .outputFinalState = true};
  GdnProblem vk = kv;
  vk.stateVFirst = true;
  const GdnInputs in = gdnRandomInputs(kv, {.seed = 9});
  auto transpose = [&](const Tensor& t, std::int64_t rows, std::int64_t cols) {
    Tensor out({t.shape[0], t.shape[1], cols, rows});
    for (std::int64_t m = 0; m < t.shape[0] * t.shape[1]; ++m)
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          out.data[(m * cols + j) * rows + i] = t.data[(m * rows + i) * cols + j];
    return out;
  };
  GdnInputs inVk = in;
  inVk.initialState = transpose(in.initialState, kv.K, kv.V);
  const Reference run = pickReference(chunked);
  const GdnOutputs a = run(kv, in), b = run(vk, inVk);
  CHECK(relL2(b.o, a.o) == 0);
  REQUIRE(b.finalState.shape == std::vector<std::int64_t>{2, 2, 32, 64});
  CHECK(relL2(b.finalState, transpose(a.finalState, kv.K, kv.V)) == 0);
}

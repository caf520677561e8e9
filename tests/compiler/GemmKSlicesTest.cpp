// qla.gemm's k_slices on the interpreter: the product summed over the listed 16-wide slices of K only,
// against a float64 sum on random inputs (bf16-exact, so the f32 accumulation is exact here).
#include "qla/dsl/Kernel.h"
#include "qla/runtime/Error.h"

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <random>

using qla::HostTensor;
using namespace qla::dsl;

namespace {

constexpr int64_t kM = 64, kN = 64, kK = 64;

std::unique_ptr<Kernel> slicedGemm(std::vector<int64_t> slices) {
  auto k = std::make_unique<Kernel>("sliced_gemm");
  auto a = k->tensor("a", {kM, kK}, DType::bf16);
  auto b = k->tensor("b", {kK, kN}, DType::bf16);
  auto c = k->tensor("c", {kM, kN}, DType::f32);
  k->threads(128);
  k->grid(1, 1);
  Tile as = k->copy(a, {0, 0}, {kM, kK});
  Tile bs = k->copy(b, {0, 0}, {kK, kN});
  k->store(k->gemm(as, bs, k->fill({kM, kN}, DType::f32, 0.0), {}, slices), c, {0, 0});
  return k;
}

HostTensor random(std::vector<int64_t> shape, std::mt19937 &gen) {
  std::uniform_int_distribution<int> dist(-128, 128);
  HostTensor t{shape, {}};
  for (int64_t i = 0; i < shape[0] * shape[1]; ++i)
    t.data.push_back(dist(gen) / 128.0);
  return t;
}

} // namespace

TEST_CASE("gemm k slices sum the product over the listed 16-wide slices of K only", "[dsl][interpreter]") {
  std::mt19937 gen(std::random_device{}());
  HostTensor a = random({kM, kK}, gen), b = random({kK, kN}, gen);
  for (std::vector<int64_t> slices : {std::vector<int64_t>{1, 3}, {0}, {0, 1, 2, 3}}) {
    HostTensor c{{kM, kN}, std::vector<double>(kM * kN, std::nan(""))};
    slicedGemm(slices)->interpret({&a, &b, &c}, {1, 1, 1});
    double worst = 0;
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        double s = 0;
        for (int64_t slice : slices)
          for (int64_t kk = slice * 16; kk < slice * 16 + 16; ++kk)
            s += a.data[i * kK + kk] * b.data[kk * kN + j];
        worst = std::max(worst, std::abs(c.data[i * kN + j] - s));
      }
    CAPTURE(slices.size());
    CHECK(worst == 0.0);
  }
}

TEST_CASE("gemm k slices outside K or out of order are refused with the kernel's name", "[dsl]") {
  auto build = [](std::vector<int64_t> slices) { slicedGemm(slices); };
  for (std::vector<int64_t> bad : {std::vector<int64_t>{4}, {2, 1}, {-1}})
    try {
      build(bad);
      FAIL("k slices accepted");
    } catch (const qla::Error &e) {
      CHECK(std::string(e.what()).find("kernel 'sliced_gemm': gemm k slices must be increasing") != std::string::npos);
    }
}

#include "gemm/Gemm.h"
#include "common/Settings.h"

#include "qla/runtime/Error.h"

#include <fmt/format.h>

namespace qla::kernels {

using dsl::DType;
using dsl::Index;
using dsl::Tiles;

std::string GemmConfig::str() const {
  return fmt::format("M={},N={},K={},BM={},BN={},BK={},stages={}{}{}{}", M, N, K, BM, BN, BK, stages,
                     specialize ? fmt::format(",specialize={}", specialize) : "",
                     loadsRegs ? fmt::format(",loads_regs={}", loadsRegs) : "",
                     mmaRegs ? fmt::format(",mma_regs={}", mmaRegs) : "");
}

static void require(bool ok, const std::string &what) {
  if (!ok)
    throw Error("gemm: " + what);
}

std::unique_ptr<dsl::Kernel> buildGemm(const GemmConfig &c) {
  require(c.M > 0 && c.N > 0 && c.K > 0, fmt::format("M, N and K must be positive, got {}", c.str()));
  require(c.K % 8 == 0, fmt::format("K must be a multiple of 8 (16-byte rows for TMA), got {}", c.K));
  require(c.BK == 64 || c.BK == 128, fmt::format("BK must be 64 or 128 (one or two 128-byte swizzle spans of bf16), got {}", c.BK));
  require(c.BM == 64 || c.BM == 128 || c.BM == 256, fmt::format("BM must be 64, 128 or 256, got {}", c.BM));
  require(c.BN % 16 == 0 && c.BN >= 16 && c.BN <= 256, fmt::format("BN must be a multiple of 16 up to 256, got {}", c.BN));
  require(c.stages >= 2 && c.stages <= 8, fmt::format("stages must be 2 to 8, got {}", c.stages));
  int64_t smem = c.stages * (c.BM + c.BN) * c.BK * 2;
  require(smem <= 227 * 1024, fmt::format("{} stages of {}x{} and {}x{} bf16 tiles need {} bytes of shared memory, "
                                          "more than 227 KiB", c.stages, c.BM, c.BK, c.BN, c.BK, smem));

  auto k = std::make_unique<dsl::Kernel>("gemm");
  auto A = k->tensor("A", {c.M, c.K}, DType::bf16);
  auto B = k->tensor("B", {c.N, c.K}, DType::bf16);
  auto C = k->tensor("C", {c.M, c.N}, DType::bf16);
  require(c.specialize >= 0 && c.specialize <= 2, fmt::format("specialize must be 0, 1 or 2, got {}", c.specialize));
  int64_t consumers = std::min<int64_t>(2, c.BM / 64);
  // Register budgets (setmaxnreg): multiples of 8 in [24, 256] whose sum over the warpgroups fits the
  // SM's 64K registers.
  const int64_t stageRegs = c.specialize == 2 ? 96 : 0;
  const int64_t loadsRegs = c.loadsRegs ? c.loadsRegs : 40;
  const int64_t mmaRegs = c.mmaRegs ? c.mmaRegs : c.specialize == 2 ? (consumers == 2 ? 184 : 232)
                                                                    : (consumers == 2 ? 232 : 256);
  require((c.loadsRegs == 0 && c.mmaRegs == 0) || c.specialize >= 1,
          "loads_regs and mma_regs are the register budgets of specialize's roles (specialize = 1 or 2)");
  for (auto [name, regs] : {std::pair{"loads_regs", loadsRegs}, std::pair{"mma_regs", mmaRegs}})
    require(regs >= 24 && regs <= 256 && regs % 8 == 0,
            fmt::format("{} = {} must be a multiple of 8 from 24 to 256", name, regs));
  if (c.specialize >= 1) { // within the block's registers: the same cap for every thread (.maxnreg)
    const int64_t threads = 128 * (1 + (stageRegs ? 1 : 0) + consumers);
    const int64_t cap = std::min<int64_t>(255, 65536 / threads / 8 * 8);
    require((loadsRegs + stageRegs + consumers * mmaRegs) * 128 <= cap * threads,
            fmt::format("register budgets loads {} + {}mma {} x {} warpgroups exceed the block's {} registers ({} a "
                        "thread x {} threads)",
                        loadsRegs, stageRegs ? fmt::format("stage {} + ", stageRegs) : "", mmaRegs, consumers,
                        cap * threads, cap, threads));
    // ptxas compiles every thread under the cap; a consumer's 64 x BN f32 accumulator alone takes BN / 2
    // registers a thread (plus ≈ 30 for addresses and operands): with specialize = 2's 512 threads (cap
    // 128) BN = 256 does not assemble.
    require(c.BN / 2 + 30 <= cap,
            fmt::format("BN = {} needs {} accumulator registers a thread (+ about 30 more); specialize = {}'s {} threads "
                        "are capped at {} registers each: use BN <= {}",
                        c.BN, c.BN / 2, c.specialize, threads, cap, (cap - 30) / 64 * 128));
  }
  if (c.specialize == 1) // one producer warpgroup (TMA issue only: few registers), the rest run the wgmmas
    k->roles({{"loads", 1, loadsRegs, true}, {"mma", consumers, mmaRegs}});
  else if (c.specialize == 2) // and a warpgroup that loads A into registers and hands it over each step
    k->roles({{"loads", 1, loadsRegs, true}, {"stage", 1, stageRegs}, {"mma", consumers, mmaRegs}});
  else
    k->threads(128 * consumers);
  k->grid((c.N + c.BN - 1) / c.BN, (c.M + c.BM - 1) / c.BM);

  Index m0 = k->blockId(1) * c.BM, n0 = k->blockId(0) * c.BN;
  // specialize = 2 exercises a register tile crossing roles (A: loaded into registers by "stage", read
  // by the gemm of "mma" from a shared-memory ring the compiler builds); C is the same product.
  auto inMma = [&](const std::function<void()> &body) { c.specialize == 2 ? k->inRole("mma", body) : body(); };
  Tiles acc;
  inMma([&] { acc = {k->fill({c.BM, c.BN}, DType::f32, 0.0)}; });
  acc = k->loop(0, (c.K + c.BK - 1) / c.BK, 1, c.stages, acc, [&](Index kt, const Tiles &acc) {
    dsl::Tile a, b = k->copy(B, {n0, kt * c.BK}, {c.BN, c.BK}), r;
    if (c.specialize == 2)
      k->inRole("stage", [&] { a = k->load(A, {m0, kt * c.BK}, {c.BM, c.BK}); });
    else
      a = k->copy(A, {m0, kt * c.BK}, {c.BM, c.BK});
    inMma([&] { r = k->gemm(a, b, acc[0], {.b = true}); });
    return Tiles{r};
  });
  inMma([&] { k->store(k->cast(acc[0], DType::bf16), C, {m0, n0}); });
  return k;
}

GemmConfig parseGemmConfig(const std::string &settings) {
  GemmConfig c;
  auto field = [](int64_t &f) { return [&f](double v) { f = static_cast<int64_t>(v); }; };
  applySettings(settings, "gemm",
                {{"M", field(c.M)}, {"N", field(c.N)}, {"K", field(c.K)}, {"BM", field(c.BM)}, {"BN", field(c.BN)},
                 {"BK", field(c.BK)}, {"stages", field(c.stages)},
                 {"specialize", field(c.specialize)}, {"loads_regs", field(c.loadsRegs)},
                 {"mma_regs", field(c.mmaRegs)}});
  return c;
}

} // namespace qla::kernels

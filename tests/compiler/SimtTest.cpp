// Lowerings run on the CPU by the SIMT simulator (qla/Simt/Simt.h): tri_inverse's three lowerings on
// a 64x64 f32 accumulator fragment of one warpgroup — through scratch (f32 substitution), diagonal
// blocks in warps (shuffles), and the whole inverse in warps with mma.sync merges (f16_merges) —
// against a float64 inverse on random GDN-like inputs, with the simulator's bounds and race checks.
// The simulator itself is checked on small kernels: a race it must report, and one it must not.
#include "qla/Dialect/Tile/Transforms/Passes.h"
#include "qla/Pipeline/Pipeline.h"
#include "qla/Simt/Simt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;

namespace {

struct Lowered {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp kernel() { return *module->getOps<func::FuncOp>().begin(); }
};

/// `text` parsed; with `lower`, through qla-convert-to-nvvm (its layouts and scratch already given).
Lowered lower(const std::string &text, bool convert) {
  Lowered l;
  DialectRegistry registry;
  qla::registerQlaDialects(registry);
  l.context = std::make_unique<MLIRContext>(registry);
  l.context->loadAllAvailableDialects();
  l.module = parseSourceString<ModuleOp>(text, l.context.get());
  REQUIRE(l.module);
  if (convert) {
    PassManager pm(l.context.get());
    pm.addPass(qla::createQlaConvertToNVVM());
    REQUIRE(succeeded(pm.run(*l.module)));
  }
  return l;
}

std::string inverseKernel(const std::string &attrs) {
  return R"(
func.func @inverse(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 33792 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %x = qla.tri_inverse %a {)" +
         attrs + R"(} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %x, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}
)";
}

/// N = StrictLower(diag(β) K Kᵀ) of GDN's chunk (64 keys of 128, L2-normalised, β in (0, 1)); above the
/// diagonal NaN, which the op must ignore.
std::vector<float> gdnLikeInput(uint64_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  std::vector<std::vector<double>> k(64, std::vector<double>(128));
  for (auto &row : k) {
    double norm = 0;
    for (double &x : row) {
      x = normal(gen);
      norm += x * x;
    }
    for (double &x : row)
      x /= std::sqrt(norm);
  }
  std::vector<float> n(64 * 64, std::nanf(""));
  for (int i = 0; i < 64; ++i) {
    double beta = unit(gen);
    for (int j = 0; j < i; ++j) {
      double dot = 0;
      for (int d = 0; d < 128; ++d)
        dot += k[i][d] * k[j][d];
      n[i * 64 + j] = static_cast<float>(beta * dot);
    }
  }
  return n;
}

/// (I + StrictLower(n))⁻¹ in float64, restricted to the diagonal blocks of `block` (0: whole).
std::vector<double> inverse(const std::vector<float> &n, int block) {
  std::vector<double> x(64 * 64, 0.0);
  for (int i = 0; i < 64; ++i) {
    int first = block ? i / block * block : 0;
    x[i * 64 + i] = 1.0;
    for (int j = first; j < i; ++j)
      for (int c = first; c <= j; ++c)
        x[i * 64 + c] -= n[i * 64 + j] * x[j * 64 + c];
  }
  return x;
}

struct Outcome {
  qla::simt::Report report;
  std::vector<float> x;
};

Outcome run(const std::string &attrs, const std::vector<float> &n) {
  Lowered l = lower(inverseKernel(attrs), true);
  qla::simt::Buffer a;
  a.bytes.resize(64 * 64 * 4);
  std::memcpy(a.bytes.data(), n.data(), a.bytes.size());
  Outcome o{qla::simt::simulateBlock(l.kernel(), 128, 33792, {&a}), std::vector<float>(64 * 64)};
  std::memcpy(o.x.data(), a.bytes.data(), a.bytes.size());
  return o;
}

/// ‖x − want‖ / ‖want‖, and whether x is exactly unit lower triangular (ones on, zeros above the diagonal).
std::pair<double, bool> compare(const std::vector<float> &x, const std::vector<double> &want) {
  double err = 0, norm = 0;
  bool shape = true;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double d = x[i * 64 + j] - want[i * 64 + j];
      err += d * d;
      norm += want[i * 64 + j] * want[i * 64 + j];
      if ((j > i && x[i * 64 + j] != 0.0f) || (j == i && x[i * 64 + j] != 1.0f) || std::isnan(x[i * 64 + j]))
        shape = false;
    }
  return {std::sqrt(err / norm), shape};
}

} // namespace

TEST_CASE("tri_inverse's lowerings on the SIMT simulator match a float64 inverse", "[simt]") {
  {
    const uint64_t seed = GENERATE(1, 2, 3);
    std::vector<float> n = gdnLikeInput(seed);
    INFO("seed " << seed);
    SECTION("through scratch: f32 substitution") {
      Outcome o = run("qla.scratch_offset = 0 : i64", n);
      INFO(o.report.errors.size() << " errors, first: " << (o.report.errors.empty() ? "" : o.report.errors[0]));
      REQUIRE(o.report.errors.empty());
      CHECK(o.report.hazards.empty());
      auto [err, shape] = compare(o.x, inverse(n, 0));
      INFO("rel err " << err);
      CHECK(err <= 1e-5);
      CHECK(shape);
    }
    SECTION("diagonal blocks in warps: shuffles") {
      Outcome o = run("block = 16 : i64", n);
      REQUIRE(o.report.errors.empty());
      CHECK(o.report.hazards.empty());
      CHECK(o.report.barriers == 0);
      auto [err, shape] = compare(o.x, inverse(n, 16));
      INFO("rel err " << err);
      CHECK(err <= 1e-5);
      CHECK(shape);
    }
    SECTION("whole inverse in warps: mma.sync merges on f16 operands") {
      Outcome o = run("f16_merges, qla.scratch_offset = 1024 : i64", n);
      INFO(o.report.errors.size() << " errors, first: " << (o.report.errors.empty() ? "" : o.report.errors[0]));
      REQUIRE(o.report.errors.empty());
      for (const std::string &h : o.report.hazards)
        UNSCOPED_INFO(h);
      CHECK(o.report.hazards.empty());
      CHECK(o.report.barriers == 3);
      auto [err, shape] = compare(o.x, inverse(n, 0));
      INFO("rel err " << err);
      // f16 operands (11 bits) in the merges: about 1e-4 relative here (the merges' blocks are small
      // against the diagonal's ones); a wrong block or sign is O(1).
      CHECK(err <= 1e-3);
      CHECK(err > 0); // f16 rounding shows: the merges ran on f16 operands, not f32
      CHECK(shape);
    }
  }
}

namespace {

/// Each thread writes its index to shared float t, then reads float t + 1 (mod 128) into out[t]; with
/// `barrier`, a block barrier between.
std::string neighbourKernel(bool barrier) {
  return std::string(R"(
llvm.mlir.global external @__qla_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
func.func @neighbour(%out: !llvm.ptr<1>) {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %base = llvm.mlir.addressof @__qla_smem : !llvm.ptr<3>
  %i = arith.extui %tid : i32 to i64
  %p = llvm.getelementptr %base[%i] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
  %v = arith.uitofp %tid : i32 to f32
  llvm.store %v, %p : f32, !llvm.ptr<3>
)") + (barrier ? "  nvvm.barrier0\n" : "") +
         R"(  %c1 = arith.constant 1 : i32
  %c127 = arith.constant 127 : i32
  %n = arith.addi %tid, %c1 : i32
  %m = arith.andi %n, %c127 : i32
  %j = arith.extui %m : i32 to i64
  %q = llvm.getelementptr %base[%j] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
  %w = llvm.load %q : !llvm.ptr<3> -> f32
  %o = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
  llvm.store %w, %o : f32, !llvm.ptr<1>
  return
}
)";
}

} // namespace

TEST_CASE("the SIMT simulator reports shared-memory races and out-of-bounds accesses", "[simt]") {
  for (bool barrier : {true, false}) {
    Lowered l = lower(neighbourKernel(barrier), false);
    qla::simt::Buffer out;
    out.bytes.resize(128 * 4);
    qla::simt::Report r = qla::simt::simulateBlock(l.kernel(), 128, 512, {&out});
    INFO("barrier " << barrier);
    REQUIRE(r.errors.empty());
    CHECK(r.hazards.empty() == barrier);
    std::vector<float> got(128);
    std::memcpy(got.data(), out.bytes.data(), out.bytes.size());
    CHECK(got[5] == 6.0f);
    CHECK(got[127] == 0.0f);
  }
  // Too small an output buffer: thread 64's store is outside it.
  Lowered l = lower(neighbourKernel(true), false);
  qla::simt::Buffer out;
  out.bytes.resize(64 * 4);
  qla::simt::Report r = qla::simt::simulateBlock(l.kernel(), 128, 512, {&out});
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("outside every buffer") != std::string::npos);
}

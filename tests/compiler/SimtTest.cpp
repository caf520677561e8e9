// Lowerings run on the CPU by the SIMT simulator (qla/Simt/Simt.h): tri_inverse's three lowerings on
// a 64x64 f32 accumulator fragment of one warpgroup — through scratch (f32 substitution), diagonal
// blocks in warps (shuffles), and the whole inverse in warps with mma.sync merges (f16_merges) —
// against a float64 inverse on random GDN-like inputs, with the simulator's bounds and race checks.
// The simulator itself is checked on small kernels: a race it must report, and one it must not.
#include "gdn/forward/GdnForward.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"
#include "qla/Interpreter/Interpreter.h"
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
  Outcome o{qla::simt::simulateBlock(l.kernel(), 128, 33792, {{&a}}), std::vector<float>(64 * 64)};
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
    qla::simt::Report r = qla::simt::simulateBlock(l.kernel(), 128, 512, {{&out}});
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
  qla::simt::Report r = qla::simt::simulateBlock(l.kernel(), 128, 512, {{&out}});
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("outside every buffer") != std::string::npos);
}

namespace {

uint16_t bf16Bits(double v) {
  float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>((b + 0x7FFF + ((b >> 16) & 1)) >> 16); // to nearest even
}
double fromBf16(uint16_t h) {
  uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

} // namespace

TEST_CASE("gdn_chunk_inverse lowered to NVVM runs on the SIMT simulator as on the interpreter", "[simt][gdn]") {
  // The whole kernel (bounded cp.async copies, wgmma of K Kᵀ and Q Kᵀ, the masks, Γ, broadcasts through
  // scratch, the inverse, staged bf16 stores) after qla-convert-to-nvvm, block by block, against the
  // tile-level interpreter on the same inputs: one sequence of 200 tokens (a partial last chunk), two
  // value heads of one key head. With inverse_in_warps the interpreter inverts exactly and the GPU code
  // merges on f16 operands; the default's DSL merges round alike in both.
  const std::string settings = GENERATE(std::string("H=1,HV=2,K=128,V=128"), std::string("H=1,HV=2,K=128,V=128,inverse_in_warps=1"));
  INFO(settings);
  auto kernel = qla::gdn::buildGdnChunkInverse(qla::gdn::parseGdnForwardConfig(settings));
  const int64_t T = 200, HV = 2, K = 128, C = 64, chunks = (T + C - 1) / C;

  std::mt19937 gen(11);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  std::vector<double> q(T * K), k(T * K), g(T * HV), beta(T * HV);
  for (std::vector<double> *x : {&q, &k})
    for (int64_t t = 0; t < T; ++t) {
      double norm = 0;
      for (int64_t d = 0; d < K; ++d)
        norm += std::pow((*x)[t * K + d] = normal(gen), 2);
      for (int64_t d = 0; d < K; ++d)
        (*x)[t * K + d] = fromBf16(bf16Bits((*x)[t * K + d] / std::sqrt(norm)));
    }
  for (int64_t h = 0; h < HV; ++h)
    for (int64_t t = 0; t < T; ++t) {
      double step = -0.1 * unit(gen); // gcum: the log-gates summed inside each chunk
      g[t * HV + h] = (t % C ? g[(t - 1) * HV + h] : 0.0) + step;
      beta[t * HV + h] = unit(gen);
    }

  // The interpreter, on the tile IR.
  std::vector<qla::HostTensor> tensors = {{{2}, {0, double(T)}}, {{T, K}, q}, {{T, K}, k}, {{T, HV}, g},
                                          {{T, HV}, beta}, {{T, HV * C}, std::vector<double>(T * HV * C)},
                                          {{T, HV * C}, std::vector<double>(T * HV * C)}};
  Lowered tile = lower(kernel->ir(), false);
  std::vector<qla::HostTensor *> args;
  for (auto &t : tensors)
    args.push_back(&t);
  REQUIRE(succeeded(qla::interpretKernel(tile.kernel(), args, {1, 1, chunks})));

  // The same kernel through the pipeline to qla-convert-to-nvvm, on the simulator.
  Lowered gpu = lower(kernel->ir(), false);
  std::string dump;
  qla::CompileOptions options;
  options.dumpAfter = "qla-convert-to-nvvm";
  REQUIRE(succeeded(qla::lowerToLLVM(*gpu.module, options, &dump)));
  Lowered lowered = lower(dump, false);
  std::vector<qla::KernelAbi> abis = qla::readKernelAbis(*gpu.module);
  REQUIRE(abis.size() == 1);
  std::vector<qla::simt::Buffer> buffers(7);
  auto put = [&](qla::simt::Buffer &b, const std::vector<double> &v, int bytes) {
    b.bytes.assign(v.size() * bytes, 0);
    for (size_t i = 0; i < v.size(); ++i) {
      if (bytes == 2) {
        uint16_t h = bf16Bits(v[i]);
        std::memcpy(&b.bytes[2 * i], &h, 2);
      } else {
        float f = static_cast<float>(v[i]);
        std::memcpy(&b.bytes[4 * i], &f, 4);
      }
    }
  };
  buffers[0].bytes.assign(16, 0);
  int64_t bounds[2] = {0, T};
  std::memcpy(buffers[0].bytes.data(), bounds, 16);
  put(buffers[1], q, 2);
  put(buffers[2], k, 2);
  put(buffers[3], g, 4);
  put(buffers[4], beta, 4);
  for (int o : {5, 6}) // poisoned: every element inside the sequence must be written
    buffers[o].bytes.assign(T * HV * C * 2, 0xFF);
  std::vector<qla::simt::Arg> simArgs;
  for (const qla::KernelParam &p : abis[0].params)
    if (p.kind == qla::KernelParam::Kind::Tensor)
      simArgs.push_back({&buffers[simArgs.size()]});
    else
      simArgs.push_back({nullptr, p.dim == 0 && p.tensor == 0 ? 2 : T});
  for (int64_t z = 0; z < chunks; ++z) {
    qla::simt::Report r =
        qla::simt::simulateBlock(lowered.kernel(), abis[0].block[0], abis[0].smemBytes, simArgs, {0, 0, z});
    INFO("chunk " << z << ": " << (r.errors.empty() ? std::string("no errors") : r.errors[0]));
    REQUIRE(r.errors.empty());
    for (const std::string &h : r.hazards)
      UNSCOPED_INFO(h);
    CHECK(r.hazards.empty());
  }
  for (int o : {5, 6}) {
    double err = 0, norm = 0;
    int64_t unwritten = 0;
    for (int64_t i = 0; i < T * HV * C; ++i) {
      uint16_t h;
      std::memcpy(&h, &buffers[o].bytes[2 * i], 2);
      if (h == 0xFFFF) {
        ++unwritten;
        continue;
      }
      double want = tensors[o].data[i];
      err += std::pow(fromBf16(h) - want, 2);
      norm += want * want;
    }
    INFO((o == 5 ? "a" : "aqk") << ": rel err " << std::sqrt(err / norm) << ", unwritten " << unwritten);
    CHECK(unwritten == 0);
    CHECK(std::sqrt(err / norm) <= 2e-3);
    CHECK(norm > 0);
  }
}

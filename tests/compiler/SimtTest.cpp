// Lowerings run on the CPU by the SIMT simulator (qla/Simt/Simt.h): tri_inverse's three lowerings on
// a 64x64 f32 accumulator fragment of one warpgroup — through scratch (f32 substitution), diagonal
// blocks in warps (shuffles), and the whole inverse in warps with mma.sync merges (f16_merges) —
// against a float64 inverse on random GDN-like inputs, with the simulator's bounds and race checks.
// The simulator itself is checked on small kernels: a race it must report, and one it must not.
#include "gdn/forward/GdnForward.h"
#include "gemm/Gemm.h"
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

TEST_CASE("qla.stash and qla.unstash round-trip a fragment on the SIMT simulator, race-free", "[simt]") {
  // Thread-major 16-byte pieces: every thread reads back exactly what it wrote, so no barrier is needed
  // between them (the simulator's race check would report a thread reading another's piece).
  Lowered l = lower(R"(
func.func @stash(%A: !qla.tensor<64x64xf32>)
    attributes {qla.kernel, qla.block = array<i64: 128, 1, 1>, qla.smem_bytes = 17408 : i64} {
  %c0 = arith.constant 0 : index
  %a = qla.copy %A[%c0, %c0] : !qla.tensor<64x64xf32> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  %s = qla.stash %a {qla.smem_offset = 0 : i64} : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>> -> !qla.tile<64x64xf32, smem>
  %b = qla.unstash %s : !qla.tile<64x64xf32, smem> -> !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>
  qla.store %b, %A[%c0, %c0] : !qla.tile<64x64xf32, frag, #qla.wgmma_acc<warpgroups = 1>>, !qla.tensor<64x64xf32>
  return
}
)", true);
  qla::simt::Buffer a;
  std::vector<float> in(64 * 64);
  for (int i = 0; i < 64 * 64; ++i)
    in[i] = float(i) * 0.5f - 7.0f;
  a.bytes.resize(in.size() * 4);
  std::memcpy(a.bytes.data(), in.data(), a.bytes.size());
  qla::simt::Report r = qla::simt::simulateBlock(l.kernel(), 128, 17408, {{&a}});
  REQUIRE(r.errors.empty());
  CHECK(r.hazards.empty());
  CHECK(std::memcmp(a.bytes.data(), in.data(), a.bytes.size()) == 0);
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
double bf16(double v) { return fromBf16(bf16Bits(v)); }

/// A DSL kernel on the tile-level interpreter and, lowered to NVVM (qla-convert-to-nvvm), on the SIMT
/// simulator block by block, from the same tensors (`inputs`, one per tensor parameter, values exact in
/// their dtypes). The outputs `written` start poisoned (NaN) on the simulator. Returns both results.
struct BothRuns {
  std::vector<qla::HostTensor> interpreted, simulated;
};
BothRuns runBoth(qla::dsl::Kernel &kernel, const std::vector<qla::HostTensor> &inputs, std::array<int64_t, 3> grid,
                 const std::vector<size_t> &written) {
  BothRuns out{inputs, inputs};
  Lowered tile = lower(kernel.ir(), false);
  std::vector<qla::HostTensor *> args;
  for (auto &t : out.interpreted)
    args.push_back(&t);
  REQUIRE(succeeded(qla::interpretKernel(tile.kernel(), args, grid)));

  Lowered gpu = lower(kernel.ir(), false);
  std::string dump;
  qla::CompileOptions options;
  options.dumpAfter = "qla-convert-to-nvvm";
  REQUIRE(succeeded(qla::lowerToLLVM(*gpu.module, options, &dump)));
  Lowered lowered = lower(dump, false);
  std::vector<qla::KernelAbi> abis = qla::readKernelAbis(*gpu.module);
  REQUIRE(abis.size() == 1);
  const qla::KernelAbi &abi = abis[0];
  std::vector<qla::simt::Buffer> buffers(inputs.size());
  std::vector<std::string> dtypes;
  std::vector<qla::simt::Arg> simArgs;
  std::vector<std::unique_ptr<qla::simt::TensorMap>> maps;
  for (const qla::KernelParam &p : abi.params) {
    if (p.kind == qla::KernelParam::Kind::Dim) {
      simArgs.push_back({nullptr, inputs[p.tensor].shape[p.dim]});
      continue;
    }
    if (p.kind == qla::KernelParam::Kind::TensorMap) { // as the runtime encodes it: dims innermost first
      const qla::KernelParam &t = abi.params[p.tensor];
      auto map = std::make_unique<qla::simt::TensorMap>();
      map->buffer = &buffers[p.tensor];
      map->elementBytes = t.dtype == "bf16" ? 2 : t.dtype == "f32" ? 4 : 8;
      const std::vector<int64_t> &shape = inputs[p.tensor].shape;
      for (size_t d = shape.size(); d-- > 0;) {
        map->dims.push_back(shape[d]);
        if (d + 1 < shape.size())
          map->stridesBytes.push_back(t.strides[d] * map->elementBytes);
      }
      map->box = p.box;
      map->swizzle = p.swizzle;
      simArgs.push_back({nullptr, 0, map.get()});
      maps.push_back(std::move(map));
      continue;
    }
    REQUIRE(p.kind == qla::KernelParam::Kind::Tensor);
    size_t i = dtypes.size(); // tensors come first in the parameters
    dtypes.push_back(p.dtype);
    const std::vector<double> &v = inputs[i].data;
    int bytes = p.dtype == "bf16" ? 2 : p.dtype == "f32" ? 4 : 8;
    qla::simt::Buffer &b = buffers[i];
    b.bytes.assign(v.size() * bytes, 0);
    bool poison = std::find(written.begin(), written.end(), i) != written.end();
    for (size_t e = 0; e < v.size(); ++e) {
      if (poison) {
        std::memset(&b.bytes[e * bytes], 0xFF, bytes);
      } else if (bytes == 2) {
        uint16_t h = bf16Bits(v[e]);
        std::memcpy(&b.bytes[2 * e], &h, 2);
      } else if (bytes == 4) {
        float f = static_cast<float>(v[e]);
        std::memcpy(&b.bytes[4 * e], &f, 4);
      } else {
        int64_t x = static_cast<int64_t>(v[e]);
        std::memcpy(&b.bytes[8 * e], &x, 8);
      }
    }
    simArgs.push_back({&b});
  }
  for (int d = 0; d < 3; ++d)
    if (grid[d] == 0) // as the interpreter: the kernel's own grid where none is given
      grid[d] = abi.grid[d];
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        qla::simt::Report r = qla::simt::simulateBlock(lowered.kernel(), abi.block[0], abi.smemBytes, simArgs, {x, y, z});
        INFO("block (" << x << ", " << y << ", " << z << "): " << (r.errors.empty() ? std::string("no errors") : r.errors[0]));
        REQUIRE(r.errors.empty());
        for (const std::string &h : r.hazards)
          UNSCOPED_INFO(h);
        CHECK(r.hazards.empty());
      }
  for (size_t i = 0; i < buffers.size(); ++i) {
    int bytes = dtypes[i] == "bf16" ? 2 : dtypes[i] == "f32" ? 4 : 8;
    for (size_t e = 0; e < out.simulated[i].data.size(); ++e) {
      double &d = out.simulated[i].data[e];
      if (bytes == 2) {
        uint16_t h;
        std::memcpy(&h, &buffers[i].bytes[2 * e], 2);
        d = h == 0xFFFF ? std::nan("") : fromBf16(h);
      } else if (bytes == 4) {
        float f;
        std::memcpy(&f, &buffers[i].bytes[4 * e], 4);
        d = f;
      }
    }
  }
  return out;
}

/// Relative L2 distance of `got` from `want` over their first `n` elements (all: n = 0), and how many of
/// them are NaN (unwritten, from the poison) in `got`.
std::pair<double, int64_t> distance(const qla::HostTensor &got, const qla::HostTensor &want, size_t n = 0) {
  double err = 0, norm = 0;
  int64_t nans = 0;
  for (size_t e = 0; e < (n ? n : want.data.size()); ++e) {
    if (std::isnan(got.data[e])) {
      ++nans;
      continue;
    }
    err += std::pow(got.data[e] - want.data[e], 2);
    norm += want.data[e] * want.data[e];
  }
  return {norm > 0 ? std::sqrt(err / norm) : (err > 0 ? 1.0 : 0.0), nans};
}

/// Rows of L2-normalised random vectors of `width`, exact in bf16.
std::vector<double> unitRows(std::mt19937 &gen, int64_t rows, int64_t width) {
  std::normal_distribution<double> normal;
  std::vector<double> x(rows * width);
  for (int64_t t = 0; t < rows; ++t) {
    double norm = 0;
    for (int64_t d = 0; d < width; ++d) {
      x[t * width + d] = normal(gen);
      norm += x[t * width + d] * x[t * width + d];
    }
    for (int64_t d = 0; d < width; ++d)
      x[t * width + d] = bf16(x[t * width + d] / std::sqrt(norm));
  }
  return x;
}

/// gcum of one sequence: log-gates summed inside each 64-token chunk, `heads` columns.
std::vector<double> chunkCumsum(std::mt19937 &gen, int64_t T, int64_t heads) {
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  std::vector<double> g(T * heads);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < T; ++t)
      g[t * heads + h] = static_cast<float>((t % 64 ? g[(t - 1) * heads + h] : 0.0) - 0.1 * unit(gen));
  return g;
}

} // namespace

TEST_CASE("gdn_chunk_inverse lowered to NVVM runs on the SIMT simulator as on the interpreter", "[simt][gdn]") {
  // The whole kernel (bounded cp.async copies, wgmma of K Kᵀ and Q Kᵀ, the masks, Γ, broadcasts through
  // scratch, the inverse, staged bf16 stores) against the tile-level interpreter on the same inputs: one
  // sequence of 200 tokens (a partial last chunk), two value heads of one key head. With
  // inverse_in_warps the interpreter inverts exactly and the GPU code merges on f16 operands; the
  // default's DSL merges round alike in both.
  const std::string settings =
      GENERATE(std::string("H=1,HV=2,K=128,V=128"), std::string("H=1,HV=2,K=128,V=128,inverse_in_warps=1"),
               std::string("H=1,HV=2,K=128,V=128,inverse_products_once=1,inverse_in_warps=1"));
  INFO(settings);
  auto kernel = qla::gdn::buildGdnChunkInverse(qla::gdn::parseGdnForwardConfig(settings));
  const int64_t T = 200, HV = 2, K = 128, C = 64;
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  std::vector<double> beta(T * HV);
  for (double &b : beta)
    b = static_cast<float>(unit(gen));
  std::vector<qla::HostTensor> tensors = {{{2}, {0, double(T)}}, {{T, K}, unitRows(gen, T, K)},
                                          {{T, K}, unitRows(gen, T, K)}, {{T, HV}, chunkCumsum(gen, T, HV)},
                                          {{T, HV}, beta}, {{T, HV * C}, std::vector<double>(T * HV * C)},
                                          {{T, HV * C}, std::vector<double>(T * HV * C)}};
  BothRuns runs = runBoth(*kernel, tensors, {1, 1, (T + C - 1) / C}, {5, 6});
  for (size_t o : {5, 6}) {
    auto [err, unwritten] = distance(runs.simulated[o], runs.interpreted[o]);
    INFO((o == 5 ? "a" : "aqk") << ": rel err " << err << ", unwritten " << unwritten);
    CHECK(unwritten == 0);
    CHECK(err <= 2e-3);
  }
}

TEST_CASE("gdn_chunk_forward lowered to NVVM runs on the SIMT simulator as on the interpreter", "[simt][gdn]") {
  // The narrow state kernel (one warpgroup, bounded copies) over the chunks of one sequence of 150
  // tokens: the state Hᵀ in registers and its products as register-A wgmma, Vc MN-major, the hi + lo
  // parts, Oᵀ staged, the final state. At K = V = 256 by default with Hᵀ's operand through shared memory
  // and Hᵀ stashed there (share_state_operand, stash_state), and without either or the stash: the same
  // numbers.
  const std::string settings =
      GENERATE(std::string("H=1,HV=1,K=128,V=128"), std::string("H=1,HV=1,K=256,V=256"),
               std::string("H=1,HV=1,K=256,V=256,share_state_operand=0,stash_state=0"),
               std::string("H=1,HV=1,K=256,V=256,share_state_operand=1,stash_state=0"));
  INFO(settings);
  auto config = qla::gdn::parseGdnForwardConfig(settings + ",BV=64,initial_state=1,final_state=1");
  auto kernel = qla::gdn::buildGdnChunkForward(config);
  const int64_t T = 150, K = config.K, V = config.V, C = 64;
  std::mt19937 gen(5);
  std::normal_distribution<double> normal;
  std::vector<double> v(T * V), a(T * C), aqk(T * C), h0(K * V);
  for (double &x : v)
    x = bf16(normal(gen));
  for (int64_t t = 0; t < T; ++t) // a: unit lower triangular with small entries; aqk lower inclusive
    for (int64_t j = 0; j < C; ++j) {
      a[t * C + j] = j == t % C ? 1.0 : j < t % C ? bf16(0.1 * normal(gen)) : 0.0;
      aqk[t * C + j] = j <= t % C ? bf16(0.2 * normal(gen)) : 0.0;
    }
  for (double &x : h0)
    x = static_cast<float>(0.1 * normal(gen));
  std::vector<qla::HostTensor> tensors = {{{2}, {0, double(T)}},         {{T, K}, unitRows(gen, T, K)},
                                          {{T, K}, unitRows(gen, T, K)}, {{T, V}, v},
                                          {{T, 1}, chunkCumsum(gen, T, 1)}, {{T, C}, a},
                                          {{T, C}, aqk},                  {{T, V}, std::vector<double>(T * V)},
                                          {{K, V}, h0},                   {{K, V}, std::vector<double>(K * V)}};
  BothRuns runs = runBoth(*kernel, tensors, {V / 64, 1, 1}, {7, 9});
  for (size_t o : {7, 9}) {
    auto [err, unwritten] = distance(runs.simulated[o], runs.interpreted[o]);
    INFO((o == 7 ? "o" : "final state") << ": rel err " << err << ", unwritten " << unwritten);
    CHECK(unwritten == 0);
    CHECK(err <= 1e-4);
  }
}

TEST_CASE("the wide gdn_chunk_forward (TMA rings, two warpgroups) runs on the SIMT simulator as on the interpreter",
          "[simt][gdn]") {
  // The default state kernel of full-GPU calls: BV = 128 over two warpgroups, q, k, v, a, aqk and the gate
  // columns through two-stage TMA rings with mbarriers (whole chunks: the last one reads past the
  // sequence end, masked), warpgroup_local exchanges on named barriers. Four value heads (the gate ring
  // takes groups of four), one sequence of 150 tokens.
  const std::string settings =
      GENERATE(std::string(""), std::string(",warpgroup_local=0"), std::string(",warpgroup_turns=1"));
  INFO("settings" << settings);
  auto config = qla::gdn::parseGdnForwardConfig("H=1,HV=4,K=128,V=128,BV=128,stages=2,initial_state=1,final_state=1" +
                                                settings);
  auto kernel = qla::gdn::buildGdnChunkForward(config);
  const int64_t T = 150, HV = 4, K = 128, V = 128, C = 64;
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  std::vector<double> v(T * HV * V), a(T * HV * C), aqk(T * HV * C), h0(HV * K * V);
  for (double &x : v)
    x = bf16(normal(gen));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < HV; ++h)
      for (int64_t j = 0; j < C; ++j) {
        a[(t * HV + h) * C + j] = j == t % C ? 1.0 : j < t % C ? bf16(0.1 * normal(gen)) : 0.0;
        aqk[(t * HV + h) * C + j] = j <= t % C ? bf16(0.2 * normal(gen)) : 0.0;
      }
  for (double &x : h0)
    x = static_cast<float>(0.1 * normal(gen));
  std::vector<qla::HostTensor> tensors = {{{2}, {0, double(T)}},          {{T, K}, unitRows(gen, T, K)},
                                          {{T, K}, unitRows(gen, T, K)},  {{T, HV * V}, v},
                                          {{T, HV}, chunkCumsum(gen, T, HV)}, {{T, HV * C}, a},
                                          {{T, HV * C}, aqk},              {{T, HV * V}, std::vector<double>(T * HV * V)},
                                          {{HV * K, V}, h0},               {{HV * K, V}, std::vector<double>(HV * K * V)}};
  BothRuns runs = runBoth(*kernel, tensors, {HV, 1, 1}, {7, 9});
  for (size_t o : {7, 9}) {
    auto [err, unwritten] = distance(runs.simulated[o], runs.interpreted[o]);
    INFO((o == 7 ? "o" : "final state") << ": rel err " << err << ", unwritten " << unwritten);
    CHECK(unwritten == 0);
    CHECK(err <= 1e-4);
  }
}

TEST_CASE("warp-specialized gdn_chunk_forward (roles) runs on the SIMT simulator as on the interpreter", "[simt][gdn]") {
  // Roles, one execution context a warpgroup: the producer's TMA loop runs ahead through the rings'
  // empty barriers while the consumers wait on the full ones. roles = 1 (loads, state, output; BV = 64)
  // and fuse_inverse = 1 (loads, aux — the chunk inverse, with and without inverse_in_warps — and two
  // state warpgroups; BV = 128: the a and aqk inputs are unused, β is read instead). With HV = 4 the
  // gate and β columns come through the TMA ring (gate_ring: boxes of four heads' columns).
  const std::string settings = GENERATE(std::string("HV=2,BV=64,roles=1"), std::string("HV=2,BV=128,fuse_inverse=1"),
                                        std::string("HV=2,BV=128,fuse_inverse=1,inverse_in_warps=1"),
                                        std::string("HV=4,BV=128,fuse_inverse=1,inverse_in_warps=1"));
  INFO(settings);
  auto config = qla::gdn::parseGdnForwardConfig("H=1,K=128,V=128,stages=2,initial_state=1,final_state=1," + settings);
  auto kernel = qla::gdn::buildGdnChunkForward(config);
  const int64_t T = 150, HV = config.HV, K = 128, V = 128, C = 64;
  std::mt19937 gen(9);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  std::vector<double> v(T * HV * V), a(T * HV * C), aqk(T * HV * C), beta(T * HV), h0(HV * K * V);
  for (double &x : v)
    x = bf16(normal(gen));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < HV; ++h)
      for (int64_t j = 0; j < C; ++j) {
        a[(t * HV + h) * C + j] = j == t % C ? 1.0 : j < t % C ? bf16(0.1 * normal(gen)) : 0.0;
        aqk[(t * HV + h) * C + j] = j <= t % C ? bf16(0.2 * normal(gen)) : 0.0;
      }
  for (double &b : beta)
    b = static_cast<float>(unit(gen));
  for (double &x : h0)
    x = static_cast<float>(0.1 * normal(gen));
  std::vector<qla::HostTensor> tensors = {{{2}, {0, double(T)}}, {{T, K}, unitRows(gen, T, K)},
                                          {{T, K}, unitRows(gen, T, K)}, {{T, HV * V}, v},
                                          {{T, HV}, chunkCumsum(gen, T, HV)}};
  if (config.fuseInverse)
    tensors.push_back({{T, HV}, beta});
  else {
    tensors.push_back({{T, HV * C}, a});
    tensors.push_back({{T, HV * C}, aqk});
  }
  const size_t o = tensors.size(), state = o + 2;
  tensors.push_back({{T, HV * V}, std::vector<double>(T * HV * V)});
  tensors.push_back({{HV * K, V}, h0});
  tensors.push_back({{HV * K, V}, std::vector<double>(HV * K * V)});
  BothRuns runs = runBoth(*kernel, tensors, {HV * V / config.BV, 1, 1}, {o, state});
  for (size_t out : {o, state}) {
    auto [err, unwritten] = distance(runs.simulated[out], runs.interpreted[out]);
    INFO((out == o ? "o" : "final state") << ": rel err " << err << ", unwritten " << unwritten);
    CHECK(unwritten == 0);
    CHECK(err <= (config.inverseInWarps ? 2e-3 : 1e-4));
  }
}

TEST_CASE("the GEMM, plain and warp-specialized, runs on the SIMT simulator as on the interpreter", "[simt][gemm]") {
  // TMA rings of A and B, two consumer warpgroups of a 128x256 tile; specialize = 1 adds a producer
  // warpgroup (roles), 2 also a warpgroup loading A into registers and handing it over through a ring.
  // A ragged shape: partial tiles in M and N (TMA zero fill, guarded stores).
  const std::string settings =
      GENERATE(std::string(""), std::string(",specialize=1"), std::string(",specialize=2,BN=128,stages=3"));
  INFO("settings" << settings);
  auto kernel = qla::kernels::buildGemm(qla::kernels::parseGemmConfig("M=200,N=300,K=192" + settings));
  const int64_t M = 200, N = 300, K = 192;
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  std::vector<double> a(M * K), b(N * K);
  for (double &x : a)
    x = bf16(normal(gen));
  for (double &x : b)
    x = bf16(normal(gen));
  std::vector<qla::HostTensor> tensors = {{{M, K}, a}, {{N, K}, b}, {{M, N}, std::vector<double>(M * N)}};
  BothRuns runs = runBoth(*kernel, tensors, {0, 0, 0}, {2});
  auto [err, unwritten] = distance(runs.simulated[2], runs.interpreted[2]);
  INFO("C: rel err " << err << ", unwritten " << unwritten);
  CHECK(unwritten == 0);
  CHECK(err <= 1e-5);
}

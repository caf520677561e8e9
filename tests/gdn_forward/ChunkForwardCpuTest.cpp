// ChunkForward's own orchestration — the launches of a call, their tensors, grids, the split's memset
// and copies — executed on the CPU: a dry run (ChunkForward::dryRun) whose launches the interpreter
// runs over host memory at the call's (fake) device addresses, every workspace byte NaN until
// written, compared with the float64 recurrence. This checks the GPU path's glue (the fixed-length
// and varlen context splits included) without a GPU; the kernels' lowering is the GPU tests' part.
#include "gdn/api/ChunkForwardJit.h"
#include "gdn/forward/GdnForward.h"
#include "gdn/reference/GdnRandom.h"
#include "gdn/reference/GdnReference.h"
#include "qla/Interpreter/HostTensor.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <random>

using namespace qla;
using namespace qla::gdn;

namespace {

/// Host memory standing in for the device: one region per address a call names, found by range.
class CpuDevice {
public:
  /// Region `t` names (created NaN-filled on first use; a later view may reshape it, same size).
  HostTensor &region(const TensorArg &t) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    auto [at, offset] = find(t.data);
    if (!at) {
      Region &r = regions_[t.data];
      r.tensor = HostTensor{t.shape, std::vector<double>(n, std::numeric_limits<double>::quiet_NaN())};
      r.elementBytes = bytesOf(t.dtype);
      return r.tensor;
    }
    REQUIRE(offset == 0);
    REQUIRE(static_cast<int64_t>(at->tensor.data.size()) == n); // one buffer, one size, whatever the view
    at->tensor.shape = t.shape;
    return at->tensor;
  }
  /// Element `i` of a range starting at `address` (inside a region).
  double &element(CUdeviceptr address, int64_t i) {
    auto [at, offset] = find(address);
    REQUIRE(at);
    return at->tensor.data.at(offset + i);
  }
  void put(CUdeviceptr address, DType d, std::vector<int64_t> shape, std::vector<double> values) {
    regions_[address] = Region{HostTensor{std::move(shape), std::move(values)}, bytesOf(d)};
  }

private:
  struct Region {
    HostTensor tensor;
    int64_t elementBytes = 4;
  };
  static int64_t bytesOf(DType d) { return d == DType::bf16 ? 2 : d == DType::i64 ? 8 : 4; }
  /// The region holding `address` and the element offset of it there, or null.
  std::pair<Region *, int64_t> find(CUdeviceptr address) {
    auto it = regions_.upper_bound(address);
    if (it == regions_.begin())
      return {nullptr, 0};
    --it;
    Region &r = it->second;
    const int64_t offset = static_cast<int64_t>(address - it->first) / r.elementBytes;
    if (offset >= static_cast<int64_t>(r.tensor.data.size()))
      return {nullptr, 0};
    return {&r, offset};
  }
  std::map<CUdeviceptr, Region> regions_;
};

double relL2(const std::vector<double> &got, const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

/// Runs one call of `fwd` (config `c`) on the CPU and returns o and the final state.
GdnOutputs runOnCpu(ChunkForward &fwd, const GdnForwardConfig &c, const GdnProblem &p, const GdnInputs &in,
                    const SplitPolicy &policy, const GdnVarlenSplit *varlenSplit,
                    std::vector<std::string> *launched = nullptr) {
  std::map<std::string, std::unique_ptr<dsl::Kernel>> kernels;
  for (const GdnPackageKernel &k : gdnForwardPackage(c, true))
    kernels[k.folder] = buildGdnKernel(k.kernel, k.settings.empty() ? c : withGdnSettings(c, k.settings));
  CpuDevice dev;
  const int64_t T = p.B * p.T, N = p.numSequences();
  // Inputs at distinct fake addresses, rounded as the kernels read them.
  CUdeviceptr next = CUdeviceptr{1} << 32;
  auto place = [&](DType d, std::vector<int64_t> shape, std::vector<double> values) {
    TensorArg t{next, d, shape, {}};
    dev.put(next, d, std::move(shape), std::move(values));
    next += CUdeviceptr{1} << 30;
    return t;
  };
  ChunkForwardTensors t;
  t.q = place(DType::bf16, {p.B, p.T, p.H, p.K}, in.q.data);
  t.k = place(DType::bf16, {p.B, p.T, p.H, p.K}, in.k.data);
  t.v = place(DType::bf16, {p.B, p.T, p.HV, p.V}, in.v.data);
  if (p.gateInKernel) {
    t.a = place(DType::f32, {p.B, p.T, p.HV}, in.a.data);
    t.b = place(DType::f32, {p.B, p.T, p.HV}, in.b.data);
    t.aLog = place(DType::f32, {p.HV}, in.aLog.data);
    t.dtBias = place(DType::f32, {p.HV}, in.dtBias.data);
  } else {
    t.g = place(DType::f32, {p.B, p.T, p.HV}, in.g.data);
    t.beta = place(DType::f32, {p.B, p.T, p.HV}, in.beta.data);
  }
  t.initialState = place(DType::f32, {N, p.HV, p.K, p.V}, in.initialState.data);
  // Outputs poisoned (NaN) like the GPU test's: an element no launch or copy writes stays NaN.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  t.finalState = place(DType::f32, {N, p.HV, p.K, p.V}, std::vector<double>(N * p.HV * p.K * p.V, nan));
  t.o = place(DType::bf16, {p.B, p.T, p.HV, p.V}, std::vector<double>(T * p.HV * p.V, nan));
  if (p.varlen()) {
    t.cuSeqlens = place(DType::i64, {N + 1}, std::vector<double>(p.cuSeqlens.begin(), p.cuSeqlens.end()));
    t.hostCuSeqlens = p.cuSeqlens.data();
    t.varlenSplit = varlenSplit;
  }
  t.split = &policy;
  if (varlenSplit && varlenSplit->split()) { // the plan's device tables, where the dry run points
    const SplitPlan &plan = varlenSplit->plan;
    const CUdeviceptr tables = CUdeviceptr{1} << 40;
    dev.put(tables, DType::i64, {static_cast<int64_t>(plan.segmentCuSeqlens.size())},
            std::vector<double>(plan.segmentCuSeqlens.begin(), plan.segmentCuSeqlens.end()));
    dev.put(tables + static_cast<CUdeviceptr>(varlenSplit->firstOffset), DType::i64,
            {static_cast<int64_t>(plan.firstSegment.size())},
            std::vector<double>(plan.firstSegment.begin(), plan.firstSegment.end()));
  }
  fwd.dryRun([&](const std::string &name, const std::vector<TensorArg> &ts, std::array<uint32_t, 3> grid) {
    if (name == "memset32") {
      dev.region(ts[0]).data.assign(1, static_cast<double>(std::bit_cast<float>(grid[0])));
      return;
    }
    if (name == "copy") {
      for (int64_t i = 0; i < ts[0].shape[0]; ++i)
        dev.element(ts[0].data, i) = dev.element(ts[1].data, i);
      return;
    }
    INFO("kernel " << name);
    if (launched)
      launched->push_back(name);
    REQUIRE(kernels.count(name));
    std::vector<HostTensor *> args;
    for (const TensorArg &a : ts)
      args.push_back(&dev.region(a));
    kernels.at(name)->interpret(args, {grid[0], grid[1], grid[2]});
  });
  const size_t bytes = varlenSplit && varlenSplit->split() ? fwd.workspaceBytes(*varlenSplit)
                                                           : fwd.workspaceBytes(T, N, &policy);
  fwd(t, CUdeviceptr{1} << 48, bytes);
  fwd.dryRun(nullptr);
  GdnOutputs out;
  out.o = Tensor({p.B, p.T, p.HV, p.V});
  out.o.data = dev.region(t.o).data;
  out.finalState = Tensor(p.stateShape());
  out.finalState.data = dev.region(t.finalState).data;
  return out;
}

} // namespace

TEST_CASE("ChunkForward's calls run on the CPU: unsplit, split, and the varlen split", "[gdn][split][varlen][cpu]") {
  GdnForwardConfig c = parseGdnForwardConfig("H=1,HV=2,K=64,V=64,initial_state=1,final_state=1");
  ChunkForward fwd = buildChunkForward(c, true);
  GdnProblem p;
  p.H = 1;
  p.HV = 2;
  p.K = p.V = 64;
  p.useInitialState = p.outputFinalState = true;
  struct Case {
    const char *what;
    int64_t B, T;
    std::vector<int64_t> cu;
    SplitPolicy policy;
    bool varlenPlan;
    int64_t segments; // expected segments of the whole call (0: unsplit)
  };
  const std::vector<Case> cases{
      {"fixed length, unsplit", 2, 200, {}, {.sms = 132, .enabled = false}, false, 0},
      {"fixed length, split in 128-token segments", 2, 400, {}, {.sms = 132, .segmentTokens = 128}, false, 8},
      {"varlen, unsplit without a plan", 1, 470, {0, 30, 430, 470}, {.sms = 132}, false, 0},
      {"varlen, the long sequence split by the plan", 1, 470, {0, 30, 430, 470},
       {.sms = 132, .segmentTokensWhenSplit = 128}, true, 6},
      {"varlen, exact", 1, 470, {0, 30, 430, 470}, {.sms = 132, .segmentTokensWhenSplit = 128, .exact = true}, true, 6},
  };
  for (const Case &k : cases) {
    SECTION(k.what) {
      p.B = k.B;
      p.T = k.T;
      p.cuSeqlens = k.cu;
      GdnInputs in = roundInputsForKernel(gdnRandomInputs(p, {.seed = 7, .gate = GdnGateKind::mixedDecay}));
      GdnVarlenSplit plan;
      if (k.varlenPlan)
        plan = fwd.planVarlenOnHost(k.cu, &k.policy);
      CHECK(plan.segments() == (k.varlenPlan ? k.segments : 0));
      GdnOutputs got = runOnCpu(fwd, c, p, in, k.policy, k.varlenPlan ? &plan : nullptr);
      GdnOutputs want = gdnRecurrentReference(p, in);
      const double eo = relL2(got.o.data, want.o.data), es = relL2(got.finalState.data, want.finalState.data);
      INFO("o " << eo << ", final state " << es);
      CHECK(eo <= 5e-3); // NaN (an element never written) fails too
      CHECK(es <= 5e-3);
    }
  }
}

TEST_CASE("exact mode's log-gate floor: the split at -88 equals every transition taken, and is the window split",
          "[gdn][split][cpu]") {
  // precise = 2: only at this precision do two summation orders agree to 1e-4 (see the interpreter's
  // exact-split test). Logsigmoid gates fall by about -50 a chunk (windows of two chunks at -88); mixed
  // gates add a zero-decay head, which takes its whole transition either way.
  GdnForwardConfig c = parseGdnForwardConfig("H=1,HV=2,K=64,V=64,precise=2,initial_state=1,final_state=1");
  ChunkForward fwd = buildChunkForward(c, true);
  GdnProblem p;
  p.H = 1;
  p.HV = 2;
  p.K = p.V = 64;
  p.B = 1;
  p.T = 640;
  p.useInitialState = p.outputFinalState = true;
  auto gate = GENERATE(GdnGateKind::logsigmoid, GdnGateKind::mixedDecay);
  const unsigned seed = std::random_device{}();
  INFO("seed " << seed);
  GdnInputs in = roundInputsForKernel(gdnRandomInputs(p, {.seed = seed, .gate = gate}));
  const SplitPolicy every{.sms = 132, .segmentTokens = 192, .exactLogGateFloor = -INFINITY, .exact = true};
  const SplitPolicy floor{.sms = 132, .segmentTokens = 192, .exact = true};
  const SplitPolicy windows{.sms = 132, .segmentTokens = 192, .logGateThreshold = -88};
  GdnOutputs all = runOnCpu(fwd, c, p, in, every, nullptr), cut = runOnCpu(fwd, c, p, in, floor, nullptr),
             truncated = runOnCpu(fwd, c, p, in, windows, nullptr);
  const double dO = relL2(cut.o.data, all.o.data), dState = relL2(cut.finalState.data, all.finalState.data);
  INFO("floor -88 vs every transition: o " << dO << ", final state " << dState);
  CHECK(dState <= 1e-4);
  CHECK(dO <= 1e-3);
  // Exact mode hands the device the floor and nothing else changes: the same windows as a truncated
  // split at −88, the same kernels on the same tables, bit for bit.
  CHECK(cut.o.data == truncated.o.data);
  CHECK(cut.finalState.data == truncated.finalState.data);
  SplitPolicy above = floor;
  above.exactLogGateFloor = -50;
  CHECK_THROWS_WITH(runOnCpu(fwd, c, p, in, above, nullptr), Catch::Matchers::ContainsSubstring("must be <= -88"));
}

TEST_CASE("ChunkForward's calls with in-kernel gates and L2 norm run on the CPU, split too", "[gdn][split][cpu]") {
  // Run 36's GPU NaN on such a build was the wide state kernel's L2 norm (a layout bug the interpreter
  // cannot see); this is the orchestration's half.
  GdnForwardConfig c =
      parseGdnForwardConfig("H=1,HV=2,K=64,V=64,gate_in_kernel=1,l2norm=1,initial_state=1,final_state=1");
  ChunkForward fwd = buildChunkForward(c, true);
  GdnProblem p;
  p.H = 1;
  p.HV = 2;
  p.K = p.V = 64;
  p.gateInKernel = p.l2normQK = true;
  p.useInitialState = p.outputFinalState = true;
  struct Case {
    const char *what;
    int64_t B, T;
    std::vector<int64_t> cu;
    SplitPolicy policy;
    bool varlenPlan;
  };
  const std::vector<Case> cases{
      {"unsplit", 2, 200, {}, {.sms = 132}, false},
      {"fixed length, split", 2, 400, {}, {.sms = 132, .segmentTokens = 128}, false},
      {"varlen, split by the plan", 1, 470, {0, 30, 430, 470},
       {.sms = 132, .segmentTokensWhenSplit = 128}, true},
  };
  for (const Case &k : cases) {
    SECTION(k.what) {
      p.B = k.B;
      p.T = k.T;
      p.cuSeqlens = k.cu;
      GdnInputs in = roundInputsForKernel(gdnRandomInputs(p, {.seed = 11, .gate = GdnGateKind::mixedDecay}));
      GdnVarlenSplit plan;
      if (k.varlenPlan) {
        plan = fwd.planVarlenOnHost(k.cu, &k.policy);
        CHECK(plan.split());
      }
      GdnOutputs got = runOnCpu(fwd, c, p, in, k.policy, k.varlenPlan ? &plan : nullptr);
      GdnOutputs want = gdnRecurrentReference(p, in);
      const double eo = relL2(got.o.data, want.o.data), es = relL2(got.finalState.data, want.finalState.data);
      INFO("o " << eo << ", final state " << es);
      CHECK(eo <= 5e-3);
      CHECK(es <= 5e-3);
    }
  }
}

TEST_CASE("ChunkForward's calls at K = V = 128 with the wide state kernel (BV = 128, TMA rings) run on the CPU",
          "[gdn][split][cpu]") {
  // A call over few SMs takes the wide tile (pickForwardTile) unsplit and split, as the GPU does with
  // many segments; with L2 norm the wide kernel loads q and k through registers, unbounded.
  const bool l2norm = GENERATE(false, true);
  GdnForwardConfig c = parseGdnForwardConfig(std::string("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1") +
                                             (l2norm ? ",l2norm=1" : ""));
  ChunkForward fwd = buildChunkForward(c, true);
  GdnProblem p;
  p.H = 1;
  p.HV = 2;
  p.K = p.V = 128;
  p.l2normQK = l2norm;
  p.useInitialState = p.outputFinalState = true;
  p.B = 2;
  p.T = 320;
  const bool split = GENERATE(false, true);
  SplitPolicy policy{.sms = 4, .segmentTokens = split ? 128 : 0, .enabled = split};
  INFO("l2norm " << l2norm << ", split " << split);
  CHECK(fwd.forwardTile(split ? 6 : 2, &policy) == 128);
  GdnInputs in = roundInputsForKernel(gdnRandomInputs(p, {.seed = 5, .gate = GdnGateKind::mixedDecay}));
  GdnOutputs got = runOnCpu(fwd, c, p, in, policy, nullptr);
  GdnOutputs want = gdnRecurrentReference(p, in);
  const double eo = relL2(got.o.data, want.o.data), es = relL2(got.finalState.data, want.finalState.data);
  INFO("o " << eo << ", final state " << es);
  CHECK(eo <= 5e-3);
  CHECK(es <= 5e-3);
}

TEST_CASE("ChunkForward with fuse_inverse (a and aqk made in the forward's aux role) runs on the CPU",
          "[gdn][split][cpu]") {
  // The forward takes β instead of a and aqk, and the call launches no gdn_chunk_inverse unsplit; split,
  // the inverse still feeds the end and transition runs, and the main run makes its own.
  const int64_t d = GENERATE(64, 128);
  GdnForwardConfig c = parseGdnForwardConfig(
      fmt::format("H=1,HV=2,K={0},V={0},BV={0},stages=2,fuse_inverse=1,initial_state=1,final_state=1", d));
  ChunkForward fwd = buildChunkForward(c, true);
  GdnProblem p;
  p.H = 1;
  p.HV = 2;
  p.K = p.V = d;
  p.useInitialState = p.outputFinalState = true;
  p.B = 2;
  p.T = 300;
  const bool split = GENERATE(false, true);
  SplitPolicy policy{.sms = 132, .segmentTokens = split ? 128 : 0, .enabled = split};
  INFO("K = V = " << d << ", split " << split);
  GdnInputs in = roundInputsForKernel(gdnRandomInputs(p, {.seed = 9, .gate = GdnGateKind::mixedDecay}));
  std::vector<std::string> launched;
  GdnOutputs got = runOnCpu(fwd, c, p, in, policy, nullptr, &launched);
  CHECK(std::count(launched.begin(), launched.end(), "gdn_chunk_inverse") == (split ? 1 : 0));
  GdnOutputs want = gdnRecurrentReference(p, in);
  const double eo = relL2(got.o.data, want.o.data), es = relL2(got.finalState.data, want.finalState.data);
  INFO("o " << eo << ", final state " << es);
  CHECK(eo <= 5e-3);
  CHECK(es <= 5e-3);
}

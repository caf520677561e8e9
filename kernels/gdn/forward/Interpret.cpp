#include "gdn/forward/Interpret.h"

#include "qla/runtime/Error.h"

namespace qla::gdn {

namespace {

HostTensor packed(const Tensor &t, std::vector<int64_t> shape, bool bf16 = false) {
  HostTensor h{std::move(shape), t.data};
  if (bf16)
    for (double &x : h.data)
      x = roundToBf16(x);
  return h;
}

HostTensor zeros(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return HostTensor{std::move(shape), std::vector<double>(n, 0.0)};
}

} // namespace

GdnForwardConfig forwardConfigFor(const GdnProblem &p) {
  GdnForwardConfig c;
  c.H = p.H;
  c.HV = p.HV;
  c.K = p.K;
  c.V = p.V;
  c.scale = p.resolvedScale();
  c.gateInKernel = p.gateInKernel;
  c.l2normQK = p.l2normQK;
  c.initialState = p.useInitialState;
  c.finalState = p.outputFinalState;
  c.stateVFirst = p.stateVFirst;
  return c;
}

GdnOutputs interpretGdnForward(const GdnProblem &p, const GdnInputs &in, const InterpretOptions &options) {
  validateGdn(p, in, "gdn forward (interpreter)");
  GdnForwardConfig c = forwardConfigFor(p);
  c.stages = options.stages;
  if (options.gateRing >= 0)
    c.gateRing = options.gateRing != 0;
  if (options.precise >= 0)
    c.precise = options.precise;
  if (options.inverseF16 >= 0)
    c.inverseF16 = options.inverseF16 != 0;
  if (options.shareStateOperand >= 0)
    c.shareStateOperand = options.shareStateOperand;
  if (options.stashState >= 0)
    c.stashState = options.stashState;
  c.inverseInWarps = options.inverseInWarps;
  c.inverseProductsOnce = options.inverseProductsOnce;
  c.inverseChunks = options.inverseChunks;
  c.inverseStages = options.inverseStages;
  if (options.inverseHeads != 0)
    c.inverseHeads = options.inverseHeads;
  c.stateOnly = options.run == ForwardRun::stateOnly;
  GdnForwardKernels kernels = buildGdnForward(c);
  auto run = [&](const dsl::Kernel &kernel, const std::vector<HostTensor *> &args, std::array<int64_t, 3> grid) {
    if (options.simulate)
      kernel.simulate(args, grid);
    else
      kernel.interpret(args, grid);
  };
  const int64_t T = p.B * p.T, N = p.numSequences(), C = GdnForwardConfig::kChunk;
  HostTensor cu{{N + 1}, {}};
  if (p.varlen())
    cu.data.assign(p.cuSeqlens.begin(), p.cuSeqlens.end());
  else
    for (int64_t i = 0; i <= N; ++i)
      cu.data.push_back(double(i * p.T));

  HostTensor q = packed(in.q, {T, p.H * p.K}, true), k = packed(in.k, {T, p.H * p.K}, true);
  HostTensor v = packed(in.v, {T, p.HV * p.V}, true);
  HostTensor gcum = zeros({T, p.HV}), aGated = zeros({T, p.HV * C}), aqk = zeros({T, p.HV * C}), o = zeros({T, p.HV * p.V});
  HostTensor beta = c.gateInKernel ? zeros({T, p.HV}) : packed(in.beta, {T, p.HV});
  int64_t longest = 0;
  for (int64_t i = 0; i < N; ++i)
    longest = std::max<int64_t>(longest, int64_t(cu.data[i + 1] - cu.data[i]));
  const std::array<int64_t, 3> grid{p.HV, N, std::max<int64_t>(1, (longest + C - 1) / C)};
  if (c.gateInKernel) {
    HostTensor a = packed(in.a, {T, p.HV}), b = packed(in.b, {T, p.HV});
    HostTensor aLog = packed(in.aLog, {p.HV}), dtBias = packed(in.dtBias, {p.HV});
    run(*kernels.cumsum, {&cu, &a, &gcum, &b, &aLog, &dtBias, &beta}, {0, grid[1], grid[2]});
  } else {
    HostTensor g = packed(in.g, {T, p.HV});
    run(*kernels.cumsum, {&cu, &g, &gcum}, {0, grid[1], grid[2]});
  }
  run(*kernels.inverse, {&cu, &q, &k, &gcum, &beta, &aGated, &aqk},
      {grid[0] / c.resolvedInverseHeads(), grid[1], (grid[2] + c.inverseChunks - 1) / c.inverseChunks});

  std::vector<HostTensor *> args{&cu, &q, &k, &v, &gcum, &aGated, &aqk, &o};
  HostTensor h0, ht;
  if (c.initialState) {
    h0 = packed(in.initialState, p.stateVFirst ? std::vector<int64_t>{N * p.HV * p.V, p.K}
                                                : std::vector<int64_t>{N * p.HV * p.K, p.V});
    args.push_back(&h0);
  }
  if (c.finalState) {
    ht = zeros(p.stateVFirst ? std::vector<int64_t>{N * p.HV * p.V, p.K} : std::vector<int64_t>{N * p.HV * p.K, p.V});
    args.push_back(&ht);
  }
  run(*kernels.forward, args, {p.HV * (p.V / c.BV), N, 1});

  GdnOutputs out;
  out.o = Tensor({p.B, p.T, p.HV, p.V}, std::move(o.data));
  if (c.finalState)
    out.finalState = Tensor(p.stateShape(), std::move(ht.data));
  return out;
}

} // namespace qla::gdn

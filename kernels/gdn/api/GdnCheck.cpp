// Checking and timing the GDN forward through its entry point on the GPU, MLIR-free (GdnCheck.h).
#include "gdn/api/GdnCheck.h"

#include "gdn/reference/GdnReference.h"
#include "gdn/reference/GpuReference.h"
#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/Driver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include "qla/runtime/Error.h"

namespace qla::gdn {

namespace {

uint16_t bf16Bits(double x) {
  float f = static_cast<float>(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
double fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

DeviceBuffer upload(const std::vector<double> &v, DType t) {
  DeviceBuffer buf(std::max<size_t>(1, v.size()) * dtypeBytes(t));
  if (t == DType::bf16) {
    std::vector<uint16_t> h(v.size());
    std::transform(v.begin(), v.end(), h.begin(), bf16Bits);
    buf.upload(h.data(), h.size() * 2);
  } else if (t == DType::f32) {
    std::vector<float> h(v.begin(), v.end());
    buf.upload(h.data(), h.size() * 4);
  } else {
    std::vector<int64_t> h(v.begin(), v.end());
    buf.upload(h.data(), h.size() * 8);
  }
  return buf;
}

template <typename Bits, typename Decode>
Compared compare(const std::vector<Bits> &got, const std::vector<double> &ref, Decode decode) {
  if (got.size() != ref.size())
    throw Error(fmt::format("gdn check: {} outputs against {} reference values", got.size(), ref.size()));
  const size_t workers = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<double> diff(workers, 0), norm(workers, 0);
  std::vector<size_t> nans(workers, 0);
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      const size_t begin = got.size() * w / workers, end = got.size() * (w + 1) / workers;
      double d = 0, n = 0;
      size_t bad = 0;
      for (size_t i = begin; i < end; ++i) {
        const double x = decode(got[i]);
        bad += std::isnan(x);
        d += (x - ref[i]) * (x - ref[i]);
        n += ref[i] * ref[i];
      }
      diff[w] = d, norm[w] = n, nans[w] = bad;
    });
  for (std::thread &t : threads)
    t.join();
  Compared c;
  double d = 0, n = 0;
  for (size_t w = 0; w < workers; ++w)
    d += diff[w], n += norm[w], c.nans += nans[w];
  c.relL2 = std::isnan(d) || std::isnan(n) ? std::numeric_limits<double>::quiet_NaN()
            : n == 0                       ? (d == 0 ? 0.0 : std::numeric_limits<double>::infinity())
                                           : std::sqrt(d / n);
  return c;
}

} // namespace

Compared compareToReference(const std::vector<uint16_t> &bf16, const std::vector<double> &ref) {
  return compare(bf16, ref, fromBf16);
}
Compared compareToReference(const std::vector<float> &f32, const std::vector<double> &ref) {
  return compare(f32, ref, [](float x) { return double(x); });
}

struct GdnDeviceInputs {
  GdnDeviceInputs(const GdnProblem &p, const GdnInputs &in)
      : cu(upload(p.varlen() ? std::vector<double>(p.cuSeqlens.begin(), p.cuSeqlens.end()) : std::vector<double>{0},
                  DType::i64)),
        q(upload(in.q.data, DType::bf16)), k(upload(in.k.data, DType::bf16)), v(upload(in.v.data, DType::bf16)),
        h0(upload(in.initialState.data, DType::f32)), g(upload(p.gateInKernel ? none() : in.g.data, DType::f32)),
        beta(upload(p.gateInKernel ? none() : in.beta.data, DType::f32)),
        a(upload(p.gateInKernel ? in.a.data : none(), DType::f32)),
        b(upload(p.gateInKernel ? in.b.data : none(), DType::f32)),
        aLog(upload(p.gateInKernel ? in.aLog.data : none(), DType::f32)),
        dt(upload(p.gateInKernel ? in.dtBias.data : none(), DType::f32)) {}
  static std::vector<double> none() { return {0}; }
  DeviceBuffer cu, q, k, v, h0, g, beta, a, b, aLog, dt;
};

GdnCase makeGdnCase(const GdnProblem &p, const GdnCheckOptions &opt) {
  GdnCase c{p, roundInputsForKernel(gdnRandomInputs(p, {.seed = opt.seed, .gate = opt.gate})), {}};
  c.reference = opt.cpuReference ? gdnRecurrentReference(p, c.inputs) : gdnGpuReference(p, c.inputs);
  return c;
}

GdnCheck checkGdnForward(ChunkForward &fwd, const GdnProblem &p, const GdnCheckOptions &opt) {
  return checkGdnForward(fwd, makeGdnCase(p, opt), opt.timedIters);
}

GdnCheck checkGdnForward(ChunkForward &fwd, const GdnCase &c, int timedIters, bool timePlain) {
  const GdnProblem &p = c.problem;
  const GdnInputs &in = c.inputs;
  const int64_t T = p.B * p.T, N = p.numSequences();
  if (!c.device) // uploaded once a case: later checks of other builds reuse them (inputs are read-only)
    c.device = std::make_shared<const GdnDeviceInputs>(p, in);
  const GdnDeviceInputs &d = *c.device;
  DeviceBuffer dO(T * p.HV * p.V * 2), dHt(N * p.HV * p.K * p.V * 4);
  // A varlen call brings its split, planned for its cu_seqlens (none when it does not split).
  GdnVarlenSplit varlenSplit = p.varlen() ? fwd.planVarlen(p.cuSeqlens) : GdnVarlenSplit{};
  size_t wsBytes = varlenSplit.split() ? fwd.workspaceBytes(varlenSplit) : fwd.workspaceBytes(T, N);
  DeviceBuffer ws(wsBytes);
  dO.fill16(0x7FC1);       // bf16 NaN: unwritten outputs stay NaN
  dHt.fill32(0x7FC00001);  // f32 NaN
  ws.fill32(0x7FC00001);
  auto t = [](const DeviceBuffer &b, DType d, std::vector<int64_t> shape) { return TensorArg{b.ptr(), d, shape, {}}; };
  ChunkForwardTensors args;
  args.q = t(d.q, DType::bf16, {p.B, p.T, p.H, p.K});
  args.k = t(d.k, DType::bf16, {p.B, p.T, p.H, p.K});
  args.v = t(d.v, DType::bf16, {p.B, p.T, p.HV, p.V});
  args.o = t(dO, DType::bf16, {p.B, p.T, p.HV, p.V});
  if (p.gateInKernel) {
    args.a = t(d.a, DType::f32, {p.B, p.T, p.HV});
    args.b = t(d.b, DType::f32, {p.B, p.T, p.HV});
    args.aLog = t(d.aLog, DType::f32, {p.HV});
    args.dtBias = t(d.dt, DType::f32, {p.HV});
  } else {
    args.g = t(d.g, DType::f32, {p.B, p.T, p.HV});
    args.beta = t(d.beta, DType::f32, {p.B, p.T, p.HV});
  }
  args.initialState = t(d.h0, DType::f32, p.stateShape());
  args.finalState = t(dHt, DType::f32, p.stateShape());
  if (p.varlen()) {
    args.cuSeqlens = t(d.cu, DType::i64, {N + 1});
    args.hostCuSeqlens = p.cuSeqlens.data(); // grids sized by the longest sequence
    args.varlenSplit = &varlenSplit;
  }
  auto launchAll = [&] { fwd(args, ws.ptr(), wsBytes); };
  Driver &drv = Driver::get();
  launchAll();
  drv.check(drv.cuCtxSynchronize(), "gdn forward");
  GdnCheck r;
  const size_t oCount = T * p.HV * p.V;
  std::vector<uint16_t> oBits(oCount);
  dO.download(oBits.data(), oCount * 2);
  std::vector<float> ht(N * p.HV * p.K * p.V);
  dHt.download(ht.data(), ht.size() * 4);
  Compared co = compareToReference(oBits, c.reference.o.data);
  Compared cs = compareToReference(ht, c.reference.finalState.data);
  r.unwritten = co.nans + cs.nans;
  r.workspaceBytes = wsBytes;
  r.varlenSegments = varlenSplit.segments();
  r.errO = co.relL2;
  r.errState = cs.relL2;
  r.pass = r.unwritten == 0 && r.errO <= 5e-3 && r.errState <= 5e-3;
  if (timedIters > 0) {
    // The call captured in a CUDA graph (no allocation, no sync inside): replays give the same bits, o
    // and the final state. Driver objects are released on every path (a tune checks many builds).
    struct Owned {
      Driver &drv;
      CUstream stream = nullptr;
      CUgraph graph = nullptr;
      CUgraphExec exec = nullptr;
      CUevent events[2] = {nullptr, nullptr};
      ~Owned() {
        if (stream) {
          CUgraph partial = nullptr; // a capture left open by an error (an error return when none is)
          if (!graph && drv.cuStreamEndCapture(stream, &partial) == CUDA_SUCCESS && partial)
            drv.cuGraphDestroy(partial);
        }
        for (CUevent e : events)
          if (e)
            drv.cuEventDestroy(e);
        if (exec)
          drv.cuGraphExecDestroy(exec);
        if (graph)
          drv.cuGraphDestroy(graph);
        if (stream)
          drv.cuStreamDestroy(stream);
      }
    } own{drv};
    drv.check(drv.cuStreamCreate(&own.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    drv.check(drv.cuEventCreate(&own.events[0], 0), "cuEventCreate");
    drv.check(drv.cuEventCreate(&own.events[1], 0), "cuEventCreate");
    dO.fill16(0x7FC1);
    dHt.fill32(0x7FC00001);
    drv.check(drv.cuStreamBeginCapture(own.stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
    fwd(args, ws.ptr(), wsBytes, own.stream);
    drv.check(drv.cuStreamEndCapture(own.stream, &own.graph), "cuStreamEndCapture");
    drv.check(drv.cuGraphInstantiate(&own.exec, own.graph, 0), "cuGraphInstantiate");
    drv.check(drv.cuGraphLaunch(own.exec, own.stream), "cuGraphLaunch");
    drv.check(drv.cuStreamSynchronize(own.stream), "graph replay");
    std::vector<uint16_t> replayBits(oCount);
    dO.download(replayBits.data(), oCount * 2);
    std::vector<float> replayHt(ht.size());
    dHt.download(replayHt.data(), replayHt.size() * 4);
    r.graphIdentical = replayBits == oBits &&
                       std::memcmp(replayHt.data(), ht.data(), ht.size() * sizeof(float)) == 0;
    auto median = [&](CUstream stream, const std::function<void()> &launch) {
      std::vector<float> times;
      for (int i = 0; i < timedIters; ++i) {
        drv.check(drv.cuEventRecord(own.events[0], stream), "record");
        launch();
        drv.check(drv.cuEventRecord(own.events[1], stream), "record");
        drv.check(drv.cuEventSynchronize(own.events[1]), "sync");
        float v = 0;
        drv.check(drv.cuEventElapsedTime(&v, own.events[0], own.events[1]), "elapsed");
        times.push_back(v);
      }
      std::sort(times.begin(), times.end());
      return static_cast<double>(times[times.size() / 2]);
    };
    r.graphMs = median(own.stream, [&] { drv.check(drv.cuGraphLaunch(own.exec, own.stream), "cuGraphLaunch"); });
    if (timePlain) {
      for (int w = 0; w < 3; ++w)
        launchAll();
      r.ms = median(nullptr, launchAll);
    }
    r.pass = r.pass && r.graphIdentical;
  }
  return r;
}

} // namespace qla::gdn

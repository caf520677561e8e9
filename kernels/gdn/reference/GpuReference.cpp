#include "gdn/reference/GpuReference.h"

#include <fmt/format.h>

#include <memory>
#include <string>

#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/KernelRegistry.h"
#include "qla/runtime/Launch.h"
#include "qla/runtime/Module.h"

namespace qla::gdn {

namespace {

constexpr std::string_view kWho = "gdn gpu reference";
constexpr unsigned kWarps = 4, kColsPerWarp = 4; // must match WARPS and COLS below

// One block per (sequence, value head, 16 value columns); each warp owns 4 columns of the K×V
// state, each lane rows lane, lane + 32, … of them, in registers. The columns of S evolve
// independently, so warps never talk; a lane's partial dot products are summed with shuffles.
constexpr const char* kSource = R"(
#ifndef QLA_GDN_ROWS
#error "QLA_GDN_ROWS (state rows per lane, ceil(K / 32)) must be defined"
#endif
#define ROWS QLA_GDN_ROWS
#define WARPS 4
#define COLS 4

// Every member is 8 bytes, so the host mirror has the same layout.
struct GdnParams {
  const double *q, *k, *v, *g, *beta, *a, *b, *aLog, *dtBias, *h0;
  double *o, *ht;
  const long long* cuSeqlens; // null: B sequences of T tokens
  long long T, H, HV, K, V, l2norm, stateVFirst, gateInKernel;
  double scale;
};

__device__ double warpSum(double x) {
  for (int offset = 16; offset > 0; offset >>= 1)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ long long stateIndex(const GdnParams& p, long long i, long long j) {
  return p.stateVFirst ? j * p.K + i : i * p.V + j;
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) gdn_reference(GdnParams p) {
  const long long n = blockIdx.x / p.HV, hv = blockIdx.x % p.HV, h = hv / (p.HV / p.H);
  const int lane = threadIdx.x & 31;
  const long long col0 = ((long long)blockIdx.y * WARPS + (threadIdx.x >> 5)) * COLS;
  if (col0 >= p.V)
    return;
  const long long bos = p.cuSeqlens ? p.cuSeqlens[n] : n * p.T;
  const long long eos = p.cuSeqlens ? p.cuSeqlens[n + 1] : bos + p.T;
  const long long base = (n * p.HV + hv) * p.K * p.V;

  double s[ROWS][COLS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      const long long i = lane + 32 * r, j = col0 + c;
      s[r][c] = p.h0 && i < p.K && j < p.V ? p.h0[base + stateIndex(p, i, j)] : 0.0;
    }

  for (long long t = bos; t < eos; ++t) {
    const double* qRow = p.q + (t * p.H + h) * p.K;
    const double* kRow = p.k + (t * p.H + h) * p.K;
    double qr[ROWS], kr[ROWS], qq = 0, kk = 0;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const long long i = lane + 32 * r;
      qr[r] = i < p.K ? qRow[i] : 0.0;
      kr[r] = i < p.K ? kRow[i] : 0.0;
      qq += qr[r] * qr[r];
      kk += kr[r] * kr[r];
    }
    if (p.l2norm) {
      const double qInv = 1.0 / sqrt(warpSum(qq) + 1e-6), kInv = 1.0 / sqrt(warpSum(kk) + 1e-6);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        qr[r] *= qInv;
        kr[r] *= kInv;
      }
    }
    const long long ti = t * p.HV + hv;
    double g, beta;
    if (p.gateInKernel) {
      const double x = p.a[ti] + p.dtBias[hv];
      g = -exp(p.aLog[hv]) * (x > 20.0 ? x : log1p(exp(x)));
      beta = 1.0 / (1.0 + exp(-p.b[ti]));
    } else {
      g = p.g[ti];
      beta = p.beta[ti];
    }
    const double decay = exp(g);
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      const long long j = col0 + c;
      double sk = 0;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        s[r][c] *= decay;
        sk += s[r][c] * kr[r];
      }
      sk = warpSum(sk);
      const double u = beta * ((j < p.V ? p.v[ti * p.V + j] : 0.0) - sk);
      double sq = 0;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        s[r][c] += kr[r] * u;
        sq += s[r][c] * qr[r];
      }
      sq = warpSum(sq);
      if (lane == 0 && j < p.V)
        p.o[ti * p.V + j] = p.scale * sq;
    }
  }

  if (!p.ht)
    return;
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      const long long i = lane + 32 * r, j = col0 + c;
      if (i < p.K && j < p.V)
        p.ht[base + stateIndex(p, i, j)] = s[r][c];
    }
}
)";

struct GdnParams {
  CUdeviceptr q, k, v, g, beta, a, b, aLog, dtBias, h0;
  CUdeviceptr o, ht;
  CUdeviceptr cuSeqlens;
  std::int64_t T, H, HV, K, V, l2norm, stateVFirst, gateInKernel;
  double scale;
};
static_assert(sizeof(GdnParams) == 22 * 8, "GdnParams must match the CUDA struct");

std::int64_t rowsPerLane(std::int64_t K) { return (K + 31) / 32; }

void checkPointer(std::string_view arg, CUdeviceptr ptr, bool used, std::int64_t count,
                  std::string_view unusedWhy) {
  if (used && count > 0 && ptr == 0)
    throw Error(fmt::format("{}: argument '{}': expected a device pointer, got 0", kWho, arg));
  if (!used && ptr != 0)
    throw Error(fmt::format("{}: argument '{}': expected 0 ({}), got a pointer", kWho, arg,
                            unusedWhy));
}

void requireGpu() {
  const Driver& drv = Driver::get();
  if (!drv.available())
    throw Error(fmt::format("{}: needs a GPU: {}", kWho, drv.unavailableReason()));
}

CUfunction loadKernel(std::int64_t K) {
  const std::string key = fmt::format("qla.gdn.gpu_reference.rows{}", rowsPerLane(K));
  return KernelRegistry::instance().getOrLoad(key, [K] {
    const NvrtcResult compiled = compileGdnGpuReference(K);
    auto module = std::make_shared<const LoadedModule>(compiled.ptx, "gdn_gpu_reference");
    return RegisteredKernel{module->function("gdn_reference"), module};
  });
}

} // namespace

std::string_view gdnGpuReferenceSource() { return kSource; }

NvrtcResult compileGdnGpuReference(std::int64_t K) {
  if (K <= 0)
    throw Error(fmt::format("{}: argument 'K': expected a positive value, got {}", kWho, K));
  return compileCudaToPtx(kSource, "gdn_gpu_reference.cu",
                          {fmt::format("-DQLA_GDN_ROWS={}", rowsPerLane(K))});
}

void gdnGpuReference(const GdnProblem& p, const GdnDevicePointers& d, CUstream stream) {
  validateGdnProblem(p, kWho);
  const std::int64_t tokens = p.B * p.T, gate = p.gateInKernel;
  checkPointer("q", d.q, true, tokens * p.H * p.K, "");
  checkPointer("k", d.k, true, tokens * p.H * p.K, "");
  checkPointer("v", d.v, true, tokens * p.HV * p.V, "");
  checkPointer("g", d.g, !gate, tokens * p.HV, "gate computed in kernel");
  checkPointer("beta", d.beta, !gate, tokens * p.HV, "gate computed in kernel");
  checkPointer("a", d.a, gate, tokens * p.HV, "gate not computed in kernel");
  checkPointer("b", d.b, gate, tokens * p.HV, "gate not computed in kernel");
  checkPointer("A_log", d.aLog, gate, p.HV, "gate not computed in kernel");
  checkPointer("dt_bias", d.dtBias, gate, p.HV, "gate not computed in kernel");
  checkPointer("initial_state", d.initialState, p.useInitialState, 1, "useInitialState is false");
  checkPointer("o", d.o, true, tokens * p.HV * p.V, "");
  checkPointer("final_state", d.finalState, p.outputFinalState, 1, "outputFinalState is false");
  requireGpu();

  Driver& drv = Driver::get();
  drv.ensureContext();
  const CUfunction function = loadKernel(p.K);
  DeviceBuffer cuSeqlens;
  if (p.varlen()) {
    cuSeqlens = DeviceBuffer(p.cuSeqlens.size() * sizeof(std::int64_t));
    cuSeqlens.upload(p.cuSeqlens.data(), cuSeqlens.size());
  }
  GdnParams params{d.q,  d.k,    d.v,         d.g,          d.beta,   d.a,
                   d.b,  d.aLog, d.dtBias,    d.initialState,
                   d.o,  d.finalState,        cuSeqlens.ptr(),
                   p.T,  p.H,    p.HV,        p.K,          p.V,      p.l2normQK,
                   p.stateVFirst,              gate,         p.resolvedScale()};
  void* args[] = {&params};
  LaunchConfig config;
  const std::int64_t colsPerBlock = kWarps * kColsPerWarp;
  config.grid[0] = static_cast<std::uint32_t>(p.numSequences() * p.HV);
  config.grid[1] = static_cast<std::uint32_t>((p.V + colsPerBlock - 1) / colsPerBlock);
  config.block[0] = 32 * kWarps;
  config.stream = stream;
  launch(function, config, args, "gdn_reference");
  drv.check(drv.cuStreamSynchronize(stream), "gdn gpu reference: cuStreamSynchronize");
}

GdnOutputs gdnGpuReference(const GdnProblem& p, const GdnInputs& in) {
  validateGdn(p, in, kWho);
  requireGpu();
  GdnOutputs out;
  out.o = Tensor({p.B, p.T, p.HV, p.V});
  if (p.outputFinalState)
    out.finalState = Tensor(p.stateShape());

  std::vector<DeviceBuffer> inputs;
  inputs.reserve(10);
  auto upload = [&](const Tensor& t) -> CUdeviceptr {
    if (t.data.empty())
      return 0;
    inputs.emplace_back(t.data.size() * sizeof(double));
    inputs.back().upload(t.data.data(), inputs.back().size());
    return inputs.back().ptr();
  };
  // NaN in every element (0x7ff80000 in each 32-bit half), so that one left unwritten shows.
  auto poisoned = [](const Tensor& t) {
    DeviceBuffer buffer(t.data.size() * sizeof(double));
    if (buffer.size() > 0)
      buffer.fill32(0x7ff80000u);
    return buffer;
  };
  DeviceBuffer o = poisoned(out.o), finalState = poisoned(out.finalState);
  GdnDevicePointers d;
  d.q = upload(in.q);
  d.k = upload(in.k);
  d.v = upload(in.v);
  d.g = upload(in.g);
  d.beta = upload(in.beta);
  d.a = upload(in.a);
  d.b = upload(in.b);
  d.aLog = upload(in.aLog);
  d.dtBias = upload(in.dtBias);
  d.initialState = upload(in.initialState);
  d.o = o.ptr();
  d.finalState = finalState.ptr();
  gdnGpuReference(p, d, nullptr);

  if (o.size() > 0)
    o.download(out.o.data.data(), o.size());
  if (finalState.size() > 0)
    finalState.download(out.finalState.data.data(), finalState.size());
  return out;
}

} // namespace qla::gdn

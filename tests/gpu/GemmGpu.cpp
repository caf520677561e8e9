// GPU check and timing of AOT-compiled GEMM kernels (qlac compile output): fresh random inputs,
// output poisoned first, every element checked against a reference, then CUDA-event timing.
// Needs only the runtime (no MLIR). Usage:
//   qla_gpu_gemm DIR... [--json OUT.json] [--bench] [--iters N] [--timeout SECONDS]
// Each DIR holds manifest.json + kernel.cubin for one (M, N, K, tile) config.
#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"
#include "qla/runtime/Module.h"
#include "qla/runtime/Nvrtc.h"

#include "Watchdog.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

using namespace qla;

namespace {

// The reference: one thread per C element, fp32 accumulation of bf16 products, no tiling tricks.
const char *kReferenceGemm = R"(
#include <cuda_bf16.h>
extern "C" __global__ void reference_gemm_abt(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C,
                                              int M, int N, int K) {
  int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
  if (n >= N || m >= M) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += __bfloat162float(A[(size_t)m * K + k]) * __bfloat162float(B[(size_t)n * K + k]);
  C[(size_t)m * N + n] = acc;
}
)";

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
float fromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Shape {
  int64_t M, N, K;
};

Shape shapeOf(const Json &manifest) {
  const Json &params = manifest.at("params");
  auto a = params.at(0).at("shape"), b = params.at(1).at("shape");
  return {a.at(0).asInt(), b.at(0).asInt(), a.at(1).asInt()};
}

std::string readFile(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> dirs;
  std::string jsonOut;
  bool bench = false;
  int iters = 100;
  double timeout = 300; // seconds a config may take (check and timing) before it counts as a hang
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonOut = argv[++i];
    else if (a == "--bench")
      bench = true;
    else if (a == "--iters" && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (a == "--timeout" && i + 1 < argc)
      timeout = std::atof(argv[++i]);
    else
      dirs.push_back(a);
  }
  Driver &drv = Driver::get();
  if (!drv.available()) {
    fmt::print("qla_gpu_gemm: {}; nothing to run\n", drv.unavailableReason());
    return 0;
  }
  int failures = 0;
  Json rows = Json::array();
  try {
    drv.ensureContext();
    NvrtcResult ref = compileCudaToPtx(kReferenceGemm, "reference_gemm.cu", defaultNvrtcOptions());
    LoadedModule refModule(ref.ptx, "reference_gemm");
    CUfunction refFn = refModule.function("reference_gemm_abt");
    std::random_device rd;
    qla::testing::Watchdog watchdog(timeout);
    for (const std::string &dir : dirs) {
      watchdog.step("gemm " + dir);
      auto kernel = CompiledKernel::fromDirectory(dir);
      Json manifest = Json::parse(readFile(dir + "/manifest.json"));
      Shape s = shapeOf(manifest);
      unsigned seed = rd();
      std::mt19937 gen(seed);
      std::normal_distribution<float> dist(0.f, 1.f);
      std::vector<uint16_t> a(s.M * s.K), b(s.N * s.K), c(s.M * s.N);
      for (auto &x : a) x = toBf16(dist(gen));
      for (auto &x : b) x = toBf16(dist(gen));
      DeviceBuffer dA(a.size() * 2), dB(b.size() * 2), dC(c.size() * 2), dRef(c.size() * 4);
      dA.upload(a.data(), a.size() * 2);
      dB.upload(b.data(), b.size() * 2);
      dC.fill16(0x7FC1); // bf16 NaN: an element the kernel did not write stays NaN
      std::vector<TensorArg> args{{dA.ptr(), DType::bf16, {s.M, s.K}, {}},
                                  {dB.ptr(), DType::bf16, {s.N, s.K}, {}},
                                  {dC.ptr(), DType::bf16, {s.M, s.N}, {}}};
      kernel->launch(args);
      drv.check(drv.cuCtxSynchronize(), "gemm");
      dC.download(c.data(), c.size() * 2);

      // fp32 GPU reference for every element, plus float64 CPU dot products on a sample.
      int M = int(s.M), N = int(s.N), K = int(s.K);
      CUdeviceptr pa = dA.ptr(), pb = dB.ptr(), pr = dRef.ptr();
      void *refArgs[] = {&pa, &pb, &pr, &M, &N, &K};
      LaunchConfig rc;
      rc.grid[0] = unsigned((N + 255) / 256);
      rc.grid[1] = unsigned(M);
      rc.block[0] = 256;
      launch(refFn, rc, refArgs, "reference_gemm_abt");
      drv.check(drv.cuCtxSynchronize(), "reference gemm");
      std::vector<float> r(c.size());
      dRef.download(r.data(), r.size() * 4);
      size_t unwritten = 0;
      double num = 0, den = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        float v = fromBf16(c[i]);
        if (std::isnan(v)) { ++unwritten; continue; }
        num += (double(v) - r[i]) * (double(v) - r[i]);
        den += double(r[i]) * r[i];
      }
      double relL2 = std::sqrt(num / den);
      double sampleNum = 0, sampleDen = 0, refVsF64 = 0;
      std::uniform_int_distribution<int64_t> pickM(0, s.M - 1), pickN(0, s.N - 1);
      for (int t = 0; t < 4096; ++t) {
        int64_t m = pickM(gen), n = pickN(gen);
        double exact = 0;
        for (int64_t k = 0; k < s.K; ++k)
          exact += double(fromBf16(a[m * s.K + k])) * double(fromBf16(b[n * s.K + k]));
        double got = fromBf16(c[m * s.N + n]);
        sampleNum += (got - exact) * (got - exact);
        sampleDen += exact * exact;
        refVsF64 = std::max(refVsF64, std::abs(double(r[m * s.N + n]) - exact) / (std::sqrt(double(s.K)) + 1e-9));
      }
      double relL2F64 = std::sqrt(sampleNum / sampleDen);
      bool ok = unwritten == 0 && relL2 < 5e-3 && relL2F64 < 5e-3;
      failures += !ok;
      fmt::print("{} M={} N={} K={} seed={}: rel_l2 vs fp32 ref {:.2e}, vs float64 (4096 samples) {:.2e}, "
                 "unwritten {} -> {}\n",
                 dir, s.M, s.N, s.K, seed, relL2, relL2F64, unwritten, ok ? "PASS" : "FAIL");
      Json row = Json::object();
      row.set("kernel", "gemm");
      Json shape = Json::object();
      shape.set("M", s.M);
      shape.set("N", s.N);
      shape.set("K", s.K);
      row.set("shape", shape);
      row.set("config", manifest.contains("config") ? manifest.at("config") : Json());
      row.set("rel_l2_vs_fp32_reference", relL2);
      row.set("rel_l2_vs_float64_sampled", relL2F64);
      row.set("unwritten", static_cast<int64_t>(unwritten));
      row.set("pass", ok);
      if (bench && ok) {
        CUevent e0, e1;
        drv.check(drv.cuEventCreate(&e0, 0), "cuEventCreate");
        drv.check(drv.cuEventCreate(&e1, 0), "cuEventCreate");
        for (int w = 0; w < 10; ++w)
          kernel->launch(args);
        std::vector<double> ms;
        for (int it = 0; it < iters; ++it) {
          drv.check(drv.cuEventRecord(e0, nullptr), "cuEventRecord");
          kernel->launch(args);
          drv.check(drv.cuEventRecord(e1, nullptr), "cuEventRecord");
          drv.check(drv.cuEventSynchronize(e1), "cuEventSynchronize");
          float t = 0;
          drv.check(drv.cuEventElapsedTime(&t, e0, e1), "cuEventElapsedTime");
          ms.push_back(t);
        }
        // Host overhead of a warm launch: validation, cached tensor maps, cuLaunchKernel.
        auto h0 = std::chrono::steady_clock::now();
        for (int it = 0; it < 1000; ++it)
          kernel->launch(args);
        double hostUs = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / 1000;
        drv.check(drv.cuCtxSynchronize(), "sync");
        double med = median(ms);
        double tflops = 2.0 * s.M * s.N * s.K / (med * 1e-3) / 1e12;
        fmt::print("  median {:.4f} ms over {} runs, {:.1f} TFLOP/s; host overhead per warm launch {:.2f} us\n", med,
                   iters, tflops, hostUs);
        row.set("ms", med);
        row.set("tflops", tflops);
        row.set("host_launch_us", hostUs);
        drv.cuEventDestroy(e0);
        drv.cuEventDestroy(e1);
      }
      rows.push_back(std::move(row));
    }
  } catch (const Error &e) {
    fmt::print("qla_gpu_gemm: error: {}\n", e.what());
    return 1;
  }
  if (!jsonOut.empty()) {
    std::ofstream(jsonOut) << rows.dump() << "\n";
  }
  fmt::print("{} passed, {} failed\n", dirs.size() - failures, failures);
  return failures ? 1 : 0;
}

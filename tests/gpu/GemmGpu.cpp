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
#include "gemm/GemmCheck.h"

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
    std::random_device rd;
    qla::testing::Watchdog watchdog(timeout);
    for (const std::string &dir : dirs) {
      watchdog.step("gemm " + dir);
      auto kernel = CompiledKernel::fromDirectory(dir);
      Json manifest = Json::parse(readFile(dir + "/manifest.json"));
      Shape s = shapeOf(manifest);
      unsigned seed = rd();
      kernels::GemmCheck r = kernels::checkGemm(*kernel, s.M, s.N, s.K, seed, bench ? iters : 0);
      failures += !r.pass;
      fmt::print("{} M={} N={} K={} seed={}: rel_l2 vs fp32 ref {:.2e}, vs float64 (4096 samples) {:.2e}, "
                 "unwritten {} -> {}\n",
                 dir, s.M, s.N, s.K, seed, r.relL2, r.relL2Float64, r.unwritten, r.pass ? "PASS" : "FAIL");
      Json row = Json::object();
      row.set("kernel", "gemm");
      Json shape = Json::object();
      shape.set("M", s.M);
      shape.set("N", s.N);
      shape.set("K", s.K);
      row.set("shape", shape);
      row.set("config", manifest.contains("config") ? manifest.at("config") : Json());
      row.set("rel_l2_vs_fp32_reference", r.relL2);
      row.set("rel_l2_vs_float64_sampled", r.relL2Float64);
      row.set("unwritten", static_cast<int64_t>(r.unwritten));
      row.set("pass", r.pass);
      if (r.ms > 0) {
        double tflops = 2.0 * s.M * s.N * s.K / (r.ms * 1e-3) / 1e12;
        fmt::print("  median {:.4f} ms over {} runs, {:.1f} TFLOP/s; host overhead per warm launch {:.2f} us\n", r.ms,
                   iters, tflops, r.hostLaunchUs);
        row.set("ms", r.ms);
        row.set("tflops", tflops);
        row.set("host_launch_us", r.hostLaunchUs);
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

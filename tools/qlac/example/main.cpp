// qlac's ahead-of-time example: a program that links only the runtime (qla_runtime: no MLIR, no LLVM)
// and launches a kernel through the header `qlac compile` wrote (CMake runs qlac at build time):
// the GEMM C = A·Bᵀ, 256³ bf16, from the class qla::aot::Gemm with its cubin embedded.
// Without a GPU it checks the launcher's arguments against the embedded manifest (what every launch
// does first) and says so; with one it launches on random inputs and compares with a CPU product.
#include "gdn_cumsum.h"
#include "gemm.h"

#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr int kM = 256, kN = 256, kK = 256;

std::uint16_t toBf16(float f) { // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

float fromBf16(std::uint16_t h) {
  std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace

int main() {
  using qla::aot::Gemm;
  // Arguments are checked against the manifest before any launch: right shapes pass, a wrong one is
  // refused by name. Both need no GPU (the pointers are only checked for alignment here).
  qla::KernelSignature signature(qla::Json::parse(Gemm::kManifest));
  signature.validate(Gemm::arguments(0x10000, 0x20000, 0x30000));
  try {
    auto wrong = Gemm::arguments(0x10000, 0x20000, 0x30000);
    wrong[2].shape = {kM, kN + 1};
    signature.validate(wrong);
    std::puts("aot example: a wrong shape was accepted");
    return 1;
  } catch (const qla::Error &e) {
    std::printf("aot example: %s %s: launcher arguments match the embedded manifest; a wrong C is refused (%s)\n",
                std::string(Gemm::kKernel).c_str(), std::string(Gemm::kConfig).c_str(), e.what());
  }
  // A launcher with extents given at launch (rows of a packed batch) and grid dimensions to match.
  using qla::aot::GdnCumsum;
  const std::int64_t tokens = 1000, sequences = 2;
  qla::KernelSignature(qla::Json::parse(GdnCumsum::kManifest))
      .validate(GdnCumsum::arguments(0x10000, sequences + 1, 0x20000, tokens, 0x30000, tokens));
  if (GdnCumsum::grid(sequences, (tokens + 63) / 64) != std::array<std::uint32_t, 3>{0, 2, 16}) {
    std::puts("aot example: gdn_cumsum's launch grid is wrong");
    return 1;
  }
  qla::Driver &drv = qla::Driver::get();
  if (!drv.available()) {
    std::printf("aot example: %s; no launch\n", drv.unavailableReason().c_str());
    return 0;
  }
  drv.ensureContext();
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::uint16_t> a(kM * kK), b(kN * kK), c(kM * kN);
  for (auto &x : a)
    x = toBf16(dist(gen));
  for (auto &x : b)
    x = toBf16(dist(gen));
  qla::DeviceBuffer dA(a.size() * 2), dB(b.size() * 2), dC(c.size() * 2);
  dA.upload(a.data(), a.size() * 2);
  dB.upload(b.data(), b.size() * 2);
  dC.fill16(0x7FC0); // NaN: every element must be written
  Gemm gemm;
  gemm(dA.ptr(), dB.ptr(), dC.ptr());
  drv.check(drv.cuCtxSynchronize(), "aot example: synchronize");
  dC.download(c.data(), c.size() * 2);
  double worst = 0;
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      double ref = 0;
      for (int k = 0; k < kK; ++k)
        ref += double(fromBf16(a[m * kK + k])) * fromBf16(b[n * kK + k]);
      double got = fromBf16(c[m * kN + n]);
      worst = std::max(worst, std::isnan(got) ? INFINITY : std::abs(got - ref) / (std::abs(ref) + 1.0));
    }
  std::printf("aot example: launched %s; worst error %.2e -> %s\n", std::string(Gemm::kKernel).c_str(), worst,
              worst <= 1e-2 ? "PASS" : "FAIL");
  return worst <= 1e-2 ? 0 : 1;
}

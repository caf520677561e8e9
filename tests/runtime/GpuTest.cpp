// Tests that need a GPU. Each one skips, saying why, where the driver reports none.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "qla/runtime/DeviceBuffer.h"
#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"
#include "qla/runtime/KernelRegistry.h"
#include "qla/runtime/Launch.h"
#include "qla/runtime/Module.h"
#include "qla/runtime/Nvjitlink.h"
#include "qla/runtime/Nvrtc.h"
#include "qla/runtime/TensorMap.h"

using Catch::Matchers::ContainsSubstring;

namespace {

#define REQUIRE_GPU()                                                                              \
  do {                                                                                             \
    if (!qla::Driver::get().available())                                                           \
      SKIP(qla::Driver::get().unavailableReason());                                                \
  } while (0)

constexpr const char* kKernels = R"(
extern "C" __global__ void scale(float* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

// Uses all of its dynamic shared memory: stage `count` floats, then sum them in a fixed order.
extern "C" __global__ void smem_sum(const float* in, float* out, int count) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < count; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < count; ++i) s += buf[i];
    out[0] = s;
  }
}

extern "C" __global__ void cluster_rank(unsigned* out) {
  unsigned rank, cluster;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = rank;
    out[2 * blockIdx.x + 1] = cluster;
  }
}

// Programmatic dependent launch: `slow_fill` lets its dependents launch at once, then writes
// x[i] = i + 1 only after spinning; `dependent_copy` (launched with programmatic stream
// serialization) waits for it first, so it must copy the new values, never the old.
extern "C" __global__ void slow_fill(int* x, int n) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const long long start = clock64();
  while (clock64() - start < 2000000) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = i + 1;
}

extern "C" __global__ void dependent_copy(const int* x, int* y, int n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

struct alignas(64) TmaDescriptor { unsigned long long opaque[16]; };

// Loads one 32x16 box of 16-bit elements at (x0, y0) with TMA and writes it out row-major.
extern "C" __global__ void tma_box(const __grid_constant__ TmaDescriptor desc, unsigned short* out,
                                   int x0, int y0) {
  constexpr int W = 32, H = 16;
  __shared__ alignas(128) unsigned short tile[W * H];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned barAddr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const unsigned tileAddr = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(barAddr));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("{\n .reg .b64 state;\n"
                 " mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}"
                 :: "r"(barAddr), "r"(W * H * 2) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(tileAddr), "l"(reinterpret_cast<unsigned long long>(&desc)), "r"(x0),
                    "r"(y0), "r"(barAddr) : "memory");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(barAddr) : "memory");
  }
  for (int i = threadIdx.x; i < W * H; i += blockDim.x) out[i] = tile[i];
}
)";

// Compiled once per process: NVRTC -> PTX -> nvJitLink -> cubin.
const std::string& kernelsCubin() {
  static const std::string cubin =
      qla::linkPtxToCubin(qla::compileCudaToPtx(kKernels, "kernels.cu").ptx, "sm_90a");
  return cubin;
}

} // namespace

TEST_CASE("gpu: device properties", "[runtime][gpu]") {
  REQUIRE_GPU();
  const qla::DeviceInfo info = qla::queryDevice(0);
  INFO(qla::toJson(info).dump());
  CHECK_FALSE(info.name.empty());
  CHECK(info.smCount > 0);
  CHECK(info.smemPerBlockOptin >= 48 * 1024);
  CHECK(info.l2Bytes > 0);
  CHECK(info.clockKHz > 0);
  CHECK(info.memClockKHz > 0);
  CHECK(info.ccMajor >= 7);
  CHECK(info.driverVersion >= 12000);
  CHECK(qla::toJson(info).at("sm_count").asInt() == info.smCount);
  CHECK_THROWS_WITH(qla::queryDevice(999), ContainsSubstring("device ordinal 999 is out of range"));
}

TEST_CASE("gpu: device buffers copy and fill", "[runtime][gpu]") {
  REQUIRE_GPU();
  constexpr std::size_t kCount = 1 << 18;
  std::vector<std::uint32_t> host(kCount);
  std::iota(host.begin(), host.end(), 12345u);
  qla::DeviceBuffer buffer(kCount * 4);
  CHECK(buffer.ptr() != 0);
  CHECK(buffer.size() == kCount * 4);
  buffer.upload(host.data(), host.size() * 4);
  std::vector<std::uint32_t> back(kCount, 0);
  buffer.download(back.data(), back.size() * 4);
  CHECK(back == host);

  buffer.fill32(0xdeadbeef);
  buffer.download(back.data(), back.size() * 4);
  CHECK(std::all_of(back.begin(), back.end(), [](std::uint32_t v) { return v == 0xdeadbeef; }));
  buffer.fill16(0xabcd);
  buffer.download(back.data(), back.size() * 4);
  CHECK(std::all_of(back.begin(), back.end(), [](std::uint32_t v) { return v == 0xabcdabcd; }));
  buffer.fill8(0x7f);
  buffer.download(back.data(), back.size() * 4);
  CHECK(std::all_of(back.begin(), back.end(), [](std::uint32_t v) { return v == 0x7f7f7f7f; }));

  CHECK_THROWS_WITH(buffer.upload(host.data(), kCount * 4 + 1), ContainsSubstring("do not fit"));
  qla::DeviceBuffer odd(3);
  CHECK_THROWS_WITH(odd.fill16(1), ContainsSubstring("not a multiple of 2"));
  CHECK_THROWS_WITH(odd.fill32(1), ContainsSubstring("not a multiple of 4"));

  qla::DeviceBuffer moved = std::move(buffer);
  CHECK(buffer.ptr() == 0);
  CHECK(moved.size() == kCount * 4);
}

TEST_CASE("gpu: NVRTC -> nvJitLink -> module -> launch", "[runtime][gpu]") {
  REQUIRE_GPU();
  auto module = std::make_shared<qla::LoadedModule>(kernelsCubin(), "kernels");
  CHECK_THROWS_WITH(module->function("nope"), "module 'kernels' has no kernel named 'nope'");

  CUfunction scale = qla::KernelRegistry::instance().getOrLoad("test/scale", [&] {
    return qla::RegisteredKernel{module->function("scale"), module};
  });
  REQUIRE(scale != nullptr);
  CHECK(qla::KernelRegistry::instance().find("test/scale") == scale);

  constexpr int n = 1000;
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), 0.0f);
  qla::DeviceBuffer x(n * sizeof(float));
  x.upload(host.data(), n * sizeof(float));
  CUdeviceptr ptr = x.ptr();
  float factor = 3.0f;
  int count = n;
  void* params[] = {&ptr, &factor, &count};
  qla::LaunchConfig config;
  config.grid[0] = (n + 255) / 256;
  config.block[0] = 256;
  qla::launch(scale, config, params, "scale");
  std::vector<float> back(n);
  x.download(back.data(), n * sizeof(float));
  for (int i = 0; i < n; ++i)
    REQUIRE(back[i] == 3.0f * static_cast<float>(i));

  // The driver can also JIT the PTX itself.
  qla::LoadedModule fromPtx(qla::compileCudaToPtx(kKernels, "kernels.cu").ptx, "kernels-ptx");
  qla::launch(fromPtx.function("scale"), config, params, "scale");
  x.download(back.data(), n * sizeof(float));
  CHECK(back[10] == 90.0f);

  CHECK_THROWS_WITH(qla::LoadedModule("this is not PTX", "junk"),
                    ContainsSubstring("module 'junk': cuModuleLoadDataEx failed"));
  qla::KernelRegistry::instance().clear();
}

TEST_CASE("gpu: launches above 48 KiB of dynamic shared memory", "[runtime][gpu]") {
  REQUIRE_GPU();
  const qla::DeviceInfo info = qla::queryDevice();
  const std::uint32_t bytes = 200 * 1024;
  REQUIRE(static_cast<std::uint32_t>(info.smemPerBlockOptin) >= bytes);
  const int count = static_cast<int>(bytes / sizeof(float));
  std::vector<float> host(count);
  float expected = 0;
  for (int i = 0; i < count; ++i) {
    host[i] = static_cast<float>(i % 7);
    expected += host[i];
  }
  qla::DeviceBuffer in(bytes), out(sizeof(float));
  in.upload(host.data(), bytes);
  CUdeviceptr inPtr = in.ptr(), outPtr = out.ptr();
  int n = count;
  void* params[] = {&inPtr, &outPtr, &n};
  qla::LaunchConfig config;
  config.block[0] = 256;
  config.dynamicSmemBytes = bytes;

  // Fresh modules each round: the opt-in must be redone for every new function handle.
  for (int round = 0; round < 3; ++round) {
    qla::LoadedModule module(kernelsCubin(), "kernels");
    CUfunction f = module.function("smem_sum");
    out.fill32(0);
    qla::launch(f, config, params, "smem_sum");
    qla::launch(f, config, params, "smem_sum"); // opt-in already done
    float result = 0;
    out.download(&result, sizeof(float));
    CHECK(result == expected);

    qla::LaunchConfig tooBig = config;
    tooBig.dynamicSmemBytes = static_cast<std::uint32_t>(info.smemPerBlockOptin) + 1024;
    CHECK_THROWS_WITH(qla::launch(f, tooBig, params, "smem_sum"),
                      ContainsSubstring("launch of 'smem_sum'") &&
                          ContainsSubstring("the device's opt-in limit"));
  }
}

TEST_CASE("gpu: cluster launch", "[runtime][gpu]") {
  REQUIRE_GPU();
  qla::LoadedModule module(kernelsCubin(), "kernels");
  qla::DeviceBuffer out(16 * sizeof(std::uint32_t));
  out.fill32(0xffffffff);
  CUdeviceptr ptr = out.ptr();
  void* params[] = {&ptr};
  qla::LaunchConfig config;
  config.grid[0] = 8;
  config.block[0] = 32;
  config.cluster[0] = 2;
  qla::launch(module.function("cluster_rank"), config, params, "cluster_rank");
  std::vector<std::uint32_t> back(16);
  out.download(back.data(), back.size() * sizeof(std::uint32_t));
  for (std::uint32_t block = 0; block < 8; ++block) {
    CHECK(back[2 * block] == block % 2);
    CHECK(back[2 * block + 1] == block / 2);
  }
}

TEST_CASE("gpu: TMA descriptor loads a box with zero fill out of bounds", "[runtime][gpu]") {
  REQUIRE_GPU();
  constexpr int W = 72, H = 50, BoxW = 32, BoxH = 16;
  std::vector<std::uint16_t> host(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      host[y * W + x] = static_cast<std::uint16_t>(y * W + x + 1);
  qla::DeviceBuffer tensor(host.size() * 2), out(BoxW * BoxH * 2);
  tensor.upload(host.data(), host.size() * 2);

  qla::TensorMapSpec spec;
  spec.dtype = qla::DType::bf16;
  spec.globalDims = {W, H};
  spec.globalStridesBytes = {W * 2};
  spec.box = {BoxW, BoxH};
  spec.swizzleBytes = 0;
  CUtensorMap map =
      qla::encodeTensorMap(spec, reinterpret_cast<void*>(tensor.ptr()), "tma_box", "desc");

  qla::LoadedModule module(kernelsCubin(), "kernels");
  CUfunction f = module.function("tma_box");
  for (auto [x0, y0] : {std::pair{0, 0}, std::pair{56, 40}, std::pair{8, 3}}) {
    out.fill16(0xffff);
    CUdeviceptr outPtr = out.ptr();
    int x = x0, y = y0;
    void* params[] = {&map, &outPtr, &x, &y};
    qla::LaunchConfig config;
    config.block[0] = 128;
    qla::launch(f, config, params, "tma_box");
    std::vector<std::uint16_t> back(BoxW * BoxH);
    out.download(back.data(), back.size() * 2);
    int mismatches = 0;
    for (int r = 0; r < BoxH; ++r)
      for (int c = 0; c < BoxW; ++c) {
        const int gx = x0 + c, gy = y0 + r;
        const std::uint16_t want = (gx < W && gy < H) ? host[gy * W + gx] : 0;
        mismatches += back[r * BoxW + c] != want;
      }
    INFO("box at (" << x0 << ", " << y0 << ")");
    CHECK(mismatches == 0);
  }
}

TEST_CASE("gpu: streams and events through the driver table", "[runtime][gpu]") {
  REQUIRE_GPU();
  qla::Driver& drv = qla::Driver::get();
  drv.ensureContext();
  CUstream stream = nullptr;
  drv.check(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent start = nullptr, stop = nullptr;
  drv.check(drv.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  drv.check(drv.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");

  qla::LoadedModule module(kernelsCubin(), "kernels");
  constexpr int n = 1 << 20;
  qla::DeviceBuffer x(n * sizeof(float));
  x.fill32(0x3f800000); // 1.0f
  CUdeviceptr ptr = x.ptr();
  float factor = 2.0f;
  int count = n;
  void* params[] = {&ptr, &factor, &count};
  qla::LaunchConfig config;
  config.grid[0] = n / 256;
  config.block[0] = 256;
  config.stream = stream;
  drv.check(drv.cuEventRecord(start, stream), "cuEventRecord");
  qla::launch(module.function("scale"), config, params, "scale");
  drv.check(drv.cuEventRecord(stop, stream), "cuEventRecord");
  drv.check(drv.cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = -1;
  drv.check(drv.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  CHECK(ms >= 0.0f);
  drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize");
  float first = 0;
  x.download(&first, sizeof(float));
  CHECK(first == 2.0f);
  drv.check(drv.cuEventDestroy(start), "cuEventDestroy");
  drv.check(drv.cuEventDestroy(stop), "cuEventDestroy");
  drv.check(drv.cuStreamDestroy(stream), "cuStreamDestroy");
}

TEST_CASE("gpu: a dependent launch waits for the kernel before it, plainly and in a graph", "[runtime][gpu]") {
  REQUIRE_GPU();
  qla::Driver& drv = qla::Driver::get();
  drv.ensureContext();
  CUstream stream = nullptr;
  drv.check(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  qla::LoadedModule module(kernelsCubin(), "kernels");
  constexpr int n = 132 * 256;
  qla::DeviceBuffer x(n * sizeof(int)), y(n * sizeof(int)), other(sizeof(int));
  CUdeviceptr xp = x.ptr(), yp = y.ptr();
  int count = n;
  void* fillParams[] = {&xp, &count};
  void* copyParams[] = {&xp, &yp, &count};
  qla::LaunchConfig fill, copy;
  fill.grid[0] = copy.grid[0] = n / 256;
  fill.block[0] = copy.block[0] = 256;
  fill.stream = copy.stream = stream;
  copy.dependentLaunch = true;
  auto enqueue = [&](bool memsetBetween) {
    qla::launch(module.function("slow_fill"), fill, fillParams, "slow_fill");
    if (memsetBetween) // a non-kernel node between the two: ordinary stream order
      drv.check(drv.cuMemsetD32Async(other.ptr(), 7, 1, stream), "cuMemsetD32Async");
    qla::launch(module.function("dependent_copy"), copy, copyParams, "dependent_copy");
  };
  auto check = [&] {
    std::vector<int> back(n);
    y.download(back.data(), n * sizeof(int));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += back[i] != i + 1;
    return wrong;
  };
  auto reset = [&] { // on the legacy stream, which this non-blocking one does not wait for
    x.fill32(0);
    y.fill32(0xffffffff);
    drv.check(drv.cuCtxSynchronize(), "cuCtxSynchronize");
  };
  for (bool memsetBetween : {false, true}) {
    reset();
    enqueue(memsetBetween);
    drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize");
    CHECK(check() == 0);
  }
  // Captured into a graph and replayed.
  reset();
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  drv.check(drv.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  enqueue(true);
  drv.check(drv.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  drv.check(drv.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
  drv.check(drv.cuGraphLaunch(exec, stream), "cuGraphLaunch");
  drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize");
  CHECK(check() == 0);
  drv.check(drv.cuGraphExecDestroy(exec), "cuGraphExecDestroy");
  drv.check(drv.cuGraphDestroy(graph), "cuGraphDestroy");
  drv.check(drv.cuStreamDestroy(stream), "cuStreamDestroy");
}

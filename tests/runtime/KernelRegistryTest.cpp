#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "qla/runtime/Error.h"
#include "qla/runtime/KernelRegistry.h"

using Catch::Matchers::ContainsSubstring;
using qla::KernelRegistry;
using qla::RegisteredKernel;

namespace {

// The registry stores handles without dereferencing them, so distinct integers stand in for
// functions here; real ones need a GPU (see GpuTest.cpp).
CUfunction handle(std::uintptr_t n) { return reinterpret_cast<CUfunction>(n * 16 + 16); }

} // namespace

TEST_CASE("kernel registry finds what was inserted", "[runtime][registry]") {
  KernelRegistry registry;
  CHECK(registry.find("gemm/bf16/4096x1024") == nullptr);
  CHECK(registry.insert("gemm/bf16/4096x1024", RegisteredKernel{handle(1), nullptr}) == handle(1));
  CHECK(registry.find("gemm/bf16/4096x1024") == handle(1));
  CHECK(registry.find("gemm/bf16/4096x1000") == nullptr);
  // First insert wins.
  CHECK(registry.insert("gemm/bf16/4096x1024", RegisteredKernel{handle(2), nullptr}) == handle(1));
  CHECK(registry.size() == 1);
  CHECK_THROWS_WITH(registry.insert("x", RegisteredKernel{}),
                    ContainsSubstring("cannot register a null function under 'x'"));
  registry.clear();
  CHECK(registry.size() == 0);
  CHECK(registry.find("gemm/bf16/4096x1024") == nullptr);
}

TEST_CASE("kernel registry loads once per key when warm", "[runtime][registry]") {
  KernelRegistry registry;
  int loads = 0;
  auto load = [&] {
    ++loads;
    return RegisteredKernel{handle(7), nullptr};
  };
  CHECK(registry.getOrLoad("k", load) == handle(7));
  CHECK(registry.getOrLoad("k", load) == handle(7));
  CHECK(loads == 1);
  // A throwing loader registers nothing.
  CHECK_THROWS_AS(registry.getOrLoad("bad", []() -> RegisteredKernel { throw qla::Error("boom"); }),
                  qla::Error);
  CHECK(registry.find("bad") == nullptr);
}

TEST_CASE("kernel registry under concurrent lookups and inserts", "[runtime][registry]") {
  KernelRegistry registry;
  constexpr int kThreads = 8;
  constexpr int kKeys = 200;
  std::atomic<int> loads{0};
  std::vector<std::vector<CUfunction>> seen(kThreads, std::vector<CUfunction>(kKeys));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        const int key = (i * 7 + t * 13) % kKeys;
        seen[t][key] = registry.getOrLoad("kernel-" + std::to_string(key), [&, t, key] {
          ++loads;
          // Each thread would register its own handle; only one may win.
          return RegisteredKernel{handle(std::uintptr_t(key) * kThreads + t), nullptr};
        });
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  CHECK(registry.size() == kKeys);
  CHECK(loads >= kKeys);
  for (int key = 0; key < kKeys; ++key) {
    const CUfunction registered = registry.find("kernel-" + std::to_string(key));
    REQUIRE(registered != nullptr);
    for (int t = 0; t < kThreads; ++t)
      CHECK(seen[t][key] == registered);
  }
}

TEST_CASE("the process-wide registry is one object", "[runtime][registry]") {
  CHECK(&KernelRegistry::instance() == &KernelRegistry::instance());
}

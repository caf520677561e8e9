// The launch path's host work on a warm kernel: argument validation allocates nothing, and costs a
// small fraction of the 5 µs a launch's host overhead may take (issue 6). Operator new is counted here
// for the whole binary, only while a test asks for it.
#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/Json.h"

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <cstdlib>
#include <new>

namespace {
thread_local bool counting = false;
thread_local long allocations = 0;
} // namespace

void *operator new(std::size_t n) {
  if (counting)
    ++allocations;
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

TEST_CASE("a warm kernel's argument validation allocates nothing and takes well under a microsecond",
          "[runtime][launch]") {
  // The manifest of a GDN-like kernel: dynamic rows, static columns, an index tensor.
  qla::Json manifest = qla::Json::parse(R"({"kernel": "k", "entry": "k", "grid": [32, -1, 1], "block": [128, 1, 1],
    "smem_bytes": 0, "params": [
      {"kind": "tensor", "name": "cu_seqlens", "dtype": "i64", "shape": [-1], "strides": [1]},
      {"kind": "tensor", "name": "q", "dtype": "bf16", "shape": [-1, 2048], "strides": [2048, 1]},
      {"kind": "tensor", "name": "state", "dtype": "f32", "shape": [-1, 128, 128], "strides": [16384, 128, 1]}]})");
  qla::KernelSignature signature(manifest);
  std::vector<qla::TensorArg> args{{0x1000, qla::DType::i64, {5}, {}},
                                   {0x2000, qla::DType::bf16, {32768, 2048}, {}},
                                   {0x3000, qla::DType::f32, {64, 128, 128}, {16384, 128, 1}}};
  signature.validate(args); // warm
  counting = true;
  allocations = 0;
  signature.validate(args);
  counting = false;
  CHECK(allocations == 0);
  // The check can fail: a wrong shape throws (and that path may allocate).
  args[1].shape = {32768, 2047};
  CHECK_THROWS(signature.validate(args));
  args[1].shape = {32768, 2048};
  const int n = 100000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    signature.validate(args);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
  INFO("validate: " << us << " µs");
  CHECK(us < 0.5);
}

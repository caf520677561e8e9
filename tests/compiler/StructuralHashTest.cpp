// The structural hash (the cache key's view of a kernel) depends on the program, not on the process
// history, value names or source locations.
#include "gemm/Gemm.h"

#include "qla/dsl/Kernel.h"

#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

using qla::dsl::DType;
using qla::dsl::Kernel;
using qla::kernels::buildGemm;
using qla::kernels::parseGemmConfig;

namespace {

std::string hashOf(const std::string &settings) { return buildGemm(parseGemmConfig(settings))->structuralHash(); }

bool isSha256Hex(const std::string &s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

TEST_CASE("the structural hash is stable across builds of the same config", "[hash]") {
  const std::string settings = "M=4096,N=4096,K=4096,BM=128,BN=256,stages=4";
  std::string first = hashOf(settings);
  CHECK(isSha256Hex(first));
  // Other kernels built in between do not change it.
  hashOf("M=1000,N=700,K=520");
  CHECK(hashOf(settings) == first);
  // Neither does the order of settings, or spelling out defaults.
  CHECK(hashOf("stages=4,BN=256,K=4096,N=4096,M=4096") == first);
  CHECK(hashOf("M=4096,N=4096,K=4096") == first);
}

TEST_CASE("the structural hash differs between configs", "[hash]") {
  std::set<std::string> hashes;
  const char *configs[] = {
      "M=4096,N=4096,K=4096",
      "M=4096,N=4096,K=4096,stages=3",
      "M=4096,N=4096,K=4096,BN=128",
      "M=4096,N=4096,K=4096,BM=64",
      "M=4096,N=4096,K=2048",
      "M=4096,N=2048,K=4096",
      "M=2048,N=4096,K=4096",
      "M=1000,N=700,K=520",
  };
  for (const char *c : configs)
    hashes.insert(hashOf(c));
  CHECK(hashes.size() == std::size(configs));
}

namespace {

// The same program, written at two places of this file (so with different source locations).
std::string smallKernelHashA() {
  Kernel k("small");
  auto A = k.tensor("A", {64, 64}, DType::f32);
  k.threads(128);
  k.store(k.fill({64, 64}, DType::f32, 1.0), A, {0, 0});
  return k.structuralHash();
}

std::string smallKernelHashB() {
  Kernel k("small");
  auto A = k.tensor("A", {64, 64}, DType::f32);
  k.threads(128);


  k.store(k.fill({64, 64}, DType::f32, 1.0), A, {0, 0});
  return k.structuralHash();
}

std::string smallKernelHashOtherValue() {
  Kernel k("small");
  auto A = k.tensor("A", {64, 64}, DType::f32);
  k.threads(128);
  k.store(k.fill({64, 64}, DType::f32, 2.0), A, {0, 0});
  return k.structuralHash();
}

} // namespace

TEST_CASE("source locations do not change the structural hash; constants do", "[hash]") {
  CHECK(smallKernelHashA() == smallKernelHashB());
  CHECK(smallKernelHashA() != smallKernelHashOtherValue());
}

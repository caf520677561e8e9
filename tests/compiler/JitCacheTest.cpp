// qla::dsl::buildKernel: DSL kernel -> PTX -> cubin (nvJitLink) -> disk cache; the second build of
// the same kernel is a cache hit. No GPU needed.
#include "TestUtil.h"
#include "gdn/forward/GdnForward.h"
#include "gemm/Gemm.h"

#include "qla/dsl/Jit.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Sha256.h"

#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>
#include <vector>
#include <fstream>
#include <string>

using qla::kernels::buildGemm;
using qla::kernels::parseGemmConfig;

TEST_CASE("the cache's version names the compiler's sources", "[jit][cache]") {
  // A changed pass or lowering (invisible to the tile IR's hash) must not be served code compiled before
  // it: the version carries a hash of the compiler's and the DSL's sources (cmake/CompilerHash.cmake).
  CHECK(std::regex_match(qla::dsl::cacheVersionTag(), std::regex(R"(qla-0\.1\.0-[0-9a-f]{16}\+sm_90a)")));
}

TEST_CASE("buildKernel compiles once, then hits the disk cache", "[jit][cache]") {
  qla::test::TempDir tmp;
  qla::DiskCache cache(tmp.path(), qla::dsl::cacheVersionTag());
  const std::string settings = "M=1024,N=1024,K=1024,BN=128,stages=3";

  auto kernel = buildGemm(parseGemmConfig(settings));
  qla::dsl::BuiltKernel first = qla::dsl::buildKernel(*kernel, cache);
  CHECK_FALSE(first.cacheHit);
  CHECK(first.key == qla::dsl::cacheKey(*kernel, {}));
  CHECK(first.entry.files.count("kernel.ptx") == 1);
  CHECK(first.entry.files.count("kernel.cubin") == 1);
  CHECK(first.entry.files.at("kernel.ptx").find(".target sm_90a") != std::string::npos);
  CHECK(first.entry.manifest.at("key").asString() == first.key);
  CHECK(first.entry.manifest.at("entry").asString() == "gemm");
  // <root>/<version>/<key>/{kernel.ptx, kernel.cubin, manifest.json}
  auto dir = tmp.path() / qla::dsl::cacheVersionTag() / first.key;
  CHECK(std::filesystem::is_regular_file(dir / "kernel.ptx"));
  CHECK(std::filesystem::is_regular_file(dir / "kernel.cubin"));
  CHECK(std::filesystem::is_regular_file(dir / "manifest.json"));
  CHECK(cache.keys() == std::vector<std::string>{first.key});

  // The same kernel object again, and a fresh build of the same config (as another process would).
  qla::dsl::BuiltKernel second = qla::dsl::buildKernel(*kernel, cache);
  CHECK(second.cacheHit);
  CHECK(second.key == first.key);
  CHECK(second.entry.files.at("kernel.cubin") == first.entry.files.at("kernel.cubin"));
  CHECK(second.entry.files.at("kernel.ptx") == first.entry.files.at("kernel.ptx"));

  auto rebuilt = buildGemm(parseGemmConfig(settings));
  qla::dsl::BuiltKernel third = qla::dsl::buildKernel(*rebuilt, cache);
  CHECK(third.cacheHit);
  CHECK(third.key == first.key);
  CHECK(second.seconds < first.seconds);

  // Another config is another entry.
  auto other = buildGemm(parseGemmConfig("M=1024,N=1024,K=1024,BN=128,stages=2"));
  qla::dsl::BuiltKernel fourth = qla::dsl::buildKernel(*other, cache);
  CHECK_FALSE(fourth.cacheHit);
  CHECK(fourth.key != first.key);
  CHECK(cache.keys().size() == 2);
}

TEST_CASE("a corrupt cache entry is rebuilt, not loaded", "[jit][cache]") {
  qla::test::TempDir tmp;
  qla::DiskCache cache(tmp.path(), qla::dsl::cacheVersionTag());
  auto kernel = buildGemm(parseGemmConfig("M=512,N=512,K=512,BM=64,BN=128,stages=2"));
  qla::dsl::BuiltKernel first = qla::dsl::buildKernel(*kernel, cache);
  REQUIRE_FALSE(first.cacheHit);
  auto ptxPath = tmp.path() / qla::dsl::cacheVersionTag() / first.key / "kernel.ptx";
  {
    std::string ptx = first.entry.files.at("kernel.ptx");
    ptx[ptx.size() / 2] ^= 1;
    std::ofstream(ptxPath, std::ios::binary | std::ios::trunc) << ptx;
  }
  qla::dsl::BuiltKernel again = qla::dsl::buildKernel(*kernel, cache);
  CHECK_FALSE(again.cacheHit);
  CHECK(again.entry.files.at("kernel.ptx") == first.entry.files.at("kernel.ptx"));
  CHECK(qla::dsl::buildKernel(*kernel, cache).cacheHit);
}

TEST_CASE("the GDN forward set loads from a warm disk cache in well under 20 ms (host side)", "[jit][cache][timing]") {
  // What a process does to get the four GDN forward kernels from a warm cache: build each DSL program,
  // hash its IR (the key), look the entry up and verify its checksums. (Loading the cubins into a CUDA
  // context comes on top on a GPU machine.)
  qla::test::TempDir tmp;
  qla::DiskCache cache(tmp.path(), qla::dsl::cacheVersionTag());
  auto config = qla::gdn::parseGdnForwardConfig("H=16,HV=32,K=128,V=128,BV=64,initial_state=1,final_state=1");
  auto all = [&] {
    std::vector<std::unique_ptr<qla::dsl::Kernel>> kernels;
    kernels.push_back(qla::gdn::buildGdnOffsets(config));
    kernels.push_back(qla::gdn::buildGdnCumsum(config));
    kernels.push_back(qla::gdn::buildGdnChunkInverse(config));
    kernels.push_back(qla::gdn::buildGdnChunkForward(config));
    return kernels;
  };
  for (auto &k : all())
    CHECK_FALSE(qla::dsl::buildKernel(*k, cache).cacheHit); // cold: compiled and published
  auto t0 = std::chrono::steady_clock::now();
  size_t bytes = 0;
  for (auto &k : all()) {
    qla::dsl::BuiltKernel built = qla::dsl::buildKernel(*k, cache);
    CHECK(built.cacheHit);
    bytes += built.entry.files.at("kernel.cubin").size();
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  WARN("GDN forward set (4 kernels, " << bytes << " B of cubin) from a warm disk cache: " << ms << " ms");
  CHECK(ms < 20);
}

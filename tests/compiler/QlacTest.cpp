// qlac's commands run as a user would: cache ls|verify|clear on a cache made here with qla::DiskCache,
// dump --after=sass through a stand-in for cuobjdump.
#include "TestUtil.h"

#include "qla/dsl/Jit.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/TuningDb.h"
#include "qla/runtime/Json.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <fstream>

using Catch::Matchers::ContainsSubstring;

TEST_CASE("qlac cache lists, verifies and clears the kernel cache", "[qlac][cache]") {
  qla::test::TempDir root;
  qla::DiskCache cache(root.path(), qla::dsl::cacheVersionTag());
  auto metadata = [](const std::string &kernel) {
    qla::Json m = qla::Json::object();
    m.set("kernel", kernel);
    m.set("config", "H=16,HV=32");
    return m;
  };
  const std::string good(64, 'a'), bad(64, 'b');
  cache.publish(good, {{"kernel.ptx", "// ptx of the good one"}}, metadata("gdn_chunk_forward"));
  cache.publish(bad, {{"kernel.ptx", "// ptx of the bad one"}}, metadata("gdn_cumsum"));
  std::ofstream(cache.dir() / bad / "kernel.ptx", std::ios::app) << "a flipped tail";
  const std::string qlac = std::string(QLA_QLAC) + " cache ";
  const std::string dir = " --dir " + root.path().string();

  auto ls = qla::test::runCommand(qlac + "ls" + dir);
  INFO(ls.output);
  CHECK(ls.status == 0);
  CHECK_THAT(ls.output, ContainsSubstring("2 entries"));
  CHECK_THAT(ls.output, ContainsSubstring(good) && ContainsSubstring("gdn_chunk_forward") &&
                            ContainsSubstring("H=16,HV=32"));

  auto verify = qla::test::runCommand(qlac + "verify" + dir);
  INFO(verify.output);
  CHECK(verify.status == 1);
  CHECK_THAT(verify.output, ContainsSubstring("ok   " + good) && ContainsSubstring("BAD  " + bad));
  auto fix = qla::test::runCommand(qlac + "verify --remove-bad" + dir);
  CHECK(fix.status == 0);
  CHECK_THAT(fix.output, ContainsSubstring("(removed)"));
  CHECK(qla::test::runCommand(qlac + "verify" + dir).status == 0);
  CHECK(cache.keys() == std::vector<std::string>{good});

  auto clear = qla::test::runCommand(qlac + "clear" + dir);
  CHECK(clear.status == 0);
  CHECK(cache.keys().empty());
  CHECK_THAT(qla::test::runCommand(qlac + "ls --all-versions" + dir).output, ContainsSubstring("0 entries"));
  auto unknown = qla::test::runCommand(qlac + "prune" + dir);
  CHECK(unknown.status != 0);
  CHECK_THAT(unknown.output, ContainsSubstring("unknown subcommand 'prune' (ls, verify, clear)"));
}

TEST_CASE("qlac dump --after=sass hands the cubin to cuobjdump -sass", "[qlac][dump]") {
  qla::test::TempDir tmp;
  // A stand-in cuobjdump: says how it was called and whether the file it got is an ELF (a cubin).
  auto tool = tmp.path() / "cuobjdump";
  std::ofstream(tool) << "#!/bin/sh\necho \"stand-in $1\"; head -c 4 \"$2\" | od -c | head -1\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  auto r = qla::test::runCommand("QLA_CUOBJDUMP=" + tool.string() + " " + QLA_QLAC +
                                 " dump gdn_cumsum --set H=1,HV=2 --after=sass");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, ContainsSubstring("stand-in -sass") && ContainsSubstring("E   L   F"));
  auto missing = qla::test::runCommand("PATH=/nonexistent QLA_CUOBJDUMP= " + std::string(QLA_QLAC) +
                                       " dump gdn_cumsum --set H=1,HV=2 --after=sass");
  if (!std::filesystem::exists("/usr/local/cuda/bin/cuobjdump") && !std::filesystem::exists("/usr/local/cuda/bin/nvdisasm")) {
    CHECK(missing.status != 0);
    CHECK_THAT(missing.output, ContainsSubstring("needs cuobjdump or nvdisasm"));
  }
}

TEST_CASE("qlac tune: candidates, what the database already holds, parallel compiles", "[qlac][tune]") {
  qla::test::TempDir tmp;
  auto dbFile = tmp.path() / "tuning.json";
  // A database that already holds the default config of one shape for a GPU.
  qla::TuningDb db = qla::TuningDb::load(dbFile);
  qla::DeviceInfo gpu{.name = "NVIDIA H200", .smCount = 132};
  db.record(gpu, {"gemm", "M=256,N=256,K=256", "M=256,N=256,K=256", 0.0104, 1e-3, true, "2026-12-03"});
  db.save(dbFile);
  const std::string key = qla::TuningDb::gpuKey(gpu);
  const std::string qlac = std::string(QLA_QLAC) + " tune gemm --db " + dbFile.string();

  // A changed candidate list: only what the database lacks for this GPU would be timed.
  auto dry = qla::test::runCommand(qlac + " --shapes 256x256x256 --candidates \"BN=128,stages=3;BN=300\" --dry-run "
                                          "--gpu '" + key + "'");
  INFO(dry.output);
  CHECK(dry.status == 0);
  CHECK_THAT(dry.output, ContainsSubstring("known M=256,N=256,K=256 ") &&
                             ContainsSubstring("would time M=256,N=256,K=256,BN=128,stages=3") &&
                             ContainsSubstring("skip BN=300 on M=256,N=256,K=256") &&
                             ContainsSubstring("1 run(s) of 1 config(s) to compile and time"));

  // Candidates compile in parallel (qlac compile processes) without a GPU.
  auto compile = qla::test::runCommand(qlac + " --shapes 256x256x256 --candidates \"BN=128,stages=3;BN=128,stages=2\" "
                                              "--compile-only --jobs 2");
  INFO(compile.output);
  CHECK(compile.status == 0);
  CHECK_THAT(compile.output, ContainsSubstring("compiled 3 of 3"));

  if (!qla::Driver::get().available()) {
    auto noGpu = qla::test::runCommand(qlac + " --shapes 256x256x256");
    CHECK(noGpu.status != 0);
    CHECK_THAT(noGpu.output, ContainsSubstring("tune needs a GPU to check and time"));
  }
}

TEST_CASE("qlac tune gdn: a package a config, shared by the shapes with its heads", "[qlac][tune]") {
  qla::test::TempDir tmp;
  auto dbFile = tmp.path() / "tuning.json";
  qla::TuningDb db = qla::TuningDb::load(dbFile);
  qla::DeviceInfo gpu{.name = "NVIDIA H200", .smCount = 132};
  db.record(gpu, {"gdn_forward", "H=1,HV=2,K=64,V=64,B=2,T=512", "H=1,HV=2,K=64,V=64,BV=64", 0.05, 3e-3, true,
                  "2026-12-03"});
  db.save(dbFile);
  const std::string qlac = std::string(QLA_QLAC) + " tune gdn --db " + dbFile.string();
  auto dry = qla::test::runCommand(qlac + " --shapes 1x2x2x512x64,1x2x1x4096x64 --candidates \"inverse_chunks=2;"
                                          "BV=96\" --dry-run --gpu '" + qla::TuningDb::gpuKey(gpu) + "'");
  INFO(dry.output);
  CHECK(dry.status == 0);
  CHECK_THAT(dry.output,
             ContainsSubstring("known H=1,HV=2,K=64,V=64,BV=64 for H=1,HV=2,K=64,V=64,B=2,T=512") &&
                 ContainsSubstring("would time H=1,HV=2,K=64,V=64,BV=64,inverse_chunks=2 on H=1,HV=2,K=64,V=64,B=2,T=512") &&
                 ContainsSubstring("would time H=1,HV=2,K=64,V=64,BV=64 on H=1,HV=2,K=64,V=64,B=1,T=4096") &&
                 ContainsSubstring("skip BV=96 on H=1,HV=2,K=64,V=64,B=2,T=512: gdn forward: BV = 96") &&
                 ContainsSubstring("3 run(s) of 2 config(s)"));
  auto bad = qla::test::runCommand(qlac + " --shapes 16x32 --dry-run");
  CHECK(bad.status != 0);
  CHECK_THAT(bad.output, ContainsSubstring("--shapes wants HxHVxBxT or HxHVxBxTxK, got '16x32'"));
  // Each config's package (the kernels ChunkForward::fromDirectory loads, the split's included) compiles.
  auto compile = qla::test::runCommand(qlac + " --shapes 1x2x1x4096x64 --candidates \"\" --compile-only --jobs 2");
  INFO(compile.output);
  CHECK(compile.status == 0);
  CHECK_THAT(compile.output, ContainsSubstring("compiled 1 of 1") && ContainsSubstring("(10 kernels, 2 jobs)"));
}

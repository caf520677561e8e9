// qlac cache ls|verify|clear on a cache made here with qla::DiskCache.
#include "TestUtil.h"

#include "qla/dsl/Jit.h"
#include "qla/runtime/DiskCache.h"
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

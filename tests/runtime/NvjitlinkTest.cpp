#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <regex>
#include <string>

#include "qla/runtime/Error.h"
#include "qla/runtime/Nvjitlink.h"

using Catch::Matchers::ContainsSubstring;

namespace {

constexpr const char* kEmptyKernelPtx = R"(.version 8.0
.target sm_90a
.address_size 64

.visible .entry k()
{
  ret;
}
)";

} // namespace

TEST_CASE("nvJitLink is loaded and reports its version", "[runtime][nvjitlink]") {
  std::string why;
  const bool available = qla::nvJitLinkAvailable(&why);
  INFO(why);
  REQUIRE(available);
  const std::string version = qla::nvJitLinkVersion();
  CHECK(std::regex_match(version, std::regex("[0-9]+\\.[0-9]+")));
}

TEST_CASE("nvJitLink links PTX to an sm_90a cubin", "[runtime][nvjitlink]") {
  std::string infoLog;
  const std::string cubin = qla::linkPtxToCubin(kEmptyKernelPtx, "sm_90a", &infoLog);
  REQUIRE(cubin.size() > 64);
  CHECK(cubin.substr(0, 4) == "\x7f" "ELF");
  // The kernel's name is in the ELF symbol table.
  CHECK(cubin.find(std::string("\0k\0", 3)) != std::string::npos);
  // The same input links to the same bytes: cache keys can rely on it.
  CHECK(qla::linkPtxToCubin(kEmptyKernelPtx, "sm_90a") == cubin);
}

TEST_CASE("nvJitLink errors carry the error log", "[runtime][nvjitlink]") {
  const std::string broken = R"(.version 8.0
.target sm_90a
.address_size 64

.visible .entry k()
{
  this_is_not_an_instruction;
  ret;
}
)";
  try {
    qla::linkPtxToCubin(broken, "sm_90a");
    FAIL("broken PTX linked");
  } catch (const qla::Error& e) {
    const std::string message = e.what();
    CHECK_THAT(message, ContainsSubstring("nvJitLink: linking PTX for sm_90a failed"));
    CHECK_THAT(message, ContainsSubstring("NVJITLINK_ERROR_PTX_COMPILE"));
    CHECK_THAT(message, ContainsSubstring("this_is_not_an_instruction"));
  }
}

TEST_CASE("linkPtxToCubin rejects bad arguments before calling nvJitLink", "[runtime][nvjitlink]") {
  CHECK_THROWS_WITH(qla::linkPtxToCubin(kEmptyKernelPtx, "compute_90a"),
                    ContainsSubstring("expected a real GPU architecture such as 'sm_90a', got "
                                      "'compute_90a'"));
  CHECK_THROWS_WITH(qla::linkPtxToCubin(kEmptyKernelPtx, "sm_"), ContainsSubstring("got 'sm_'"));
  CHECK_THROWS_WITH(qla::linkPtxToCubin("", "sm_90a"), ContainsSubstring("the PTX is empty"));
}

// QLA_DUMP_DIR: compiling a kernel writes the IR after every pass under $QLA_DUMP_DIR/<kernel>/.
#include "gemm/Gemm.h"

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

TEST_CASE("QLA_DUMP_DIR receives the IR after every pass", "[dsl]") {
  fs::path dir = fs::temp_directory_path() / ("qla-dump-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ::setenv("QLA_DUMP_DIR", dir.c_str(), 1);
  auto k = qla::kernels::buildGemm(qla::kernels::parseGemmConfig("M=256,N=256,K=128,BN=128,stages=2"));
  k->compile();
  ::unsetenv("QLA_DUMP_DIR");
  bool sawPipeline = false, sawNvvm = false;
  size_t files = 0;
  if (fs::exists(dir / "gemm"))
    for (const auto &e : fs::recursive_directory_iterator(dir / "gemm")) {
      if (!e.is_regular_file())
        continue;
      ++files;
      std::ifstream f(e.path());
      std::stringstream ss;
      ss << f.rdbuf();
      sawPipeline |= ss.str().find("qla.tma_load") != std::string::npos;
      sawNvvm |= ss.str().find("nvvm.wgmma.mma_async") != std::string::npos;
    }
  fs::remove_all(dir);
  CHECK(files >= 10); // one file per pass of the pipeline
  CHECK(sawPipeline); // the IR after qla-pipeline
  CHECK(sawNvvm);     // and after qla-convert-to-nvvm
}

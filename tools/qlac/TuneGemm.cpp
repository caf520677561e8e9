// qlac tune gemm: tile shapes, stages and warp specialization per MxNxK; each config checked and timed
// with kernels/gemm/GemmCheck.
#include "Tune.h"

#include "gemm/Gemm.h"
#include "gemm/GemmCheck.h"
#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <random>

namespace qlac {

namespace {

class GemmTuner final : public Tuner {
public:
  std::string name() const override { return "gemm"; }
  std::string shapeSyntax() const override { return "MxNxK"; }
  std::vector<std::string> defaultCandidates() const override {
    return {"",
            "BN=128,stages=3",
            "BN=128,stages=4",
            "BN=128,stages=5",
            "BN=256,stages=3",
            "BM=64,BN=128,stages=4",
            "specialize=1",
            "specialize=1,loads_regs=24,mma_regs=240",
            "BN=128,stages=4,specialize=1"};
  }
  std::string shapeKey(const std::string &item) const override {
    std::vector<int64_t> dims = parseDims(item);
    if (dims.size() != 3)
      throw qla::Error(fmt::format("tune gemm: --shapes wants MxNxK, got '{}'", item));
    return fmt::format("M={},N={},K={}", dims[0], dims[1], dims[2]);
  }
  std::string config(const std::string &shape, const std::string &candidate) const override {
    std::string config = mergeSettings(shape, candidate);
    (void)qla::kernels::buildGemm(qla::kernels::parseGemmConfig(config)); // validates the whole config
    return config;
  }
  std::vector<CompileJob> compileJobs(const std::string &config, const std::filesystem::path &dir) const override {
    return {{"gemm", config, dir}};
  }
  qla::TuningEntry measure(const std::string &shape, const std::string &config, const std::filesystem::path &dir,
                           int iters) override {
    qla::kernels::GemmConfig c = qla::kernels::parseGemmConfig(config);
    auto k = qla::CompiledKernel::fromDirectory(dir);
    qla::kernels::GemmCheck r = qla::kernels::checkGemm(*k, c.M, c.N, c.K, rd_(), iters);
    return {"gemm", shape, config, r.ms, r.relL2, r.pass, ""};
  }

private:
  std::random_device rd_;
};

} // namespace

std::unique_ptr<Tuner> makeGemmTuner() { return std::make_unique<GemmTuner>(); }

} // namespace qlac

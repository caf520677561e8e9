// qlac tune gdn: build settings of the GDN forward's kernel set (the inverse's register cap and chunks
// a block, the state kernel's value tile) per head shape and batch, each package checked against the
// float64 reference and timed as a CUDA-graph replay through qla::gdn::ChunkForward (the planner, the
// context split included, as a caller gets it; kernels/gdn/api/GdnCheck).
#include "Tune.h"

#include "gdn/api/ChunkForwardJit.h"
#include "gdn/api/GdnCheck.h"
#include "gdn/forward/GdnForward.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

namespace qlac {

namespace {

struct GdnShape {
  int64_t H, HV, B, T, K;
};

GdnShape parseGdnShapeKey(const std::string &key) {
  GdnShape s{0, 0, 0, 0, 0};
  std::stringstream ss(key);
  for (std::string item; std::getline(ss, item, ',');) {
    auto eq = item.find('=');
    int64_t v = std::stoll(item.substr(eq + 1));
    std::string k = item.substr(0, eq);
    (k == "H" ? s.H : k == "HV" ? s.HV : k == "B" ? s.B : k == "T" ? s.T : s.K) = v;
  }
  return s;
}

class GdnTuner final : public Tuner {
public:
  std::string name() const override { return "gdn_forward"; }
  std::string shapeSyntax() const override { return "HxHVxBxT[xK] (K = V, default 128)"; }
  std::vector<std::string> defaultCandidates() const override {
    // inverse_blocks_per_sm=4 won no shape of run 31 (17 shapes): left out to keep the tune short.
    // inverse_heads: the default takes 2 where HV / H is even (run 66); 1 is the candidate.
    // split_tokens: segment lengths other than the planner's for one long sequence (skipped elsewhere).
    return {"",           "inverse_blocks_per_sm=2", "inverse_chunks=2",    "inverse_heads=1",
            "BV=128,stages=2", "split_tokens=2048",       "split_tokens=4096"};
  }
  std::string shapeKey(const std::string &item) const override {
    std::vector<int64_t> d = parseDims(item);
    if (d.size() != 4 && d.size() != 5)
      throw qla::Error(fmt::format("tune gdn: --shapes wants HxHVxBxT or HxHVxBxTxK, got '{}'", item));
    const int64_t K = d.size() == 5 ? d[4] : 128;
    return fmt::format("H={},HV={},K={},V={},B={},T={}", d[0], d[1], K, K, d[2], d[3]);
  }
  std::string config(const std::string &shape, const std::string &candidate) const override {
    GdnShape s = parseGdnShapeKey(shape);
    std::string config =
        mergeSettings(fmt::format("H={},HV={},K={},V={},BV=64", s.H, s.HV, s.K, s.K), candidate);
    const qla::gdn::GdnForwardConfig c = qla::gdn::parseGdnForwardConfig(config); // validates the whole config
    if (candidate.find("inverse_heads=") != std::string::npos &&
        c.resolvedInverseHeads() == qla::gdn::parseGdnForwardConfig(mergeSettings(config, "inverse_heads=-1")).resolvedInverseHeads())
      throw qla::Error("the inverse's value heads a block are the default's (the same build)");
    if (c.splitTokens > 0 && (s.B != 1 || s.T < 2 * c.splitTokens))
      throw qla::Error("a segment length is tuned for one sequence at least two segments long");
    // At K = 256 the wide tile's q/k rings and the split's correction do not fit in shared memory: those
    // calls run the narrow tile unsplit (gdnForwardPackage), so neither is a candidate there.
    if (c.K > 128 && (c.stages >= 2 || c.splitTokens > 0))
      throw qla::Error("at K = 256 the state kernel runs narrow and unsplit (no TMA rings, no split_tokens)");
    return config;
  }
  std::string buildConfig(const std::string &config) const override {
    std::string kernels; // the config without split_tokens: the build of the config without it
    std::stringstream ss(config);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty() && item.rfind("split_tokens=", 0) != 0)
        kernels += (kernels.empty() ? "" : ",") + item;
    return kernels;
  }
  std::vector<CompileJob> compileJobs(const std::string &config, const std::filesystem::path &dir) const override {
    // The folder qla::gdn::ChunkForward::fromDirectory loads, with the planner's kernels (the wide state
    // kernel, the context split's): the set buildTunedChunkForward builds for a caller.
    const std::string states = mergeSettings(config, "initial_state=1,final_state=1");
    std::vector<CompileJob> jobs;
    for (const qla::gdn::GdnPackageKernel &k :
         qla::gdn::gdnForwardPackage(qla::gdn::parseGdnForwardConfig(states), /*plannerKernels=*/true))
      jobs.push_back({k.kernel, mergeSettings(states, k.settings), dir / k.folder});
    return jobs;
  }
  qla::TuningEntry measure(const std::string &shape, const std::string &config, const std::filesystem::path &dir,
                           int iters) override {
    qla::gdn::GdnForwardConfig c = qla::gdn::parseGdnForwardConfig(config);
    GdnShape s = parseGdnShapeKey(shape);
    auto start = std::chrono::steady_clock::now();
    auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    if (!case_ || caseShape_ != shape) { // one set of inputs and one reference a shape, for every config
      case_.reset();
      qla::gdn::GdnProblem p;
      p.B = s.B;
      p.T = s.T;
      p.H = s.H;
      p.HV = s.HV;
      p.K = p.V = s.K;
      p.useInitialState = p.outputFinalState = true;
      case_ = qla::gdn::makeGdnCase(p, {.seed = rd_(), .gate = qla::gdn::GdnGateKind::logsigmoid});
      caseShape_ = shape;
      fmt::print("  {}: inputs and float64 reference in {:.1f} s\n", shape, seconds());
      start = std::chrono::steady_clock::now();
    }
    qla::gdn::ChunkForward fwd = qla::gdn::ChunkForward::fromDirectory(
        dir, {c.H, c.HV, c.K, c.V, c.BV, c.gateInKernel, true, true, c.stateVFirst});
    if (c.splitTokens > 0) // the planner's segment length replaced, as buildTunedChunkForward does
      fwd.setSplitPolicy({.sms = 0, .segmentTokensWhenSplit = c.splitTokens});
    qla::gdn::GdnCheck r = qla::gdn::checkGdnForward(fwd, *case_, iters, /*timePlain=*/false);
    fmt::print("  {} on {}: checked and timed in {:.1f} s\n", config, shape, seconds());
    // The larger error, NaN if either is (std::max would hide a NaN in the second).
    const double error = std::isnan(r.errO) || std::isnan(r.errState) ? std::numeric_limits<double>::quiet_NaN()
                                                                       : std::max(r.errO, r.errState);
    return {"gdn_forward", shape, config, r.graphMs, error, r.pass, ""};
  }

private:
  std::random_device rd_;
  std::optional<qla::gdn::GdnCase> case_;
  std::string caseShape_;
};

} // namespace

std::unique_ptr<Tuner> makeGdnTuner() { return std::make_unique<GdnTuner>(); }

} // namespace qlac

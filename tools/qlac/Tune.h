// qlac tune: the flow shared by every tunable kernel (TuneCommand.cpp) and what each kernel supplies
// (a Tuner: TuneGemm.cpp, TuneGdn.cpp).
#ifndef QLA_TOOLS_QLAC_TUNE_H
#define QLA_TOOLS_QLAC_TUNE_H

#include "qla/runtime/TuningDb.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace qlac {

/// One `qlac compile KERNEL --set SETTINGS -o DIR`.
struct CompileJob {
  std::string kernel, settings;
  std::filesystem::path dir;
};

class Tuner {
public:
  virtual ~Tuner() = default;
  /// The kernel's name in the tuning database ("gemm", "gdn_forward").
  virtual std::string name() const = 0;
  virtual std::string shapeSyntax() const = 0; // for messages: "MxNxK"
  virtual std::vector<std::string> defaultCandidates() const = 0;
  /// The database's shape key for one --shapes item ("M=..,N=..,K=.."); throws qla::Error.
  virtual std::string shapeKey(const std::string &item) const = 0;
  /// The full config of a candidate (settings added to the shape's defaults), validated; throws qla::Error.
  virtual std::string config(const std::string &shape, const std::string &candidate) const = 0;
  /// What builds a config into `dir` (several kernels for a package).
  /// The part of a config its kernels are built from (configs that differ only in host-side settings,
  /// e.g. the GDN planner's segment length, share one build).
  virtual std::string buildConfig(const std::string &config) const { return config; }
  virtual std::vector<CompileJob> compileJobs(const std::string &config, const std::filesystem::path &dir) const = 0;
  /// Checks the build in `dir` against the reference on the GPU and times it (ms, error, pass).
  virtual qla::TuningEntry measure(const std::string &shape, const std::string &config,
                                   const std::filesystem::path &dir, int iters) = 0;
};

std::unique_ptr<Tuner> makeGemmTuner();
std::unique_ptr<Tuner> makeGdnTuner();

/// "4096x4096x512": the positive numbers between the x's; empty when the item is not that.
std::vector<int64_t> parseDims(const std::string &item);

/// "a=1,b=2" with "b=3,c=4" over it: "a=1,b=3,c=4" (keys in first-seen order).
std::string mergeSettings(const std::string &base, const std::string &over);

} // namespace qlac

#endif

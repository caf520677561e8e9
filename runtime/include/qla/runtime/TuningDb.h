// The tuning database `qlac tune` writes and planners read (docs/tuning.md): per GPU, per kernel and
// problem shape, every timed config with its median time and its check against the reference. A JSON
// file; MLIR-free.
#pragma once

#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Json.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace qla {

struct TuningEntry {
  std::string kernel; // e.g. "gemm"
  std::string shape;  // e.g. "M=4096,N=4096,K=4096"
  std::string config; // the qlac settings, e.g. "M=4096,N=4096,K=4096,BN=128,stages=3"
  double ms = 0;      // median of the timed launches
  double error = 0;   // relative L2 error against the reference
  bool pass = false;  // checked correct (every element written, error within the kernel's bound)
  std::string date;   // YYYY-MM-DD
};

class TuningDb {
public:
  /// The file's contents, or an empty database when it does not exist; throws qla::Error naming the
  /// file when it exists and is not a tuning database.
  static TuningDb load(const std::filesystem::path &file);
  /// Writes the database atomically (a temporary file renamed over `file`).
  void save(const std::filesystem::path &file) const;

  /// $QLA_TUNING_DB, else <cache root>/tuning.json: where `qlac tune` writes and planners read.
  static std::filesystem::path defaultPath();

  /// What identifies a GPU in the database: name, SMs, shared memory per block, L2 and clocks.
  static std::string gpuKey(const DeviceInfo &device);
  /// The database's key for `device`: its own, else one of a GPU of the same name and SM count (the
  /// same part at other clocks), else none. With `kernel`, only a key holding entries of that kernel.
  std::optional<std::string> gpuFor(const DeviceInfo &device, const std::string &kernel = "") const;

  std::optional<TuningEntry> find(const std::string &gpu, const std::string &kernel, const std::string &shape,
                                  const std::string &config) const;
  /// Adds or replaces the entry for (gpu, kernel, shape, config); `device` describes the GPU once.
  void record(const DeviceInfo &device, const TuningEntry &entry);
  /// The fastest passing config for (gpu, kernel, shape), if any was timed.
  std::optional<TuningEntry> best(const std::string &gpu, const std::string &kernel, const std::string &shape) const;
  std::vector<TuningEntry> entries(const std::string &gpu) const;
  std::vector<std::string> gpus() const;

private:
  Json doc_ = Json::object(); // {"version": 1, "gpus": {key: {"device": {...}, "entries": [...]}}}
};

} // namespace qla

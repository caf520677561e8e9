// qlac tune <kernel>: candidate configs per shape, compiled in parallel (qlac compile subprocesses),
// each checked against the reference and timed on the GPU by the kernel's Tuner (Tune.h), results in
// the tuning database per GPU (qla::TuningDb). Configs already in the database for this GPU are not
// re-timed.
#include "Commands.h"
#include "Tune.h"

#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace qlac {

namespace {

constexpr const char *kUsage =
    "usage: qlac tune <gemm|gdn> --shapes S[,S...] [--candidates \"S1;S2;...\"] [--db FILE] [--jobs N]\n"
    "                 [--iters N] [--dry-run [--gpu KEY]] [--compile-only]\n\n"
    "For each shape, every candidate config (settings added to the shape's; the default config is always\n"
    "one) is compiled (N jobs in parallel, qlac compile), checked against the reference on the GPU and\n"
    "timed (median of --iters CUDA-event-timed runs, default 50). Results go to the tuning database\n"
    "(default $QLA_TUNING_DB, else <cache root>/tuning.json), per GPU (name, SMs, shared memory, L2,\n"
    "clock); configs it already holds for this GPU are not re-timed. Prints each shape's fastest passing\n"
    "config against the default. --dry-run lists what would be compiled and timed (no GPU needed; --gpu\n"
    "KEY: against that GPU's entries, as `qlac tune` prints its key); --compile-only compiles and stops.\n"
    "  gemm: shapes MxNxK; default candidates: {}\n"
    "  gdn:  the GDN forward's kernel set (through qla::gdn::ChunkForward, CUDA-graph replay time);\n"
    "        shapes HxHVxBxT[xK] (K = V, default 128); default candidates: {}\n";

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    out.push_back(part);
  return out;
}

std::string quoted(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &c : v)
    s += "\"" + c + "\" ";
  return s;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::localtime(&t));
  return buf;
}

void progress(const char *what, size_t done, size_t total) {
  const int width = 30;
  int filled = total ? static_cast<int>(width * done / total) : width;
  fmt::print(stderr, "\r{} [{}{}] {}/{}", what, std::string(filled, '='), std::string(width - filled, ' '), done,
             total);
  if (done == total)
    fmt::print(stderr, "\n");
}

/// `qlac compile KERNEL --set SETTINGS -o DIR` for each job, `jobs` at a time; returns which succeeded.
std::vector<bool> compileAll(const std::vector<CompileJob> &work, int jobs) {
  std::vector<bool> ok(work.size(), false);
  std::vector<std::pair<pid_t, size_t>> running;
  size_t next = 0, done = 0;
  progress("compiling", 0, work.size());
  while (done < work.size()) {
    while (next < work.size() && static_cast<int>(running.size()) < jobs) {
      std::fflush(stdout); // else the child's freopen writes the parent's buffered output again
      std::fflush(stderr);
      pid_t pid = fork();
      if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
          _exit(126);
        const CompileJob &j = work[next];
        execl("/proc/self/exe", "qlac", "compile", j.kernel.c_str(), "--set", j.settings.c_str(), "-o",
              j.dir.c_str(), static_cast<char *>(nullptr));
        _exit(127);
      }
      if (pid < 0)
        throw qla::Error("tune: fork failed");
      running.push_back({pid, next++});
    }
    int status = 0;
    pid_t pid = wait(&status);
    for (size_t i = 0; i < running.size(); ++i)
      if (running[i].first == pid) {
        ok[running[i].second] = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        running.erase(running.begin() + static_cast<long>(i));
        break;
      }
    progress("compiling", ++done, work.size());
  }
  return ok;
}

} // namespace

std::vector<int64_t> parseDims(const std::string &item) {
  std::vector<int64_t> dims;
  try {
    for (const std::string &d : split(item, 'x')) {
      size_t used = 0;
      dims.push_back(std::stoll(d, &used));
      if (used != d.size() || dims.back() <= 0)
        return {};
    }
  } catch (const std::exception &) {
    return {};
  }
  return dims;
}

std::string mergeSettings(const std::string &base, const std::string &over) {
  std::vector<std::pair<std::string, std::string>> items;
  for (const std::string &text : {base, over})
    for (const std::string &item : split(text, ',')) {
      if (item.empty())
        continue;
      auto eq = item.find('=');
      std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
      auto at = std::find_if(items.begin(), items.end(), [&](const auto &kv) { return kv.first == key; });
      if (at == items.end())
        items.push_back({key, value});
      else
        at->second = value;
    }
  std::string out;
  for (const auto &[key, value] : items)
    out += (out.empty() ? "" : ",") + key + "=" + value;
  return out;
}

int tuneCommand(const Args &args) {
  std::string kernel = args.empty() ? "" : args[0];
  if (kernel.empty() || kernel == "--help" || kernel == "-h") {
    fmt::print(kernel.empty() ? stderr : stdout, fmt::runtime(kUsage), quoted(makeGemmTuner()->defaultCandidates()),
               quoted(makeGdnTuner()->defaultCandidates()));
    return kernel.empty() ? 2 : 0;
  }
  std::unique_ptr<Tuner> tuner = kernel == "gemm" ? makeGemmTuner() : kernel == "gdn" ? makeGdnTuner() : nullptr;
  if (!tuner)
    throw qla::Error(fmt::format("tune: kernel '{}' is not tunable (tunable: gemm, gdn)", kernel));
  std::vector<std::string> shapes;
  std::vector<std::string> candidates = tuner->defaultCandidates();
  fs::path dbPath;
  int jobs = std::max(1u, std::thread::hardware_concurrency()), iters = 50;
  bool dryRun = false, compileOnly = false;
  std::string gpuOverride;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size())
        throw qla::Error(fmt::format("tune: {} needs a value", a));
      return args[++i];
    };
    if (a == "--shapes")
      for (const std::string &s : split(value(), ','))
        shapes.push_back(tuner->shapeKey(s));
    else if (a == "--candidates")
      candidates = split(value(), ';');
    else if (a == "--db")
      dbPath = value();
    else if (a == "--jobs")
      jobs = std::max(1, std::atoi(value().c_str()));
    else if (a == "--iters")
      iters = std::max(1, std::atoi(value().c_str()));
    else if (a == "--dry-run")
      dryRun = true;
    else if (a == "--gpu")
      gpuOverride = value();
    else if (a == "--compile-only")
      compileOnly = true;
    else
      throw qla::Error(fmt::format("tune: unknown option '{}' (see 'qlac tune --help')", a));
  }
  if (shapes.empty())
    throw qla::Error(fmt::format("tune: name the shapes (--shapes {},...)", tuner->shapeSyntax()));
  if (std::find(candidates.begin(), candidates.end(), "") == candidates.end())
    candidates.insert(candidates.begin(), ""); // the default config is always timed: the comparison
  if (dbPath.empty()) {
    const char *env = std::getenv("QLA_TUNING_DB");
    dbPath = env && *env ? fs::path(env) : qla::DiskCache::defaultRoot() / "tuning.json";
  }
  qla::TuningDb db = qla::TuningDb::load(dbPath);

  // The GPU (none in a dry run without one: every candidate counts as new).
  qla::Driver &drv = qla::Driver::get();
  std::optional<qla::DeviceInfo> device;
  if (drv.available()) {
    drv.ensureContext();
    device = qla::queryDevice();
  } else if (!dryRun && !compileOnly) {
    throw qla::Error(fmt::format("tune needs a GPU to check and time ({}); --dry-run lists the candidates",
                                 drv.unavailableReason()));
  }
  if (!gpuOverride.empty() && !dryRun)
    throw qla::Error("tune: --gpu KEY is for --dry-run (a real run uses the GPU it runs on)");
  const std::string gpu = !gpuOverride.empty() ? gpuOverride
                          : device            ? qla::TuningDb::gpuKey(*device)
                                              : std::string("(no GPU)");

  // What to time: valid candidates not yet in the database for this GPU. A config is built once into
  // its own folder, whichever shapes time it.
  struct Job {
    std::string shape, config;
  };
  std::vector<Job> todo;
  std::map<std::string, fs::path> builds;
  fs::path work = fs::temp_directory_path() / fmt::format("qlac-tune-{}", getpid());
  for (const std::string &s : shapes)
    for (const std::string &c : candidates) {
      std::string config;
      try {
        config = tuner->config(s, c);
      } catch (const qla::Error &e) {
        fmt::print("  skip {} on {}: {}\n", c, s, e.what());
        continue;
      }
      if (db.find(gpu, tuner->name(), s, config)) {
        fmt::print("  known {} for {} (in {})\n", config, s, dbPath.string());
        continue;
      }
      todo.push_back({s, config});
      builds.emplace(tuner->buildConfig(config), work / std::to_string(builds.size()));
    }
  fmt::print("tune {} on {}: {} shape(s), {} run(s) of {} config(s) to compile and time, database {}\n", kernel, gpu,
             shapes.size(), todo.size(), builds.size(), dbPath.string());
  if (dryRun) {
    for (const Job &j : todo)
      fmt::print("  would time {} on {}\n", j.config, j.shape);
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<CompileJob> compileWork;
  std::vector<std::string> compileConfig;
  for (const auto &[config, dir] : builds)
    for (CompileJob &j : tuner->compileJobs(config, dir)) {
      compileWork.push_back(std::move(j));
      compileConfig.push_back(config);
    }
  std::vector<bool> compiled = compileAll(compileWork, jobs);
  std::map<std::string, bool> built;
  for (size_t i = 0; i < compileWork.size(); ++i)
    built[compileConfig[i]] = (built.count(compileConfig[i]) ? built[compileConfig[i]] : true) && compiled[i];
  const double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (compileOnly) {
    size_t n = std::count_if(built.begin(), built.end(), [](const auto &b) { return b.second; });
    fmt::print("compiled {} of {} in {:.1f} s ({} kernels, {} jobs); nothing timed\n", n, builds.size(),
               compileSeconds, compileWork.size(), jobs);
    fs::remove_all(work);
    return n == builds.size() ? 0 : 1;
  }
  // A config whose check or timing throws is not recorded (a later run times it again); after an error
  // that leaves the GPU context unusable (an illegal address, say) nothing more can run in this process,
  // so the run stops there. The database is saved after every entry.
  size_t unrecorded = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    const Job &j = todo[i];
    qla::TuningEntry e{tuner->name(), j.shape, j.config, 0, 0, false, today()};
    const std::string build = tuner->buildConfig(j.config);
    if (built[build]) { // a config that does not compile counts as failed
      try {
        e = tuner->measure(j.shape, j.config, builds[build], iters);
        e.date = today();
      } catch (const std::exception &err) {
        fmt::print(stderr, "\n  {} on {}: {} (not recorded)\n", j.config, j.shape, err.what());
        ++unrecorded;
        if (drv.cuCtxSynchronize() != CUDA_SUCCESS) {
          fmt::print(stderr, "  the GPU context failed: stopping; {} run(s) not timed\n", todo.size() - i - 1);
          unrecorded += todo.size() - i - 1;
          break;
        }
        progress("timing", i + 1, todo.size());
        continue;
      }
    }
    db.record(*device, e);
    db.save(dbPath);
    progress("timing", i + 1, todo.size());
  }
  fs::remove_all(work);
  for (const std::string &s : shapes) {
    auto best = db.best(gpu, tuner->name(), s);
    std::optional<qla::TuningEntry> base;
    try {
      base = db.find(gpu, tuner->name(), s, tuner->config(s, ""));
    } catch (const qla::Error &) { // the default refused for this shape: no comparison
    }
    if (!best) {
      fmt::print("{}: no config passed\n", s);
      continue;
    }
    fmt::print("{}: best {} {:.4f} ms; default {}\n", s, best->config, best->ms,
               base && base->pass ? fmt::format("{:.4f} ms ({:.2f}x)", base->ms, base->ms / best->ms) : "failed");
  }
  if (unrecorded)
    fmt::print("{} run(s) not recorded (errors above): run the same command again to time them\n", unrecorded);
  fmt::print("tuned in {:.1f} s (compiling {:.1f} s)\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), compileSeconds);
  return unrecorded ? 1 : 0;
}

} // namespace qlac

// qlac tune gemm: candidate configs per shape, compiled in parallel (qlac compile subprocesses), each
// checked against the reference and timed on the GPU (kernels/gemm/GemmCheck), results in the tuning
// database per GPU (qla::TuningDb). Configs already in the database for this GPU are not re-timed.
#include "Commands.h"

#include "gemm/Gemm.h"
#include "gemm/GemmCheck.h"
#include "qla/runtime/CompiledKernel.h"
#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/TuningDb.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>
#include <optional>
#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace qlac {

namespace {

constexpr const char *kUsage =
    "usage: qlac tune gemm --shapes MxNxK[,MxNxK...] [--candidates \"S1;S2;...\"] [--db FILE] [--jobs N]\n"
    "                      [--iters N] [--dry-run [--gpu KEY]] [--compile-only]\n\n"
    "For each shape, every candidate config (settings added to M,N,K; the default config is always one)\n"
    "is compiled (N jobs in parallel, qlac compile), checked against the reference on the GPU and timed\n"
    "(median of --iters CUDA-event-timed launches, default 50). Results go to the tuning database (default\n"
    "$QLA_TUNING_DB, else <cache root>/tuning.json), per GPU (name, SMs, shared memory, L2, clock); configs\n"
    "it already holds for this GPU are not re-timed. Prints each shape's fastest passing config against\n"
    "the default. --dry-run lists what would be compiled and timed (no GPU needed; --gpu KEY: against that\n"
    "GPU's entries, as `qlac tune` prints its key); --compile-only compiles the candidates and stops.\n"
    "Default candidates: {}\n";

const std::vector<std::string> kDefaultCandidates = {
    "",        "BN=128,stages=3", "BN=128,stages=4", "BN=128,stages=5", "BN=256,stages=3",
    "BM=64,BN=128,stages=4", "specialize=1", "BN=128,stages=4,specialize=1"};

struct Shape {
  int64_t M, N, K;
  std::string settings() const { return fmt::format("M={},N={},K={}", M, N, K); }
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    out.push_back(part);
  return out;
}

Shape parseShape(const std::string &s) {
  auto dims = split(s, 'x');
  try {
    if (dims.size() == 3)
      return {std::stoll(dims[0]), std::stoll(dims[1]), std::stoll(dims[2])};
  } catch (const std::exception &) {
  }
  throw qla::Error(fmt::format("tune: --shapes wants MxNxK, got '{}'", s));
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

/// `qlac compile gemm --set <settings> -o <dir>` for each job, `jobs` at a time; returns which succeeded.
std::vector<bool> compileAll(const std::vector<std::pair<std::string, fs::path>> &work, int jobs) {
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
        execl("/proc/self/exe", "qlac", "compile", "gemm", "--set", work[next].first.c_str(), "-o",
              work[next].second.c_str(), static_cast<char *>(nullptr));
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

int tuneCommand(const Args &args) {
  std::string kernel = args.empty() ? "" : args[0];
  std::string defaults;
  for (const std::string &c : kDefaultCandidates)
    defaults += "\"" + c + "\" ";
  if (kernel.empty() || kernel == "--help" || kernel == "-h") {
    fmt::print(kernel.empty() ? stderr : stdout, fmt::runtime(kUsage), defaults);
    return kernel.empty() ? 2 : 0;
  }
  if (kernel != "gemm")
    throw qla::Error(fmt::format("tune: kernel '{}' is not tunable yet (tunable: gemm)", kernel));
  std::vector<Shape> shapes;
  std::vector<std::string> candidates = kDefaultCandidates;
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
        shapes.push_back(parseShape(s));
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
    throw qla::Error("tune: name the shapes (--shapes MxNxK,...)");
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

  // What to compile: valid candidates not yet in the database for this GPU.
  struct Job {
    Shape shape;
    std::string config;
    fs::path dir;
  };
  std::vector<Job> todo;
  fs::path work = fs::temp_directory_path() / fmt::format("qlac-tune-{}", getpid());
  for (const Shape &s : shapes)
    for (const std::string &c : candidates) {
      std::string config = s.settings() + (c.empty() ? "" : "," + c);
      try {
        (void)qla::kernels::buildGemm(qla::kernels::parseGemmConfig(config)); // validates the whole config
      } catch (const qla::Error &e) {
        fmt::print("  skip {}: {}\n", config, e.what());
        continue;
      }
      if (db.find(gpu, "gemm", s.settings(), config)) {
        fmt::print("  known {} (in {})\n", config, dbPath.string());
        continue;
      }
      todo.push_back({s, config, work / std::to_string(todo.size())});
    }
  fmt::print("tune gemm on {}: {} shape(s), {} config(s) to compile and time, database {}\n", gpu, shapes.size(),
             todo.size(), dbPath.string());
  if (dryRun) {
    for (const Job &j : todo)
      fmt::print("  would time {}\n", j.config);
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, fs::path>> compileWork;
  for (const Job &j : todo)
    compileWork.push_back({j.config, j.dir});
  std::vector<bool> compiled = compileAll(compileWork, jobs);
  if (compileOnly) {
    size_t n = std::count(compiled.begin(), compiled.end(), true);
    fmt::print("compiled {} of {} in {:.1f} s ({} jobs); nothing timed\n", n, todo.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), jobs);
    fs::remove_all(work);
    return n == todo.size() ? 0 : 1;
  }
  std::random_device rd;
  for (size_t i = 0; i < todo.size(); ++i) {
    const Job &j = todo[i];
    qla::TuningEntry e{"gemm", j.shape.settings(), j.config, 0, 0, false, today()};
    if (compiled[i]) {
      auto k = qla::CompiledKernel::fromDirectory(j.dir);
      qla::kernels::GemmCheck r = qla::kernels::checkGemm(*k, j.shape.M, j.shape.N, j.shape.K, rd(), iters);
      e.ms = r.ms;
      e.error = r.relL2;
      e.pass = r.pass;
    }
    db.record(*device, e);
    progress("timing", i + 1, todo.size());
  }
  db.save(dbPath);
  fs::remove_all(work);
  for (const Shape &s : shapes) {
    auto best = db.best(gpu, "gemm", s.settings());
    auto base = db.find(gpu, "gemm", s.settings(), s.settings());
    if (!best) {
      fmt::print("{}: no config passed\n", s.settings());
      continue;
    }
    fmt::print("{}: best {} {:.4f} ms; default {}\n", s.settings(), best->config, best->ms,
               base && base->pass ? fmt::format("{:.4f} ms ({:.2f}x)", base->ms, base->ms / best->ms) : "failed");
  }
  fmt::print("tuned in {:.1f} s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

} // namespace qlac

#include "Commands.h"
#include "Header.h"

#include "gdn/forward/ExactSplit.h"
#include "gdn/forward/Interpret.h"
#include "gdn/reference/GdnRandom.h"
#include "common/Settings.h"
#include "gemm/Gemm.h"
#include "qla/Pipeline/Pipeline.h"
#include "qla/dsl/Jit.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"
#include "qla/runtime/Nvjitlink.h"
#include "qla/runtime/Sha256.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace qlac {

namespace {

struct Options {
  std::string kernel, settings, outDir, after, ptxFeatures = "+ptx80", className;
  bool help = false;
};

Options parse(const Args &args, const char *command, bool needsOut) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](const std::string &flag) -> std::string {
      if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0)
        return a.substr(flag.size() + 1);
      if (i + 1 >= args.size())
        throw qla::Error(fmt::format("{} needs a value", flag));
      return args[++i];
    };
    if (a == "--help" || a == "-h")
      o.help = true;
    else if (a == "--set" || a.rfind("--set=", 0) == 0)
      o.settings += (o.settings.empty() ? "" : ",") + value("--set");
    else if (a == "-o" || a == "--output" || a.rfind("--output=", 0) == 0)
      o.outDir = value(a == "-o" ? "-o" : "--output");
    else if (a == "--class" || a.rfind("--class=", 0) == 0)
      o.className = value("--class");
    else if (a == "--after" || a.rfind("--after=", 0) == 0)
      o.after = value("--after");
    else if (a == "--ptx-features" || a.rfind("--ptx-features=", 0) == 0)
      o.ptxFeatures = value("--ptx-features");
    else if (a == "--arch" || a.rfind("--arch=", 0) == 0) {
      if (std::string arch = value("--arch"); arch != "sm_90a")
        throw qla::Error(fmt::format("unsupported --arch '{}': QLA targets sm_90a", arch));
    } else if (!a.empty() && a[0] != '-' && o.kernel.empty())
      o.kernel = a;
    else
      throw qla::Error(fmt::format("unknown option '{}' (see 'qlac {} --help')", a, command));
  }
  if (o.help)
    return o;
  if (o.kernel.empty())
    throw qla::Error(fmt::format("name a kernel (see 'qlac {} --help')", command));
  if (needsOut && o.outDir.empty())
    throw qla::Error("needs -o DIR");
  return o;
}

std::unique_ptr<qla::dsl::Kernel> build(const Options &o) {
  if (o.kernel == "gemm")
    return qla::kernels::buildGemm(qla::kernels::parseGemmConfig(o.settings));
  if (o.kernel == "gdn_offsets")
    return qla::gdn::buildGdnOffsets(qla::gdn::parseGdnForwardConfig(o.settings));
  if (o.kernel == "gdn_cumsum")
    return qla::gdn::buildGdnCumsum(qla::gdn::parseGdnForwardConfig(o.settings));
  if (o.kernel == "gdn_chunk_inverse")
    return qla::gdn::buildGdnChunkInverse(qla::gdn::parseGdnForwardConfig(o.settings));
  if (o.kernel == "gdn_chunk_forward")
    return qla::gdn::buildGdnChunkForward(qla::gdn::parseGdnForwardConfig(o.settings));
  if (o.kernel == "gdn_split_correct")
    return qla::gdn::buildGdnSplitCorrect(qla::gdn::parseGdnForwardConfig(o.settings));
  if (o.kernel == "gdn_split_offsets")
    return qla::gdn::buildGdnSplitOffsets(qla::gdn::parseGdnForwardConfig(o.settings));
  if (o.kernel == "gdn_split_windows")
    return qla::gdn::buildGdnSplitWindows(qla::gdn::parseGdnForwardConfig(o.settings));
  throw qla::Error(fmt::format("unknown kernel '{}' (known: gemm, gdn_offsets, gdn_cumsum, gdn_chunk_inverse, "
                               "gdn_chunk_forward, gdn_split_correct, gdn_split_offsets, gdn_split_windows)",
                               o.kernel));
}

/// A CUDA binary tool: $QLA_CUOBJDUMP for cuobjdump, else the first of $PATH and /usr/local/cuda/bin.
void writeFile(const fs::path &p, const std::string &data);

std::string findTool(const std::string &name) {
  if (const char *given = std::getenv("QLA_CUOBJDUMP"); given && name == "cuobjdump" && *given)
    return given;
  std::vector<std::string> dirs;
  if (const char *path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      dirs.push_back(d);
  }
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &d : dirs)
    if (!d.empty() && access((fs::path(d) / name).c_str(), X_OK) == 0)
      return (fs::path(d) / name).string();
  return "";
}

/// The cubin's SASS through cuobjdump -sass (or nvdisasm), printed.
int printSass(const std::string &cubin) {
  std::string tool = findTool("cuobjdump"), args = " -sass ";
  if (tool.empty() && !(tool = findTool("nvdisasm")).empty())
    args = " -c ";
  if (tool.empty())
    throw qla::Error("dump --after=sass needs cuobjdump or nvdisasm (CUDA toolkit: cuda-cuobjdump-13-0 or "
                     "cuda-nvdisasm-13-0), found neither in $QLA_CUOBJDUMP, $PATH or /usr/local/cuda/bin");
  fs::path file = fs::temp_directory_path() / fmt::format("qlac-sass-{}.cubin", getpid());
  writeFile(file, cubin);
  int status = std::system((tool + args + file.string()).c_str());
  fs::remove(file);
  if (status != 0)
    throw qla::Error(fmt::format("dump --after=sass: '{}' failed (status {})", tool, status));
  return 0;
}

void writeFile(const fs::path &p, const std::string &data) {
  std::ofstream f(p, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!f)
    throw qla::Error(fmt::format("cannot write {}", p.string()));
}

} // namespace

int compileCommand(const Args &args) {
  Options o = parse(args, "compile", true);
  if (o.help) {
    fmt::print("usage: qlac compile <kernel> [--arch sm_90a] --set K=V,... -o DIR [--ptx-features +ptx80] [--class NAME]\n\n"
               "Builds the kernel from its DSL program and writes DIR/kernel.ptx, DIR/kernel.cubin (nvJitLink),\n"
               "DIR/manifest.json (ABI, launch shape, shared memory, config, sha256 of each file) and\n"
               "DIR/<kernel>.h: class qla::aot::<Kernel> (--class NAME), a typed launcher with the cubin and\n"
               "manifest embedded, for programs that link only the runtime.\n"
               "gemm settings: M, N, K, BM (64|128|256), BN (16..256), BK (64), stages (2..8), specialize (0..2:\n"
               "roles), loads_regs and mma_regs (the roles' register budgets: multiples of 8, 24..256).\n"
               "gdn_* settings: H, HV (required), K, V (64|128|256), BV (multiple of 64), scale, precise (0..2),\n"
               "inverse_blocks_per_sm (-1: 3, or 2 at K = 256; 0..16), inverse_chunks, inverse_stages (1..4),\n"
               "inverse_heads (divides HV/H; -1 with f16 merges: 4 where 4 divides HV/H and K <= 128, else 2 where\n"
               "HV/H is even, else 1), inverse_f16 (1:\n"
               "the inverse's merges in f16, the default, for beta*|k|^2 <= 2 as with L2-normalised keys; 0: bf16\n"
               "hi + lo, whose range also holds larger keys), stages (1..4), gate_in_kernel, l2norm, initial_state,\n"
               "final_state, state_v_first, roles, state_only, chunk_totals (0|1), fuse_inverse (0|1: the\n"
               "inverse in the forward's aux role; loads_regs, aux_regs, state_regs: its roles' budgets),\n"
               "split_run (0: none, 1: the\n"
               "context split's segment ends, 2: its transitions, 3: the chunks' log-decays; qla-context-split),\n"
               "split_tokens (the planner's segment length, a multiple of 64; host-side: the kernels ignore it),\n"
               "dependent_launch (0|1: each kernel waits for the one before it first, launched with programmatic\n"
               "stream serialization so launches overlap tails), slice_broadcasts (0, the default: broadcasts through\n"
               "shared memory; 1: gate and beta vectors laid out like the rows or columns they fill),\n"
               "warpgroup_local (1, the default: the forward's warpgroups exchange gate rows and stage Oᵀ each on\n"
               "its own, with no block barrier in the loop; 0: block barriers), warpgroup_turns (0|1: the wide\n"
               "forward's warpgroups take turns at issuing their gemm groups).\n");
    return 0;
  }
  std::string className = o.className.empty() ? launcherClassName(o.kernel) : o.className;
  if (className.empty() || std::isdigit(static_cast<unsigned char>(className[0])) ||
      !std::all_of(className.begin(), className.end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
    throw qla::Error(fmt::format("--class '{}' is not a C++ identifier", className));
  auto start = std::chrono::steady_clock::now();
  auto kernel = build(o);
  qla::dsl::CompileOptions co;
  co.ptxFeatures = o.ptxFeatures;
  qla::dsl::CompiledPtx ptx = kernel->compile(co);
  for (const std::string &r : ptx.remarks)
    fmt::print(stderr, "remark: {}\n", r);
  std::string cubin = qla::linkPtxToCubin(ptx.ptx, "sm_90a");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  qla::Json manifest = qla::Json::parse(ptx.manifestJson);
  manifest.set("config", o.settings);
  manifest.set("key", qla::dsl::cacheKey(*kernel, co));
  qla::Json files = qla::Json::object();
  for (auto &[name, data] : {std::pair<std::string, const std::string &>{"kernel.ptx", ptx.ptx},
                             std::pair<std::string, const std::string &>{"kernel.cubin", cubin}}) {
    qla::Json f = qla::Json::object();
    f.set("sha256", qla::sha256Hex(data));
    f.set("bytes", static_cast<int64_t>(data.size()));
    files.set(name, std::move(f));
  }
  manifest.set("files", std::move(files));
  fs::create_directories(o.outDir);
  writeFile(fs::path(o.outDir) / "kernel.ptx", ptx.ptx);
  writeFile(fs::path(o.outDir) / "kernel.cubin", cubin);
  writeFile(fs::path(o.outDir) / "manifest.json", manifest.dump() + "\n");
  // The typed launcher: DIR/<kernel>.h, class qla::aot::<Kernel> (or --class NAME).
  writeFile(fs::path(o.outDir) / (o.kernel + ".h"),
            generateLauncherHeader(manifest, cubin, className,
                                   fmt::format("qlac compile {} --set {} -o {}", o.kernel, o.settings, o.outDir)));
  fmt::print("{}: {} -> {} (PTX {} B, cubin {} B) in {:.3f} s\n", o.kernel, o.settings, o.outDir, ptx.ptx.size(),
             cubin.size(), seconds);
  return 0;
}

int dumpCommand(const Args &args) {
  Options o = parse(args, "dump", false);
  if (o.help) {
    fmt::print("usage: qlac dump <kernel> --set K=V,... [--after=PASS|ptx]\n\n"
               "Without --after, prints the kernel's tile IR as the DSL built it. With --after=PASS, the IR\n"
               "after that pass ('qlac passes' lists them); with --after=ptx, the PTX; with --after=sass, the\n"
               "SASS of the cubin (cuobjdump -sass, else nvdisasm: $QLA_CUOBJDUMP, $PATH or /usr/local/cuda/bin).\n");
    return 0;
  }
  auto kernel = build(o);
  if (o.after.empty()) {
    fmt::print("{}", kernel->ir());
    return 0;
  }
  qla::dsl::CompileOptions co;
  co.ptxFeatures = o.ptxFeatures;
  if (o.after == "ptx") {
    fmt::print("{}", kernel->compile(co).ptx);
    return 0;
  }
  if (o.after == "sass")
    return printSass(qla::linkPtxToCubin(kernel->compile(co).ptx, "sm_90a"));
  std::vector<std::string> names = qla::pipelinePassNames();
  if (std::find(names.begin(), names.end(), o.after) == names.end())
    throw qla::Error(fmt::format("no pass '{}' in the pipeline; 'qlac passes' lists them", o.after));
  std::string dump;
  co.dumpAfter = o.after;
  co.dump = &dump;
  kernel->compile(co);
  fmt::print("{}", dump);
  return 0;
}

/// The GDN forward programs on the interpreter against the float64 recurrence.
int checkGdn(const std::string &settings) {
  qla::gdn::GdnProblem p;
  p.B = 2;
  p.T = 200;
  p.H = 2;
  p.HV = 4;
  p.K = 64;
  p.V = 64;
  p.useInitialState = true;
  p.outputFinalState = true;
  bool mixed = true, simulate = false, inverseInWarps = false;
  int64_t splitTokens = 0, precise = -1, inverseF16 = -1;
  auto field = [](int64_t &f) { return [&f](double v) { f = static_cast<int64_t>(v); }; };
  auto flag = [](bool &f) { return [&f](double v) { f = v != 0; }; };
  qla::kernels::applySettings(settings, "gdn",
                              {{"B", field(p.B)}, {"T", field(p.T)}, {"H", field(p.H)}, {"HV", field(p.HV)},
                               {"K", field(p.K)}, {"V", field(p.V)}, {"gate_in_kernel", flag(p.gateInKernel)},
                               {"l2norm", flag(p.l2normQK)}, {"mixed_decay", flag(mixed)},
                               {"split_tokens", field(splitTokens)}, {"precise", field(precise)},
                               {"inverse_f16", field(inverseF16)}, {"simulate", flag(simulate)},
                               {"inverse_in_warps", flag(inverseInWarps)}});
  if (simulate && splitTokens > 0)
    throw qla::Error("qlac check gdn: simulate=1 runs the unsplit kernels only (split_tokens must be 0)");
  auto gate = mixed ? qla::gdn::GdnGateKind::mixedDecay : qla::gdn::GdnGateKind::logsigmoid;
  qla::gdn::GdnInputs in = qla::gdn::roundInputsForKernel(
      qla::gdn::gdnRandomInputs(p, {.seed = std::random_device{}(), .gate = gate}));
  auto start = std::chrono::steady_clock::now();
  qla::gdn::GdnOutputs got = qla::gdn::interpretGdnForward(
      p, in, {.precise = precise, .inverseF16 = inverseF16, .inverseInWarps = inverseInWarps, .simulate = simulate});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  qla::gdn::GdnOutputs ref = qla::gdn::gdnRecurrentReference(p, in);
  double eo = qla::gdn::relL2(got.o, ref.o), es = qla::gdn::relL2(got.finalState, ref.finalState);
  bool ok = eo <= 5e-3 && es <= 5e-3;
  fmt::print("gdn forward (B={}, T={}, H={}, HV={}, K={}, V={}{}{}{}) {}: rel_l2 vs float64 "
             "recurrence o {:.2e}, final state {:.2e}, {:.2f} s -> {}\n",
             p.B, p.T, p.H, p.HV, p.K, p.V, p.gateInKernel ? ", gate in kernel" : "", p.l2normQK ? ", l2norm" : "",
             inverseInWarps ? ", inverse in warps" : "", simulate ? "lowered, on the CPU's SIMT simulator" : "on the CPU interpreter", eo, es, seconds,
             ok ? "PASS" : "FAIL");
  if (splitTokens > 0) {
    // The context split (docs/context-split.md) on the same inputs, in segments of split_tokens, with
    // the same kernels and order as on the GPU: every transition taken (no floor: the strictest check;
    // the GPU's exact mode floors at −88, docs/context-split.md §6), and truncated at −10. Split
    // and unsplit sum in different orders: they agree to 2e-4 only with H at full precision (precise=2);
    // with H as bf16 (precise=1, the default) each is as close to float64 but they differ by ~1e-3.
    for (double threshold : {-std::numeric_limits<double>::infinity(), -10.0}) {
      start = std::chrono::steady_clock::now();
      qla::gdn::GdnOutputs split = qla::gdn::interpretGdnForwardSplit(p, in, splitTokens, threshold, precise, inverseF16);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double so = qla::gdn::relL2(split.o, ref.o), ss = qla::gdn::relL2(split.finalState, ref.finalState);
      double ds = qla::gdn::relL2(split.finalState, got.finalState);
      bool splitOk = so <= 5e-3 && ss <= 5e-3 && (precise != 2 || ds <= 2e-4);
      fmt::print("  split in segments of {} tokens, {}: rel_l2 vs float64 o {:.2e}, final state {:.2e}; final state "
                 "vs unsplit {:.1e}, {:.2f} s -> {}\n",
                 splitTokens, std::isinf(threshold) ? "exact, every transition" : "truncated at -10", so, ss, ds, seconds,
                 splitOk ? "PASS" : "FAIL");
      ok &= splitOk;
    }
  }
  return ok ? 0 : 1;
}

int checkCommand(const Args &args) {
  Options o = parse(args, "check", false);
  if (o.help) {
    fmt::print("usage: qlac check <gemm|gdn> --set K=V,...\n\n"
               "Runs the kernel's tile program on the CPU interpreter with fresh random bf16 inputs and\n"
               "compares it with a float64 reference (relative L2 error, every output element written).\n"
               "Exits 1 when the error exceeds 5e-3. Keep shapes small: the interpreter is plain loops.\n"
               "gdn settings: B, T, H, HV, K, V (64|128|256), gate_in_kernel, l2norm, mixed_decay (0|1),\n"
               "split_tokens (> 0: also the context split in segments of that many tokens, exact and truncated;\n"
               "with precise=2 it must also agree with the unsplit run to 2e-4), precise (0..2, the kernels' default 1),\n"
               "inverse_f16 (0|1, the kernels' default 1), inverse_in_warps (0|1), simulate (1: the kernels lowered by\n"
               "the pipeline and run on the SIMT simulator, bounds- and race-checked, instead of the interpreter);\n"
               "it runs gdn_cumsum, gdn_chunk_inverse and gdn_chunk_forward against the float64 recurrence.\n");
    return 0;
  }
  if (o.kernel == "gdn")
    return checkGdn(o.settings);
  if (o.kernel != "gemm")
    throw qla::Error(fmt::format("no CPU check for kernel '{}' (known: gemm, gdn)", o.kernel));
  qla::kernels::GemmConfig c = qla::kernels::parseGemmConfig(o.settings);
  auto kernel = qla::kernels::buildGemm(c);
  std::mt19937 gen(std::random_device{}());
  std::normal_distribution<double> dist(0.0, 1.0);
  auto bf16 = [](double x) {
    float f = static_cast<float>(x);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    u &= 0xFFFF0000u;
    std::memcpy(&f, &u, 4);
    return static_cast<double>(f);
  };
  qla::HostTensor A{{c.M, c.K}, {}}, B{{c.N, c.K}, {}}, C{{c.M, c.N}, {}};
  for (int64_t i = 0; i < c.M * c.K; ++i) A.data.push_back(bf16(dist(gen)));
  for (int64_t i = 0; i < c.N * c.K; ++i) B.data.push_back(bf16(dist(gen)));
  C.data.assign(c.M * c.N, std::nan(""));
  auto start = std::chrono::steady_clock::now();
  kernel->interpret({&A, &B, &C});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double num = 0, den = 0;
  int64_t unwritten = 0;
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t n = 0; n < c.N; ++n) {
      double ref = 0;
      for (int64_t k = 0; k < c.K; ++k)
        ref += A.data[m * c.K + k] * B.data[n * c.K + k];
      double got = C.data[m * c.N + n];
      if (std::isnan(got)) { ++unwritten; continue; }
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  double rel = std::sqrt(num / den);
  bool ok = unwritten == 0 && rel < 5e-3;
  fmt::print("gemm {} on the CPU interpreter: rel_l2 vs float64 {:.2e}, unwritten {}, {:.2f} s -> {}\n", c.str(), rel,
             unwritten, seconds, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

int passesCommand(const Args &args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    fmt::print("usage: qlac passes\n\nLists the compiler's passes in pipeline order (names for --after).\n");
    return 0;
  }
  for (const std::string &n : qla::pipelinePassNames())
    fmt::print("{}\n", n);
  return 0;
}

} // namespace qlac

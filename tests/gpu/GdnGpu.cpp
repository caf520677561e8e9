// GPU check of the AOT-compiled GDN forward kernels (qlac compile gdn_cumsum / gdn_chunk_inverse /
// gdn_chunk_forward): fresh random inputs with real gate spread, outputs poisoned first, every
// element checked against the float64 recurrence (CPU) or its double-precision NVRTC twin (GPU,
// for long inputs); then CUDA-event timing of the three launches. Runtime only, no MLIR.
//   qla_gpu_gdn DIR --set H=..,HV=..,K=..,V=..,BV=..[,gate_in_kernel=1,l2norm=1] [--json OUT] [--bench]
//               [--cases N | --shape B,T | --varlen L1,L2,...] [--gate mixed|logsigmoid] [--timeout S]
//               [--no-split | --exact | --segment-tokens L]   (the context split, when its kernels are in DIR)
// DIR holds gdn_offsets/, gdn_cumsum/, gdn_chunk_inverse/ and gdn_chunk_forward/ compiled with those
// settings (initial_state=1, final_state=1). Everything goes through the entry point qla::gdn::ChunkForward
// (fixed-length batches without cu_seqlens, varlen with it).
#include "gdn/api/ChunkForward.h"
#include "gdn/api/GdnCheck.h"
#include "gdn/reference/GdnRandom.h"
#include "gdn/reference/GdnReference.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"

#include "Watchdog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

using namespace qla;
using namespace qla::gdn;

namespace {

std::map<std::string, int64_t> parseSettings(const std::string &s) {
  std::map<std::string, int64_t> m;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (auto eq = item.find('='); eq != std::string::npos)
      m[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
  return m;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir, settings, jsonOut;
  bool bench = false;
  double timeout = 300; // seconds a case may take before it counts as a hang (tests/gpu/Watchdog.h)
  size_t maxCases = 100;
  std::string onlyShape; // "B,T": just that fixed-length case, checked against the GPU reference and timed
  std::string onlyVarlen; // "L1,L2,...": just that packed batch (cu_seqlens), likewise
  bool noSplit = false;    // never take the context split, even with its kernels in the folder
  bool exact = false;      // the split in exact mode (default: truncated at a summed log-gate of −10)
  std::string gateName = "mixed"; // the gates: "mixed" (zero-decay heads among strong ones) or "logsigmoid"
  int64_t segmentTokens = 0; // > 0: the split's segment length instead of the planner's
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--set" && i + 1 < argc) settings = argv[++i];
    else if (a == "--cases" && i + 1 < argc) maxCases = std::stoul(argv[++i]);
    else if (a == "--json" && i + 1 < argc) jsonOut = argv[++i];
    else if (a == "--bench") bench = true;
    else if (a == "--shape" && i + 1 < argc) onlyShape = argv[++i];
    else if (a == "--varlen" && i + 1 < argc) onlyVarlen = argv[++i];
    else if (a == "--timeout" && i + 1 < argc) timeout = std::atof(argv[++i]);
    else if (a == "--no-split") noSplit = true;
    else if (a == "--exact") exact = true;
    else if (a == "--gate" && i + 1 < argc) gateName = argv[++i];
    else if (a == "--segment-tokens" && i + 1 < argc) segmentTokens = std::stoll(argv[++i]);
    else dir = a;
  }
  Driver &drv = Driver::get();
  if (!drv.available()) {
    fmt::print("qla_gpu_gdn: {}; nothing to run\n", drv.unavailableReason());
    return 0;
  }
  if (gateName != "mixed" && gateName != "logsigmoid") {
    fmt::print(stderr, "qla_gpu_gdn: --gate wants mixed or logsigmoid, got '{}'\n", gateName);
    return 2;
  }
  const GdnGateKind gate = gateName == "mixed" ? GdnGateKind::mixedDecay : GdnGateKind::logsigmoid;
  auto s = parseSettings(settings);
  // A tuned segment length (qlac tune gdn): the length when the planner splits (--segment-tokens forces one).
  const int64_t tunedSegmentTokens = s.count("split_tokens") ? s.at("split_tokens") : 0;
  int failures = 0, runs = 0;
  Json rows = Json::array();
  try {
    drv.ensureContext();
    ChunkForwardShape shape{s.at("H"), s.at("HV"), s.at("K"), s.at("V"), s.count("BV") ? s.at("BV") : 64,
                            s.count("gate_in_kernel") && s.at("gate_in_kernel") != 0, true, true,
                            s.count("state_v_first") && s.at("state_v_first") != 0};
    // Loading the kernel set: its files (manifests and cubins), then the
    // modules on the GPU (issue 6's bar: under 20 ms from a warm disk cache).
    auto t0 = std::chrono::steady_clock::now();
    ChunkForward fwd = ChunkForward::fromDirectory(dir, shape);
    auto t1 = std::chrono::steady_clock::now();
    fwd.load();
    auto t2 = std::chrono::steady_clock::now();
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    fmt::print("gdn kernel set {}: loaded in {:.2f} ms (files {:.2f} ms, modules {:.2f} ms)\n", dir,
               ms(t0, t2), ms(t0, t1), ms(t1, t2));
    fwd.setSplitPolicy({.sms = 0,
                        .segmentTokens = segmentTokens,
                        .segmentTokensWhenSplit = tunedSegmentTokens,
                        .enabled = !noSplit,
                        .exact = exact});
    struct Case { int64_t B, T; std::vector<int64_t> cu; bool cpu; bool bench; };
    std::vector<Case> cases{{1, 1, {}, true, false},   {2, 63, {}, true, false},  {2, 64, {}, true, false},
                            {1, 65, {}, true, false},  {1, 1000, {}, true, false},
                            {1, 1300, {0, 1, 65, 300, 1000, 1300}, true, false},
                            // Sequences of 1 to 16384 tokens, against the GPU reference.
                            {1, 23357, {0, 16384, 16385, 17085, 17148, 21244, 21309, 23357}, false, false},
                            // One long sequence among short ones: the varlen split (planVarlen) cuts only it.
                            {1, 33000, {0, 100, 32868, 33000}, false, false},
                            {4, 8192, {}, false, true}};
    if (!onlyShape.empty()) {
      auto comma = onlyShape.find(',');
      if (comma == std::string::npos)
        throw Error("--shape wants B,T, got '" + onlyShape + "'");
      cases = {{std::stoll(onlyShape.substr(0, comma)), std::stoll(onlyShape.substr(comma + 1)), {}, false, true}};
    }
    if (!onlyVarlen.empty()) {
      std::vector<int64_t> cu{0};
      std::stringstream ss(onlyVarlen);
      std::string len;
      while (std::getline(ss, len, ','))
        cu.push_back(cu.back() + std::stoll(len));
      if (cu.size() < 2)
        throw Error("--varlen wants L1,L2,..., got '" + onlyVarlen + "'");
      cases = {{1, cu.back(), cu, false, true}};
    }
    std::random_device rd;
    cases.resize(std::min(cases.size(), maxCases));
    qla::testing::Watchdog watchdog(timeout);
    for (const Case &c : cases) {
      watchdog.step(fmt::format("gdn {} B={} T={}", settings, c.B, c.T));
      GdnProblem p;
      p.B = c.B;
      p.T = c.T;
      p.cuSeqlens = c.cu;
      p.H = s.at("H");
      p.HV = s.at("HV");
      p.K = s.at("K");
      p.V = s.at("V");
      p.gateInKernel = s.count("gate_in_kernel") && s.at("gate_in_kernel");
      p.l2normQK = s.count("l2norm") && s.at("l2norm");
      p.useInitialState = p.outputFinalState = true;
      p.stateVFirst = shape.stateVFirst;
      uint64_t seed = rd();
      GdnCheck r = checkGdnForward(
          fwd, p, {.seed = seed, .gate = gate, .cpuReference = c.cpu, .timedIters = bench && c.bench ? 20 : 0});
      bool ok = r.pass;
      failures += !ok;
      ++runs;
      // The state kernel's value tile for this call: a split runs its main pass over all segments at once.
      const int64_t mainRuns = p.varlen() ? (r.varlenSegments ? r.varlenSegments : p.numSequences())
                                          : p.numSequences() * fwd.segmentsPerSequence(p.B, p.T);
      const int64_t tile = fwd.forwardTile(mainRuns);
      fmt::print("gdn (H={}, HV={}, K={}, V={}) {}: rel_l2 o {:.2e}, final state {:.2e} vs {} reference, unwritten {}"
                 "{} seed={} -> {}\n",
                 p.H, p.HV, p.K, p.V, c.cu.empty() ? fmt::format("{}x{}", c.B, c.T) : fmt::format("varlen {}", c.T),
                 r.errO, r.errState, c.cpu ? "CPU float64" : "GPU float64", r.unwritten,
                 r.ms > 0 ? fmt::format(", {:.3f} ms a call ({:.3f} ms as a CUDA graph replay, {}; BV = {}{})", r.ms,
                                        r.graphMs, r.graphIdentical ? "same bits" : "DIFFERENT bits",
                                        tile,
                                        p.varlen() || fwd.segmentsPerSequence(p.B, p.T) == 1
                                            ? std::string()
                                            : fmt::format(", split {} ways{}", fwd.segmentsPerSequence(p.B, p.T),
                                                          exact ? ", exact" : ", truncated"))
                          : r.varlenSegments ? fmt::format(" (varlen split: {} segments)", r.varlenSegments) : "",
                 seed, ok ? "PASS" : "FAIL");
      std::fflush(stdout); // a later abort must not swallow the case's line
      Json row = Json::object();
      row.set("kernel", "gdn_fwd");
      row.set("gates", gateName == "mixed" ? "-A*softplus, zero-decay heads (hv % 4 == 0)" : "logsigmoid(randn)");
      Json shape = Json::object();
      shape.set("H", p.H);
      shape.set("HV", p.HV);
      shape.set("K", p.K);
      shape.set("V", p.V);
      Json lens = Json::array();
      int64_t N = p.numSequences();
      for (int64_t i = 0; i < N; ++i)
        lens.push_back(p.varlen() ? p.cuSeqlens[i + 1] - p.cuSeqlens[i] : p.T);
      shape.set("seqlens", lens);
      row.set("shape", shape);
      Json err = Json::object();
      // NaN (an output NaN or unwritten: a failure) as null: JSON has no NaN.
      auto finite = [](double x) { return std::isfinite(x) ? Json(x) : Json(); };
      err.set("o", finite(r.errO));
      err.set("final_state", finite(r.errState));
      row.set("rel_l2", err);
      row.set("pass", ok);
      row.set("workspace_bytes", static_cast<int64_t>(r.workspaceBytes)); // memory linear in T (issue 5)
      row.set("forward_bv", tile); // the planner's value tile for this call's main run
      if (!p.varlen()) // segments a sequence when the context split runs (1: not split)
        row.set("segments", fwd.segmentsPerSequence(p.B, p.T));
      if (!p.varlen() && fwd.segmentsPerSequence(p.B, p.T) > 1)
        row.set("split_mode", exact ? "exact" : "truncated (log-gate threshold -10)");
      if (p.varlen() && r.varlenSegments > 0) { // the varlen split (planVarlen): segments in all
        row.set("varlen_segments", r.varlenSegments);
        row.set("split_mode", exact ? "exact" : "truncated (log-gate threshold -10)");
      }
      if (r.ms > 0) {
        row.set("ms", r.ms);
        row.set("graph", false);
        row.set("graph_ms", r.graphMs);
        row.set("graph_replay_identical", r.graphIdentical);
      }
      rows.push_back(row);
    }
  } catch (const Error &e) {
    fmt::print("qla_gpu_gdn: error: {}\n", e.what());
    return 1;
  }
  if (!jsonOut.empty())
    std::ofstream(jsonOut) << rows.dump() << "\n";
  fmt::print("{} passed, {} failed\n", runs - failures, failures);
  return failures ? 1 : 0;
}

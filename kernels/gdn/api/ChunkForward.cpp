#include "gdn/api/ChunkForward.h"

#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <fstream>
#include <limits>
#include <sstream>

namespace qla::gdn {

/// Where the scratch of one call lies in the caller's workspace.
struct ChunkForwardLayout {
  int64_t offsets = 0, gcum = 0, beta = 0, a = 0, aqk = 0, total = 0;
  // The context split (segments > 0): the segment batch's offsets, each sequence's first segment, and
  // per segment its end from zero, its transition, its corrected start and its final state.
  int64_t segments = 0, segmentOffsets = 0, firstSegment = 0, ends = 0, transitions = 0, starts = 0, finals = 0;
  // gdn_split_windows' inputs and outputs: each chunk's summed log-gate (chunkSlots a segment), the
  // threshold, and how many of each (segment, head)'s last chunks its end run and transition run take.
  int64_t chunkSlots = 0, chunkTotals = 0, threshold = 0, endRuns = 0, transitionRuns = 0;
};

namespace {

constexpr int64_t kChunk = 64;
constexpr const char *kWho = "gdn chunk_forward";

int64_t alignUp(int64_t x) { return (x + 255) / 256 * 256; }

std::string readFile(const std::filesystem::path &p) {
  std::ifstream f(p, std::ios::binary);
  if (!f)
    throw Error(fmt::format("{}: cannot read {} (compile the kernels with qlac first)", kWho, p.string()));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void expect(const TensorArg &t, const char *name, DType dtype, const std::vector<int64_t> &shape) {
  auto fail = [&](const std::string &what) {
    return Error(fmt::format("{}: argument '{}': expected {}, got {}", kWho, name, what,
                             t.data ? fmt::format("a {} tensor of shape [{}]", dtypeName(t.dtype), fmt::join(t.shape, ", "))
                                    : std::string("nothing")));
  };
  std::string want = fmt::format("a {} tensor of shape [{}]", dtypeName(dtype), fmt::join(shape, ", "));
  if (!t.data || t.dtype != dtype || t.shape != shape)
    throw fail(want);
  if (!t.strides.empty()) {
    std::vector<int64_t> rowMajor(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;)
      rowMajor[i - 1] = rowMajor[i] * shape[i];
    if (t.strides != rowMajor)
      throw fail(want + " (contiguous)");
  }
  if (t.data % 16 != 0)
    throw Error(fmt::format("{}: argument '{}': expected a 16-byte aligned address, got 0x{:x}", kWho, name, t.data));
}

void expectAbsent(const TensorArg &t, const char *name, const char *why) {
  if (t.data)
    throw Error(fmt::format("{}: argument '{}': expected nothing ({}), got a tensor", kWho, name, why));
}

struct Sizes {
  int64_t B, T, N, tokens;
  bool varlen;
  int64_t longest; // tokens of the longest sequence (an upper bound, T, without host cu_seqlens)
};

Sizes sizesOf(const ChunkForwardTensors &t) {
  if (t.q.shape.size() != 4)
    throw Error(fmt::format("{}: argument 'q': expected shape [B, T, H, K], got [{}]", kWho, fmt::join(t.q.shape, ", ")));
  Sizes s{t.q.shape[0], t.q.shape[1], 0, 0, t.cuSeqlens.data != 0, 0};
  s.tokens = s.B * s.T;
  s.longest = s.T;
  if (t.hostCuSeqlens && !s.varlen)
    throw Error(fmt::format("{}: argument 'host_cu_seqlens': given without cu_seqlens", kWho));
  if (s.varlen) {
    if (t.cuSeqlens.shape.size() != 1 || t.cuSeqlens.shape[0] < 2)
      throw Error(fmt::format("{}: argument 'cu_seqlens': expected shape [N + 1] with N >= 1, got [{}]", kWho,
                              fmt::join(t.cuSeqlens.shape, ", ")));
    if (s.B != 1)
      throw Error(fmt::format("{}: argument 'q': expected B = 1 with cu_seqlens, got B = {}", kWho, s.B));
    s.N = t.cuSeqlens.shape[0] - 1;
    if (const int64_t *cu = t.hostCuSeqlens) {
      if (cu[0] != 0)
        throw Error(fmt::format("{}: argument 'cu_seqlens': expected 0 first, got {}", kWho, cu[0]));
      s.longest = 0;
      for (int64_t i = 0; i < s.N; ++i) {
        if (cu[i + 1] < cu[i])
          throw Error(fmt::format("{}: argument 'cu_seqlens': expected non-decreasing values, got {} after {} at "
                                  "index {}",
                                  kWho, cu[i + 1], cu[i], i + 1));
        s.longest = std::max(s.longest, cu[i + 1] - cu[i]);
      }
      if (cu[s.N] != s.T)
        throw Error(fmt::format("{}: argument 'cu_seqlens': expected the last value to be T = {}, got {}", kWho, s.T,
                                cu[s.N]));
    }
  } else {
    s.N = s.B;
  }
  return s;
}



ChunkForwardLayout workspaceLayout(const ChunkForwardShape &sh, int64_t tokens, int64_t sequences, bool varlen,
                       int64_t segments = 0, int64_t chunkSlots = 0) {
  ChunkForwardLayout l;
  int64_t at = 0;
  l.offsets = at;
  at += varlen ? 0 : alignUp((sequences + 1) * 8);
  if (segments > 0) {
    const int64_t state = segments * sh.HV * sh.K * sh.V * 4;
    l.segments = segments;
    l.segmentOffsets = at;
    at += alignUp((segments + 1) * 8);
    l.firstSegment = at;
    at += alignUp((sequences + 1) * 8);
    l.ends = at;
    at += alignUp(state);
    l.transitions = at;
    at += alignUp(segments * sh.HV * sh.K * sh.K * 4);
    l.starts = at;
    at += alignUp(state);
    l.finals = at;
    at += alignUp(state);
    // Fixed-length batches: m segments of ⌈T / 64m⌉ chunks at most (gdn_split_offsets' length); a
    // varlen split gives its longest segment's chunks.
    const int64_t m = segments / sequences, T = tokens / sequences;
    l.chunkSlots = chunkSlots > 0 ? chunkSlots : (T + m * kChunk - 1) / (m * kChunk);
    l.chunkTotals = at;
    at += alignUp(sh.HV * segments * l.chunkSlots * 4);
    l.threshold = at;
    at += alignUp(4);
    l.endRuns = at;
    at += alignUp(segments * sh.HV * 8);
    l.transitionRuns = at;
    at += alignUp(segments * sh.HV * 8);
  }
  l.gcum = at;
  at += alignUp(tokens * sh.HV * 4);
  l.beta = at;
  at += sh.gateInKernel ? alignUp(tokens * sh.HV * 4) : 0;
  l.a = at;
  at += alignUp(tokens * sh.HV * kChunk * 2);
  l.aqk = at;
  at += alignUp(tokens * sh.HV * kChunk * 2);
  l.total = std::max<int64_t>(at, 256);
  return l;
}

} // namespace

/// The split kernels' tensors, in the order runSplit passes them: a package built before a change of
/// these lists (a stale devpkg) fails here, by name, instead of launching on the wrong buffers.
static void checkSplitTensors(const ChunkForwardShape &sh, size_t which, const Json &manifest) {
  const std::vector<std::string> state{"cu_seqlens", "q", "k", "v", "gcum", "a", "aqk", "o",
                                       "initial_state", "final_state", "run_chunks"};
  std::vector<std::string> cumsum{"cu_seqlens", sh.gateInKernel ? "a" : "g", "gcum"};
  if (sh.gateInKernel)
    cumsum.insert(cumsum.end(), {"b", "A_log", "dt_bias", "beta"});
  cumsum.push_back("chunk_totals");
  const std::array<std::vector<std::string>, 6> expected{
      std::vector<std::string>{"first_segment", "segment_cu_seqlens", "q"}, state, state,
      {"first_segment", "initial_state", "segment_ends", "transitions", "segment_starts"}, cumsum,
      {"first_segment", "segment_cu_seqlens", "chunk_totals", "log_gate_threshold", "end_run_chunks",
       "transition_run_chunks"}};
  std::vector<std::string> got;
  for (const Json &p : manifest.at("params").asArray())
    if (p.at("kind").asString() == "tensor")
      got.push_back(p.at("name").asString());
  if (got != expected[which])
    throw Error(fmt::format("{}: split kernel '{}' takes tensors ({}), expected ({}): rebuild the kernels (pack_gdn.sh "
                            "SPLIT=1)",
                            kWho, ChunkForwardImages::kSplitNames[which], fmt::join(got, ", "),
                            fmt::join(expected[which], ", ")));
}

int64_t pickForwardTile(int64_t narrow, int64_t wide, int64_t sequences, int64_t HV, int64_t V, int64_t sms) {
  if (wide <= 0)
    return narrow;
  return 4 * sequences * HV * (V / wide) >= 3 * sms ? wide : narrow;
}

/// A numeric setting of a kernel's build from its manifest's config ("H=16,...,BV=128,..."), or `fallback`.
static int64_t configSetting(const Json &manifest, const std::string &name, int64_t fallback) {
  if (!manifest.contains("config"))
    return fallback;
  std::istringstream config(manifest.at("config").asString());
  int64_t value = fallback; // the last one counts, as when the kernel was built (applySettings)
  for (std::string item; std::getline(config, item, ',');)
    if (item.rfind(name + "=", 0) == 0) {
      try {
        value = std::stoll(item.substr(name.size() + 1));
      } catch (const std::exception &) {
        throw Error(fmt::format("{}: a kernel's manifest config has '{}': expected an integer", kWho, item));
      }
    }
  return value;
}

ChunkForward::ChunkForward(ChunkForwardImages images, ChunkForwardShape shape)
    : images_(std::move(images)), shape_(shape) {
  if (shape_.H <= 0 || shape_.HV % shape_.H != 0 || shape_.BV <= 0 || shape_.V % shape_.BV != 0)
    throw Error(fmt::format("{}: inconsistent kernel shape H = {}, HV = {}, V = {}, BV = {}", kWho, shape_.H, shape_.HV,
                            shape_.V, shape_.BV));
  if (!images_.wideCubin.empty()) {
    wideBV_ = configSetting(images_.wideManifest, "BV", 0);
    if (wideBV_ <= shape_.BV || shape_.V % wideBV_ != 0)
      throw Error(fmt::format("{}: the wide gdn_chunk_forward build has BV = {} (config '{}'): expected a multiple of "
                              "the narrow BV = {} that divides V = {}",
                              kWho, wideBV_, images_.wideManifest.at("config").asString(), shape_.BV, shape_.V));
  }
  // gdn_chunk_inverse takes inverse_chunks chunks a block: its grid's z is the chunks over that.
  inverseChunks_ = shape_.inverseChunks > 0 ? shape_.inverseChunks
                                            : configSetting(images_.manifests[2], "inverse_chunks", 1);
  inverseHeads_ = shape_.inverseHeads > 0 ? shape_.inverseHeads
                                          : configSetting(images_.manifests[2], "inverse_heads", 1);
  if (inverseChunks_ < 1 || inverseHeads_ < 1 || shape_.HV % inverseHeads_ != 0)
    throw Error(fmt::format("{}: gdn_chunk_inverse's build has inverse_chunks = {}, inverse_heads = {}: expected at "
                            "least 1 each, inverse_heads dividing HV = {}",
                            kWho, inverseChunks_, inverseHeads_, shape_.HV));
  if (images_.hasSplit())
    for (size_t i = 0; i < images_.splitManifests.size(); ++i)
      checkSplitTensors(shape_, i, images_.splitManifests[i]);
}

int64_t ChunkForward::forwardTile(int64_t sequences, const SplitPolicy *call) const {
  const int64_t sms = policyFor(call).sms > 0 ? policyFor(call).sms : sms_ ? sms_ : 132;
  return pickForwardTile(shape_.BV, wideBV_, sequences, shape_.HV, shape_.V, sms);
}

bool ChunkForward::splitEligible() const {
  const ChunkForwardShape &sh = shape_;
  return images_.hasSplit() && sh.K == sh.V && !sh.stateVFirst && sh.initialState && sh.finalState;
}

int64_t ChunkForward::segmentsPerSequence(int64_t sequences, int64_t tokensEach, const SplitPolicy *call) const {
  if (!splitEligible() || sequences < 1 || tokensEach < 1)
    return 1;
  std::vector<int64_t> cu;
  for (int64_t i = 0; i <= sequences; ++i)
    cu.push_back(i * tokensEach);
  SplitPolicy policy = policyFor(call);
  if (policy.sms <= 0 && policy.segmentTokens == 0) // a forced segment length needs no SM count
    policy.sms = sms_ ? sms_ : queryDevice().smCount;
  SplitPlan plan = planContextSplit(cu, shape_.HV, shape_.V, shape_.BV, policy);
  return plan.split() ? (static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1) / sequences : 1;
}

ChunkForward ChunkForward::fromDirectory(const std::filesystem::path &dir, ChunkForwardShape shape) {
  ChunkForwardImages images;
  for (size_t i = 0; i < ChunkForwardImages::kNames.size(); ++i) {
    auto sub = dir / ChunkForwardImages::kNames[i];
    images.manifests[i] = Json::parse(readFile(sub / "manifest.json"));
    images.cubins[i] = readFile(sub / "kernel.cubin");
  }
  if (auto wide = dir / ChunkForwardImages::kWideName; std::filesystem::exists(wide / "manifest.json")) {
    images.wideManifest = Json::parse(readFile(wide / "manifest.json"));
    images.wideCubin = readFile(wide / "kernel.cubin");
  }
  if (std::filesystem::exists(dir / ChunkForwardImages::kSplitNames[0] / "manifest.json"))
    for (size_t i = 0; i < ChunkForwardImages::kSplitNames.size(); ++i) {
      auto sub = dir / ChunkForwardImages::kSplitNames[i];
      images.splitManifests[i] = Json::parse(readFile(sub / "manifest.json"));
      images.splitCubins[i] = readFile(sub / "kernel.cubin");
    }
  return ChunkForward(std::move(images), shape);
}

size_t ChunkForward::workspaceBytes(int64_t tokens, int64_t sequences, const SplitPolicy *call) const {
  int64_t m = sequences > 0 && tokens % sequences == 0 ? segmentsPerSequence(sequences, tokens / sequences, call) : 1;
  return static_cast<size_t>(workspaceLayout(shape_, tokens, sequences, false, m > 1 ? m * sequences : 0).total);
}

GdnVarlenSplit ChunkForward::planVarlenOnHost(const std::vector<int64_t> &cu, const SplitPolicy *call) const {
  if (cu.size() < 2)
    throw Error(fmt::format("{}: planVarlen: argument 'cu_seqlens': expected N + 1 >= 2 values, got {}", kWho,
                            cu.size()));
  if (cu.front() != 0)
    throw Error(fmt::format("{}: planVarlen: argument 'cu_seqlens': expected 0 first, got {}", kWho, cu.front()));
  for (size_t i = 1; i < cu.size(); ++i)
    if (cu[i] < cu[i - 1])
      throw Error(fmt::format("{}: planVarlen: argument 'cu_seqlens': expected non-decreasing values, got {} after {} "
                              "at index {}",
                              kWho, cu[i], cu[i - 1], i));
  GdnVarlenSplit split;
  split.cuSeqlens = cu;
  SplitPolicy policy = policyFor(call);
  if (!splitEligible() || !policy.enabled)
    return split;
  if (policy.sms <= 0 && policy.segmentTokens == 0)
    policy.sms = sms_ ? sms_ : queryDevice().smCount;
  split.plan = planContextSplit(cu, shape_.HV, shape_.V, shape_.BV, policy);
  if (!split.split())
    return split;
  const SplitPlan &p = split.plan;
  for (size_t s = 0; s + 1 < p.segmentCuSeqlens.size(); ++s)
    split.chunkSlots =
        std::max(split.chunkSlots, (p.segmentCuSeqlens[s + 1] - p.segmentCuSeqlens[s] + kChunk - 1) / kChunk);
  for (size_t i = 0; i + 1 < p.firstSegment.size(); ++i)
    split.mostSegments = std::max(split.mostSegments, p.firstSegment[i + 1] - p.firstSegment[i]);
  split.chunkSlots = std::max<int64_t>(split.chunkSlots, 1);
  split.firstOffset = alignUp(static_cast<int64_t>(p.segmentCuSeqlens.size()) * 8); // launches want 16-byte alignment
  return split;
}

GdnVarlenSplit ChunkForward::planVarlen(const std::vector<int64_t> &cuSeqlens, const SplitPolicy *call) const {
  GdnVarlenSplit split = planVarlenOnHost(cuSeqlens, call);
  if (split.split()) {
    std::vector<int64_t> tables(split.firstOffset / 8 + split.plan.firstSegment.size(), 0);
    std::copy(split.plan.segmentCuSeqlens.begin(), split.plan.segmentCuSeqlens.end(), tables.begin());
    std::copy(split.plan.firstSegment.begin(), split.plan.firstSegment.end(), tables.begin() + split.firstOffset / 8);
    split.tables = DeviceBuffer(tables.size() * sizeof(int64_t));
    split.tables.upload(tables.data(), tables.size() * sizeof(int64_t));
    // A pageable copy may still be in flight when it returns: done before any call on another stream.
    Driver &drv = Driver::get();
    drv.check(drv.cuCtxSynchronize(), "gdn chunk_forward: planVarlen's upload");
  }
  return split;
}

size_t ChunkForward::workspaceBytes(const GdnVarlenSplit &split) const {
  const int64_t N = split.sequences(), T = split.cuSeqlens.empty() ? 0 : split.cuSeqlens.back();
  return static_cast<size_t>(workspaceLayout(shape_, T, N, true, split.segments(), split.chunkSlots).total);
}

/// The plan's tables cut its cu_seqlens into segments, and its counts and device tables are the ones
/// runSplit sizes grids and reads by (no allocation: this runs on every call that passes a plan).
static bool consistentVarlenSplit(const GdnVarlenSplit &vs, bool onDevice) {
  const std::vector<int64_t> &seg = vs.plan.segmentCuSeqlens, &first = vs.plan.firstSegment, &cu = vs.cuSeqlens;
  const int64_t S = vs.segments(), N = vs.sequences();
  if (S < 1 || N < 1 || static_cast<int64_t>(first.size()) != N + 1 || first[0] != 0 || first[N] != S ||
      seg.front() != 0 || seg.back() != cu.back())
    return false;
  int64_t slots = 0, most = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (first[i + 1] <= first[i] || seg[first[i]] != cu[i])
      return false;
    most = std::max(most, first[i + 1] - first[i]);
  }
  for (int64_t j = 0; j < S; ++j) {
    if (seg[j + 1] < seg[j])
      return false;
    slots = std::max(slots, (seg[j + 1] - seg[j] + kChunk - 1) / kChunk);
  }
  return std::max<int64_t>(slots, 1) == vs.chunkSlots && most == vs.mostSegments && vs.firstOffset % 16 == 0 &&
         vs.firstOffset >= (S + 1) * 8 &&
         (!onDevice || vs.tables.size() >= static_cast<size_t>(vs.firstOffset + (N + 1) * 8));
}

void ChunkForward::validate(const ChunkForwardTensors &t) const {
  const ChunkForwardShape &sh = shape_;
  Sizes s = sizesOf(t);
  if (const GdnVarlenSplit *vs = t.varlenSplit) {
    if (!s.varlen)
      throw Error(fmt::format("{}: argument 'varlen_split': given without cu_seqlens", kWho));
    if (vs->split()) {
      if (!t.hostCuSeqlens)
        throw Error(fmt::format("{}: argument 'varlen_split': expected host_cu_seqlens beside it (the values it was "
                                "planned for)",
                                kWho));
      if (vs->sequences() != s.N || !std::equal(vs->cuSeqlens.begin(), vs->cuSeqlens.end(), t.hostCuSeqlens))
        throw Error(fmt::format("{}: argument 'varlen_split': planned for other cu_seqlens ({} sequences, {} tokens) "
                                "than this call's ({} sequences, {} tokens)",
                                kWho, vs->sequences(), vs->cuSeqlens.back(), s.N, t.hostCuSeqlens[s.N]));
      if (!vs->tables.ptr() && !dryRun_)
        throw Error(fmt::format("{}: argument 'varlen_split': its tables are not on the device (planVarlen makes them)",
                                kWho));
      // A plan from elsewhere: these kernels must take the split, and its counts must be the plan's.
      if (!splitEligible())
        throw Error(fmt::format("{}: argument 'varlen_split': these kernels do not run the context split (its "
                                "kernels, K = V, states [K][V] with initial and final state)",
                                kWho));
      if (!consistentVarlenSplit(*vs, /*onDevice=*/!dryRun_ || vs->tables.ptr()))
        throw Error(fmt::format("{}: argument 'varlen_split': its tables do not cut these cu_seqlens into segments "
                                "(planVarlen makes a plan)",
                                kWho));
    }
  }
  expect(t.q, "q", DType::bf16, {s.B, s.T, sh.H, sh.K});
  expect(t.k, "k", DType::bf16, {s.B, s.T, sh.H, sh.K});
  expect(t.v, "v", DType::bf16, {s.B, s.T, sh.HV, sh.V});
  expect(t.o, "o", DType::bf16, {s.B, s.T, sh.HV, sh.V});
  if (s.varlen)
    expect(t.cuSeqlens, "cu_seqlens", DType::i64, {s.N + 1});
  if (sh.gateInKernel) {
    expectAbsent(t.g, "g", "the gate is computed in-kernel from a, b, A_log and dt_bias");
    expectAbsent(t.beta, "beta", "the gate is computed in-kernel from a, b, A_log and dt_bias");
    expect(t.a, "a", DType::f32, {s.B, s.T, sh.HV});
    expect(t.b, "b", DType::f32, {s.B, s.T, sh.HV});
    expect(t.aLog, "A_log", DType::f32, {sh.HV});
    expect(t.dtBias, "dt_bias", DType::f32, {sh.HV});
  } else {
    expect(t.g, "g", DType::f32, {s.B, s.T, sh.HV});
    expect(t.beta, "beta", DType::f32, {s.B, s.T, sh.HV});
    for (auto [arg, name] : {std::pair{&t.a, "a"}, {&t.b, "b"}, {&t.aLog, "A_log"}, {&t.dtBias, "dt_bias"}})
      expectAbsent(*arg, name, "these kernels take g and beta");
  }
  const std::vector<int64_t> state = sh.stateVFirst ? std::vector<int64_t>{s.N, sh.HV, sh.V, sh.K}
                                                    : std::vector<int64_t>{s.N, sh.HV, sh.K, sh.V};
  if (sh.initialState)
    expect(t.initialState, "initial_state", DType::f32, state);
  else
    expectAbsent(t.initialState, "initial_state", "these kernels were built without an initial state");
  if (sh.finalState)
    expect(t.finalState, "final_state", DType::f32, state);
  else
    expectAbsent(t.finalState, "final_state", "these kernels were built without a final state");
}

void ChunkForward::launch(const char *name, const Json &manifest, std::unique_ptr<CompiledKernel> &slot,
                          const std::vector<TensorArg> &tensors, CUstream stream, std::array<uint32_t, 3> grid) {
  if (dryRun_) {
    KernelSignature(manifest).validate(tensors);
    dryRun_(name, tensors, grid);
    return;
  }
  slot->launch(tensors, stream, grid);
}

void ChunkForward::load() {
  for (size_t i = 0; i < loaded_.size(); ++i)
    if (!loaded_[i])
      loaded_[i] = std::make_unique<CompiledKernel>(images_.manifests[i], images_.cubins[i]);
  if (wideBV_ && !wide_)
    wide_ = std::make_unique<CompiledKernel>(images_.wideManifest, images_.wideCubin);
  if (images_.hasSplit()) // all loaded on the first call, not inside a later graph capture
    for (size_t i = 0; i < split_.size(); ++i)
      if (!split_[i])
        split_[i] = std::make_unique<CompiledKernel>(images_.splitManifests[i], images_.splitCubins[i]);
}

void ChunkForward::operator()(const ChunkForwardTensors &t, CUdeviceptr workspace, size_t workspaceBytes,
                              CUstream stream) {
  validate(t);
  const ChunkForwardShape &sh = shape_;
  Sizes s = sizesOf(t);
  if (!dryRun_ && (wideBV_ || (images_.hasSplit() && policyFor(t.split).sms <= 0)))
    sms_ = sms_ ? sms_ : queryDevice().smCount; // device 0, like the rest of the runtime
  // A fixed-length batch whose blocks leave SMs idle runs split into m segments a sequence.
  const int64_t m = s.varlen ? 1 : segmentsPerSequence(s.N, s.T, t.split);
  // A varlen call runs split when it brings a split plan for its cu_seqlens (planVarlen).
  const GdnVarlenSplit *vs =
      s.varlen && t.varlenSplit && t.varlenSplit->split() && policyFor(t.split).enabled ? t.varlenSplit : nullptr;
  ChunkForwardLayout l = vs ? workspaceLayout(sh, s.tokens, s.N, true, vs->segments(), vs->chunkSlots)
                            : workspaceLayout(sh, s.tokens, s.N, s.varlen, m > 1 ? m * s.N : 0);
  if (!workspace || workspace % 256 != 0 || static_cast<int64_t>(workspaceBytes) < l.total)
    throw Error(fmt::format("{}: argument 'workspace': expected {} bytes, 256-byte aligned ({}), got {} bytes at 0x{:x}",
                            kWho, l.total,
                            vs ? std::string("workspaceBytes(varlen_split)")
                               : fmt::format("workspaceBytes({}, {})", s.tokens, s.N),
                            workspaceBytes, workspace));
  if (!dryRun_)
    load();

  const int64_t T = s.tokens, N = s.N;
  auto packed = [](const TensorArg &x, DType d, std::vector<int64_t> shape) { return TensorArg{x.data, d, shape, {}}; };
  auto scratch = [&](int64_t offset, DType d, std::vector<int64_t> shape) {
    return TensorArg{workspace + static_cast<CUdeviceptr>(offset), d, shape, {}};
  };
  TensorArg cu = s.varlen ? packed(t.cuSeqlens, DType::i64, {N + 1}) : scratch(l.offsets, DType::i64, {N + 1});
  TensorArg q = packed(t.q, DType::bf16, {T, sh.H * sh.K}), k = packed(t.k, DType::bf16, {T, sh.H * sh.K});
  TensorArg gcum = scratch(l.gcum, DType::f32, {T, sh.HV});
  TensorArg a = scratch(l.a, DType::bf16, {T, sh.HV * kChunk}), aqk = scratch(l.aqk, DType::bf16, {T, sh.HV * kChunk});
  TensorArg beta = sh.gateInKernel ? scratch(l.beta, DType::f32, {T, sh.HV}) : packed(t.beta, DType::f32, {T, sh.HV});
  const uint32_t hv = static_cast<uint32_t>(sh.HV), n = static_cast<uint32_t>(N);
  // Chunks of the longest sequence: exact for a fixed-length batch and for varlen with host cu_seqlens;
  // else the whole batch's count bounds it (blocks past a sequence's end do nothing).
  const uint32_t chunks = static_cast<uint32_t>(std::max<int64_t>(1, (s.longest + kChunk - 1) / kChunk));
  if (m > 1 || vs) {
    runSplit(t, l, workspace, stream, vs);
    return;
  }

  if (!s.varlen)
    launch("gdn_offsets", images_.manifests[0], loaded_[0], {cu, q}, stream, {n + 1, 1, 1});
  std::vector<TensorArg> cumsum{cu, packed(sh.gateInKernel ? t.a : t.g, DType::f32, {T, sh.HV}), gcum};
  if (sh.gateInKernel) {
    cumsum.push_back(packed(t.b, DType::f32, {T, sh.HV}));
    cumsum.push_back(t.aLog);
    cumsum.push_back(t.dtBias);
    cumsum.push_back(beta);
  }
  launch("gdn_cumsum", images_.manifests[1], loaded_[1], cumsum, stream, {0, n, chunks}); // x: its build's
  launch("gdn_chunk_inverse", images_.manifests[2], loaded_[2], {cu, q, k, gcum, beta, a, aqk}, stream,
         {hv / static_cast<uint32_t>(inverseHeads_), n, inverseGridZ(chunks)});
  std::vector<TensorArg> forward{cu, q, k, packed(t.v, DType::bf16, {T, sh.HV * sh.V}), gcum, a, aqk,
                                 packed(t.o, DType::bf16, {T, sh.HV * sh.V})};
  const std::vector<int64_t> states = sh.stateVFirst ? std::vector<int64_t>{N * sh.HV * sh.V, sh.K}
                                                     : std::vector<int64_t>{N * sh.HV * sh.K, sh.V};
  if (sh.initialState)
    forward.push_back(packed(t.initialState, DType::f32, states));
  if (sh.finalState)
    forward.push_back(packed(t.finalState, DType::f32, states));
  const int64_t bv = forwardTile(N, t.split);
  if (bv == sh.BV)
    launch("gdn_chunk_forward", images_.manifests[3], loaded_[3], forward, stream,
           {static_cast<uint32_t>(sh.HV * (sh.V / bv)), n, 1});
  else
    launch(ChunkForwardImages::kWideName, images_.wideManifest, wide_, forward, stream,
           {static_cast<uint32_t>(sh.HV * (sh.V / bv)), n, 1});
}

void ChunkForward::runSplit(const ChunkForwardTensors &t, const ChunkForwardLayout &l, CUdeviceptr workspace, CUstream stream,
                            const GdnVarlenSplit *vs) {
  // docs/context-split.md: the segment batch's offsets on the device; cumsum and inverse over it (they
  // are chunk-local); each segment's end from zero (E) and its transition (A); the correction
  // S_{s+1} = A_s·S_s + E_s from each sequence's initial state; the forward over every segment from its
  // start; each sequence's last segment's final state copied out.
  const ChunkForwardShape &sh = shape_;
  const auto &names = ChunkForwardImages::kSplitNames;
  Sizes s = sizesOf(t);
  // A varlen call's segment tables come planned (planVarlen: only long sequences cut, their segment
  // counts differ); a fixed-length batch's are made on the device (gdn_split_offsets), m a sequence.
  const int64_t T = s.tokens, N = s.N, S = l.segments, m = vs ? vs->mostSegments : S / N;
  const int64_t segmentChunks =
      vs ? vs->chunkSlots : (s.T + m * kChunk - 1) / (m * kChunk); // gdn_split_offsets' length, in chunks
  auto packed = [](const TensorArg &x, DType d, std::vector<int64_t> shape) { return TensorArg{x.data, d, shape, {}}; };
  auto scratch = [&](int64_t offset, DType d, std::vector<int64_t> shape) {
    return TensorArg{workspace + static_cast<CUdeviceptr>(offset), d, shape, {}};
  };
  auto u32 = [](int64_t x) { return static_cast<uint32_t>(x); };
  // (A dry run's plan may have no device tables: a stand-in address, never dereferenced.)
  const CUdeviceptr tables = vs ? (vs->tables.ptr() ? vs->tables.ptr() : CUdeviceptr{1} << 40) : 0;
  TensorArg segCu = vs ? TensorArg{tables, DType::i64, {S + 1}, {}} : scratch(l.segmentOffsets, DType::i64, {S + 1});
  TensorArg first = vs ? TensorArg{tables + static_cast<CUdeviceptr>(vs->firstOffset), DType::i64, {N + 1}, {}}
                       : scratch(l.firstSegment, DType::i64, {N + 1});
  TensorArg q = packed(t.q, DType::bf16, {T, sh.H * sh.K}), k = packed(t.k, DType::bf16, {T, sh.H * sh.K});
  TensorArg v = packed(t.v, DType::bf16, {T, sh.HV * sh.V}), o = packed(t.o, DType::bf16, {T, sh.HV * sh.V});
  TensorArg gcum = scratch(l.gcum, DType::f32, {T, sh.HV});
  TensorArg a = scratch(l.a, DType::bf16, {T, sh.HV * kChunk}), aqk = scratch(l.aqk, DType::bf16, {T, sh.HV * kChunk});
  TensorArg beta = sh.gateInKernel ? scratch(l.beta, DType::f32, {T, sh.HV}) : packed(t.beta, DType::f32, {T, sh.HV});
  const std::vector<int64_t> states{S * sh.HV * sh.K, sh.V};
  TensorArg ends = scratch(l.ends, DType::f32, states), starts = scratch(l.starts, DType::f32, states);
  TensorArg finals = scratch(l.finals, DType::f32, states);
  TensorArg transitions = scratch(l.transitions, DType::f32, {S * sh.HV * sh.K, sh.K});
  const uint32_t hv = u32(sh.HV), segs = u32(S), chunks = u32(segmentChunks);
  if (static_cast<int64_t>(chunks) != l.chunkSlots)
    throw Error(fmt::format("{}: internal: the split's segments have {} chunks, the workspace {}", kWho, chunks,
                            l.chunkSlots));
  TensorArg totals = scratch(l.chunkTotals, DType::f32, {sh.HV * S * l.chunkSlots, 1});
  TensorArg threshold = scratch(l.threshold, DType::f32, {1});
  TensorArg endRuns = scratch(l.endRuns, DType::i64, {S * sh.HV});
  TensorArg transitionRuns = scratch(l.transitionRuns, DType::i64, {S * sh.HV});
  Driver &drv = Driver::get();
  // The threshold goes to the device as a 32-bit pattern (a memset: no host memory, capturable).
  const SplitPolicy &policy = policyFor(t.split);
  const float limit = policy.exact ? -std::numeric_limits<float>::infinity() : static_cast<float>(policy.logGateThreshold);
  if (dryRun_)
    dryRun_("memset32", {threshold}, {std::bit_cast<uint32_t>(limit), 1, 0});
  else
    drv.check(drv.cuMemsetD32Async(threshold.data, std::bit_cast<uint32_t>(limit), 1, stream),
              "gdn chunk_forward: the split's log-gate threshold");

  if (!vs)
    launch(names[0], images_.splitManifests[0], split_[0], {first, segCu, q}, stream, {u32(S + 1), 1, 1});
  std::vector<TensorArg> cumsum{segCu, packed(sh.gateInKernel ? t.a : t.g, DType::f32, {T, sh.HV}), gcum};
  if (sh.gateInKernel) {
    cumsum.push_back(packed(t.b, DType::f32, {T, sh.HV}));
    cumsum.push_back(t.aLog);
    cumsum.push_back(t.dtBias);
    cumsum.push_back(beta);
  }
  cumsum.push_back(totals);
  launch(names[4], images_.splitManifests[4], split_[4], cumsum, stream, {0, segs, chunks}); // x: its build's
  launch("gdn_chunk_inverse", images_.manifests[2], loaded_[2], {segCu, q, k, gcum, beta, a, aqk}, stream,
         {hv / u32(inverseHeads_), segs, inverseGridZ(chunks)});
  launch(names[5], images_.splitManifests[5], split_[5], {first, segCu, totals, threshold, endRuns, transitionRuns}, stream,
         {hv, u32(N), u32(m)});
  // The end and transition runs (gdn_chunk_forward split_run = 1, 2, made by qla-context-split, with the
  // main forward's BV: pack_gdn.sh) read their initial-state tensor only for the states' places: `starts`
  // has its shape and is not written before the correction.
  launch(names[1], images_.splitManifests[1], split_[1], {segCu, q, k, v, gcum, a, aqk, o, starts, ends, endRuns}, stream,
                    {u32(sh.HV * (sh.V / sh.BV)), segs, 1});
  launch(names[2], images_.splitManifests[2], split_[2], {segCu, q, k, v, gcum, a, aqk, o, starts, transitions, transitionRuns},
         stream,
                    {u32(sh.HV * (sh.K / sh.BV)), segs, 1});
  launch(names[3], images_.splitManifests[3], split_[3],
         {first, packed(t.initialState, DType::f32, {N * sh.HV * sh.K, sh.V}), ends, transitions, starts},
                    stream, {u32(sh.HV * (sh.V / 64)), u32(N), 1});
  const int64_t bv = forwardTile(S, t.split);
  const std::vector<TensorArg> mainRun{segCu, q, k, v, gcum, a, aqk, o, starts, finals};
  if (bv == sh.BV)
    launch("gdn_chunk_forward", images_.manifests[3], loaded_[3], mainRun, stream, {u32(sh.HV * (sh.V / bv)), segs, 1});
  else
    launch(ChunkForwardImages::kWideName, images_.wideManifest, wide_, mainRun, stream,
           {u32(sh.HV * (sh.V / bv)), segs, 1});
  const size_t headStates = static_cast<size_t>(sh.HV * sh.K * sh.V) * 4;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t lastSegment = vs ? vs->plan.firstSegment[i + 1] - 1 : (i + 1) * m - 1;
    const CUdeviceptr to = t.finalState.data + i * headStates,
                      from = workspace + static_cast<CUdeviceptr>(l.finals) + lastSegment * headStates;
    if (dryRun_) { // a copy of headStates bytes, as two f32 ranges
      const int64_t count = static_cast<int64_t>(headStates / 4);
      dryRun_("copy", {TensorArg{to, DType::f32, {count}, {}}, TensorArg{from, DType::f32, {count}, {}}}, {0, 0, 0});
      continue;
    }
    drv.check(drv.cuMemcpyDtoDAsync(to, from, headStates, stream),
              "gdn chunk_forward: copy of a split sequence's final state");
  }
}

} // namespace qla::gdn

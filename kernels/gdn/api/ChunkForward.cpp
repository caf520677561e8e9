// qla::gdn::ChunkForward: its kernels, argument checks and the launches of an unsplit call (the split's
// are in ChunkForwardSplit.cpp, the workspace layout in ChunkForwardWorkspace.cpp).
#include "gdn/api/ChunkForwardInternal.h"

#include "qla/runtime/DeviceInfo.h"
#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace qla::gdn {

using namespace detail;

namespace {

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

} // namespace

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

bool detail::fusesInverse(const Json &forwardManifest) {
  // The tensors ahead of the states: a two-kernel build takes a and aqk, a fused one β in their place.
  const std::vector<std::string> twoKernels{"cu_seqlens", "q", "k", "v", "gcum", "a", "aqk", "o"},
      fused{"cu_seqlens", "q", "k", "v", "gcum", "beta", "o"};
  std::vector<std::string> got;
  for (const Json &p : forwardManifest.at("params").asArray())
    if (p.at("kind").asString() == "tensor")
      got.push_back(p.at("name").asString());
  auto startsWith = [&](const std::vector<std::string> &head) {
    return got.size() >= head.size() && std::equal(head.begin(), head.end(), got.begin());
  };
  if (startsWith(fused))
    return true;
  if (startsWith(twoKernels))
    return false;
  throw Error(fmt::format("{}: gdn_chunk_forward takes tensors ({}), expected ({}, ...) or, built with fuse_inverse, "
                          "({}, ...)",
                          kWho, fmt::join(got, ", "), fmt::join(twoKernels, ", "), fmt::join(fused, ", ")));
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
  // and inverse_heads value heads: its build's grid has HV / inverse_heads blocks along x (images without
  // the inverse's manifest, made before any launch, take the shape's or one).
  const Json &inverse = images_.manifests[2];
  const int64_t inverseBlocksX = inverse.contains("grid") ? inverse.at("grid").asArray().at(0).asInt()
                                 : shape_.HV / std::max<int64_t>(shape_.inverseHeads, 1);
  inverseHeads_ = inverseBlocksX > 0 && shape_.HV % inverseBlocksX == 0 ? shape_.HV / inverseBlocksX : 0;
  if (inverseChunks_ < 1 || inverseHeads_ < 1 || (shape_.inverseHeads > 0 && shape_.inverseHeads != inverseHeads_))
    throw Error(fmt::format("{}: gdn_chunk_inverse's build has inverse_chunks = {} and a grid of {} blocks along x: "
                            "expected at least 1 chunk a block and HV / inverse_heads blocks (HV = {}{})",
                            kWho, inverseChunks_, inverseBlocksX, shape_.HV,
                            shape_.inverseHeads > 0 ? fmt::format(", inverse_heads = {}", shape_.inverseHeads)
                                                    : std::string()));
  if (images_.hasSplit())
    for (size_t i = 0; i < images_.splitManifests.size(); ++i)
      checkSplitTensors(shape_, i, images_.splitManifests[i]);
}

int64_t ChunkForward::forwardTile(int64_t sequences, const SplitPolicy *call) const {
  const int64_t sms = policyFor(call).sms > 0 ? policyFor(call).sms : sms_ ? sms_ : 132;
  return pickForwardTile(shape_.BV, wideBV_, sequences, shape_.HV, shape_.V, sms);
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
                                "kernels, K = V <= 128, states [K][V] with initial and final state)",
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
  const int64_t bv = forwardTile(N, t.split);
  const Json &forwardManifest = bv == sh.BV ? images_.manifests[3] : images_.wideManifest;
  // A forward built with fuse_inverse makes a and aqk itself, from β.
  const bool fused = fusesInverse(forwardManifest);
  if (!fused)
    launch("gdn_chunk_inverse", images_.manifests[2], loaded_[2], {cu, q, k, gcum, beta, a, aqk}, stream,
           {hv / static_cast<uint32_t>(inverseHeads_), n, inverseGridZ(chunks)});
  std::vector<TensorArg> forward{cu, q, k, packed(t.v, DType::bf16, {T, sh.HV * sh.V}), gcum};
  if (fused)
    forward.push_back(beta);
  else
    forward.insert(forward.end(), {a, aqk});
  forward.push_back(packed(t.o, DType::bf16, {T, sh.HV * sh.V}));
  const std::vector<int64_t> states = sh.stateVFirst ? std::vector<int64_t>{N * sh.HV * sh.V, sh.K}
                                                     : std::vector<int64_t>{N * sh.HV * sh.K, sh.V};
  if (sh.initialState)
    forward.push_back(packed(t.initialState, DType::f32, states));
  if (sh.finalState)
    forward.push_back(packed(t.finalState, DType::f32, states));
  if (bv == sh.BV)
    launch("gdn_chunk_forward", images_.manifests[3], loaded_[3], forward, stream,
           {static_cast<uint32_t>(sh.HV * (sh.V / bv)), n, 1});
  else
    launch(ChunkForwardImages::kWideName, images_.wideManifest, wide_, forward, stream,
           {static_cast<uint32_t>(sh.HV * (sh.V / bv)), n, 1});
}

} // namespace qla::gdn

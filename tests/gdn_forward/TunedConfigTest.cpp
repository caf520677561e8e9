// The GDN planner reading the tuning database (which tuned build suits a call, what of it is taken),
// and the comparison the GPU check and qlac tune gdn use.
#include "gdn/api/ChunkForwardJit.h"
#include "gdn/api/GdnCheck.h"
#include "gdn/api/TunedConfig.h"
#include "gdn/api/SplitPlan.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <fmt/format.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <cmath>
#include <limits>
#include <random>

using namespace qla;
using namespace qla::gdn;

namespace {

TuningDb tunedDb(const DeviceInfo &gpu) {
  TuningDb db = TuningDb::load("/nonexistent/tuning.json");
  auto add = [&](int64_t HV, int64_t B, int64_t T, const std::string &tiles, double ms, bool pass = true) {
    std::string config = fmt::format("H=16,HV={},K=128,V=128,{}", HV, tiles);
    db.record(gpu, {"gdn_forward", gdnTuningShape(16, HV, 128, 128, B, T), config, ms, 3e-3, pass, "2026-12-03"});
  };
  add(32, 4, 8192, "BV=64", 1.00);
  add(32, 4, 8192, "BV=64,inverse_blocks_per_sm=4", 0.95);
  add(32, 4, 8192, "BV=64,inverse_chunks=2", 0.90, false); // fastest, but failed its check
  add(32, 1, 32768, "BV=64", 1.05);
  add(32, 1, 32768, "BV=64,inverse_chunks=2", 1.04);
  add(64, 4, 8192, "BV=128,stages=2", 1.9);
  return db;
}

} // namespace

TEST_CASE("the GDN planner takes the tuned build of the nearest tuned shape", "[gdn][tuning]") {
  DeviceInfo h200{.name = "NVIDIA H200", .smCount = 132};
  TuningDb db = tunedDb(h200);
  const std::string gpu = TuningDb::gpuKey(h200);
  auto pick = [&](int64_t HV, int64_t B, int64_t T) {
    auto e = tunedGdnForward(db, gpu, 16, HV, 128, 128, B, T);
    return e ? e->config : std::string("none");
  };
  // The shape itself: the fastest config that passed.
  CHECK(pick(32, 4, 8192) == "H=16,HV=32,K=128,V=128,BV=64,inverse_blocks_per_sm=4");
  CHECK(pick(32, 1, 32768) == "H=16,HV=32,K=128,V=128,BV=64,inverse_chunks=2");
  // The same sequence count first, then the nearest length; else the nearest token count.
  CHECK(pick(32, 4, 2048) == "H=16,HV=32,K=128,V=128,BV=64,inverse_blocks_per_sm=4");
  CHECK(pick(32, 1, 8192) == "H=16,HV=32,K=128,V=128,BV=64,inverse_chunks=2");
  CHECK(pick(32, 8, 4096) == "H=16,HV=32,K=128,V=128,BV=64,inverse_blocks_per_sm=4"); // 32768 tokens: both tie
  CHECK(pick(64, 2, 16384) == "H=16,HV=64,K=128,V=128,BV=128,stages=2");
  // Heads never tuned, or another GPU: nothing.
  CHECK(pick(48, 4, 8192) == "none");
  CHECK_FALSE(tunedGdnForward(db, "NVIDIA H100", 16, 32, 128, 128, 4, 8192));
  // The same part at other clocks finds the database's entries.
  DeviceInfo otherClock = h200;
  otherClock.clockKHz = 1755000;
  REQUIRE(db.gpuFor(otherClock));
  CHECK(*db.gpuFor(otherClock) == gpu);
  CHECK_FALSE(db.gpuFor(DeviceInfo{.name = "NVIDIA H100", .smCount = 132}));
}

TEST_CASE("a tuned build changes the tiles, not what the call computes", "[gdn][tuning]") {
  GdnForwardConfig c = parseGdnForwardConfig("H=16,HV=32,K=128,V=128,gate_in_kernel=1,l2norm=1,final_state=1");
  GdnForwardConfig t = withTunedTiles(c, "H=16,HV=32,K=128,V=128,BV=128,stages=2,inverse_blocks_per_sm=4,"
                                         "inverse_chunks=2,precise=0");
  CHECK(t.BV == 128);
  CHECK(t.stages == 2);
  CHECK(t.inverseBlocksPerSM == 4);
  CHECK(t.inverseChunks == 2);
  CHECK(t.precise == c.precise); // precision is the caller's
  CHECK(t.gateInKernel);
  CHECK(t.l2normQK);
  CHECK(t.finalState);
  CHECK_FALSE(t.initialState);
}

TEST_CASE("the GPU check's comparison agrees with relL2 and counts unwritten outputs", "[gdn][check]") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  std::vector<double> ref(100003), got(ref.size());
  std::vector<float> f32(ref.size());
  std::vector<uint16_t> bf16(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    ref[i] = normal(rng);
    got[i] = roundToBf16(ref[i] * (1 + 1e-3 * normal(rng)));
    f32[i] = static_cast<float>(got[i]);
    bf16[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(f32[i]) >> 16); // exact: got is a bf16 value
  }
  const double expected = relL2(std::span<const double>(got), std::span<const double>(ref));
  Compared b = compareToReference(bf16, ref), f = compareToReference(f32, ref);
  CHECK(expected > 0);
  CHECK(std::abs(b.relL2 - expected) <= 1e-12 * expected);
  CHECK(std::abs(f.relL2 - expected) <= 1e-12 * expected);
  CHECK(b.nans == 0);
  bf16[77] = 0x7FC1; // the poison of an unwritten output
  f32[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK(compareToReference(bf16, ref).nans == 1);
  CHECK(std::isnan(compareToReference(bf16, ref).relL2));
  CHECK(compareToReference(f32, ref).nans == 1);
}

TEST_CASE("the JIT kernel set with the planner's kernels is the set qlac tune gdn times", "[gdn][tuning][jit]") {
  GdnForwardConfig c = parseGdnForwardConfig("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1");
  CHECK(gdnForwardPackage(c, false).size() == 4);
  CHECK(gdnForwardPackage(c, true).size() == 11); // + the wide state kernel + the split's six
  // No split without states, no wide tile over TMA rings.
  CHECK(gdnForwardPackage(parseGdnForwardConfig("H=1,HV=2,K=128,V=128"), true).size() == 5);
  CHECK(gdnForwardPackage(parseGdnForwardConfig("H=1,HV=2,K=128,V=128,stages=2,initial_state=1,final_state=1"), true)
            .size() == 10);
  // Built and loaded as ChunkForward (its tensor lists checked by name); the planner has both tiles and
  // the split to choose from.
  ChunkForward fwd = buildChunkForward(c, true);
  CHECK(fwd.forwardTile(1) == 64);
  CHECK(fwd.forwardTile(64) == 128);
  SplitPolicy policy{.sms = 132};
  CHECK(fwd.segmentsPerSequence(1, 32768, &policy) > 1);
  CHECK(buildChunkForward(c).segmentsPerSequence(1, 32768, &policy) == 1); // the four kernels alone
}

TEST_CASE("without a tuned entry the tuned builder builds the config as given", "[gdn][tuning][jit]") {
  GdnForwardConfig c = parseGdnForwardConfig("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1");
  const auto dir = std::filesystem::temp_directory_path() / ("qla-tuned-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.json") << "not a tuning database";
  // No database, or a broken one (read only with a GPU; without one the builder does not look): untuned.
  for (const char *db : {"missing.json", "bad.json"}) {
    std::string from = "unset";
    ChunkForward fwd = buildTunedChunkForward(c, 1, 32768, dir / db, &from);
    CHECK(from == "unset");
    CHECK(fwd.forwardTile(64) == 128); // with the planner's kernels
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a tuned segment length reaches the planner", "[gdn][tuning][jit]") {
  GdnForwardConfig c = parseGdnForwardConfig("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1");
  CHECK(withTunedTiles(c, "H=1,HV=2,K=128,V=128,BV=64,split_tokens=4096").splitTokens == 4096);
  CHECK(withTunedTiles(c, "H=1,HV=2,K=128,V=128,BV=64").splitTokens == 0);
  CHECK_THROWS_WITH(parseGdnForwardConfig("H=1,HV=2,K=128,V=128,split_tokens=100"),
                    Catch::Matchers::ContainsSubstring("split_tokens = 100 must be 0"));
  // Built with it, the kernel set's planner takes it as the length when it splits.
  c.splitTokens = 4096;
  ChunkForward fwd = buildChunkForward(c, true);
  CHECK(fwd.splitPolicy().segmentTokensWhenSplit == 4096);
  CHECK(fwd.splitPolicy().segmentTokens == 0);
  // The decision stays the planner's (does the call leave SMs idle?); only the length is the tuned one.
  SplitPolicy tuned{.sms = 132, .segmentTokensWhenSplit = 4096};
  auto segments = [&](int64_t B, int64_t T) {
    std::vector<int64_t> cu;
    for (int64_t i = 0; i <= B; ++i)
      cu.push_back(i * T);
    SplitPlan plan = planContextSplit(cu, 48, 128, 64, tuned);
    return plan.split() ? (static_cast<int64_t>(plan.segmentCuSeqlens.size()) - 1) / B : 1;
  };
  CHECK(segments(1, 32768) == 8);  // 96 blocks of 264: split, in 4096-token segments
  CHECK(segments(1, 6000) == 1);   // shorter than two segments
  CHECK(segments(16, 32768) == 1); // 1536 blocks fill the GPU: no split, tuned length or not
  SplitPolicy planner{.sms = 132};
  CHECK(planContextSplit({0, 32768}, 48, 128, 64, planner).segmentTokens == 8192); // its own rule: four segments
}

TEST_CASE("the split is taken for in-kernel gates and L2 norm like any build", "[gdn][split][jit]") {
  // Run 36's NaN with these features was the wide state kernel's L2 norm (fixed in qla-assign-layouts),
  // not the split; the split of such builds is planned like the others.
  SplitPolicy policy{.sms = 132};
  for (const char *extra : {"", ",gate_in_kernel=1", ",l2norm=1"}) {
    ChunkForward fwd = buildChunkForward(
        parseGdnForwardConfig(std::string("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1") + extra), true);
    CHECK(fwd.segmentsPerSequence(1, 32768, &policy) > 1);
  }
}

TEST_CASE("a varlen call's split is planned on the host: only long sequences cut", "[gdn][split][varlen]") {
  ChunkForward fwd =
      buildChunkForward(parseGdnForwardConfig("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1"), true);
  SplitPolicy policy{.sms = 132};
  // Two long sequences among short ones: 4 blocks a sequence leave the GPU idle, so the long ones are
  // cut into segments of one length, the short ones stay whole.
  const std::vector<int64_t> cu{0, 100, 32868, 32900, 49284, 49300};
  GdnVarlenSplit split = fwd.planVarlenOnHost(cu, &policy);
  REQUIRE(split.split());
  const SplitPlan &p = split.plan;
  CHECK(split.sequences() == 5);
  CHECK(p.firstSegment.size() == 6);
  CHECK(p.segmentCuSeqlens.front() == 0);
  CHECK(p.segmentCuSeqlens.back() == 49300);
  for (int64_t i : {0, 2, 4}) // the short ones: one segment each, the sequence itself
    CHECK(p.firstSegment[i + 1] - p.firstSegment[i] == 1);
  CHECK(p.firstSegment[2] - p.firstSegment[1] > 2); // 32768 tokens: cut
  CHECK(p.firstSegment[4] - p.firstSegment[3] > 1); // 16384 tokens: cut
  CHECK(split.mostSegments == p.firstSegment[2] - p.firstSegment[1]);
  // The first segments sit 256-aligned after the segment offsets (launches want 16-byte addresses).
  CHECK(split.firstOffset % 256 == 0);
  CHECK(split.firstOffset >= static_cast<int64_t>(p.segmentCuSeqlens.size()) * 8);
  CHECK(split.chunkSlots == p.segmentTokens / 64);
  for (size_t i = 0; i + 1 < cu.size(); ++i) { // every sequence's segments tile it exactly
    CHECK(p.segmentCuSeqlens[p.firstSegment[i]] == cu[i]);
    CHECK(p.segmentCuSeqlens[p.firstSegment[i + 1]] == cu[i + 1]);
  }
  // Its workspace holds the segments' states: more than the unsplit varlen call's.
  SplitPolicy unsplit{.sms = 132, .enabled = false};
  CHECK(fwd.workspaceBytes(split) > fwd.workspaceBytes(49300, 5, &unsplit));
  // Many sequences fill the GPU: no split, no tables.
  std::vector<int64_t> many{0};
  for (int i = 0; i < 200; ++i)
    many.push_back(many.back() + (i == 7 ? 32768 : 64));
  CHECK_FALSE(fwd.planVarlenOnHost(many, &policy).split());
  // Builds whose states the split cannot carry (state_v_first) plan none; bad cu_seqlens are refused.
  ChunkForward vFirst = buildChunkForward(
      parseGdnForwardConfig("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1,state_v_first=1"), true);
  CHECK_FALSE(vFirst.planVarlenOnHost(cu, &policy).split());
  CHECK_THROWS_WITH(fwd.planVarlenOnHost({0, 10, 5}, &policy),
                    Catch::Matchers::ContainsSubstring("expected non-decreasing values, got 5 after 10"));
  CHECK_THROWS_WITH(fwd.planVarlenOnHost({3, 10}, &policy), Catch::Matchers::ContainsSubstring("expected 0 first, got 3"));
  // Split off for the call: no plan is made.
  SplitPolicy off{.sms = 132, .enabled = false};
  CHECK_FALSE(fwd.planVarlenOnHost(cu, &off).split());

  // A call must bring the cu_seqlens it was planned for, on the host.
  auto fake = [](DType d, std::vector<int64_t> shape) { return TensorArg{0x10000, d, std::move(shape), {}}; };
  ChunkForwardTensors t;
  t.q = fake(DType::bf16, {1, 49300, 1, 128});
  t.k = fake(DType::bf16, {1, 49300, 1, 128});
  t.v = fake(DType::bf16, {1, 49300, 2, 128});
  t.o = fake(DType::bf16, {1, 49300, 2, 128});
  t.g = fake(DType::f32, {1, 49300, 2});
  t.beta = fake(DType::f32, {1, 49300, 2});
  t.initialState = fake(DType::f32, {5, 2, 128, 128});
  t.finalState = fake(DType::f32, {5, 2, 128, 128});
  t.cuSeqlens = fake(DType::i64, {6});
  t.varlenSplit = &split;
  CHECK_THROWS_WITH(fwd.validate(t), Catch::Matchers::ContainsSubstring("expected host_cu_seqlens beside it"));
  std::vector<int64_t> other = cu;
  other[1] = 200;
  t.hostCuSeqlens = other.data();
  CHECK_THROWS_WITH(fwd.validate(t), Catch::Matchers::ContainsSubstring("planned for other cu_seqlens"));
  t.hostCuSeqlens = cu.data();
  CHECK_THROWS_WITH(fwd.validate(t), Catch::Matchers::ContainsSubstring("its tables are not on the device"));
}

namespace {

struct Launch {
  std::string kernel;
  std::array<uint32_t, 3> grid;
};

/// Fake device tensors of a call (never dereferenced: a dry run).
ChunkForwardTensors dryArgs(int64_t B, int64_t T, int64_t N) {
  auto fake = [](DType d, std::vector<int64_t> shape) { return TensorArg{0x10000, d, std::move(shape), {}}; };
  ChunkForwardTensors t;
  t.q = fake(DType::bf16, {B, T, 1, 128});
  t.k = fake(DType::bf16, {B, T, 1, 128});
  t.v = fake(DType::bf16, {B, T, 2, 128});
  t.o = fake(DType::bf16, {B, T, 2, 128});
  t.g = fake(DType::f32, {B, T, 2});
  t.beta = fake(DType::f32, {B, T, 2});
  t.initialState = fake(DType::f32, {N, 2, 128, 128});
  t.finalState = fake(DType::f32, {N, 2, 128, 128});
  return t;
}

} // namespace

TEST_CASE("a call's launches match the kernels' manifests and the interpreter's grids (dry run)", "[gdn][split][varlen]") {
  // Every launch is checked against its kernel's manifest (tensor count, dtypes, shapes, alignment)
  // without a GPU; the grids are the interpreter split's (kernels/gdn/forward/ExactSplit.cpp).
  ChunkForward fwd =
      buildChunkForward(parseGdnForwardConfig("H=1,HV=2,K=128,V=128,initial_state=1,final_state=1"), true);
  std::vector<Launch> launches;
  fwd.dryRun([&](const std::string &kernel, const std::vector<TensorArg> &, std::array<uint32_t, 3> grid) {
    launches.push_back({kernel, grid});
  });
  SplitPolicy policy{.sms = 132};
  const CUdeviceptr workspace = CUdeviceptr{1} << 32;
  auto kernels = [&] { // the launches without the split's memset and copies
    std::vector<Launch> k;
    for (const Launch &l : launches)
      if (l.kernel != "memset32" && l.kernel != "copy")
        k.push_back(l);
    return k;
  };
  auto names = [&] {
    std::vector<std::string> n;
    for (const Launch &l : launches)
      if (l.kernel != "memset32" && l.kernel != "copy")
        n.push_back(l.kernel);
    return n;
  };

  SECTION("a fixed-length call that fills no GPU runs split, its tables made on the device") {
    ChunkForwardTensors t = dryArgs(1, 32768, 1);
    t.split = &policy;
    const int64_t m = fwd.segmentsPerSequence(1, 32768, &policy);
    REQUIRE(m > 1);
    fwd(t, workspace, fwd.workspaceBytes(32768, 1, &policy));
    // The main run over 64 segments takes the wide tile (its grid fills the GPU).
    CHECK(names() == std::vector<std::string>{"gdn_split_offsets", "gdn_split_cumsum", "gdn_chunk_inverse",
                                              "gdn_split_windows", "gdn_chunk_forward_state",
                                              "gdn_chunk_forward_transition", "gdn_split_correct",
                                              fwd.forwardTile(m) == 64 ? "gdn_chunk_forward" : "gdn_chunk_forward_wide"});
    const uint32_t S = static_cast<uint32_t>(m), slots = static_cast<uint32_t>(32768 / m / 64);
    CHECK(kernels()[1].grid == std::array<uint32_t, 3>{0, S, slots}); // x: the cumsum's build (cumsumHeads)
    CHECK(kernels()[3].grid == std::array<uint32_t, 3>{2, 1, S});
    CHECK(kernels()[4].grid == std::array<uint32_t, 3>{4, S, 1});
    CHECK(kernels()[6].grid == std::array<uint32_t, 3>{0, 1, 1}); // x: the correction's build (heads × slices)
  }
  SECTION("a varlen call with its plan runs split over the planned segments") {
    const std::vector<int64_t> cu{0, 100, 32868, 32900, 49284, 49300};
    GdnVarlenSplit split = fwd.planVarlenOnHost(cu, &policy);
    REQUIRE(split.split());
    ChunkForwardTensors t = dryArgs(1, 49300, 5);
    t.cuSeqlens = TensorArg{0x10000, DType::i64, {6}, {}};
    t.hostCuSeqlens = cu.data();
    t.varlenSplit = &split;
    t.split = &policy;
    fwd(t, workspace, fwd.workspaceBytes(split));
    // No gdn_split_offsets: the tables are the plan's.
    const uint32_t S = static_cast<uint32_t>(split.segments());
    CHECK(names() == std::vector<std::string>{"gdn_split_cumsum", "gdn_chunk_inverse", "gdn_split_windows",
                                              "gdn_chunk_forward_state", "gdn_chunk_forward_transition",
                                              "gdn_split_correct",
                                              fwd.forwardTile(S) == 64 ? "gdn_chunk_forward" : "gdn_chunk_forward_wide"});
    CHECK(kernels()[0].grid ==
          std::array<uint32_t, 3>{0, S, static_cast<uint32_t>(split.chunkSlots)});                // cumsum
    CHECK(kernels()[2].grid == std::array<uint32_t, 3>{2, 5, static_cast<uint32_t>(split.mostSegments)}); // windows
    CHECK(kernels()[3].grid == std::array<uint32_t, 3>{4, S, 1});                                     // segment ends
    CHECK(kernels()[5].grid == std::array<uint32_t, 3>{0, 5, 1}); // correction (x: its build's)
    CHECK(kernels()[6].grid[1] == S);                                                                  // every segment
    // Too small a workspace is refused, naming the plan's sizing.
    CHECK_THROWS_WITH(fwd(t, workspace, fwd.workspaceBytes(split) - 256),
                      Catch::Matchers::ContainsSubstring("workspaceBytes(varlen_split)"));
    // A plan whose segment with a successor is not whole chunks is refused (its end run would cover
    // none of it, and the correction reads that end).
    GdnVarlenSplit uneven = fwd.planVarlenOnHost(cu, &policy);
    REQUIRE(uneven.plan.firstSegment[2] - uneven.plan.firstSegment[1] > 1);
    uneven.plan.segmentCuSeqlens[uneven.plan.firstSegment[1] + 1] -= 32; // 32 tokens to the next segment
    uneven.chunkSlots += 1; // which is now that much longer: the plan stays consistent otherwise
    t.varlenSplit = &uneven;
    CHECK_THROWS_WITH(fwd(t, workspace, fwd.workspaceBytes(uneven)),
                      Catch::Matchers::ContainsSubstring("its tables do not cut these cu_seqlens into segments"));
  }
  SECTION("without a plan a varlen call runs unsplit; a short fixed-length one too") {
    const std::vector<int64_t> cu{0, 100, 32868, 32900};
    ChunkForwardTensors t = dryArgs(1, 32900, 3);
    t.cuSeqlens = TensorArg{0x10000, DType::i64, {4}, {}};
    t.hostCuSeqlens = cu.data();
    t.split = &policy;
    SplitPolicy unsplit{.sms = 132, .enabled = false};
    fwd(t, workspace, fwd.workspaceBytes(32900, 3, &unsplit));
    CHECK(names() == std::vector<std::string>{"gdn_cumsum", "gdn_chunk_inverse", "gdn_chunk_forward"});
    launches.clear();
    ChunkForwardTensors f = dryArgs(2, 1000, 2);
    f.split = &policy;
    fwd(f, workspace, fwd.workspaceBytes(2000, 2, &policy));
    CHECK(names() == std::vector<std::string>{"gdn_offsets", "gdn_cumsum", "gdn_chunk_inverse", "gdn_chunk_forward"});
  }
}

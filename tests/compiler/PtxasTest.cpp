// The GEMM through the whole pipeline to PTX, assembled by ptxas for sm_90a: registers, spills and
// shared memory checked against budgets; and the time from DSL IR to PTX.
#include "TestUtil.h"
#include "gdn/forward/GdnForward.h"
#include "gemm/Gemm.h"

#include "qla/runtime/Json.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

using qla::kernels::buildGemm;
using qla::kernels::parseGemmConfig;

namespace {

struct PtxasStats {
  int registers = -1;
  int spillStores = -1, spillLoads = -1, stackFrame = -1;
  int smemBytes = -1; // static shared memory (the mbarriers); the tiles are dynamic shared memory
};

int matchInt(const std::string &text, const std::regex &re) {
  std::smatch m;
  return std::regex_search(text, m, re) ? std::stoi(m[1].str()) : -1;
}

PtxasStats parsePtxas(const std::string &out) {
  PtxasStats s;
  s.registers = matchInt(out, std::regex(R"(Used (\d+) registers)"));
  s.stackFrame = matchInt(out, std::regex(R"((\d+) bytes stack frame)"));
  s.spillStores = matchInt(out, std::regex(R"((\d+) bytes spill stores)"));
  s.spillLoads = matchInt(out, std::regex(R"((\d+) bytes spill loads)"));
  s.smemBytes = matchInt(out, std::regex(R"(registers,.* (\d+) bytes smem)"));
  return s;
}

struct Budget {
  const char *settings;
  int maxRegisters;  // measured + headroom; at most 255 (and 168 for two warpgroups of 128x256)
  int stages;
  int tileBytesPerStage; // (BM + BN) x BK bf16
  // The C tile's store staged through scratch (BM x BN bf16), where qla-plan-smem finds that it costs
  // no occupancy: one block an SM either way.
  int stagedBytes = 0;
};

} // namespace

TEST_CASE("GEMM configs assemble with ptxas within register, spill and smem budgets", "[ptx][ptxas]") {
  if (!std::filesystem::exists(QLA_PTXAS))
    SKIP("ptxas not found at " QLA_PTXAS);
  // Registers measured on 2026-12-02 (ptxas 13.0, -O3): 156, 96, 90, 154.
  const Budget budgets[] = {
      {"M=4096,N=4096,K=4096,BM=128,BN=256,stages=4", 168, 4, (128 + 256) * 64 * 2},
      {"M=4096,N=4096,K=4096,BM=128,BN=128,stages=3", 128, 3, (128 + 128) * 64 * 2},
      {"M=4096,N=4096,K=4096,BM=64,BN=128,stages=2", 128, 2, (64 + 128) * 64 * 2},
      {"M=1000,N=700,K=520", 168, 4, (128 + 256) * 64 * 2}, // not a multiple of the tile
      // Warp-specialized (a producer warpgroup, two consumers): .maxnreg 168 for the 384 threads.
      {"M=4096,N=4096,K=4096,BM=128,BN=256,stages=4,specialize=1", 168, 4, (128 + 256) * 64 * 2},
      {"M=1000,N=700,K=520,specialize=1", 168, 4, (128 + 256) * 64 * 2},
      // A register tile crossing roles (A through a ring of its own): 512 threads start at 128 registers.
      {"M=4096,N=4096,K=4096,BN=128,specialize=2", 128, 4, (128 + 128) * 64 * 2, 128 * 128 * 2},
  };
  qla::test::TempDir tmp;
  for (const Budget &b : budgets) {
    DYNAMIC_SECTION(b.settings) {
      auto kernel = buildGemm(parseGemmConfig(b.settings));
      qla::dsl::CompiledPtx ptx = kernel->compile();
      CHECK(ptx.entry == "gemm");
      CHECK(ptx.ptx.find(".target sm_90a") != std::string::npos);
      CHECK(ptx.ptx.find(".visible .entry gemm(") != std::string::npos);
      // The tensor maps are __grid_constant__ 128-byte parameters.
      CHECK(ptx.ptx.find(".param .align 64 .b8 gemm_param_3[128]") != std::string::npos);
      CHECK(ptx.ptx.find("wgmma.mma_async.sync.aligned") != std::string::npos);
      CHECK(ptx.ptx.find("cp.async.bulk.tensor") != std::string::npos);

      qla::Json manifest = qla::Json::parse(ptx.manifestJson);
      CHECK(manifest.at("smem_bytes").asInt() == b.stages * b.tileBytesPerStage + b.stagedBytes + 1024);

      auto ptxPath = tmp.path() / "kernel.ptx";
      std::ofstream(ptxPath) << ptx.ptx;
      auto r = qla::test::runCommand(std::string(QLA_PTXAS) + " -arch=sm_90a -O3 -v " + ptxPath.string() + " -o " +
                                     (tmp.path() / "kernel.cubin").string());
      INFO("ptxas output:\n" << r.output);
      REQUIRE(r.status == 0);
      PtxasStats s = parsePtxas(r.output);
      CHECK(s.spillStores == 0);
      CHECK(s.spillLoads == 0);
      CHECK(s.stackFrame == 0);
      CHECK(s.registers > 0);
      CHECK(s.registers <= 255);
      CHECK(s.registers <= b.maxRegisters);
      // Static shared memory: two rings (full, empty) of `stages` 8-byte mbarriers (twice with specialize=2:
      // the ring of A has its own).
      bool handsOverA = std::string(b.settings).find("specialize=2") != std::string::npos;
      CHECK(s.smemBytes == 16 * b.stages * (handsOverA ? 2 : 1));
      if (std::string(b.settings).find("specialize=2") != std::string::npos) {
        CHECK(ptx.ptx.find(".maxnreg 128") != std::string::npos);
        CHECK(std::regex_search(ptx.ptx, std::regex(R"(setmaxnreg\.inc\.sync\.aligned\.u32\s+184;)")));
      }
      if (std::string(b.settings).find("specialize=1") != std::string::npos) {
        // The kernel starts at 168 registers a thread; the producer gives some back, the consumers take them.
        CHECK(ptx.ptx.find(".maxnreg 168") != std::string::npos);
        CHECK(std::regex_search(ptx.ptx, std::regex(R"(setmaxnreg\.dec\.sync\.aligned\.u32\s+40;)")));
        CHECK(std::regex_search(ptx.ptx, std::regex(R"(setmaxnreg\.inc\.sync\.aligned\.u32\s+232;)")));
      }
    }
  }
}

TEST_CASE("cold compile of the GEMM from DSL IR to PTX takes under a second", "[ptx][compile-time]") {
  auto kernel = buildGemm(parseGemmConfig("M=4096,N=4096,K=4096"));
  auto start = std::chrono::steady_clock::now();
  qla::dsl::CompiledPtx ptx = kernel->compile();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("compile() took " << seconds << " s (reported " << ptx.seconds << " s)");
  CHECK(!ptx.ptx.empty());
  CHECK(seconds < 1.0);
  CHECK(ptx.seconds <= seconds);
}

TEST_CASE("minBlocksPerSM reaches the PTX as .minnctapersm and caps ptxas's registers", "[ptx][ptxas]") {
  if (!std::filesystem::exists(QLA_PTXAS))
    SKIP("ptxas not found at " QLA_PTXAS);
  qla::test::TempDir tmp;
  auto registers = [&](qla::dsl::Kernel &kernel, const std::string &expect) {
    qla::dsl::CompiledPtx ptx = kernel.compile();
    CHECK((ptx.ptx.find(".minnctapersm") != std::string::npos) == !expect.empty());
    if (!expect.empty())
      CHECK(ptx.ptx.find(expect) != std::string::npos);
    auto ptxPath = tmp.path() / "kernel.ptx";
    std::ofstream(ptxPath) << ptx.ptx;
    auto r = qla::test::runCommand(std::string(QLA_PTXAS) + " -arch=sm_90a -O3 -v " + ptxPath.string() + " -o " +
                                   (tmp.path() / "kernel.cubin").string());
    INFO("ptxas output:\n" << r.output);
    REQUIRE(r.status == 0);
    return parsePtxas(r.output).registers;
  };
  // gdn_chunk_inverse uses more than 128 registers uncapped; four blocks of 128 threads an SM leave 128.
  auto config = qla::gdn::parseGdnForwardConfig("H=16,HV=32,K=128,V=128,inverse_blocks_per_sm=0");
  CHECK(registers(*qla::gdn::buildGdnChunkInverse(config), "") > 128);
  config.inverseBlocksPerSM = 4;
  int capped = registers(*qla::gdn::buildGdnChunkInverse(config), ".minnctapersm 4");
  CHECK(capped > 0);
  CHECK(capped <= 128);
  auto kernel = buildGemm(parseGemmConfig("M=256,N=256,K=256"));
  CHECK_THROWS_WITH(kernel->minBlocksPerSM(0), Catch::Matchers::ContainsSubstring("minBlocksPerSM must be from 1 to 32"));
}

TEST_CASE("the GDN forward kernels assemble without serialised register-A wgmmas", "[ptx][ptxas]") {
  if (!std::filesystem::exists(QLA_PTXAS))
    SKIP("ptxas not found at " QLA_PTXAS);
  // ptxas injects a warpgroup.arrive (C7519) before a wgmma whose registers were written after the
  // last wgmma.fence: the lowering must pack register A operands before the fence.
  auto config = qla::gdn::parseGdnForwardConfig("H=16,HV=32,K=128,V=128,initial_state=1,final_state=1");
  qla::test::TempDir tmp;
  for (auto &kernel : {qla::gdn::buildGdnChunkInverse(config), qla::gdn::buildGdnChunkForward(config)}) {
    qla::dsl::CompiledPtx ptx = kernel->compile();
    CHECK(ptx.ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {") != std::string::npos);
    auto ptxPath = tmp.path() / "kernel.ptx";
    std::ofstream(ptxPath) << ptx.ptx;
    auto r = qla::test::runCommand(std::string(QLA_PTXAS) + " -arch=sm_90a -O3 -v " + ptxPath.string() + " -o " +
                                   (tmp.path() / "kernel.cubin").string());
    INFO(ptx.entry << ": ptxas output:\n" << r.output);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("C7519") == std::string::npos);
  }
}

TEST_CASE("GDN kernels' register spills: none by default, no more than measured for the options that spill",
          "[ptx][ptxas]") {
  if (!std::filesystem::exists(QLA_PTXAS))
    SKIP("ptxas not found at " QLA_PTXAS);
  // Issue 4's bar is no spills at all: met by every kernel of the default sets (session 8: the forward
  // at precise = 1, the inverse's merge masks made before the merges; session 19: K = V = 256 with Hᵀ
  // through shared memory). The options that still spill are ratchets (bytes of ptxas 13.0, -O3).
  struct Case {
    const char *kernel, *settings;
    int maxSpillBytes;
  };
  const Case cases[] = {
      {"gdn_offsets", "H=16,HV=32", 0},
      {"gdn_cumsum", "H=16,HV=32", 0},
      {"gdn_cumsum", "H=16,HV=32,gate_in_kernel=1", 0},
      {"gdn_chunk_inverse", "H=16,HV=32", 0}, // at its 3-blocks-an-SM register cap (168)
      {"gdn_chunk_inverse", "H=16,HV=32,inverse_heads=1", 0},
      {"gdn_chunk_inverse", "H=16,HV=64", 0}, // four heads a block (167 registers)
      {"gdn_chunk_inverse", "H=16,HV=32,inverse_f16=0", 0}, // bf16 merges: one head a block
      {"gdn_chunk_inverse", "H=16,HV=32,gate_in_kernel=1,l2norm=1", 0},
      {"gdn_chunk_inverse", "H=1,HV=2,K=64,V=64", 0},
      {"gdn_chunk_inverse", "H=16,HV=32,inverse_chunks=4,inverse_stages=2,inverse_blocks_per_sm=2", 0},
      {"gdn_chunk_forward", "H=16,HV=32,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,BV=128,stages=2,initial_state=1,final_state=1", 0}, // the wide tile
      {"gdn_chunk_forward", "H=16,HV=32,BV=128,stages=2,gate_ring=0,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,BV=128,stages=2,gate_in_kernel=1,l2norm=1,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=1,HV=2,K=64,V=64,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=1,HV=2,K=64,V=128,state_v_first=1,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,stages=2,roles=1,initial_state=1,final_state=1", 0},
      // The fused forward (fuse_inverse): three warpgroups fit their budgets; four do not (the state
      // warpgroups at 160 registers: 524 B on 2026-12-03, 520 with the inverse's f16 merges; a ratchet).
      {"gdn_chunk_forward", "H=16,HV=32,BV=64,stages=2,fuse_inverse=1,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,BV=128,stages=2,fuse_inverse=1,initial_state=1,final_state=1", 520},
      {"gdn_chunk_forward", "H=16,HV=32,state_only=1,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,split_run=1,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,split_run=2,initial_state=1,final_state=1", 0},
      {"gdn_cumsum", "H=16,HV=32,chunk_totals=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,split_run=3,initial_state=1,final_state=1", 0},
      // L2 prefetches of the gate columns (prefetch_gates, an option).
      {"gdn_chunk_inverse", "H=16,HV=32,prefetch_gates=1", 0},
      // The inverse as one op inside the warps (mma.sync merges), two and four heads a block.
      {"gdn_chunk_inverse", "H=16,HV=32,inverse_in_warps=1", 0},
      {"gdn_chunk_inverse", "H=16,HV=64,inverse_in_warps=1", 0},
      // Kc Kcᵀ and Qc Kcᵀ once a block, through shared memory (inverse_products_once).
      {"gdn_chunk_inverse", "H=16,HV=32,inverse_products_once=1", 0},
      {"gdn_chunk_inverse", "H=16,HV=32,inverse_products_once=1,inverse_in_warps=1", 0},
      {"gdn_chunk_inverse", "H=16,HV=64,inverse_products_once=1,inverse_in_warps=1", 0},
      {"gdn_chunk_inverse", "H=16,HV=64,prefetch_gates=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,BV=128,stages=2,prefetch_gates=1,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=16,HV=32,prefetch_gates=1,initial_state=1,final_state=1", 0},
      {"gdn_split_windows", "H=16,HV=32", 0},
      {"gdn_split_correct", "H=16,HV=32", 0},
      {"gdn_split_offsets", "H=16,HV=32", 0},
      {"gdn_chunk_inverse", "H=1,HV=2,K=256,V=256", 0}, // 2 blocks an SM by default at K = 256 (188 registers: f16 merges, two heads a block)
      // K = V = 256: by default Hᵀ's operand through shared memory and Hᵀ parked there between its
      // conversion and the update (share_state_operand, stash_state): no spills. The register form and
      // the operand alone are ratchets (476 B, 468 before the per-column gate factors; 36 B).
      {"gdn_chunk_forward", "H=1,HV=2,K=256,V=256,initial_state=1,final_state=1", 0},
      {"gdn_chunk_forward", "H=1,HV=2,K=256,V=256,share_state_operand=0,stash_state=0,initial_state=1,final_state=1", 476},
      {"gdn_chunk_forward", "H=1,HV=2,K=256,V=256,share_state_operand=1,stash_state=0,initial_state=1,final_state=1", 36},
      {"gdn_chunk_forward", "H=16,HV=32,BV=128,stages=2,share_state_operand=1,initial_state=1,final_state=1", 0},
  };
  qla::test::TempDir tmp;
  for (const Case &c : cases) {
    DYNAMIC_SECTION(c.kernel << " " << c.settings) {
      auto config = qla::gdn::parseGdnForwardConfig(c.settings);
      std::string k = c.kernel;
      auto kernel = k == "gdn_offsets"         ? qla::gdn::buildGdnOffsets(config)
                    : k == "gdn_cumsum"        ? qla::gdn::buildGdnCumsum(config)
                    : k == "gdn_chunk_inverse" ? qla::gdn::buildGdnChunkInverse(config)
                    : k == "gdn_split_correct" ? qla::gdn::buildGdnSplitCorrect(config)
                    : k == "gdn_split_offsets" ? qla::gdn::buildGdnSplitOffsets(config)
                    : k == "gdn_split_windows" ? qla::gdn::buildGdnSplitWindows(config)
                                               : qla::gdn::buildGdnChunkForward(config);
      auto ptxPath = tmp.path() / "kernel.ptx";
      std::ofstream(ptxPath) << kernel->compile().ptx;
      auto r = qla::test::runCommand(std::string(QLA_PTXAS) + " -arch=sm_90a -O3 -v " + ptxPath.string() + " -o " +
                                     (tmp.path() / "kernel.cubin").string());
      INFO("ptxas output:\n" << r.output);
      REQUIRE(r.status == 0);
      PtxasStats s = parsePtxas(r.output);
      CHECK(s.spillStores <= c.maxSpillBytes);
      CHECK(s.spillLoads <= c.maxSpillBytes);
    }
  }
}

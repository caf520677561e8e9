#include "gdn/forward/GdnForward.h"
#include "common/Settings.h"

#include "qla/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace qla::gdn {

void GdnForwardConfig::validate() const {
  auto fail = [](const std::string &what) { return Error("gdn forward: " + what); };
  if (H <= 0 || HV <= 0 || HV % H != 0)
    throw fail(fmt::format("HV must be a positive multiple of H, got H = {}, HV = {}", H, HV));
  for (auto [name, d] : {std::pair{"K", K}, std::pair{"V", V}})
    if (d != 64 && d != 128 && d != 256)
      throw fail(fmt::format("{} = {} is not supported (supported: 64, 128, 256)", name, d));
  if (BV <= 0 || V % BV != 0 || BV % 64 != 0)
    throw fail(fmt::format("BV = {} must be a multiple of 64 (a warpgroup each) that divides V = {}", BV, V));
  if (precise < 0 || precise > 2)
    throw fail(fmt::format("precise = {} is not supported (0: bf16 operands, 1: Y and Vn as bf16 hi + lo, 2: also "
                           "the state H)",
                           precise));
  if (stages < 1 || stages > 4)
    throw fail(fmt::format("stages = {} is not supported (1: plain copies, 2 to 4: TMA rings)", stages));
  if (roles && (stages < 2 || BV != 64 || l2normQK))
    throw fail(fmt::format("roles = 1 needs stages >= 2 (TMA loads by the producer), BV = 64 (one state warpgroup) "
                           "and l2norm = 0, got stages = {}, BV = {}, l2norm = {}",
                           stages, BV, l2normQK ? 1 : 0));
  if (fuseInverse && (roles || stages < 2 || l2normQK || K > 128 || splitRun || stateOnly))
    throw fail(fmt::format("fuse_inverse = 1 needs stages >= 2 (TMA loads by the producer), l2norm = 0, K <= 128, "
                           "roles = 0, split_run = 0 and state_only = 0, got stages = {}, l2norm = {}, K = {}, "
                           "roles = {}, split_run = {}, state_only = {}",
                           stages, l2normQK ? 1 : 0, K, roles ? 1 : 0, splitRun, stateOnly ? 1 : 0));
  if (!fuseInverse && (loadsRegs || auxRegs || stateRegs))
    throw fail(fmt::format("loads_regs, aux_regs and state_regs are the fused forward's role budgets: they need "
                           "fuse_inverse = 1, got {} / {} / {}",
                           loadsRegs, auxRegs, stateRegs));
  if (fuseInverse) {
    RoleRegisters r = resolvedRoleRegisters();
    // The block's share of the register file a thread (65536 / threads, in steps of 8), over its warpgroups.
    const int64_t warpgroups = 2 + BV / 64, cap = 65536 / (128 * warpgroups) / 8 * 8;
    if (r.loads + r.aux + BV / 64 * r.state > cap * warpgroups || std::min({r.loads, r.aux, r.state}) < 24 ||
        std::max({r.loads, r.aux, r.state}) > 256 || r.loads % 8 || r.aux % 8 || r.state % 8)
      throw fail(fmt::format("fuse_inverse: the roles' registers (loads_regs = {}, aux_regs = {}, state_regs = {} "
                             "for {} state warpgroups) must be multiples of 8 from 24 to 256 whose sum over the "
                             "block's {} warpgroups is at most {} ({} a thread)",
                             r.loads, r.aux, r.state, BV / 64, warpgroups, cap * warpgroups, cap));
  }
  for (auto [name, v] : {std::pair{"share_state_operand", shareStateOperand}, std::pair{"stash_state", stashState}})
    if (v < -1 || v > 1)
      throw fail(fmt::format("{} = {} is not supported (-1: where K > 128, 0, 1)", name, v));
  if ((shareStateOperand == 1 || stashState == 1) && (roles || fuseInverse))
    throw fail(fmt::format("share_state_operand and stash_state need roles = 0 and fuse_inverse = 0, got roles = {}, "
                           "fuse_inverse = {}",
                           roles ? 1 : 0, fuseInverse ? 1 : 0));
  if (splitRun < 0 || splitRun > 3)
    throw fail(fmt::format("split_run = {} is not supported (0: none, 1: the context split's segment ends, 2: its "
                           "transitions, 3: the chunks' log-decays)",
                           splitRun));
  if (splitRun && (!initialState || !finalState || stateVFirst || roles || (splitRun == 2 && K != V)))
    throw fail(fmt::format("split_run = {} needs initial_state = 1, final_state = 1, states [K][V] (state_v_first = "
                           "0), no roles{}, got K = {}, V = {}, initial_state = {}, final_state = {}, state_v_first "
                           "= {}, roles = {}",
                           splitRun, splitRun == 2 ? " and K = V" : "", K, V, initialState ? 1 : 0, finalState ? 1 : 0,
                           stateVFirst ? 1 : 0, roles ? 1 : 0));
  if (inverseBlocksPerSM < -1 || inverseBlocksPerSM > 16)
    throw fail(fmt::format("inverse_blocks_per_sm = {} is not supported (-1: the default for K, 0: no cap, or 1 to 16)",
                           inverseBlocksPerSM));
  if (inverseChunks < 1 || inverseChunks > 64)
    throw fail(fmt::format("inverse_chunks = {} is not supported (1 to 64 chunks a block)", inverseChunks));
  if (inverseStages < 1 || inverseStages > 4)
    throw fail(fmt::format("inverse_stages = {} is not supported (1: plain copies, 2 to 4: TMA rings)", inverseStages));
  if (inverseHeads == 0 || inverseHeads < -1 || H <= 0 || HV % H != 0 || (HV / H) % resolvedInverseHeads() != 0)
    throw fail(fmt::format("inverse_heads = {} must divide HV / H = {} (value heads sharing a key head), or be -1 "
                           "(2 when HV / H is even, else 1)",
                           inverseHeads, H > 0 ? HV / H : 0));
  if (splitTokens < 0 || splitTokens % kChunk != 0)
    throw fail(fmt::format("split_tokens = {} must be 0 (the planner's choice) or a positive multiple of {}",
                           splitTokens, kChunk));
  if (!std::isfinite(scale))
    throw fail("scale must be finite");
}

GdnForwardConfig::RoleRegisters GdnForwardConfig::resolvedRoleRegisters() const {
  RoleRegisters r = BV == 64 ? RoleRegisters{32, 200, 256} : RoleRegisters{24, 168, 160};
  return {loadsRegs ? loadsRegs : r.loads, auxRegs ? auxRegs : r.aux, stateRegs ? stateRegs : r.state};
}

double GdnForwardConfig::resolvedScale() const { return scale > 0 ? scale : 1.0 / std::sqrt(double(K)); }

GdnForwardConfig parseGdnForwardConfig(const std::string &settings) {
  return withGdnSettings(GdnForwardConfig{}, settings);
}

GdnForwardConfig withGdnSettings(GdnForwardConfig c, const std::string &settings) {
  auto field = [](int64_t &f) { return [&f](double v) { f = static_cast<int64_t>(v); }; };
  auto flag = [](bool &f) { return [&f](double v) { f = v != 0; }; };
  kernels::applySettings(settings, "gdn forward",
                         {{"H", field(c.H)}, {"HV", field(c.HV)}, {"K", field(c.K)}, {"V", field(c.V)},
                          {"scale", [&](double v) { c.scale = v; }, false}, {"gate_in_kernel", flag(c.gateInKernel)},
                          {"l2norm", flag(c.l2normQK)}, {"initial_state", flag(c.initialState)},
                          {"final_state", flag(c.finalState)}, {"state_v_first", flag(c.stateVFirst)},
                          {"BV", field(c.BV)}, {"precise", field(c.precise)},
                          {"inverse_blocks_per_sm", field(c.inverseBlocksPerSM)},
                          {"inverse_chunks", field(c.inverseChunks)}, {"inverse_heads", field(c.inverseHeads)},
                          {"inverse_f16", flag(c.inverseF16)}, {"inverse_in_warps", flag(c.inverseInWarps)},
                          {"inverse_products_once", flag(c.inverseProductsOnce)},
                          {"split_tokens", field(c.splitTokens)},
                          {"inverse_stages", field(c.inverseStages)}, {"stages", field(c.stages)},
                          {"roles", flag(c.roles)}, {"prefetch_gates", flag(c.prefetchGates)},
                          {"gate_ring", flag(c.gateRing)},
                          {"fuse_inverse", flag(c.fuseInverse)}, {"loads_regs", field(c.loadsRegs)},
                          {"aux_regs", field(c.auxRegs)}, {"state_regs", field(c.stateRegs)}, {"state_only", flag(c.stateOnly)},
                          {"split_run", field(c.splitRun)}, {"chunk_totals", flag(c.chunkTotals)},
                          {"dependent_launch", flag(c.dependentLaunch)},
                          {"slice_broadcasts", flag(c.sliceBroadcasts)},
                          {"warpgroup_local", flag(c.warpgroupLocal)},
                          {"warpgroup_turns", flag(c.warpgroupTurns)},
                          {"share_state_operand", field(c.shareStateOperand)}, {"stash_state", field(c.stashState)}});
  c.validate();
  return c;
}

std::unique_ptr<dsl::Kernel> newGdnKernel(const GdnForwardConfig &c, const std::string &name) {
  auto k = std::make_unique<dsl::Kernel>(name);
  if (c.dependentLaunch)
    k->dependentLaunch();
  if (c.sliceBroadcasts)
    k->sliceBroadcasts();
  return k;
}

GdnForwardKernels buildGdnForward(const GdnForwardConfig &c) {
  c.validate();
  return {buildGdnCumsum(c), buildGdnChunkInverse(c), buildGdnChunkForward(c)};
}

} // namespace qla::gdn

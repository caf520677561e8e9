// SIMT simulator: Synchronisation: block and named barriers, mbarriers (their phases, arrivals and waits).
#include "Simulator.h"

namespace qla::simt::detail {

/// The threads `group` meet: each advances its own clock, then all know what any of them knew.
void Simulator::synchronize(const std::vector<int64_t> &group) {
  std::vector<int64_t> joined(threads_, 0);
  for (int64_t t : group) {
    ++clocks_[t][t];
    for (int64_t u = 0; u < threads_; ++u)
      joined[u] = std::max(joined[u], clocks_[t][u]);
  }
  for (int64_t t : group)
    clocks_[t] = joined;
}

/// bar.sync / bar.arrive id, count: the active threads arrive at barrier `id` (by thread); it completes
/// when `count` threads have arrived. Syncing threads wait for that; arriving ones go on.
template <typename BarOp>
void Simulator::runNamedBarrier(BarOp op, const std::vector<char> &active) {
  constexpr bool waits = std::is_same_v<BarOp, NVVM::BarrierOp>;
  Value idValue = op.getBarrierId(), countValue = op.getNumberOfThreads();
  std::map<int64_t, std::vector<char>> byId;
  std::map<int64_t, int64_t> counts;
  for (int64_t t = lo_; t < hi_; ++t)
    if (active[t]) {
      int64_t id = idValue ? int64_t(get(op, idValue)[t][0]) : 0;
      byId[id].assign(threads_, 0);
      counts[id] = countValue ? int64_t(get(op, countValue)[t][0]) : threads_;
    }
  for (int64_t t = lo_; t < hi_; ++t)
    if (active[t])
      byId[idValue ? int64_t(get(op, idValue)[t][0]) : 0][t] = 1;
  for (auto &[id, members] : byId)
    meet(op, id, counts[id], members, waits);
}

/// The running context's threads in `members` arrive at barrier `id` (-1: the block barrier) of `count`
/// threads; with `waits` they wait for its completion, then know what every arrival knew.
void Simulator::meet(Operation *op, int64_t id, int64_t count, const std::vector<char> &members, bool waits) {
  Meeting &m = meetings_[id];
  if (m.joined.empty()) {
    m.joined.assign(threads_, 0);
    m.count = m.expected = count;
    m.generation = meetingsDone_[id];
  } else if (m.count != count) {
    fail(op, "barrier " + std::to_string(id) + " used with " + std::to_string(count) + " and " +
                 std::to_string(m.count) + " threads at once");
  }
  int64_t arrived = 0;
  for (int64_t t = lo_; t < hi_; ++t)
    if (members[t]) {
      ++clocks_[t][t];
      for (int64_t u = 0; u < threads_; ++u)
        m.joined[u] = std::max(m.joined[u], clocks_[t][u]);
      if (waits)
        m.syncers.push_back(t);
      ++arrived;
    }
  m.expected -= arrived;
  ++progress_;
  if (m.expected < 0)
    fail(op, "more threads arrive at barrier " + std::to_string(id) + " than its count");
  int64_t generation = m.generation;
  if (m.expected == 0) { // complete: the syncers learn what every arrival knew
    for (int64_t t : m.syncers)
      clocks_[t] = m.joined;
    meetings_.erase(id);
    meetingsDone_[id] = generation + 1;
    ++report_.barriers;
    return;
  }
  if (waits)
    waitUntil(op, [&] { return meetingsDone_[id] > generation; },
              id < 0 ? std::string("a block barrier") : "named barrier " + std::to_string(id));
}

uint64_t Simulator::mbarrierAddress(Operation *op, Value group, Value index, int64_t t) {
  uint64_t g = get(op, group)[t][0], i = get(op, index)[t][0];
  return kMbarrierBase + g * 4096 + 8 * i;
}

Simulator::Mbarrier &Simulator::mbarrier(Operation *op, uint64_t address) {
  auto it = mbarriers_.find(address);
  if (it == mbarriers_.end() || it->second.count < 0)
    fail(op, "an mbarrier used before its init");
  return it->second;
}

/// Thread t releases into the mbarrier's phase: its clock advances, the phase learns what t knew.
void Simulator::release(Mbarrier &m, int64_t t) {
  ++clocks_[t][t];
  if (m.release.empty())
    m.release.assign(threads_, 0);
  for (int64_t u = 0; u < threads_; ++u)
    m.release[u] = std::max(m.release[u], clocks_[t][u]);
}

void Simulator::completeIfDone(Mbarrier &m) {
  ++progress_;
  if (m.pending == 0 && m.tx == 0) {
    m.completed[m.phase] = m.release.empty() ? std::vector<int64_t>(threads_, 0) : m.release;
    m.release.clear();
    m.phase ^= 1;
    m.pending = m.count;
  }
}

/// mbarrier init / arrive / arrive.expect_tx / try_wait.parity (nvgpu), and TMA tile loads, which
/// complete at once: their bytes land in shared memory and count off the mbarrier's expected ones.
void Simulator::runMbarrierOp(Operation *op, const std::vector<char> &active) {
  for (int64_t t = 0; t < threads_; ++t) {
    if (!active[t])
      continue;
    if (auto init = dyn_cast<nvgpu::MBarrierInitOp>(op)) {
      if (init.getPredicate() && !(get(op, init.getPredicate())[t][0] & 1))
        continue;
      Mbarrier &m = mbarriers_[mbarrierAddress(op, init.getBarriers(), init.getMbarId(), t)];
      m = Mbarrier{};
      m.count = m.pending = int64_t(get(op, init.getCount())[t][0]);
      // A wait on the parity before the first phase passes at once (the producer's first empty waits).
      m.completed[0].assign(threads_, 0);
      m.completed[1].assign(threads_, 0);
    } else if (auto arrive = dyn_cast<nvgpu::MBarrierArriveExpectTxOp>(op)) {
      if (arrive.getPredicate() && !(get(op, arrive.getPredicate())[t][0] & 1))
        continue;
      Mbarrier &m = mbarrier(op, mbarrierAddress(op, arrive.getBarriers(), arrive.getMbarId(), t));
      m.tx += int64_t(get(op, arrive.getTxcount())[t][0]);
      release(m, t);
      --m.pending;
      completeIfDone(m);
    } else if (auto arrive = dyn_cast<nvgpu::MBarrierArriveOp>(op)) {
      Mbarrier &m = mbarrier(op, mbarrierAddress(op, arrive.getBarriers(), arrive.getMbarId(), t));
      release(m, t);
      if (--m.pending < 0)
        fail(op, "more arrivals than the mbarrier's count");
      completeIfDone(m);
    } else if (auto wait = dyn_cast<nvgpu::MBarrierTryWaitParityOp>(op)) {
      Mbarrier &m = mbarrier(op, mbarrierAddress(op, wait.getBarriers(), wait.getMbarId(), t));
      uint64_t parity = get(op, wait.getPhaseParity())[t][0] & 1;
      uint64_t address = mbarrierAddress(op, wait.getBarriers(), wait.getMbarId(), t);
      waitUntil(op, [&] { return uint64_t(mbarrier(op, address).phase) != parity; },
                "an mbarrier phase with " + std::to_string(m.pending) + " arrivals and " + std::to_string(m.tx) +
                    " bytes missing");
      for (int64_t u = 0; u < threads_; ++u)
        clocks_[t][u] = std::max(clocks_[t][u], m.completed[parity][u]);
    } else if (auto tma = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
      if (tma.getPredicate() && !(get(op, tma.getPredicate())[t][0] & 1))
        continue;
      if (tma.getMode() != NVVM::TMALoadMode::TILE || tma.getMulticastMask())
        fail(op, "only tile-mode TMA loads without multicast are supported");
      int64_t bytes = tmaLoad(tma, t);
      Mbarrier &m = mbarrier(op, get(op, tma.getMbar())[t][0]);
      release(m, t);
      m.tx -= bytes;
      completeIfDone(m);
    }
  }
}

template void Simulator::runNamedBarrier<NVVM::BarrierOp>(NVVM::BarrierOp, const std::vector<char> &);
template void Simulator::runNamedBarrier<NVVM::BarrierArriveOp>(NVVM::BarrierArriveOp, const std::vector<char> &);

} // namespace qla::simt::detail

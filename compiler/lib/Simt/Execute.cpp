// SIMT simulator: Running a block: the execution contexts (one a warpgroup) and their hand-over, regions, loops
// and the copies' inline assembly; simulateBlock.
#include "Simulator.h"

#include "llvm/Support/Path.h"

namespace qla::simt::detail {

/// "file:line" of the innermost file location in `loc` ("?" without one).
static std::string sourceOf(Location loc) {
  std::string out = "?";
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      out = (llvm::sys::path::filename(f.getFilename().getValue()) + ":" + llvm::Twine(f.getLine())).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return out;
}

Report Simulator::run(func::FuncOp kernel, const std::vector<Arg> &args) {
  Block &entry = kernel.getBody().front();
  if (entry.getNumArguments() != args.size()) {
    fail(kernel, "takes " + std::to_string(entry.getNumArguments()) + " arguments, given " +
                     std::to_string(args.size()));
    return report_;
  }
  for (auto [arg, given] : llvm::zip(entry.getArguments(), args)) {
    bool pointer = isa<LLVM::LLVMPointerType>(arg.getType());
    if (given.map) {
      uint64_t address = kTensorMapBase + 256 * arg.getArgNumber();
      maps_[address] = given.map;
      globals_.push_back(given.map->buffer);
      set(arg, PerThread(threads_, Bits{address}));
      continue;
    }
    if (pointer != (given.buffer != nullptr)) {
      fail(kernel, "argument " + std::to_string(arg.getArgNumber()) + " must be " + (pointer ? "a buffer" : "an integer"));
      return report_;
    }
    if (pointer)
      globals_.push_back(given.buffer);
    set(arg, PerThread(threads_, Bits{pointer ? reinterpret_cast<uint64_t>(given.buffer->bytes.data())
                                              : static_cast<uint64_t>(given.scalar)}));
  }
  if (!report_.errors.empty())
    return report_;
  // One execution context a warpgroup, run one at a time: a context runs until it must wait (a barrier
  // or an mbarrier phase others have yet to complete), then hands over. Roles' loops interleave.
  const int64_t contexts = std::max<int64_t>(1, threads_ / 128);
  ready_.assign(contexts, 0);
  done_.assign(contexts, 0);
  seen_.assign(contexts, -1);
  std::vector<std::thread> workers;
  for (int64_t c = 0; c < contexts; ++c)
    workers.emplace_back([this, c, contexts, &entry] {
      takeBaton(c);
      std::vector<char> mine(threads_, 0);
      for (int64_t t = c * threads_ / contexts; t < (c + 1) * threads_ / contexts; ++t)
        mine[t] = 1;
      runBlock(entry, mine);
      std::unique_lock<std::mutex> lock(mutex_);
      done_[c] = 1;
      if (!report_.errors.empty())
        aborted_ = true;
      handOver(c, lock);
    });
  {
    std::unique_lock<std::mutex> lock(mutex_);
    current_ = 0;
    cv_.notify_all();
  }
  for (std::thread &w : workers)
    w.join();
  return report_;
}

// The contexts' hand-over: `current_` runs; the others wait on `cv_`.
void Simulator::takeBaton(int64_t c) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return current_ == c; });
  lo_ = c * threads_ / int64_t(done_.size());
  hi_ = (c + 1) * threads_ / int64_t(done_.size());
  ready_[c] = 1;
}

/// Gives the baton to the next context that has not finished (none left: nobody).
void Simulator::handOver(int64_t c, std::unique_lock<std::mutex> &) {
  int64_t n = done_.size();
  current_ = -1;
  for (int64_t i = 1; i <= n; ++i)
    if (!done_[(c + i) % n]) {
      current_ = (c + i) % n;
      break;
    }
  cv_.notify_all();
}

/// Waits (letting the other contexts run) until `condition` holds. All contexts waiting with nothing
/// changed since each last looked is a deadlock: an error.
void Simulator::waitUntil(Operation *op, const std::function<bool()> &condition, const std::string &what) {
  int64_t c = lo_ * int64_t(done_.size()) / threads_;
  while (!condition()) {
    if (aborted_)
      throw Stop{};
    seen_[c] = progress_;
    bool stuck = true;
    for (size_t o = 0; o < done_.size(); ++o)
      if (!done_[o] && (!ready_[o] || seen_[o] != progress_))
        stuck = false;
    if (stuck) {
      aborted_ = true;
      fail(op, "deadlock: every warpgroup waits (" + what + ")");
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      handOver(c, lock);
    }
    takeBaton(c);
    if (aborted_)
      throw Stop{};
  }
  seen_[c] = -1;
}

/// Runs a block's ops for the threads in `active`; returns the operands of its terminator (yield).
std::vector<PerThread> Simulator::runBlock(Block &block, const std::vector<char> &active) {
  try {
    for (Operation &op : block) {
      if (isa<scf::YieldOp>(op)) {
        std::vector<PerThread> out;
        for (Value v : op.getOperands())
          out.push_back(get(&op, v));
        return out;
      }
      if (isa<func::ReturnOp, LLVM::ReturnOp>(op))
        return {};
      ++report_.ops;
      ++report_.opsBySource[sourceOf(op.getLoc())];
      step(&op, active);
    }
  } catch (const Stop &) {
  }
  return {};
}

void Simulator::step(Operation *op, const std::vector<char> &active) {
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return runIf(ifOp, active);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return runFor(forOp, active);
  if (auto mma = dyn_cast<NVVM::MmaOp>(op))
    return runMma(mma, active);
  if (auto shfl = dyn_cast<NVVM::ShflOp>(op))
    return runShuffle(shfl, active);
  if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
    return runWgmma(wgmma, active);
  if (auto st = dyn_cast<NVVM::StMatrixOp>(op))
    return runStmatrix(st, active);
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op); asmOp && runWgmmaAsm(asmOp, active))
    return;
  // Asynchronous work is done when issued: its fences, commits and waits have nothing left to order.
  if (isa<NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp, NVVM::WgmmaFenceAlignedOp,
          NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp, NVVM::FenceProxyOp>(op))
    return;
  if (isa<NVVM::Barrier0Op>(op)) {
    for (int64_t t = lo_; t < hi_; ++t)
      if (!active[t])
        fail(op, "a barrier that thread " + std::to_string(t) + " does not reach (divergent)");
    return meet(op, /*id=*/-1, threads_, active, /*waits=*/true);
  }
  if (auto named = dyn_cast<NVVM::BarrierOp>(op))
    return runNamedBarrier(named, active);
  if (auto arrive = dyn_cast<NVVM::BarrierArriveOp>(op))
    return runNamedBarrier(arrive, active);
  if (isa<NVVM::SyncWarpOp>(op)) { // bar.warp.sync: each warp's threads meet
    for (int64_t w = 0; w < threads_ / 32; ++w) {
      std::vector<int64_t> lanes;
      for (int64_t t = 32 * w; t < 32 * w + 32; ++t)
        if (active[t])
          lanes.push_back(t);
      if (!lanes.empty())
        synchronize(lanes);
    }
    return;
  }
  if (isa<NVVM::FenceMbarrierInitOp, NVVM::SetMaxRegisterOp>(op)) // (registers are not modelled)
    return;
  if (isa<nvgpu::MBarrierCreateOp>(op)) { // one group an op, whichever context reaches it
    auto [it, added] = groups_.try_emplace(op, groups_.size());
    set(op->getResult(0), PerThread(threads_, Bits{uint64_t(it->second)}));
    return;
  }
  if (isa<nvgpu::MBarrierInitOp, nvgpu::MBarrierArriveExpectTxOp, nvgpu::MBarrierArriveOp,
          nvgpu::MBarrierTryWaitParityOp, NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op))
    return runMbarrierOp(op, active);
  if (op->getNumResults() > 1)
    fail(op, "ops with several results are not supported");
  PerThread out(threads_);
  for (int64_t t = 0; t < threads_; ++t)
    if (active[t])
      out[t] = eval(op, t);
  if (op->getNumResults() == 1)
    set(op->getResult(0), std::move(out));
}

void Simulator::runIf(scf::IfOp op, const std::vector<char> &active) {
  const PerThread &cond = get(op, op.getCondition());
  std::vector<char> thenMask(threads_), elseMask(threads_);
  bool anyThen = false, anyElse = false;
  for (int64_t t = 0; t < threads_; ++t) {
    thenMask[t] = active[t] && (cond[t][0] & 1);
    elseMask[t] = active[t] && !(cond[t][0] & 1);
    anyThen |= thenMask[t];
    anyElse |= elseMask[t];
  }
  std::vector<PerThread> thenOut, elseOut;
  if (anyThen)
    thenOut = runBranch(op, op.getThenRegion(), thenMask);
  if (anyElse && !op.getElseRegion().empty())
    elseOut = runBranch(op, op.getElseRegion(), elseMask);
  for (unsigned r = 0; r < op.getNumResults(); ++r) {
    PerThread merged(threads_);
    for (int64_t t = 0; t < threads_; ++t)
      if (thenMask[t])
        merged[t] = thenOut[r][t];
      else if (elseMask[t])
        merged[t] = elseOut[r][t];
    set(op.getResult(r), std::move(merged));
  }
}

std::vector<PerThread> Simulator::runBranch(Operation *op, Region &region, const std::vector<char> &mask) {
  size_t errors = report_.errors.size();
  auto out = runBlock(region.front(), mask);
  if (report_.errors.size() != errors || aborted_)
    throw Stop{};
  if (out.size() != op->getNumResults())
    fail(op, "a region yielded the wrong number of values");
  return out;
}

/// Each thread runs its own trip count (bounds may differ between threads: iteration k runs for the
/// threads that have a k-th trip, with their own induction values).
void Simulator::runFor(scf::ForOp op, const std::vector<char> &active) {
  auto values = [&](Value v) {
    std::vector<int64_t> out(threads_, 0);
    const PerThread &x = get(op, v);
    for (int64_t t = 0; t < threads_; ++t)
      if (active[t])
        out[t] = signExtend(x[t][0], scalarBits(v.getType()));
    return out;
  };
  std::vector<int64_t> lb = values(op.getLowerBound()), ub = values(op.getUpperBound()), st = values(op.getStep());
  std::vector<int64_t> trips(threads_, 0);
  int64_t most = 0;
  for (int64_t t = 0; t < threads_; ++t)
    if (active[t]) {
      if (st[t] <= 0)
        fail(op, "a loop step that is not positive");
      trips[t] = ub[t] > lb[t] ? (ub[t] - lb[t] + st[t] - 1) / st[t] : 0;
      most = std::max(most, trips[t]);
    }
  std::vector<PerThread> carried;
  for (Value v : op.getInitArgs())
    carried.push_back(get(op, v));
  Block &body = *op.getBody();
  for (int64_t k = 0; k < most; ++k) {
    std::vector<char> running(threads_);
    PerThread iv(threads_, Bits{0});
    for (int64_t t = 0; t < threads_; ++t) {
      running[t] = active[t] && k < trips[t];
      iv[t][0] = static_cast<uint64_t>(lb[t] + k * st[t]);
    }
    set(body.getArgument(0), iv);
    for (auto [arg, value] : llvm::zip(body.getArguments().drop_front(), carried))
      set(arg, value);
    size_t errors = report_.errors.size();
    std::vector<PerThread> next = runBlock(body, running);
    if (report_.errors.size() != errors || aborted_)
      throw Stop{};
    for (size_t i = 0; i < carried.size(); ++i)
      for (int64_t t = 0; t < threads_; ++t)
        if (running[t])
          carried[i][t] = next[i][t];
  }
  for (auto [r, value] : llvm::zip(op.getResults(), carried))
    set(r, value);
}

/// The predicated global loads the copies lower to ("@p ld.global[.vN].bW {...}, [addr]" after
/// setp.ne on the last operand); other inline assembly is not supported.
Bits Simulator::inlineAsm(LLVM::InlineAsmOp a, int64_t t) {
  if (a.getAsmString() == "mov.b32 $0, $1;") // an opaque copy (the lowering's per-iteration reads)
    return get(a, a.getOperands()[0])[t];
  static const std::regex load(R"(setp\.ne\.b32 p, \$(\d+), 0;.*@p ld\.global(\.v(\d))?\.b(\d+) \{?[^\[]*\[\$(\d+)\])");
  std::smatch m;
  std::string text = a.getAsmString().str();
  if (!std::regex_search(text, m, load))
    fail(a, "inline assembly not supported: " + text);
  int64_t lanes = m[3].matched ? std::stoi(m[3]) : 1, bits = std::stoi(m[4]);
  auto operand = [&](int64_t i) { return get(a, a.getOperands()[i - lanes])[t][0]; };
  Bits out(lanes, 0);
  if (operand(std::stoi(m[1])) != 0) {
    uint64_t addr = operand(std::stoi(m[5]));
    auto ptrType = LLVM::LLVMPointerType::get(a.getContext(), 1);
    uint8_t *p = memory(a, ptrType, addr, lanes * bits / 8, t, false);
    for (int64_t i = 0; i < lanes; ++i)
      std::memcpy(&out[i], p + i * bits / 8, bits / 8);
  }
  return out;
}

} // namespace qla::simt::detail

namespace qla::simt {

using detail::Simulator;

Report simulateBlock(mlir::func::FuncOp kernel, int64_t threads, int64_t smemBytes, std::vector<Arg> args,
                     std::array<int64_t, 3> blockIdx) {
  Simulator sim(threads, smemBytes, blockIdx);
  return sim.run(kernel, args);
}

} // namespace qla::simt

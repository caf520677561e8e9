// qla-pipeline: TMA + mbarrier rings for the copies of qla.for loops (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h" // address spaces of mbarrier groups
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace qla {
#define GEN_PASS_DEF_QLAPIPELINE
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// Why TMA cannot perform this copy, or an empty string when it can.
std::string whyNotTma(CopyOp copy) {
  auto tensor = copy.getSource().getType();
  auto tile = copy.getResult().getType();
  SmallVector<int64_t> strides = tensor.getEffectiveStrides();
  int64_t eb = elementBytes(tensor.getElementType());
  if (!copy.getBounds().empty())
    return "it has bounds inside the tensor (TMA clips only at the tensor's end)";
  if (strides.back() != 1)
    return "the innermost dimension of the tensor is not contiguous (stride must be 1)";
  for (int64_t s : ArrayRef<int64_t>(strides).drop_back())
    if (s != ShapedType::kDynamic && (s * eb) % 16 != 0)
      return "a tensor stride of " + std::to_string(s * eb) + " bytes is not a multiple of 16";
  for (int64_t d : tile.getShape())
    if (d > 256)
      return "a tile dimension of " + std::to_string(d) + " exceeds the TMA box limit of 256";
  int64_t rowBytes = tile.getShape().back() * eb;
  if (rowBytes % 16 != 0)
    return "the tile's rows are " + std::to_string(rowBytes) + " bytes, not a multiple of 16";
  if (rowBytes > 128 && rowBytes % 128 != 0)
    return "the tile's rows are " + std::to_string(rowBytes) +
           " bytes: wider than a swizzle span (128 bytes) but not a whole number of spans";
  return {};
}

Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// The ops of `body` that compute the offsets of `copy` (its backward slice inside the body).
SmallVector<Operation *> offsetSlice(CopyOp copy, Block *body) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work(copy.getOffsets().begin(), copy.getOffsets().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    slice.insert(def);
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Whether every use of `tensor` in the kernel only reads it (nothing stores into it between iterations).
bool readOnly(Value tensor) {
  return llvm::all_of(tensor.getUsers(), [](Operation *user) { return isa<CopyOp, LoadOp, PrefetchOp, DimOp>(user); });
}

/// The ops of `body` that compute `op`'s operands, in order, when they are pure, have no regions and read
/// nothing carried by the loop (only the induction variable and values from outside); else nullopt.
std::optional<SmallVector<Operation *>> movableSlice(Operation *op, ForOp loop) {
  Block *body = loop.getBodyBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work(op->getOperands().begin(), op->getOperands().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == body && arg != loop.getInductionVar())
        return std::nullopt;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != body || slice.contains(def))
      continue;
    if (!isPure(def) || def->getNumRegions() != 0)
      return std::nullopt;
    slice.insert(def);
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// A copy of `load` (and of the ops computing its operands) for the iteration at `iv`, at `b`.
Value cloneLoadAt(OpBuilder &b, Operation *load, ArrayRef<Operation *> slice, ForOp loop, Value iv) {
  IRMapping map;
  map.map(loop.getInductionVar(), iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  return b.clone(*load, map)->getResult(0);
}

/// Register copies of at most this many elements a thread are loaded ahead: each costs that many registers
/// across the whole iteration (a tile a thread holds tens of elements of, as the L2 norm's q and k, would
/// spill the recurrence's registers).
constexpr int64_t kLoadAheadElementsPerThread = 4;

/// Register loads of a pipelined loop one iteration ahead (the loads the TMA rings do not take: register
/// copies and scalars of read-only tensors, at offsets made from the induction variable): the loop carries
/// each value, loaded for its first iteration before the loop and for iteration i + 1 at the start of
/// iteration i, so that a load's latency overlaps a whole iteration instead of stalling its first use
/// (the gate column of a recurrence's chunk is on its critical chain). The last iteration loads its own
/// values again (the next iteration's position is clamped to the last) rather than reading past the
/// loop's range. Returns the loop that replaces `loop`, or `loop` when nothing moves.
ForOp loadAhead(ForOp loop) {
  Block *body = loop.getBodyBlock();
  SmallVector<std::pair<Operation *, SmallVector<Operation *>>> loads;
  for (Operation &op : body->without_terminator()) {
    auto copy = dyn_cast<CopyOp>(op);
    bool registerCopy = copy && copy.getResult().getType().isFragment() && readOnly(copy.getSource()) &&
                        copy.getResult().getType().getNumElements() <= kLoadAheadElementsPerThread * threadGroup(copy).threads;
    bool scalar = isa<LoadOp>(op) && readOnly(cast<LoadOp>(op).getSource());
    if (!registerCopy && !scalar)
      continue;
    if (std::optional<SmallVector<Operation *>> slice = movableSlice(&op, loop))
      loads.push_back({&op, std::move(*slice)});
  }
  if (loads.empty())
    return loop;

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(), step = loop.getStep();
  Value trips = b.create<arith::CeilDivSIOp>(loc, b.create<arith::SubIOp>(loc, ub, lb), step);
  Value lastIv = b.create<arith::AddIOp>(
      loc, lb, b.create<arith::MulIOp>(loc, b.create<arith::SubIOp>(loc, trips, constIndex(b, loc, 1)), step));
  // The first iteration's values, where the loop runs at all (its position may be out of range otherwise).
  Value runs = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lb, ub);
  SmallVector<Value> inits(loop.getInitArgs().begin(), loop.getInitArgs().end());
  for (auto &[load, slice] : loads) {
    Type type = load->getResult(0).getType();
    auto first = b.create<scf::IfOp>(loc, TypeRange{type}, runs, /*withElseRegion=*/true);
    OpBuilder t = first.getThenBodyBuilder();
    t.create<scf::YieldOp>(loc, cloneLoadAt(t, load, slice, loop, lb));
    OpBuilder e = first.getElseBodyBuilder();
    Value zero;
    if (auto tile = dyn_cast<TileType>(type))
      zero = e.create<FillOp>(loc, tile, e.getZeroAttr(tile.getElementType()));
    else
      zero = e.create<arith::ConstantOp>(loc, type, e.getZeroAttr(type));
    e.create<scf::YieldOp>(loc, zero);
    inits.push_back(first.getResult(0));
  }

  auto ahead = b.create<ForOp>(loc, lb, ub, step, inits, static_cast<int64_t>(loop.getStages()));
  for (NamedAttribute attr : loop->getDiscardableAttrs())
    if (attr.getName() != QlaDialect::kScanAttr) // a scan carries one tile
      ahead->setAttr(attr.getName(), attr.getValue());
  Block *newBody = ahead.getBodyBlock();
  unsigned carried = loop.getInitArgs().size();
  // The old body's operations move over; its arguments map onto the new ones.
  newBody->getOperations().splice(newBody->end(), body->getOperations());
  for (unsigned i = 0; i <= carried; ++i)
    body->getArgument(i).replaceAllUsesWith(newBody->getArgument(i));
  OpBuilder nb = OpBuilder::atBlockBegin(newBody);
  Value next = nb.create<arith::MinSIOp>(loc, nb.create<arith::AddIOp>(loc, ahead.getInductionVar(), step), lastIv);
  auto yield = cast<YieldOp>(newBody->getTerminator());
  for (auto [i, entry] : llvm::enumerate(loads))
    entry.first->getResult(0).replaceAllUsesWith(newBody->getArgument(1 + carried + i));
  // (Read after the replacement: a loaded value may be yielded as it is.)
  SmallVector<Value> yielded(yield.getValues().begin(), yield.getValues().end());
  for (auto [i, entry] : llvm::enumerate(loads)) {
    auto &[load, slice] = entry;
    BlockArgument current = newBody->getArgument(1 + carried + i);
    // The next iteration's load goes after this iteration's last use of the value (before the yield):
    // issued earlier, its register's scoreboard is one ptxas may share with the loads that use waits on
    // (run 92: the wait for the next chunk's load landed on this chunk's first use).
    Operation *lastUse = nullptr;
    for (Operation *user : current.getUsers()) {
      Operation *top = newBody->findAncestorOpInBlock(*user);
      if (top != yield && (!lastUse || lastUse->isBeforeInBlock(top)))
        lastUse = top;
    }
    OpBuilder at(newBody, lastUse ? std::next(Block::iterator(lastUse)) : Block::iterator(next.getDefiningOp()->getNextNode()));
    yielded.push_back(cloneLoadAt(at, load, slice, ahead, next));
    load->erase();
  }
  yield->setOperands(yielded);
  loop.replaceAllUsesWith(ahead.getResults().take_front(carried));
  loop.erase();
  return ahead;
}

struct PipelinedLoop {
  ForOp loop;
  int64_t stages;
  int64_t warpgroups; // that release each slot (arrive on empty)
  SmallVector<CopyOp> copies;
  SmallVector<TileType> slotTypes; // of the rings: the copies' tiles, unless given
  SmallVector<Value> rings;
  Value full, empty, leader, wgLeader, tripCount;
  // Threads that release a slot together: a warpgroup (its wgmma wait covers its four warps' reads of the
  // slot), or a warp where qla.read loads from the slot (plain loads: each warp syncs, then its lane 0
  // arrives; `warpgroups` then counts warps).
  int64_t releaseSpan = 128;
  int64_t txBytes = 0;
  int64_t arrivals = 1; // on full per slot: the expect_tx of the issuing thread, or every writer

  /// The issuing thread fills slot `slot` for iteration `iter`, completing on full[slot].
  void issueLoads(OpBuilder &b, Location loc, Value iter, Value slot) {
    Value iv = b.create<arith::AddIOp>(
        loc, loop.getLowerBound(), b.create<arith::MulIOp>(loc, iter, loop.getStep()));
    b.create<nvgpu::MBarrierArriveExpectTxOp>(loc, full, constIndex(b, loc, txBytes), slot, Value());
    for (auto [copy, ring] : llvm::zip(copies, rings)) {
      IRMapping map;
      map.map(loop.getInductionVar(), iv);
      for (Operation *op : offsetSlice(copy, loop.getBodyBlock()))
        b.clone(*op, map);
      SmallVector<Value> offsets;
      for (Value o : copy.getOffsets())
        offsets.push_back(map.lookupOrDefault(o));
      Value dest = b.create<SlotOp>(loc, copy.getResult().getType(), ring, slot);
      // One TMA box per column block of the tile (see qla::smemColumnBlocks).
      TileType tile = copy.getResult().getType();
      int64_t blocks = smemColumnBlocks(tile.getShape().back() * elementBytes(tile.getElementType()));
      for (int64_t blk = 0; blk < blocks; ++blk) {
        auto load = b.create<TmaLoadOp>(loc, copy.getSource(), offsets, dest, full, slot, Value(), IntegerAttr());
        if (blocks > 1)
          load.setColumnBlockAttr(b.getI64IntegerAttr(blk));
      }
    }
  }

  /// The barrier rings and one shared-memory ring per copy.
  void allocateRings(OpBuilder &b, Location loc) {
    MLIRContext *ctx = b.getContext();
    auto wgSpace = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto groupType = nvgpu::MBarrierGroupType::get(ctx, wgSpace, stages);
    full = b.create<nvgpu::MBarrierCreateOp>(loc, groupType);
    empty = b.create<nvgpu::MBarrierCreateOp>(loc, groupType);
    if (slotTypes.empty())
      for (CopyOp copy : copies)
        slotTypes.push_back(copy.getResult().getType());
    for (TileType slot : slotTypes) {
      SmallVector<int64_t> ringShape{stages};
      ringShape.append(slot.getShape().begin(), slot.getShape().end());
      rings.push_back(b.create<SmemAllocOp>(loc, slot.withShape(ringShape), IntegerAttr()));
    }
  }

  /// Their initialisation by `leader`, visible to the async proxy and to every thread before anyone
  /// uses them.
  void initialiseRings(OpBuilder &b, Location loc) {
    b.create<scf::IfOp>(loc, leader, [&](OpBuilder &t, Location l) {
      Value fills = constIndex(t, l, arrivals), releasers = constIndex(t, l, warpgroups);
      for (int64_t s = 0; s < stages; ++s) {
        Value slot = constIndex(t, l, s);
        t.create<nvgpu::MBarrierInitOp>(l, full, fills, slot, Value());
        t.create<nvgpu::MBarrierInitOp>(l, empty, releasers, slot, Value());
      }
      t.create<NVVM::FenceMbarrierInitOp>(l);
      t.create<scf::YieldOp>(l);
    });
    b.create<NVVM::Barrier0Op>(loc);
  }
};

/// Iteration number, slot and phase parity of induction variable `iv` in a ring of `stages`.
struct RingPosition {
  Value iter, slot, parity;
  RingPosition(OpBuilder &b, Location loc, ForOp loop, Value iv, int64_t stages)
      : RingPosition(b, loc, loop.getLowerBound(), loop.getStep(), iv, stages) {}
  RingPosition(OpBuilder &b, Location loc, Value lowerBound, Value step, Value iv, int64_t stages) {
    Value cS = constIndex(b, loc, stages);
    iter = b.create<arith::DivSIOp>(loc, b.create<arith::SubIOp>(loc, iv, lowerBound), step);
    slot = b.create<arith::RemUIOp>(loc, iter, cS);
    Value phase = b.create<arith::RemUIOp>(loc, b.create<arith::DivUIOp>(loc, iter, cS), constIndex(b, loc, 2));
    parity = b.create<arith::IndexCastOp>(loc, b.getI1Type(), phase);
  }
};

Value waitTicks(OpBuilder &b, Location loc) { return constIndex(b, loc, 10000000); }

/// Replaces `loop` by its steady state over the rings of `p`: each iteration waits for its slot to
/// be full, reads each (value, ring) of `fromSlot` (copies of the body, or channel gets) from its ring,
/// and releases the
/// slot once the gemms that read it have retired. With `refill`, the issuing thread then refills the
/// released slot for `stages` iterations later (qla-pipeline without roles); a producer role does that
/// instead in a warp-specialized kernel.
void buildSteadyState(PipelinedLoop &p, ArrayRef<std::pair<Value, Value>> fromSlot, bool refill) {
  ForOp loop = p.loop;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value c0 = constIndex(b, loc, 0), c1 = constIndex(b, loc, 1), cS = constIndex(b, loc, p.stages);
  auto newLoop = b.create<scf::ForOp>(loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                                      loop.getInitArgs());
  Block *oldBody = loop.getBodyBlock();
  Block *newBody = newLoop.getBody();
  if (!newBody->empty())
    newBody->back().erase(); // the builder's implicit scf.yield; ours comes last
  OpBuilder nb = OpBuilder::atBlockBegin(newBody);
  Value iv = newLoop.getInductionVar();
  RingPosition at(nb, loc, loop, iv, p.stages);
  nb.create<nvgpu::MBarrierTryWaitParityOp>(loc, p.full, at.parity, waitTicks(nb, loc), at.slot);

  IRMapping map;
  map.map(loop.getInductionVar(), iv);
  for (auto [oldArg, newArg] : llvm::zip(loop.getRegionIterArgs(), newLoop.getRegionIterArgs()))
    map.map(oldArg, newArg);
  llvm::SmallPtrSet<Operation *, 8> replaced;
  for (auto [value, ring] : fromSlot) {
    map.map(value, nb.create<SlotOp>(loc, value.getType(), ring, at.slot));
    replaced.insert(value.getDefiningOp());
  }
  // A body whose gemm results only accumulate into other gemms or are carried (a GEMM's K loop)
  // keeps one gemm group in flight across iterations. Any other body (gemm results read by
  // elementwise ops, as in a recurrence) keeps its gemms synchronous here — qla-overlap-gemms
  // places their waits — and releases its own slot once they are all done.
  bool accumulateOnly = llvm::all_of(oldBody->getOps<GemmOp>(), [](GemmOp g) {
    return llvm::all_of(g->getUses(), [](OpOperand &use) {
      auto user = dyn_cast<GemmOp>(use.getOwner());
      return isa<YieldOp>(use.getOwner()) || (user && &user.getAccMutable() == &use);
    });
  });
  SmallVector<Value> yielded;
  for (Operation &op : oldBody->getOperations()) {
    if (replaced.contains(&op))
      continue;
    if (auto yield = dyn_cast<YieldOp>(op)) {
      for (Value v : yield.getValues())
        yielded.push_back(map.lookupOrDefault(v));
      continue;
    }
    Operation *clone = nb.clone(op, map);
    if (auto gemm = dyn_cast<GemmOp>(clone); gemm && accumulateOnly)
      gemm.setAsync(true);
  }
  auto syncReaders = [&]() {
    if (p.releaseSpan == 32)
      nb.create<NVVM::SyncWarpOp>(loc, nb.create<arith::ConstantIntOp>(loc, nb.getI32Type(), -1));
  };
  auto release = [&](OpBuilder &t, Location l, Value slot) {
    t.create<nvgpu::MBarrierArriveOp>(l, nvgpu::MBarrierTokenType::get(t.getContext()), p.empty, slot);
    t.create<scf::YieldOp>(l);
  };
  if (!accumulateOnly) {
    // Every gemm of this iteration has read its slot: release it, and the issuing thread refills it
    // for iteration iter + stages once every warpgroup has released it.
    nb.create<AsyncWaitOp>(loc, 0);
    syncReaders();
    nb.create<scf::IfOp>(loc, p.wgLeader, [&](OpBuilder &t, Location l) { release(t, l, at.slot); });
    if (refill) {
      Value next = nb.create<arith::AddIOp>(loc, at.iter, cS);
      Value go = nb.create<arith::AndIOp>(
          loc, p.leader, nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, next, p.tripCount));
      nb.create<scf::IfOp>(loc, go, [&](OpBuilder &t, Location l) {
        t.create<nvgpu::MBarrierTryWaitParityOp>(l, p.empty, at.parity, waitTicks(t, l), at.slot);
        p.issueLoads(t, l, next, at.slot);
        t.create<scf::YieldOp>(l);
      });
    }
  } else {
    // gemms of the previous iteration have retired: release its slot, then refill it.
    nb.create<AsyncWaitOp>(loc, 1);
    Value prev = nb.create<arith::SubIOp>(loc, at.iter, c1);
    Value prevSlot = nb.create<arith::RemUIOp>(loc, prev, cS);
    Value hasPrev = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, at.iter, c0);
    syncReaders();
    nb.create<scf::IfOp>(loc, nb.create<arith::AndIOp>(loc, hasPrev, p.wgLeader),
                         [&](OpBuilder &t, Location l) { release(t, l, prevSlot); });
    if (refill) {
      Value refillIter = nb.create<arith::AddIOp>(loc, prev, cS);
      Value inRange = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, refillIter, p.tripCount);
      Value go = nb.create<arith::AndIOp>(loc, p.leader, nb.create<arith::AndIOp>(loc, hasPrev, inRange));
      nb.create<scf::IfOp>(loc, go, [&](OpBuilder &t, Location l) {
        Value prevPhase = t.create<arith::RemUIOp>(l, t.create<arith::DivUIOp>(l, prev, cS), constIndex(t, l, 2));
        Value prevParity = t.create<arith::IndexCastOp>(l, t.getI1Type(), prevPhase);
        t.create<nvgpu::MBarrierTryWaitParityOp>(l, p.empty, prevParity, waitTicks(t, l), prevSlot);
        p.issueLoads(t, l, refillIter, prevSlot);
        t.create<scf::YieldOp>(l);
      });
    }
  }
  nb.create<scf::YieldOp>(loc, yielded);
  b.setInsertionPointAfter(newLoop);
  if (accumulateOnly)
    b.create<AsyncWaitOp>(loc, 0);
  loop.replaceAllUsesWith(newLoop.getResults());
  loop.erase();
}

/// At most how many iterations `loop` runs, where its bounds say: constant bounds, or an upper bound
/// min(lb + n, …) with a constant step (a loop over at most n items from lb, as a block's contiguous
/// slice of a range).
std::optional<int64_t> maxTripCount(ForOp loop) {
  auto constant = [](Value v) -> std::optional<int64_t> {
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return c.getSExtValue();
    return std::nullopt;
  };
  std::optional<int64_t> step = constant(loop.getStep());
  if (!step || *step <= 0)
    return std::nullopt;
  auto trips = [&](int64_t span) { return std::max<int64_t>(0, (span + *step - 1) / *step); };
  std::optional<int64_t> lb = constant(loop.getLowerBound()), ub = constant(loop.getUpperBound());
  if (lb && ub)
    return trips(*ub - *lb);
  if (auto min = loop.getUpperBound().getDefiningOp<arith::MinSIOp>())
    for (Value side : {min.getLhs(), min.getRhs()})
      if (auto add = side.getDefiningOp<arith::AddIOp>())
        for (auto [x, n] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())})
          if (x == loop.getLowerBound())
            if (std::optional<int64_t> count = constant(n))
              return trips(*count);
  return std::nullopt;
}

Value threadIndex(OpBuilder &b, Location loc) {
  return b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type()));
}

/// The rings of `p` and their barriers, before the kernel's first role region: all threads are there to
/// initialise them (thread 0 does, then the whole block synchronises).
void createRingsBeforeRoles(func::FuncOp kernel, PipelinedLoop &p, Location loc) {
  OpBuilder b(*kernel.getBody().front().getOps<RoleRegionOp>().begin());
  p.allocateRings(b, loc);
  p.leader = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, threadIndex(b, loc), constIndex(b, loc, 0));
  p.initialiseRings(b, loc);
}

/// Register tiles one role puts into a channel each iteration of its loop and other roles read as gemm
/// operands: a ring of `stages` shared-memory slots per channel (the producing loop's stages), with
/// full/empty mbarriers. Every thread of the producing role waits for the slot to be empty (opposite
/// parity: the first round passes), writes its part (qla.share_into) and arrives on full (count: the
/// role's threads); each reading loop waits for full where it got the value, its gemms read the slot,
/// and its warpgroups release it at the end of the iteration once their gemms are done.
/// A tile the producing role shares (qla.share) and puts is written into the slot in the share's place.
LogicalResult lowerFragmentChannels(func::FuncOp kernel) {
  SmallVector<ChannelPutOp> puts;
  kernel.walk([&](ChannelPutOp put) {
    auto share = put.getValue().getDefiningOp<ShareOp>();
    if (put.getValue().getType().isFragment() || (share && share->getBlock() == put->getBlock()))
      puts.push_back(put);
  });
  for (ChannelPutOp put : puts) {
    ShareOp share = put.getValue().getDefiningOp<ShareOp>();
    Value fragment = share ? share.getInput() : put.getValue();
    auto loop = dyn_cast<ForOp>(put->getParentOp());
    if (!loop || !put->getParentOfType<RoleRegionOp>())
      return put.emitError() << "a register tile crossing roles must be put in the body of a loop of a role "
                                "region (one value an iteration)";
    SmallVector<ChannelGetOp> gets;
    kernel.walk([&](ChannelGetOp get) {
      if (get.getChannel() == put.getChannel())
        gets.push_back(get);
    });
    int64_t releasers = 0;
    for (ChannelGetOp get : gets) {
      if (!isa<ForOp>(get->getParentOp()))
        return get.emitError() << "a register tile from another role must be read in the body of a loop";
      for (OpOperand &use : get->getUses())
        if (!isa<GemmOp>(use.getOwner()) || use.getOperandNumber() > 1)
          return use.getOwner()->emitError()
                 << "reads a register tile of another role: only gemm operands (A or B) can, for now (the tile "
                    "reaches it through shared memory)";
      releasers += threadGroup(get).threads / 128;
    }
    auto value = cast<TileType>(fragment.getType());
    int64_t stages = std::max<int64_t>(1, static_cast<int64_t>(loop.getStages()));
    PipelinedLoop p{loop, stages, releasers};
    p.arrivals = threadGroup(put).threads;
    p.slotTypes.push_back(TileType::get(value.getShape(), value.getElementType(), MemorySpace::smem));
    Location loc = put.getLoc();
    createRingsBeforeRoles(kernel, p, loc);
    OpBuilder b(put);
    Value ring = p.rings.front();
    auto slotType = p.slotTypes.front();
    RingPosition at(b, loc, loop, loop.getInductionVar(), stages);
    Value released = b.create<arith::XOrIOp>(loc, at.parity, b.create<arith::ConstantIntOp>(loc, b.getI1Type(), 1));
    b.create<nvgpu::MBarrierTryWaitParityOp>(loc, p.empty, released, waitTicks(b, loc), at.slot);
    b.create<ShareIntoOp>(loc, fragment, b.create<SlotOp>(loc, slotType, ring, at.slot));
    b.create<nvgpu::MBarrierArriveOp>(loc, nvgpu::MBarrierTokenType::get(b.getContext()), p.full, at.slot);
    put.erase();
    if (share && share->use_empty())
      share.erase();

    for (ChannelGetOp get : gets) {
      auto reader = cast<ForOp>(get->getParentOp());
      OpBuilder g(get);
      RingPosition rat(g, get.getLoc(), reader, reader.getInductionVar(), stages);
      g.create<nvgpu::MBarrierTryWaitParityOp>(get.getLoc(), p.full, rat.parity, waitTicks(g, get.getLoc()), rat.slot);
      Value slot = g.create<SlotOp>(get.getLoc(), slotType, ring, rat.slot);
      get.getResult().replaceAllUsesWith(slot);
      get.erase();
      // The iteration's gemms have read the slot: each warpgroup of the reader releases it.
      OpBuilder end(reader.getBodyBlock()->getTerminator());
      end.create<AsyncWaitOp>(loc, 0);
      Value tid = threadIndex(end, loc);
      Value wgLeader = end.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq, end.create<arith::RemUIOp>(loc, tid, constIndex(end, loc, 128)),
          constIndex(end, loc, 0));
      end.create<scf::IfOp>(loc, wgLeader, [&](OpBuilder &t, Location l) {
        t.create<nvgpu::MBarrierArriveOp>(l, nvgpu::MBarrierTokenType::get(t.getContext()), p.empty, rat.slot);
        t.create<scf::YieldOp>(l);
      });
    }
  }
  return success();
}

/// A warp-specialized kernel (qla-warp-specialize made its role regions): the copies that a producer
/// role's loop puts into channels become TMA rings. The producer's first thread waits for a slot to
/// be empty, then fills it (arrive.expect_tx + TMA loads); the loops of the other roles that get those
/// channels wait for the slot to be full and release it once their gemms have read it (one arrive per
/// warpgroup). Iteration i uses slot i % stages with parity (i / stages) & 1; the producer waits on
/// empty with the opposite parity, which a fresh barrier passes (the first round needs no release).
LogicalResult specializeChannels(func::FuncOp kernel) {
  if (failed(lowerFragmentChannels(kernel)))
    return failure();
  SmallVector<ForOp> producers;
  kernel.walk([&](ForOp loop) {
    if (!loop.getBodyBlock()->getOps<ChannelPutOp>().empty())
      producers.push_back(loop);
  });
  // Every producer is checked before any loop is rewritten (rewriting a reader replaces its loop).
  for (ForOp loop : producers) {
    auto region = loop->getParentOfType<RoleRegionOp>();
    if (!region || loop->getParentOfType<ForOp>() || loop.getNumResults() != 0)
      return loop.emitError() << "a loop that puts into channels must be a top-level loop of a role region "
                                 "that carries nothing";
    for (Operation &op : loop.getBodyBlock()->without_terminator()) {
      if (auto put = dyn_cast<ChannelPutOp>(op)) {
        auto copy = put.getValue().getDefiningOp<CopyOp>();
        if (!copy || !copy.getResult().getType().isShared() || !copy->hasOneUse())
          return put.emitError() << "only a copy into shared memory read by nothing else, a register tile, or a "
                                    "tile shared (qla.share) in the putting loop's body can go through a channel";
        if (std::string why = whyNotTma(copy); !why.empty())
          return copy.emitError() << "a copy into a channel must use TMA, and this one cannot: " << why;
      } else if (!isa<CopyOp>(op) && !isPure(&op)) {
        return op.emitError() << "the producer's loop may only compute offsets and put copies into channels "
                                 "for now";
      }
    }
  }
  for (ForOp loop : producers) {
    PipelinedLoop p{loop, std::max<int64_t>(1, static_cast<int64_t>(loop.getStages())), 0};
    llvm::DenseMap<int64_t, Value> ringOf;
    SmallVector<int64_t> channels;
    for (Operation &op : loop.getBodyBlock()->without_terminator()) {
      if (auto put = dyn_cast<ChannelPutOp>(op)) {
        auto copy = put.getValue().getDefiningOp<CopyOp>();
        p.copies.push_back(copy);
        channels.push_back(put.getChannel());
        p.txBytes += copy.getResult().getType().getSizeInBytes();
      }
    }
    SmallVector<ForOp> consumers;
    kernel.walk([&](ForOp other) {
      if (other != loop && llvm::any_of(other.getBodyBlock()->getOps<ChannelGetOp>(), [&](ChannelGetOp get) {
            return llvm::is_contained(channels, static_cast<int64_t>(get.getChannel()));
          }))
        consumers.push_back(other);
    });
    // Where a consumer reads a slot with plain loads (qla.read), every consumer's warps release the
    // slots one by one (as the unspecialized pipeline does): a wgmma wait no longer covers all reads.
    auto readsSlots = [&](ForOp consumer) {
      return llvm::any_of(consumer.getBodyBlock()->getOps<ChannelGetOp>(), [&](ChannelGetOp get) {
        return llvm::is_contained(channels, static_cast<int64_t>(get.getChannel())) &&
               llvm::any_of(get->getUsers(), [](Operation *user) { return isa<ReadOp>(user); });
      });
    };
    if (llvm::any_of(consumers, readsSlots))
      p.releaseSpan = 32;
    for (ForOp consumer : consumers)
      p.warpgroups += threadGroup(consumer).threads / p.releaseSpan;

    Location loc = loop.getLoc();
    createRingsBeforeRoles(kernel, p, loc);
    OpBuilder b(loop);
    for (auto [channel, ring] : llvm::zip(channels, p.rings))
      ringOf[channel] = ring;

    // The producer: its first thread runs the loop, the rest of its warpgroups have nothing to do.
    Value isIssuer = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, threadIndex(b, loc),
                                             constIndex(b, loc, threadGroup(loop).firstThread));
    b.create<scf::IfOp>(loc, isIssuer, [&](OpBuilder &t, Location l) {
      t.create<scf::ForOp>(l, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(), ValueRange{},
                           [&](OpBuilder &f, Location fl, Value iv, ValueRange) {
                             RingPosition at(f, fl, loop, iv, p.stages);
                             Value released = f.create<arith::XOrIOp>(
                                 fl, at.parity, f.create<arith::ConstantIntOp>(fl, f.getI1Type(), 1));
                             f.create<nvgpu::MBarrierTryWaitParityOp>(fl, p.empty, released, waitTicks(f, fl),
                                                                      at.slot);
                             p.issueLoads(f, fl, at.iter, at.slot);
                             f.create<scf::YieldOp>(fl);
                           });
      t.create<scf::YieldOp>(l);
    });

    // The readers.
    for (ForOp consumer : consumers) {
      if (consumer->getParentOfType<ForOp>())
        return consumer.emitError() << "a loop that gets from channels must not be nested in another loop";
      p.loop = consumer;
      OpBuilder cb(consumer);
      Value tid = threadIndex(cb, loc);
      p.wgLeader = cb.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq,
          cb.create<arith::RemUIOp>(loc, tid, constIndex(cb, loc, p.releaseSpan)), constIndex(cb, loc, 0));
      SmallVector<std::pair<Value, Value>> fromSlot;
      for (ChannelGetOp get : consumer.getBodyBlock()->getOps<ChannelGetOp>())
        if (Value ring = ringOf.lookup(get.getChannel()))
          fromSlot.push_back({get.getResult(), ring});
      buildSteadyState(p, fromSlot, /*refill=*/false);
    }
    // The copies' slices were cloned into the producer's loop; the original loop goes.
    loop.erase();
  }
  WalkResult left = kernel.walk([](Operation *op) {
    if (!isa<ChannelGetOp, ChannelPutOp>(op))
      return WalkResult::advance();
    op->emitError() << "this channel is not lowered: its value is not a copy that a producer loop puts "
                       "(only TMA copies across roles are supported for now)";
    return WalkResult::interrupt();
  });
  return failure(left.wasInterrupted());
}

struct PipelinePass : qla::impl::QlaPipelineBase<PipelinePass> {
  using QlaPipelineBase::QlaPipelineBase;

  void runOnOperation() override {
    SmallVector<ForOp> loops;
    SmallVector<func::FuncOp> specialized;
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel.getBody().empty() && !kernel.getBody().front().getOps<RoleRegionOp>().empty())
        specialized.push_back(kernel);
    });
    for (func::FuncOp kernel : specialized)
      if (failed(specializeChannels(kernel)))
        return signalPassFailure();
    getOperation().walk([&](ForOp loop) {
      if (!loop->getParentOfType<RoleRegionOp>())
        loops.push_back(loop);
    });
    for (ForOp loop : loops)
      if (failed(pipeline(loop)))
        return signalPassFailure();
  }

  LogicalResult pipeline(ForOp loop) {
    auto kernel = loop->getParentOfType<func::FuncOp>();
    PipelinedLoop p{loop, static_cast<int64_t>(loop.getStages()), std::max<int64_t>(1, kernelThreads(kernel) / 128)};
    for (Operation &op : loop.getBodyBlock()->without_terminator())
      if (auto copy = dyn_cast<CopyOp>(op); copy && copy.getResult().getType().isShared())
        p.copies.push_back(copy); // register copies stay in the body as plain loads
    if (p.copies.empty())
      return success();
    if (p.stages < 2) {
      loop.emitRemark() << "not pipelined: stages = " << p.stages << " (ask for at least 2)";
      return success();
    }
    if (loop->getParentOfType<ForOp>() || loop->getParentOfType<scf::ForOp>()) {
      // Each run of the outer loop would initialise the barriers and refill the slots again while
      // slower warpgroups may still read them.
      loop.emitRemark() << "not pipelined: the loop is inside another loop";
      return success();
    }
    for (CopyOp copy : p.copies) {
      if (std::string why = whyNotTma(copy); !why.empty()) {
        copy.emitRemark() << "copy cannot use TMA: " << why << "; the loop is not pipelined";
        return success();
      }
      for (Operation *user : copy->getUsers())
        if (!isa<GemmOp, ReadOp>(user)) {
          user->emitRemark() << "not pipelined: a pipelined copy may only feed qla.gemm and qla.read, found "
                             << user->getName();
          return success();
        }
      p.txBytes += copy.getResult().getType().getSizeInBytes();
      if (llvm::any_of(copy->getUsers(), [](Operation *user) { return isa<ReadOp>(user); }))
        p.releaseSpan = 32;
    }
    if (p.releaseSpan == 32)
      p.warpgroups = std::max<int64_t>(1, kernelThreads(kernel) / 32);

    // Slots past the loop's last iteration would never be filled: a loop of at most n iterations gets
    // n (one slot when it runs once: TMA copies without a ring's shared memory). Never fewer slots than
    // iterations: every slot is filled once, in the prologue, and none is refilled.
    if (std::optional<int64_t> trips = maxTripCount(loop); trips && *trips < p.stages) {
      p.stages = std::max<int64_t>(1, *trips);
      loop.emitRemark() << "ring of " << p.stages << " slot" << (p.stages > 1 ? "s" : "")
                        << ": the loop runs at most " << *trips << " iteration" << (*trips == 1 ? "" : "s");
    }
    if (loadAheadOfRings) {
      loop = loadAhead(loop);
      p.loop = loop;
    }
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    p.allocateRings(b, loc);
    Value tid = threadIndex(b, loc);
    p.leader = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, constIndex(b, loc, 0));
    p.wgLeader = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, b.create<arith::RemUIOp>(loc, tid, constIndex(b, loc, p.releaseSpan)),
        constIndex(b, loc, 0));
    Value span = b.create<arith::SubIOp>(loc, loop.getUpperBound(), loop.getLowerBound());
    p.tripCount = b.create<arith::CeilDivSIOp>(loc, span, loop.getStep());
    p.initialiseRings(b, loc);
    // Prologue: fill every slot.
    for (int64_t s = 0; s < p.stages; ++s) {
      Value iter = constIndex(b, loc, s);
      Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, iter, p.tripCount);
      b.create<scf::IfOp>(loc, b.create<arith::AndIOp>(loc, p.leader, inRange), [&](OpBuilder &t, Location l) {
        p.issueLoads(t, l, iter, iter);
        t.create<scf::YieldOp>(l);
      });
    }
    SmallVector<std::pair<Value, Value>> fromSlot;
    for (auto [copy, ring] : llvm::zip(p.copies, p.rings))
      fromSlot.push_back({copy.getResult(), ring});
    buildSteadyState(p, fromSlot, /*refill=*/true);
    return success();
  }
};

} // namespace

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

struct PipelinedLoop {
  ForOp loop;
  int64_t stages;
  int64_t warpgroups;
  SmallVector<CopyOp> copies;
  SmallVector<Value> rings;
  Value full, empty, leader, wgLeader, tripCount;
  int64_t txBytes = 0;

  /// Thread 0 issues the TMA loads of iteration `iter` into slot `slot`, completing on full[slot].
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
};

struct PipelinePass : qla::impl::QlaPipelineBase<PipelinePass> {
  void runOnOperation() override {
    SmallVector<ForOp> loops;
    getOperation().walk([&](ForOp loop) { loops.push_back(loop); });
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
        if (!isa<GemmOp>(user)) {
          user->emitRemark() << "not pipelined: a pipelined copy may only feed qla.gemm, found "
                             << user->getName();
          return success();
        }
      p.txBytes += copy.getResult().getType().getSizeInBytes();
    }

    Location loc = loop.getLoc();
    OpBuilder b(loop);
    MLIRContext *ctx = b.getContext();
    auto wgSpace = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto groupType = nvgpu::MBarrierGroupType::get(ctx, wgSpace, p.stages);
    p.full = b.create<nvgpu::MBarrierCreateOp>(loc, groupType);
    p.empty = b.create<nvgpu::MBarrierCreateOp>(loc, groupType);
    for (CopyOp copy : p.copies) {
      TileType slot = copy.getResult().getType();
      SmallVector<int64_t> ringShape{p.stages};
      ringShape.append(slot.getShape().begin(), slot.getShape().end());
      p.rings.push_back(b.create<SmemAllocOp>(loc, slot.withShape(ringShape), IntegerAttr()));
    }
    Value c0 = constIndex(b, loc, 0), c1 = constIndex(b, loc, 1), c2 = constIndex(b, loc, 2);
    Value cS = constIndex(b, loc, p.stages);
    Value tid = b.create<arith::IndexCastUIOp>(loc, b.getIndexType(),
                                               b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type()));
    p.leader = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, c0);
    p.wgLeader = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, b.create<arith::RemUIOp>(loc, tid, constIndex(b, loc, 128)), c0);
    Value span = b.create<arith::SubIOp>(loc, loop.getUpperBound(), loop.getLowerBound());
    p.tripCount = b.create<arith::CeilDivSIOp>(loc, span, loop.getStep());

    // Barrier initialisation, visible to the async proxy before any TMA uses it.
    b.create<scf::IfOp>(loc, p.leader, [&](OpBuilder &t, Location l) {
      Value wgs = constIndex(t, l, p.warpgroups);
      for (int64_t s = 0; s < p.stages; ++s) {
        Value slot = constIndex(t, l, s);
        t.create<nvgpu::MBarrierInitOp>(l, p.full, c1, slot, Value());
        t.create<nvgpu::MBarrierInitOp>(l, p.empty, wgs, slot, Value());
      }
      t.create<NVVM::FenceMbarrierInitOp>(l);
      t.create<scf::YieldOp>(l);
    });
    b.create<NVVM::Barrier0Op>(loc);

    // Prologue: fill every slot.
    for (int64_t s = 0; s < p.stages; ++s) {
      Value iter = constIndex(b, loc, s);
      Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, iter, p.tripCount);
      Value go = b.create<arith::AndIOp>(loc, p.leader, inRange);
      b.create<scf::IfOp>(loc, go, [&](OpBuilder &t, Location l) {
        p.issueLoads(t, l, iter, iter);
        t.create<scf::YieldOp>(l);
      });
    }

    // The steady-state loop.
    auto newLoop = b.create<scf::ForOp>(loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
                                        loop.getInitArgs());
    Block *oldBody = loop.getBodyBlock();
    Block *newBody = newLoop.getBody();
    if (!newBody->empty())
      newBody->back().erase(); // the builder's implicit scf.yield; ours comes last
    OpBuilder nb = OpBuilder::atBlockBegin(newBody);
    Value iv = newLoop.getInductionVar();
    Value iter = nb.create<arith::DivSIOp>(loc, nb.create<arith::SubIOp>(loc, iv, loop.getLowerBound()),
                                           loop.getStep());
    Value slot = nb.create<arith::RemUIOp>(loc, iter, cS);
    Value phase = nb.create<arith::RemUIOp>(loc, nb.create<arith::DivUIOp>(loc, iter, cS), c2);
    Value parity = nb.create<arith::IndexCastOp>(loc, nb.getI1Type(), phase);
    Value ticks = constIndex(nb, loc, 10000000);
    nb.create<nvgpu::MBarrierTryWaitParityOp>(loc, p.full, parity, ticks, slot);

    IRMapping map;
    map.map(loop.getInductionVar(), iv);
    for (auto [oldArg, newArg] : llvm::zip(loop.getRegionIterArgs(), newLoop.getRegionIterArgs()))
      map.map(oldArg, newArg);
    for (auto [copy, ring] : llvm::zip(p.copies, p.rings))
      map.map(copy.getResult(), nb.create<SlotOp>(loc, copy.getResult().getType(), ring, slot));
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
      if (auto copy = dyn_cast<CopyOp>(op); copy && copy.getResult().getType().isShared())
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
    if (!accumulateOnly) {
      // Every gemm of this iteration has read its slot: release it, and the issuing thread refills it
      // for iteration iter + stages once every warpgroup has released it.
      nb.create<AsyncWaitOp>(loc, 0);
      nb.create<scf::IfOp>(loc, p.wgLeader, [&](OpBuilder &t, Location l) {
        t.create<nvgpu::MBarrierArriveOp>(l, nvgpu::MBarrierTokenType::get(t.getContext()), p.empty, slot);
        t.create<scf::YieldOp>(l);
      });
      Value next = nb.create<arith::AddIOp>(loc, iter, cS);
      Value refill = nb.create<arith::AndIOp>(
          loc, p.leader, nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, next, p.tripCount));
      nb.create<scf::IfOp>(loc, refill, [&](OpBuilder &t, Location l) {
        t.create<nvgpu::MBarrierTryWaitParityOp>(l, p.empty, parity, ticks, slot);
        p.issueLoads(t, l, next, slot);
        t.create<scf::YieldOp>(l);
      });
      nb.create<scf::YieldOp>(loc, yielded);
      b.setInsertionPointAfter(newLoop);
      loop.replaceAllUsesWith(newLoop.getResults());
      loop.erase();
      return success();
    }

    // gemms of the previous iteration have retired: release its slot, then refill it.
    nb.create<AsyncWaitOp>(loc, 1);
    Value prev = nb.create<arith::SubIOp>(loc, iter, c1);
    Value prevSlot = nb.create<arith::RemUIOp>(loc, prev, cS);
    Value hasPrev = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, iter, c0);
    nb.create<scf::IfOp>(loc, nb.create<arith::AndIOp>(loc, hasPrev, p.wgLeader),
                         [&](OpBuilder &t, Location l) {
                           t.create<nvgpu::MBarrierArriveOp>(
                               l, nvgpu::MBarrierTokenType::get(t.getContext()), p.empty, prevSlot);
                           t.create<scf::YieldOp>(l);
                         });
    Value refillIter = nb.create<arith::AddIOp>(loc, prev, cS);
    Value refillInRange = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, refillIter, p.tripCount);
    Value refill = nb.create<arith::AndIOp>(
        loc, p.leader, nb.create<arith::AndIOp>(loc, hasPrev, refillInRange));
    nb.create<scf::IfOp>(loc, refill, [&](OpBuilder &t, Location l) {
      Value prevPhase = t.create<arith::RemUIOp>(l, t.create<arith::DivUIOp>(l, prev, cS), c2);
      Value prevParity = t.create<arith::IndexCastOp>(l, t.getI1Type(), prevPhase);
      t.create<nvgpu::MBarrierTryWaitParityOp>(l, p.empty, prevParity, ticks, prevSlot);
      p.issueLoads(t, l, refillIter, prevSlot);
      t.create<scf::YieldOp>(l);
    });
    nb.create<scf::YieldOp>(loc, yielded);

    b.setInsertionPointAfter(newLoop);
    b.create<AsyncWaitOp>(loc, 0);
    loop.replaceAllUsesWith(newLoop.getResults());
    loop.erase();
    return success();
  }
};

} // namespace

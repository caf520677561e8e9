// qla-assign-layouts: register-fragment distributions and shared-memory layouts.
//  - A 2-D fragment with 8..256 columns and rows a multiple of 64 per warpgroup is spread like wgmma
//    accumulators over all the warpgroups that run it (its role's, else the block's); any other
//    fragment round-robin over their threads (#qla.strided).
//  - A shared tile is stored as is (row-major, swizzled) and read MN-major by the gemms that need it
//    in a transposed role (Aᵀ or a non-transposed B) when wgmma can (16-bit elements, rows a multiple
//    of 128 bytes); else it is stored K-major for them (#qla.swizzle<…, transposed = true>), and a tile
//    that gemms need both ways is produced twice.
//  - In a kernel marked qla.slice_broadcasts, a vector (one dimension other than 1) that a broadcast
//    spreads into an accumulator fragment is made again in #qla.acc_slice (the rows or columns each
//    thread holds of that fragment) from its chain of copies, shared-tile reads, fills, iotas and maps, so that the
//    broadcast moves no data: copies right after the original, the rest right before the broadcast.
//    What nothing reads any more (originals, clones of a chain that could not be remade) goes.
//  - In a kernel marked qla.warpgroup_local (no roles), round-robin vectors are held by each warpgroup
//    (#qla.strided<threads = 128, copies = warpgroups>), so that exchanges from them stay in one warpgroup;
//    not in a kernel where a cumsum or tri_inverse reads a vector (those exchange block-wide only).
//  - A gemm's register-fragment A stays in registers (wgmma reads A from registers) when it is 16-bit
//    and spread like the accumulator (same rows, K a multiple of 16); else it is written to shared
//    memory first (qla.share).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace qla {
#define GEN_PASS_DEF_QLAASSIGNLAYOUTS
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// The accumulator layout only when it spans every warpgroup of the group: with fewer, the threads past
/// it would address rows outside the tile (a 64-row tile on 256 threads goes round-robin instead).
/// `perWarpgroup`: round-robin vectors are held by each warpgroup (qla.warpgroup_local); larger tiles
/// stay spread over all threads (a copy a warpgroup of a 64x128 f32 tile and of its scratch costs more
/// than the block barriers saved).
Attribute fragmentLayout(TileType tile, int64_t threads, bool perWarpgroup = false) {
  MLIRContext *ctx = tile.getContext();
  const int64_t wg = std::max<int64_t>(1, threads / 128);
  if (tile.getRank() == 2 && tile.getShape()[1] % 8 == 0 && tile.getShape()[1] <= 256 &&
      tile.getShape()[0] % (64 * wg) == 0)
    return WgmmaAccLayoutAttr::get(ctx, wg);
  if (perWarpgroup && wg > 1 && sliceVectorDim(tile.getShape()))
    return qla::StridedLayoutAttr::get(ctx, 128, wg);
  return qla::StridedLayoutAttr::get(ctx, threads);
}

SwizzleAttr sharedLayout(TileType tile, bool transposed) {
  ArrayRef<int64_t> shape = tile.getShape();
  int64_t stored = transposed ? shape[shape.size() - 2] : shape.back();
  return SwizzleAttr::get(tile.getContext(), smemSwizzleBytes(stored * elementBytes(tile.getElementType())),
                          transposed);
}

/// Whether `use` (a gemm operand) needs its tile stored transposed to be K-major.
std::optional<bool> wantsTransposed(OpOperand &use) {
  auto gemm = dyn_cast<GemmOp>(use.getOwner());
  if (!gemm)
    return std::nullopt;
  if (use.getOperandNumber() == 0)
    return gemm.getTransposeA();
  return !gemm.getTransposeB();
}

/// Whether gemms can read `tile`, stored as is (row-major, 128-byte swizzle), in the transposed roles
/// too (MN-major, wgmma's transpose bit).
bool readableMNMajor(TileType tile) {
  int64_t eb = elementBytes(tile.getElementType());
  return tile.getRank() == 2 && eb == 2 && smemSwizzleBytes(tile.getShape()[1] * eb) == 128;
}

struct AssignLayoutsPass : qla::impl::QlaAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      shareRegisterOperands(kernel);
      if (kernel->removeAttr(QlaDialect::kSliceBroadcastsAttr))
        sliceBroadcastInputs(kernel);
      assignFragments(kernel);
      if (failed(assignShared(kernel)))
        signalPassFailure();
    });
  }

  // Fragments are spread over the threads that run them: a role's warpgroups, else the block.
  void shareRegisterOperands(func::FuncOp kernel) {
    kernel.walk([&](GemmOp gemm) {
      int64_t threads = threadGroup(gemm).threads;
      auto a = gemm.getA().getType();
      if (!a.isFragment())
        return;
      Attribute aLayout = a.getLayout() ? a.getLayout() : fragmentLayout(a, threads);
      auto acc = gemm.getAcc().getType();
      Attribute accLayout = acc.getLayout() ? acc.getLayout() : fragmentLayout(acc, threads);
      if (isa<WgmmaAccLayoutAttr>(aLayout) && aLayout == accLayout && a.getShape()[0] == acc.getShape()[0] &&
          a.getShape()[1] % 16 == 0 && !gemm.getTransposeA())
        return;
      OpBuilder b(gemm);
      auto smem = TileType::get(a.getShape(), a.getElementType(), MemorySpace::smem);
      gemm.getAMutable().assign(b.create<ShareOp>(gemm.getLoc(), smem, gemm.getA()));
    });
  }

  /// `v` again with `layout` (an acc_slice) on it and on the vectors it is made from, for a broadcast at
  /// `at`; null when its chain has something else (a block argument, an exchange). A copy or a read of a
  /// shared tile is made again right after the original (a copy's latency stays hidden; no write comes
  /// between them; a ring slot is not released before it) and shared by every broadcast of it; maps, fills
  /// and iotas right before `at` (their results live no longer than the original broadcast's, at the price
  /// of being made again for each broadcast they do not dominate).
  Value rematerialize(Value v, AccSliceLayoutAttr layout, int64_t threads, Operation *at, DominanceInfo &dom,
                      DenseMap<std::pair<Value, Attribute>, Value> &made, SetVector<Operation *> &touched) {
    if (Value done = made.lookup({v, layout}); done && dom.properlyDominates(done, at))
      return done;
    Operation *def = v.getDefiningOp();
    auto tile = dyn_cast<TileType>(v.getType());
    if (!def || def->getNumResults() != 1 || !tile || tile.getLayout() || !sliceVectorDim(tile.getShape()) ||
        threadGroup(def).threads != threads)
      return {};
    IRMapping map;
    OpBuilder b(at);
    if (isa<CopyOp, ReadOp>(def)) {
      // (A read of a ring slot must stay before the slot's release, which qla-pipeline put after the original.)
      b.setInsertionPointAfter(def);
    } else if (auto m = dyn_cast<MapOp>(def)) {
      for (Value in : m.getInputs()) {
        if (cast<TileType>(in.getType()).getShape() != tile.getShape())
          return {};
        Value again = rematerialize(in, layout, threads, at, dom, made, touched);
        if (!again)
          return {};
        map.map(in, again);
      }
    } else if (!isa<FillOp, IotaOp>(def)) {
      return {};
    }
    Operation *clone = b.clone(*def, map);
    clone->getResult(0).setType(tile.withLayout(layout));
    touched.insert(def);
    touched.insert(clone);
    made[{v, layout}] = clone->getResult(0);
    return clone->getResult(0);
  }

  void sliceBroadcastInputs(func::FuncOp kernel) {
    DominanceInfo dom(kernel);
    DenseMap<std::pair<Value, Attribute>, Value> made;
    SetVector<Operation *> touched; // originals and clones
    SmallVector<BroadcastOp> broadcasts;
    kernel.walk([&](BroadcastOp broadcast) { broadcasts.push_back(broadcast); });
    for (BroadcastOp broadcast : broadcasts) {
      TileType in = broadcast.getInput().getType(), out = broadcast.getType();
      int64_t threads = threadGroup(broadcast).threads;
      std::optional<int64_t> dim = sliceVectorDim(in.getShape());
      auto acc = dyn_cast<WgmmaAccLayoutAttr>(fragmentLayout(out, threads));
      if (in.getLayout() || out.getLayout() || !dim || !acc)
        continue;
      int64_t along = broadcast.getDims()[*dim];
      if (along > 1 || out.getShape()[along] != in.getShape()[*dim])
        continue;
      auto layout = AccSliceLayoutAttr::get(kernel.getContext(), acc.getWarpgroups(), along);
      if (Value v = rematerialize(broadcast.getInput(), layout, threads, broadcast, dom, made, touched))
        broadcast.getInputMutable().assign(v);
    }
    // What nothing reads any more, until none is left (an op's users die before it).
    SmallVector<Operation *> ops = touched.takeVector();
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&op : ops)
        if (op && isOpTriviallyDead(op)) {
          op->erase();
          op = nullptr;
          erased = true;
        }
    }
  }

  void assignFragments(func::FuncOp kernel) {
    // Not where a cumsum or tri_inverse reads a vector: those exchange block-wide only, and a vector's
    // layout passes through maps to the vectors made from it (one rule for the kernel keeps them alike).
    bool local = kernel->hasAttr(QlaDialect::kWarpgroupLocalAttr);
    kernel.walk([&](Operation *op) {
      if (isa<CumsumOp, TriInverseOp>(op) && sliceVectorDim(cast<TileType>(op->getOperand(0).getType()).getShape()))
        local = false;
    });
    auto retype = [&](Value v, ThreadGroup group) {
      auto tile = dyn_cast<TileType>(v.getType());
      if (tile && tile.isFragment() && !tile.getLayout())
        v.setType(tile.withLayout(fragmentLayout(tile, group.threads, local && !group.isRole())));
    };
    kernel.walk([&](Operation *op) {
      ThreadGroup group = threadGroup(op);
      for (Value r : op->getResults())
        retype(r, group);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            retype(arg, group);
    });
  }

  LogicalResult assignShared(func::FuncOp kernel) {
    SmallVector<Operation *> producers;
    kernel.walk([&](Operation *op) {
      if (isa<CopyOp, ShareOp, SmemAllocOp, SlotOp>(op) && cast<TileType>(op->getResult(0).getType()).isShared())
        producers.push_back(op);
    });
    for (Operation *op : producers) {
      Value v = op->getResult(0);
      auto tile = cast<TileType>(v.getType());
      if (tile.getLayout())
        continue;
      SmallVector<OpOperand *> natural, transposed;
      for (OpOperand &use : v.getUses())
        if (std::optional<bool> t = wantsTransposed(use))
          (*t ? transposed : natural).push_back(&use);
      bool fixed = isa<SmemAllocOp, SlotOp>(op); // filled by TMA boxes: stored as is
      if (!transposed.empty() && readableMNMajor(tile)) {
        v.setType(tile.withLayout(sharedLayout(tile, false)));
        continue;
      }
      if (fixed && !transposed.empty())
        return transposed.front()->getOwner()->emitOpError()
               << "reads a TMA-pipelined tile in a transposed role (Aᵀ or a non-transposed B), which wgmma "
                  "reads MN-major only with 16-bit elements and rows of a multiple of 128 bytes: load that tile "
                  "without pipelining, or transpose the other operand";
      if (natural.empty() && !transposed.empty()) {
        v.setType(tile.withLayout(sharedLayout(tile, true)));
        continue;
      }
      v.setType(tile.withLayout(sharedLayout(tile, false)));
      if (transposed.empty())
        continue;
      OpBuilder b(op);
      b.setInsertionPointAfter(op);
      Operation *twin = b.clone(*op);
      twin->getResult(0).setType(tile.withLayout(sharedLayout(tile, true)));
      for (OpOperand *use : transposed)
        use->set(twin->getResult(0));
    }
    return success();
  }
};

} // namespace

// qla-assign-layouts: register-fragment distributions and shared-memory layouts.
//  - A 2-D fragment with 8..256 columns and rows a multiple of 64 per warpgroup is spread like wgmma
//    accumulators over all the warpgroups that run it (its role's, else the block's); any other
//    fragment round-robin over their threads (#qla.strided).
//  - A shared tile is stored as is (row-major, swizzled) and read MN-major by the gemms that need it
//    in a transposed role (Aᵀ or a non-transposed B) when wgmma can (16-bit elements, rows a multiple
//    of 128 bytes); else it is stored K-major for them (#qla.swizzle<…, transposed = true>), and a tile
//    that gemms need both ways is produced twice.
//  - A gemm's register-fragment A stays in registers (wgmma reads A from registers) when it is 16-bit
//    and spread like the accumulator (same rows, K a multiple of 16); else it is written to shared
//    memory first (qla.share).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace qla {
#define GEN_PASS_DEF_QLAASSIGNLAYOUTS
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// The accumulator layout only when it spans every warpgroup of the group: with fewer, the threads past
/// it would address rows outside the tile (a 64-row tile on 256 threads goes round-robin instead).
Attribute fragmentLayout(TileType tile, int64_t threads) {
  MLIRContext *ctx = tile.getContext();
  const int64_t wg = std::max<int64_t>(1, threads / 128);
  if (tile.getRank() == 2 && tile.getShape()[1] % 8 == 0 && tile.getShape()[1] <= 256 &&
      tile.getShape()[0] % (64 * wg) == 0)
    return WgmmaAccLayoutAttr::get(ctx, wg);
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

  void assignFragments(func::FuncOp kernel) {
    auto retype = [&](Value v, int64_t threads) {
      auto tile = dyn_cast<TileType>(v.getType());
      if (tile && tile.isFragment() && !tile.getLayout())
        v.setType(tile.withLayout(fragmentLayout(tile, threads)));
    };
    kernel.walk([&](Operation *op) {
      int64_t threads = threadGroup(op).threads;
      for (Value r : op->getResults())
        retype(r, threads);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            retype(arg, threads);
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

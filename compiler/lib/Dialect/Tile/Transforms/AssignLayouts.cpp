// qla-assign-layouts: swizzles for shared tiles, wgmma-accumulator distribution for fragments.
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

Type withLayout(Type type, int64_t threads) {
  auto tile = dyn_cast<TileType>(type);
  if (!tile || tile.getLayout())
    return type;
  MLIRContext *ctx = tile.getContext();
  if (tile.isShared()) {
    int64_t rowBytes = tile.getShape().back() * elementBytes(tile.getElementType());
    return tile.withLayout(SwizzleAttr::get(ctx, smemSwizzleBytes(rowBytes)));
  }
  if (tile.getRank() != 2 || tile.getShape()[1] % 8 != 0 || tile.getShape()[1] > 256)
    return type;
  int64_t rows = tile.getShape()[0];
  for (int64_t wg = std::max<int64_t>(1, threads / 128); wg >= 1; --wg)
    if (rows % (64 * wg) == 0)
      return tile.withLayout(WgmmaAccLayoutAttr::get(ctx, wg));
  return type;
}

struct AssignLayoutsPass : qla::impl::QlaAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      int64_t threads = kernelThreads(kernel);
      kernel.walk([&](Operation *op) {
        for (Value r : op->getResults())
          r.setType(withLayout(r.getType(), threads));
        for (Region &region : op->getRegions())
          for (Block &block : region)
            for (BlockArgument arg : block.getArguments())
              arg.setType(withLayout(arg.getType(), threads));
      });
    });
  }
};

} // namespace

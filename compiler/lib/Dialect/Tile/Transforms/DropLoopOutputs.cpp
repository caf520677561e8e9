// qla-drop-loop-outputs: the state-only form of a kernel (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/LoopOutputs.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Transforms/RegionUtils.h"

namespace qla {
#define GEN_PASS_DEF_QLADROPLOOPOUTPUTS
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

void qla::eraseDeadOps(ModuleOp module) {
  // Innermost first, until none is left.
  for (bool changed = true; changed;) {
    SmallVector<Operation *> dead;
    module.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (isOpTriviallyDead(op))
        dead.push_back(op);
    });
    changed = !dead.empty();
    for (Operation *op : dead)
      op->erase();
  }
}

void qla::dropLoopOutputs(ModuleOp module) {
  SmallVector<StoreOp> outputs;
  module.walk([&](StoreOp store) {
    for (auto loop = store->getParentOfType<ForOp>(); loop; loop = loop->getParentOfType<ForOp>())
      if (!loop.getInitArgs().empty()) {
        outputs.push_back(store);
        return;
      }
  });
  for (StoreOp store : outputs)
    store.erase();
  eraseDeadOps(module);
}

namespace {

struct DropLoopOutputsPass : qla::impl::QlaDropLoopOutputsBase<DropLoopOutputsPass> {
  void runOnOperation() override { dropLoopOutputs(getOperation()); }
};

} // namespace

// qla-order-warpgroups: the warpgroups take turns at issuing their gemm groups (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace qla {
#define GEN_PASS_DEF_QLAORDERWARPGROUPS
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

bool isAsyncGemm(Operation *op) {
  auto gemm = dyn_cast<GemmOp>(op);
  return gemm && gemm.getAsync();
}

/// `wait` before and `pass` after each run of consecutive asynchronous gemms of `body`; whether any.
bool orderRuns(Block &body) {
  bool any = false;
  for (Operation *op = &body.front(); op; op = op->getNextNode()) {
    if (!isAsyncGemm(op))
      continue;
    OpBuilder b(op);
    b.create<WarpgroupTurnOp>(op->getLoc(), "wait");
    Operation *last = op;
    while (last->getNextNode() && isAsyncGemm(last->getNextNode()))
      last = last->getNextNode();
    b.setInsertionPointAfter(last);
    op = b.create<WarpgroupTurnOp>(last->getLoc(), "pass");
    any = true;
  }
  return any;
}

struct OrderWarpgroupsPass : qla::impl::QlaOrderWarpgroupsBase<OrderWarpgroupsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->removeAttr(QlaDialect::kWarpgroupTurnsAttr))
        return;
      if (kernelThreads(kernel) < 256) {
        kernel.emitRemark() << "qla.warpgroup_turns: one warpgroup, no turns to take";
        return;
      }
      // The kernel's outermost loops (the turns' barriers count every warpgroup: all run each loop).
      SmallVector<Operation *> loops;
      for (Operation &op : kernel.getBody().front())
        if (isa<scf::ForOp, ForOp>(op))
          loops.push_back(&op);
      for (Operation *loop : loops) {
        if (!orderRuns(loop->getRegion(0).front()))
          continue;
        OpBuilder b(loop);
        b.create<WarpgroupTurnOp>(loop->getLoc(), "begin");
        b.setInsertionPointAfter(loop);
        b.create<WarpgroupTurnOp>(loop->getLoc(), "end");
      }
    });
  }
};

} // namespace

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
      int64_t warpgroups = kernelThreads(kernel) / 128;
      if (warpgroups < 2 || 1 + 2 * warpgroups > 16) {
        kernel.emitRemark() << "qla.warpgroup_turns: " << warpgroups << " warpgroup(s), no turns taken (2 to 7: "
                            << "named barriers 1 + W + wg must stay below 16)";
        return;
      }
      // The first of the kernel's outermost loops with gemm runs (the turns' barriers count every warpgroup:
      // all run it). One loop only: a second's "begin" could arrive before the first's "end" took the last
      // turn, and the barrier would complete with one warpgroup's arrivals alone.
      for (Operation &op : kernel.getBody().front()) {
        if (!isa<scf::ForOp, ForOp>(op) || !orderRuns(op.getRegion(0).front()))
          continue;
        OpBuilder b(&op);
        b.create<WarpgroupTurnOp>(op.getLoc(), "begin");
        b.setInsertionPointAfter(&op);
        b.create<WarpgroupTurnOp>(op.getLoc(), "end");
        break;
      }
    });
  }
};

} // namespace

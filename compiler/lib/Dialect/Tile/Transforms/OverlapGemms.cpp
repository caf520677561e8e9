// qla-overlap-gemms: asynchronous gemms, waited for once before the first reader (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace qla {
#define GEN_PASS_DEF_QLAOVERLAPGEMMS
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// Whether `op` (or an op in its regions) reads one of `inFlight`, not counting `skip`.
bool readsAny(Operation *op, const llvm::SmallPtrSetImpl<Value> &inFlight, OpOperand *skip = nullptr) {
  bool found = false;
  op->walk([&](Operation *inner) {
    for (OpOperand &use : inner->getOpOperands())
      if (&use != skip && inFlight.contains(use.get()))
        found = true;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// Gemms of `block` issued asynchronously, with a wait before the first op that needs one in flight.
void overlap(Block &block) {
  llvm::SmallPtrSet<Value, 8> inFlight;
  bool anyAsync = false; // gemms made asynchronous elsewhere (qla-pipeline) keep their own waits
  for (Operation &op : block)
    if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm.getAsync())
      anyAsync = true;
  if (anyAsync)
    return;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto wait = dyn_cast<AsyncWaitOp>(op); wait && wait.getPending() == 0) {
      inFlight.clear();
      continue;
    }
    auto gemm = dyn_cast<GemmOp>(op);
    // A gemm may take an accumulator in flight (wgmma orders accumulation into the same registers),
    // not an operand tile.
    OpOperand *accUse = gemm ? &gemm.getAccMutable() : nullptr;
    if (!inFlight.empty() && (op.hasTrait<OpTrait::IsTerminator>() || readsAny(&op, inFlight, accUse))) {
      OpBuilder(&op).create<AsyncWaitOp>(op.getLoc(), 0);
      inFlight.clear();
    }
    if (gemm) {
      gemm.setAsync(true);
      inFlight.insert(gemm.getResult());
    }
  }
}

struct OverlapGemmsPass : qla::impl::QlaOverlapGemmsBase<OverlapGemmsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      SmallVector<Block *> blocks;
      kernel.walk([&](Block *b) { blocks.push_back(b); });
      for (Block *b : blocks)
        overlap(*b);
    });
  }
};

} // namespace

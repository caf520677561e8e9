// qla-overlap-gemms: asynchronous gemms, waited for once before the first reader (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

namespace qla {
#define GEN_PASS_DEF_QLAOVERLAPGEMMS
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

constexpr int64_t kMaxPendingGroups = 7; // the most qla.async_wait takes (its ODS constraint)

/// The position in `inFlight` of the youngest value `op` (or an op in its regions) reads, not counting
/// `skip`; -1 when it reads none.
int64_t youngestRead(Operation *op, ArrayRef<Value> inFlight, OpOperand *skip) {
  int64_t youngest = -1;
  op->walk([&](Operation *inner) {
    for (OpOperand &use : inner->getOpOperands())
      if (&use != skip)
        if (const Value *at = llvm::find(inFlight, use.get()); at != inFlight.end())
          youngest = std::max<int64_t>(youngest, at - inFlight.begin());
  });
  return youngest;
}

/// Gemms of `block` issued asynchronously (each its own wgmma group), with a wait before the first op
/// that needs one in flight: `qla.async_wait 0`, or with `partial` `qla.async_wait n` with n the gemms
/// issued after the youngest one it needs, so the groups issued later stay in flight. Gemms in nested
/// blocks are not counted: fewer groups counted than issued only makes a wait stricter.
void overlap(Block &block, bool partial) {
  SmallVector<Value> inFlight; // in issue order, oldest first
  for (Operation &op : block)
    if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm.getAsync())
      return; // gemms made asynchronous elsewhere (qla-pipeline) keep their own waits
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto wait = dyn_cast<AsyncWaitOp>(op)) {
      int64_t keep = std::min<int64_t>(wait.getPending(), inFlight.size());
      inFlight.erase(inFlight.begin(), inFlight.end() - keep);
      continue;
    }
    auto gemm = dyn_cast<GemmOp>(op);
    // A gemm may take an accumulator in flight (wgmma orders accumulation into the same registers),
    // not an operand tile.
    OpOperand *accUse = gemm ? &gemm.getAccMutable() : nullptr;
    int64_t needed = op.hasTrait<OpTrait::IsTerminator>() ? static_cast<int64_t>(inFlight.size()) - 1
                                                           : youngestRead(&op, inFlight, accUse);
    if (needed >= 0) {
      int64_t later = static_cast<int64_t>(inFlight.size()) - 1 - needed;
      int64_t pending = partial ? std::min<int64_t>(later, kMaxPendingGroups) : 0;
      OpBuilder(&op).create<AsyncWaitOp>(op.getLoc(), pending);
      inFlight.erase(inFlight.begin(), inFlight.end() - pending);
    }
    if (gemm) {
      gemm.setAsync(true);
      inFlight.push_back(gemm.getResult());
    }
  }
}

struct OverlapGemmsPass : qla::impl::QlaOverlapGemmsBase<OverlapGemmsPass> {
  using QlaOverlapGemmsBase::QlaOverlapGemmsBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      SmallVector<Block *> blocks;
      kernel.walk([&](Block *b) { blocks.push_back(b); });
      for (Block *b : blocks)
        overlap(*b, partialWaits);
    });
  }
};

} // namespace

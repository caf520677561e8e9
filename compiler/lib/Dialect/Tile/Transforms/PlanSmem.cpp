// qla-plan-smem: byte offsets for shared-memory buffers and the kernel's dynamic shared-memory size.
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace qla {
#define GEN_PASS_DEF_QLAPLANSMEM
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// Shared memory an op exchanges its fragment through (broadcast, reduce, cumsum, tri_inverse).
int64_t exchangeScratchBytes(Operation *op) {
  auto bytes = [](Value v) { return cast<TileType>(v.getType()).getNumElements() * 4; };
  if (isa<BroadcastOp, ReduceOp, CumsumOp>(op))
    return bytes(op->getOperand(0));
  if (isa<TriInverseOp>(op))
    return 2 * bytes(op->getOperand(0));
  return 0;
}

struct PlanSmemPass : qla::impl::QlaPlanSmemBase<PlanSmemPass> {
  using QlaPlanSmemBase::QlaPlanSmemBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      // Every buffer lives for the whole kernel; liveness-based reuse comes with kernels that need it.
      int64_t offset = 0;
      // Rings (qla.smem_alloc) and the tiles of qla.share and of copies that TMA does not perform.
      SmallVector<Operation *> buffers;
      int64_t scratch = 0;
      kernel.walk([&](Operation *op) {
        if (isa<SmemAllocOp, ShareOp>(op) || (isa<CopyOp>(op) && cast<CopyOp>(op).getResult().getType().isShared()))
          buffers.push_back(op);
        scratch = std::max(scratch, exchangeScratchBytes(op));
      });
      for (Operation *op : buffers) {
        auto t = cast<TileType>(op->getResult(0).getType());
        auto swz = dyn_cast_or_null<SwizzleAttr>(t.getLayout());
        int64_t align = (swz && swz.getBytes() > 0) ? 1024 : 128;
        offset = llvm::alignTo(offset, align);
        auto attr = IntegerAttr::get(IntegerType::get(&getContext(), 64), offset);
        if (auto alloc = dyn_cast<SmemAllocOp>(op))
          alloc.setOffsetAttr(attr);
        else
          op->setAttr(kSmemOffsetAttr, attr);
        offset += t.getSizeInBytes();
      }
      if (scratch > 0) {
        offset = llvm::alignTo(offset, 128);
        kernel->setAttr(kScratchOffsetAttr, IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
        offset += scratch;
      }
      // The kernel aligns the dynamic shared-memory base to 1024 bytes at run time; reserve the slack.
      if (!buffers.empty() || scratch)
        offset += 1024;
      if (offset > budgetBytes) {
        InFlightDiagnostic diag = kernel.emitError()
                                  << "shared memory needed (" << offset << " bytes) exceeds the budget of "
                                  << static_cast<int64_t>(budgetBytes) << " bytes; buffers:";
        for (Operation *op : buffers)
          diag << " " << op->getResult(0).getType() << " ("
               << cast<TileType>(op->getResult(0).getType()).getSizeInBytes() << " B)";
        if (scratch)
          diag << " and " << scratch << " B of scratch for layout exchanges";
        return signalPassFailure();
      }
      kernel->setAttr(QlaDialect::kSmemAttr, IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
    });
  }
};

} // namespace

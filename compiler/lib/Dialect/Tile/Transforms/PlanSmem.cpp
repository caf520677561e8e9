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

struct PlanSmemPass : qla::impl::QlaPlanSmemBase<PlanSmemPass> {
  using QlaPlanSmemBase::QlaPlanSmemBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        return;
      // Every buffer lives for the whole kernel; liveness-based reuse comes with kernels that need it.
      int64_t offset = 0;
      SmallVector<SmemAllocOp> allocs;
      kernel.walk([&](SmemAllocOp alloc) { allocs.push_back(alloc); });
      for (SmemAllocOp alloc : allocs) {
        TileType t = alloc.getResult().getType();
        auto swz = dyn_cast_or_null<SwizzleAttr>(t.getLayout());
        int64_t align = (swz && swz.getBytes() > 0) ? 1024 : 128;
        offset = llvm::alignTo(offset, align);
        alloc.setOffsetAttr(IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
        offset += t.getSizeInBytes();
      }
      // The kernel aligns the dynamic shared-memory base to 1024 bytes at run time; reserve the slack.
      if (!allocs.empty())
        offset += 1024;
      if (offset > budgetBytes) {
        InFlightDiagnostic diag = kernel.emitError()
                                  << "shared memory needed (" << offset << " bytes) exceeds the budget of "
                                  << static_cast<int64_t>(budgetBytes) << " bytes; buffers:";
        for (SmemAllocOp alloc : allocs)
          diag << " " << alloc.getResult().getType() << " (" << alloc.getResult().getType().getSizeInBytes()
               << " B)";
        return signalPassFailure();
      }
      kernel->setAttr(QlaDialect::kSmemAttr, IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
    });
  }
};

} // namespace

// qla-assign-roles: every op of a warp-specialized kernel gets the role that runs it (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace qla {
#define GEN_PASS_DEF_QLAASSIGNROLES
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// Whether `op` does tile work (a tile result, or a store or prefetch, a gemm, a copy): it runs in one role. Index
/// and scalar arithmetic runs in every role that needs it, and loops and their terminators belong to
/// no single role.
bool needsRole(Operation &op) {
  if (isa<ForOp, YieldOp, func::ReturnOp>(op))
    return false;
  if (isa<StoreOp, PrefetchOp, ReadOp>(op)) // (a scalar read has no tile result, and still runs in a role)
    return true;
  return llvm::any_of(op.getResultTypes(), [](Type t) { return isa<TileType>(t); });
}

bool isLoad(Operation &op) {
  auto copy = dyn_cast<CopyOp>(op);
  return (copy && copy.getType().isShared()) || isa<TmaLoadOp>(op);
}

StringAttr roleOf(Operation *op) { return op ? op->getAttrOfType<StringAttr>(QlaDialect::kRoleAttr) : StringAttr(); }

struct AssignRolesPass : qla::impl::QlaAssignRolesBase<AssignRolesPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      auto roles = kernel->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr);
      if (!roles)
        return;
      StringAttr producer, firstConsumer;
      for (auto r : roles.getAsRange<RoleAttr>()) {
        if (r.getProducer() && !producer)
          producer = r.getName();
        if (!r.getProducer() && !firstConsumer)
          firstConsumer = r.getName();
      }
      SmallVector<Operation *> open;
      kernel.walk([&](Operation *op) {
        if (!needsRole(*op) || roleOf(op) || isa<MapOp>(op->getParentOp()))
          return;
        if (producer && isLoad(*op))
          op->setAttr(QlaDialect::kRoleAttr, producer);
        else
          open.push_back(op);
      });
      // Each op without a role takes the role of a reader (it feeds that role), looking at readers
      // first until nothing changes, then at operands (it consumes that role's values). Only loads go
      // to the producer: an op reading a load belongs to a consumer. What stays open runs in the first
      // consumer role.
      auto consumerRole = [&](Operation *op) {
        StringAttr role = roleOf(op);
        return role == producer ? StringAttr() : role;
      };
      auto settle = [&](function_ref<StringAttr(Operation *)> pick) {
        for (bool changed = true; changed;) {
          changed = false;
          for (Operation *&op : llvm::reverse(open)) {
            if (!op)
              continue;
            if (StringAttr role = pick(op)) {
              op->setAttr(QlaDialect::kRoleAttr, role);
              op = nullptr;
              changed = true;
            }
          }
        }
      };
      settle([&](Operation *op) {
        for (Operation *user : op->getUsers())
          if (StringAttr role = consumerRole(user))
            return role;
        return StringAttr();
      });
      settle([&](Operation *op) {
        for (Value operand : op->getOperands())
          if (StringAttr role = consumerRole(operand.getDefiningOp()))
            return role;
        return StringAttr();
      });
      for (Operation *op : open)
        if (op && firstConsumer)
          op->setAttr(QlaDialect::kRoleAttr, firstConsumer);
      // Per loop: how many ops each role runs and how many values cross roles (the channels that
      // qla-warp-specialize will make).
      kernel.walk([&](ForOp loop) {
        llvm::MapVector<StringAttr, int64_t> count;
        int64_t crossing = 0;
        for (Operation &op : loop.getBody().front().without_terminator()) {
          StringAttr role = roleOf(&op);
          if (!role)
            continue;
          ++count[role];
          for (Value r : op.getResults())
            if (llvm::any_of(r.getUsers(), [&](Operation *u) {
                  Operation *inBody = loop.getBody().front().findAncestorOpInBlock(*u);
                  return roleOf(inBody) && roleOf(inBody) != role;
                }))
              ++crossing;
        }
        auto remark = loop.emitRemark() << "roles:";
        for (auto [role, n] : count)
          remark << " " << role.getValue() << " " << n << (n == 1 ? " op," : " ops,");
        remark << " " << crossing << (crossing == 1 ? " value crosses" : " values cross") << " roles";
      });
    });
  }
};

} // namespace

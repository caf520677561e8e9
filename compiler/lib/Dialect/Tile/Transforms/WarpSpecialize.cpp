// qla-warp-specialize: one region per role, channels for the values crossing roles (see Passes.td).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"

namespace qla {
#define GEN_PASS_DEF_QLAWARPSPECIALIZE
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

StringAttr roleOf(Operation *op) { return op ? op->getAttrOfType<StringAttr>(QlaDialect::kRoleAttr) : StringAttr(); }

/// The role that reads `use`: that of its owner, or of the owner's closest ancestor with one (an op in a
/// qla.map body reads for the map).
StringAttr readerRole(OpOperand &use) {
  for (Operation *op = use.getOwner(); op; op = op->getParentOp())
    if (StringAttr role = roleOf(op))
      return role;
  return {};
}

/// Erases ops whose results are unused and that have no side effects, until none is left.
void eraseDeadOps(Region &region) {
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<Operation *> dead;
    region.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : dead) {
      op->erase();
      changed = true;
    }
  }
}

/// Drops the carried values of `loop` that its body passes through unchanged and nobody reads after it
/// (another role's state, in this role's copy of the loop).
void dropIdentityCarries(ForOp loop) {
  Block *body = loop.getBodyBlock();
  auto yield = cast<YieldOp>(body->getTerminator());
  SmallVector<unsigned> keep;
  for (unsigned i = 0; i < loop.getInitArgs().size(); ++i)
    if (yield.getValues()[i] != loop.getRegionIterArgs()[i] || !loop.getResult(i).use_empty())
      keep.push_back(i);
  if (keep.size() == loop.getInitArgs().size())
    return;
  OpBuilder b(loop);
  SmallVector<Value> inits, yielded;
  for (unsigned i : keep) {
    inits.push_back(loop.getInitArgs()[i]);
    yielded.push_back(yield.getValues()[i]);
  }
  auto lean = b.create<ForOp>(loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(), loop.getStep(), inits,
                              loop.getStages());
  Block *leanBody = lean.getBodyBlock();
  IRMapping map;
  map.map(loop.getInductionVar(), lean.getInductionVar());
  for (auto [n, i] : llvm::enumerate(keep))
    map.map(loop.getRegionIterArgs()[i], lean.getRegionIterArgs()[n]);
  for (unsigned i = 0; i < loop.getInitArgs().size(); ++i)
    if (!llvm::is_contained(keep, i))
      map.map(loop.getRegionIterArgs()[i], loop.getInitArgs()[i]); // read only by the yield (identity)
  OpBuilder inner = OpBuilder::atBlockEnd(leanBody);
  for (Operation &op : body->without_terminator())
    inner.clone(op, map);
  SmallVector<Value> leanYield;
  for (Value v : yielded)
    leanYield.push_back(map.lookupOrDefault(v));
  inner.create<YieldOp>(yield.getLoc(), leanYield);
  for (auto [n, i] : llvm::enumerate(keep))
    loop.getResult(i).replaceAllUsesWith(lean.getResult(n));
  loop.erase();
}

struct WarpSpecializePass : qla::impl::QlaWarpSpecializeBase<WarpSpecializePass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp kernel) {
      auto roles = kernel->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr);
      if (!roles || kernel.getBody().empty())
        return;
      if (failed(specialize(kernel, roles)))
        signalPassFailure();
    });
  }

  /// The role that updates carried value `i` of `loop` (that of the op making the yielded value).
  static StringAttr carrierRole(ForOp loop, unsigned i) {
    return roleOf(cast<YieldOp>(loop.getBodyBlock()->getTerminator()).getValues()[i].getDefiningOp());
  }

  /// A carried tile that another role reads inside the loop goes to it through a channel each
  /// iteration (the value at the iteration's start); its initial value and the loop's result must
  /// stay in the role that updates it.
  LogicalResult checkCarriedValues(func::FuncOp kernel) {
    WalkResult result = kernel.walk([&](ForOp loop) {
      auto yield = cast<YieldOp>(loop.getBodyBlock()->getTerminator());
      for (unsigned i = 0; i < loop.getInitArgs().size(); ++i) {
        StringAttr owner = roleOf(yield.getValues()[i].getDefiningOp());
        auto foreign = [&](Value v) {
          return llvm::any_of(v.getUses(), [&](OpOperand &use) {
            StringAttr reader = readerRole(use);
            return reader && reader != owner;
          });
        };
        StringAttr initRole = roleOf(loop.getInitArgs()[i].getDefiningOp());
        if (foreign(loop.getResult(i)) || (initRole && owner && initRole != owner)) {
          loop.emitError() << "carried value #" << i << " (updated by role '"
                           << (owner ? owner.getValue() : StringRef("none"))
                           << "') has its initial value or its result made or read by another role: only its "
                              "value inside the loop can cross roles";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  LogicalResult specialize(func::FuncOp kernel, ArrayAttr roles) {
    if (failed(checkCarriedValues(kernel)))
      return failure();
    Block &entry = kernel.front();
    // Channels: every result read by another role than its producer's, and every carried value read
    // inside its loop by another role than the one updating it, numbered in program order.
    llvm::MapVector<Value, int64_t> channel;
    auto crossing = [&](Value v, StringAttr role) {
      for (OpOperand &use : v.getUses())
        if (StringAttr reader = readerRole(use); reader && reader != role && !channel.count(v))
          channel.insert({v, static_cast<int64_t>(channel.size())});
    };
    kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto loop = dyn_cast<ForOp>(op))
        for (unsigned i = 0; i < loop.getInitArgs().size(); ++i)
          if (StringAttr owner = carrierRole(loop, i))
            crossing(loop.getRegionIterArgs()[i], owner);
      if (StringAttr role = roleOf(op))
        for (Value r : op->getResults())
          crossing(r, role);
    });
    SmallVector<Operation *> body;
    for (Operation &op : entry.without_terminator())
      body.push_back(&op);
    OpBuilder b(entry.getTerminator());
    for (auto role : roles.getAsRange<RoleAttr>()) {
      auto region = b.create<RoleRegionOp>(kernel.getLoc(), role.getName().getValue());
      Block *block = &region.getBody().emplaceBlock();
      OpBuilder inner = OpBuilder::atBlockEnd(block);
      IRMapping map;
      for (Operation *op : body)
        inner.clone(*op, map);
      keepRole(region, role.getName(), channel, map);
    }
    for (Operation *op : llvm::reverse(body)) {
      op->dropAllUses();
      op->erase();
    }
    return success();
  }

  /// In `region` (a clone of the kernel body), keep what `role` runs: its ops, with a channel_put after
  /// each one that another role reads; a channel_get for each value of another role it reads; the
  /// untagged index and loop structure they need. Carried values of other roles become identities.
  void keepRole(RoleRegionOp region, StringAttr role, const llvm::MapVector<Value, int64_t> &channel,
                IRMapping &map) {
    for (auto [original, id] : channel) {
      Value v = map.lookup(original);
      OpBuilder b(v.getContext());
      StringAttr producer;
      Location loc = v.getLoc();
      if (auto carried = dyn_cast<BlockArgument>(v)) { // a loop's carried value, at the iteration's start
        auto loop = cast<ForOp>(carried.getOwner()->getParentOp());
        producer = carrierRole(loop, carried.getArgNumber() - 1);
        b.setInsertionPointToStart(carried.getOwner());
        loc = loop.getLoc();
      } else {
        producer = roleOf(v.getDefiningOp());
        b.setInsertionPointAfter(v.getDefiningOp());
      }
      if (producer == role) {
        b.create<ChannelPutOp>(loc, v, b.getI64IntegerAttr(id));
        continue;
      }
      bool read = llvm::any_of(v.getUses(), [&](OpOperand &use) { return readerRole(use) == role; });
      if (!read)
        continue;
      Value got = b.create<ChannelGetOp>(loc, v.getType(), b.getI64IntegerAttr(id));
      v.replaceUsesWithIf(got, [&](OpOperand &use) { return readerRole(use) == role; });
    }
    SmallVector<Operation *> others;
    region.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (StringAttr r = roleOf(op); r && r != role)
        others.push_back(op);
    });
    for (Operation *op : others) {
      for (Value v : op->getResults())
        for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
          Operation *user = use.getOwner();
          if (auto yield = dyn_cast<YieldOp>(user); yield && isa<ForOp>(yield->getParentOp())) {
            // Carried by another role: unchanged here.
            auto loop = cast<ForOp>(yield->getParentOp());
            use.set(loop.getRegionIterArgs()[use.getOperandNumber()]);
          } else if (auto loop = dyn_cast<ForOp>(user)) {
            OpBuilder b(loop);
            auto tile = cast<TileType>(v.getType());
            Type elt = tile.getElementType();
            TypedAttr zero = isa<FloatType>(elt) ? TypedAttr(b.getFloatAttr(elt, 0.0)) : b.getIntegerAttr(elt, 0);
            use.set(b.create<FillOp>(loop.getLoc(), tile, zero));
          }
        }
      op->dropAllUses();
      op->erase();
    }
    eraseDeadOps(region.getBody());
    SmallVector<ForOp> loops;
    region.walk([&](ForOp loop) { loops.push_back(loop); });
    for (ForOp loop : loops)
      dropIdentityCarries(loop);
    eraseDeadOps(region.getBody());
  }
};

} // namespace

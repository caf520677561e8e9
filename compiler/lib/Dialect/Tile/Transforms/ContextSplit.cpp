// qla-context-split: one run of a context split, made from a kernel's scan (see Passes.td and
// docs/context-split.md).
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/LoopOutputs.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace qla {
#define GEN_PASS_DEF_QLACONTEXTSPLIT
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

/// The transition run's initial state: the identity at the tile's place in the initial-state tensor
/// (its rows there are one state's, from the copy's row offset), zero when the run has no iteration.
Value identityState(OpBuilder &b, CopyOp init, Value runs) {
  Location loc = init.getLoc();
  auto type = cast<TileType>(init.getType());
  MLIRContext *ctx = b.getContext();
  auto ints = TileType::get(type.getShape(), b.getI32Type(), MemorySpace::frag);
  Value rows = b.create<IotaOp>(loc, ints, b.getI64IntegerAttr(0));
  Value cols = b.create<IotaOp>(loc, ints, b.getI64IntegerAttr(1));
  Value column = b.create<arith::IndexCastOp>(loc, b.getI32Type(), init.getOffsets()[1]);
  auto map = b.create<MapOp>(loc, TileType::get(type.getShape(), type.getElementType(), MemorySpace::frag),
                             ValueRange{rows, cols});
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&map.getBody(), {}, {b.getI32Type(), b.getI32Type()}, {loc, loc});
  // Element (i, j) is tensor element (row0 + i, col0 + j), or (row0 + j, col0 + i) transposed: on the
  // diagonal when its row within the state equals its column.
  Value i = body->getArgument(0), j = body->getArgument(1);
  Value stateRow = init.getTranspose() ? j : i, within = init.getTranspose() ? i : j;
  Value col = b.create<arith::AddIOp>(loc, column, within);
  Value diagonal = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, stateRow, col);
  Value one = b.create<arith::AndIOp>(loc, diagonal, runs);
  Type elt = type.getElementType();
  Value r = b.create<arith::SelectOp>(loc, one, b.create<arith::ConstantOp>(loc, b.getFloatAttr(elt, 1.0)),
                                      b.create<arith::ConstantOp>(loc, b.getFloatAttr(elt, 0.0)));
  b.create<YieldOp>(loc, ValueRange{r});
  (void)ctx;
  return map.getResult();
}

struct ContextSplitPass : qla::impl::QlaContextSplitBase<ContextSplitPass> {
  using Base::Base;

  void runOnOperation() override {
    if (form != "ends" && form != "transition" && form != "decays") {
      getOperation().emitError() << "qla-context-split: form must be 'ends', 'transition' or 'decays', got '" << form
                                 << "'";
      return signalPassFailure();
    }
    if (decayColumns < 1) {
      getOperation().emitError() << "qla-context-split: decay-columns must be at least 1, got "
                                 << static_cast<int64_t>(decayColumns);
      return signalPassFailure();
    }
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (failed(splitKernel(kernel)))
        return signalPassFailure();
    if (form == "decays")
      eraseDeadOps(getOperation());
    else
      dropLoopOutputs(getOperation());
  }

  LogicalResult splitKernel(func::FuncOp kernel) {
    SmallVector<ForOp> scans;
    kernel.walk([&](ForOp loop) {
      if (loop->hasAttr(QlaDialect::kScanAttr))
        scans.push_back(loop);
    });
    if (scans.empty())
      return kernel.emitError() << "qla-context-split: kernel '" << kernel.getName() << "' has no qla.scan loop";
    if (scans.size() > 1)
      return scans[1].emitError() << "qla-context-split: one qla.scan loop a kernel is supported, this is the second";
    ForOp loop = scans.front();
    auto init = loop.getInitArgs()[0].getDefiningOp<CopyOp>();
    auto state = dyn_cast<TileType>(loop.getInitArgs()[0].getType());
    if (!init || init.getOffsets().size() != 2 || !state || state.getShape().size() != 2)
      return loop.emitError() << "qla-context-split: the scan's initial state must be a 2-D tile loaded from a tensor "
                                 "by qla.copy (its place there gives the state's index and the identity)";
    // Rows of the initial-state tensor that one state spans: the tile's extent along them. (Assumed: the
    // copy covers whole states' rows, starting at a state's first — as a block holding some of a state's
    // columns does; a tile of part of a state's rows would get a wrong index and identity.)
    const int64_t stateRows = state.getShape()[init.getTranspose() ? 1 : 0];
    if (form == "decays")
      return writeDecays(kernel, loop, init, stateRows);

    // run_chunks[state index]: how many of the last iterations this run takes.
    unsigned at = kernel.getNumArguments();
    Builder attrs(kernel.getContext());
    auto table = qla::TensorType::get({ShapedType::kDynamic}, attrs.getI64Type());
    if (failed(kernel.insertArgument(at, table, attrs.getDictionaryAttr({}), kernel.getLoc())))
      return failure();
    kernel.setArgAttr(at, "qla.name", attrs.getStringAttr("run_chunks"));
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value key = b.create<arith::DivSIOp>(loc, init.getOffsets()[0], b.create<arith::ConstantIndexOp>(loc, stateRows));
    Value runs = b.create<LoadOp>(loc, b.getIndexType(), kernel.getArgument(at), ValueRange{key});
    Value first = b.create<arith::SubIOp>(loc, loop.getUpperBound(), runs);
    Value lb = b.create<arith::MaxSIOp>(loc, loop.getLowerBound(), first);
    loop.getLowerBoundMutable().assign(lb);

    Value any = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lb, loop.getUpperBound());
    storeOnlyIfRan(loop, any);
    if (form == "ends") {
      Type elt = state.getElementType();
      Value zero = b.create<FillOp>(loc, TileType::get(state.getShape(), elt, MemorySpace::frag),
                                    cast<TypedAttr>(b.getFloatAttr(elt, 0.0)));
      loop.getInitArgsMutable()[0].assign(zero);
      return success();
    }
    loop.getInitArgsMutable()[0].assign(identityState(b, init, any));
    return zeroInputTerms(kernel, loop);
  }

  /// The decays run: each iteration's declared log-decay to decays[state · slots + iteration] (slots =
  /// the table's length over the number of states), or with n = decay-columns > 1 to
  /// decays[(state / n · slots + iteration) · n + state % n]; the state is no longer updated, nothing
  /// else is stored.
  LogicalResult writeDecays(func::FuncOp kernel, ForOp loop, CopyOp init, int64_t stateRows) {
    SmallVector<Operation *> decays;
    loop.walk([&](Operation *op) {
      if (op->hasAttr(QlaDialect::kScanDecayAttr))
        decays.push_back(op);
    });
    if (decays.size() != 1)
      return loop.emitError() << "qla-context-split: form=decays needs the scan to declare one log-decay (qla.scan_decay), "
                                 "found "
                              << decays.size();
    Operation *decay = decays.front();
    if (decay->getBlock() != loop.getBodyBlock())
      return decay->emitError() << "qla-context-split: the scan's log-decay must be computed in the loop body itself";
    unsigned at = kernel.getNumArguments();
    Builder attrs(kernel.getContext());
    auto table = qla::TensorType::get({ShapedType::kDynamic}, attrs.getF32Type());
    if (failed(kernel.insertArgument(at, table, attrs.getDictionaryAttr({}), kernel.getLoc())))
      return failure();
    kernel.setArgAttr(at, "qla.name", attrs.getStringAttr("decays"));
    Value out = kernel.getArgument(at);
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value rowsPerState = b.create<arith::ConstantIndexOp>(loc, stateRows);
    Value key = b.create<arith::DivSIOp>(loc, init.getOffsets()[0], rowsPerState);
    Value states = b.create<arith::DivSIOp>(loc, b.create<DimOp>(loc, init.getSource(), 0), rowsPerState);
    // The row of the state's first iteration, and each iteration's step along the table: 1, or n with
    // the states n to a row (then the state's column is added once, and the slots are the table's length
    // over whole rows of n: a last row of fewer states stays inside the table).
    Value group = key, column, step, rowStates = states;
    if (decayColumns > 1) {
      Value n = b.create<arith::ConstantIndexOp>(loc, decayColumns);
      group = b.create<arith::DivSIOp>(loc, key, n);
      column = b.create<arith::RemSIOp>(loc, key, n);
      step = n;
      Value rows = b.create<arith::DivSIOp>(
          loc, b.create<arith::AddIOp>(loc, states, b.create<arith::ConstantIndexOp>(loc, decayColumns - 1)), n);
      rowStates = b.create<arith::MulIOp>(loc, rows, n);
    }
    Value slots = b.create<arith::DivSIOp>(loc, b.create<DimOp>(loc, out, 0), rowStates);
    Value base = b.create<arith::MulIOp>(loc, group, slots);
    // The state is no longer needed: the loop carries its (zero) initial value unchanged.
    Type elt = state(loop).getElementType();
    Value zero = b.create<FillOp>(loc, TileType::get(state(loop).getShape(), elt, MemorySpace::frag),
                                  cast<TypedAttr>(b.getFloatAttr(elt, 0.0)));
    loop.getInitArgsMutable()[0].assign(zero);
    loop.getBodyBlock()->getTerminator()->setOperand(0, loop.getRegionIterArgs()[0]);
    // decays[base + i] = the declared log-decay, as a one-element tile.
    b.setInsertionPointAfter(decay);
    Value index = b.create<arith::AddIOp>(loc, base, loop.getInductionVar());
    if (step)
      index = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, index, step), column);
    auto one = TileType::get({1}, b.getI32Type(), MemorySpace::frag);
    Value iota = b.create<IotaOp>(loc, one, b.getI64IntegerAttr(0));
    auto map = b.create<MapOp>(loc, TileType::get({1}, b.getF32Type(), MemorySpace::frag), ValueRange{iota});
    {
      OpBuilder::InsertionGuard guard(b);
      b.createBlock(&map.getBody(), {}, {b.getI32Type()}, {loc});
      b.create<YieldOp>(loc, ValueRange{decay->getResult(0)});
    }
    // Bounded at the state's row (its group's rows): a state with more iterations than slots writes
    // nothing past them.
    Value end = b.create<arith::AddIOp>(loc, base, slots);
    if (step)
      end = b.create<arith::MulIOp>(loc, end, step);
    auto store = b.create<StoreOp>(loc, map.getResult(), out, ValueRange{index}, ValueRange{end});
    SmallVector<StoreOp> others;
    kernel.walk([&](StoreOp s) {
      if (s != store)
        others.push_back(s);
    });
    for (StoreOp s : others)
      s.erase();
    return success();
  }

  /// A run of no iteration stores nothing: the final state's stores get a first bound of 0 then (their
  /// states are never read: a zero transition is skipped, a sequence's last segment takes neither run),
  /// so such blocks only read their count (a truncated split's transition runs: all of them).
  static void storeOnlyIfRan(ForOp loop, Value any) {
    for (Operation *user : loop.getResult(0).getUsers()) {
      auto store = dyn_cast<StoreOp>(user);
      if (!store || store.getValue() != loop.getResult(0))
        continue;
      OpBuilder b(store);
      Location loc = store.getLoc();
      SmallVector<Value> bounds(store.getBounds());
      if (bounds.empty())
        for (unsigned d = 0; d < store.getOffsets().size(); ++d)
          bounds.push_back(b.create<DimOp>(loc, store.getDest(), d));
      bounds[0] = b.create<arith::SelectOp>(loc, any, bounds[0], b.create<arith::ConstantIndexOp>(loc, 0));
      store.getBoundsMutable().assign(bounds);
    }
  }

  static TileType state(ForOp loop) { return cast<TileType>(loop.getInitArgs()[0].getType()); }

  /// The input terms read as zero: a gemm with a zero operand adds nothing to its accumulator.
  LogicalResult zeroInputTerms(func::FuncOp kernel, ForOp loop) {
    llvm::SmallPtrSet<Value, 4> inputs;
    for (auto name : loop->getAttrOfType<ArrayAttr>(QlaDialect::kScanAttr).getAsRange<StringAttr>())
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
        if (kernel.getArgAttrOfType<StringAttr>(i, "qla.name") == name)
          inputs.insert(kernel.getArgument(i));
    SmallVector<CopyOp> reads;
    loop.walk([&](CopyOp copy) {
      if (inputs.contains(copy.getSource()))
        reads.push_back(copy);
    });
    for (CopyOp copy : reads) {
      // Each user once (a gemm may read the copy as A and B).
      llvm::SetVector<Operation *> users(copy->getUsers().begin(), copy->getUsers().end());
      for (Operation *user : users) {
        auto gemm = dyn_cast<GemmOp>(user);
        if (!gemm || gemm.getAcc() == copy.getResult() || gemm.getA() == gemm.getB())
          return user->emitError() << "qla-context-split: a scan input term may only be one operand of a gemm, A or B "
                                      "(so that zero makes the gemm its accumulator; a gemm of it with itself is not "
                                      "affine)";
        gemm.getResult().replaceAllUsesWith(gemm.getAcc());
        gemm.erase();
      }
      copy.erase();
    }
    return success();
  }
};

} // namespace

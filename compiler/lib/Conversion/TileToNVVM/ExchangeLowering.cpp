// Ops whose result elements depend on elements other threads hold: broadcast, reduce, cumsum and
// tri_inverse. The input goes to the kernel's scratch shared memory (row-major), the block
// synchronises, and every thread computes its result elements from there. Correct for any layout;
// faster forms (shuffles, tensor cores) can replace them op by op.
#include "Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace qla::lowering {

namespace {

Value scratchBase(ConversionPatternRewriter &rw, Operation *op) {
  auto kernel = op->getParentOfType<func::FuncOp>();
  auto offset = kernel ? kernel->getAttrOfType<IntegerAttr>(kScratchOffsetAttr) : IntegerAttr();
  if (!offset)
    return {};
  return smemAddress(rw, op->getLoc(), offset.getInt());
}

Value linearIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ArrayRef<Value> coords) {
  Value lin = i32Const(b, loc, 0);
  for (size_t d = 0; d < shape.size(); ++d)
    lin = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, lin, i32Const(b, loc, shape[d])), coords[d]);
  return lin;
}

Value scratchPtr(OpBuilder &b, Location loc, Value base, Value index, Type elt) {
  Value bytes = b.create<arith::MulIOp>(loc, b.create<arith::ExtUIOp>(loc, b.getI64Type(), index),
                                        i64Const(b, loc, elementBytes(elt)));
  return gepBytes(b, loc, base, bytes);
}

/// Barrier, then every thread writes its elements of `input` row-major at `base`, then barrier.
void spill(OpBuilder &b, Location loc, Value base, TileType type, Value vec, Value tid) {
  FragLayout layout = *fragLayout(type);
  blockBarrier(b, loc);
  for (int64_t e = 0; e < layout.perThread(); ++e) {
    SmallVector<Value> c = layout.coords(b, loc, tid, e);
    Value v = b.create<LLVM::ExtractElementOp>(loc, vec, i64Const(b, loc, e));
    Value ptr = scratchPtr(b, loc, base, linearIndex(b, loc, type.getShape(), c), type.getElementType());
    guarded(b, loc, layout.exists(b, loc, tid, e), Type(), [&](OpBuilder &t, Location l) -> Value {
      t.create<LLVM::StoreOp>(l, v, ptr);
      return {};
    });
  }
  blockBarrier(b, loc);
}

/// The result vector, element e computed by `compute` from its coordinates.
Value gather(OpBuilder &b, Location loc, TileType type, Type vt, Value tid,
             function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> compute) {
  FragLayout layout = *fragLayout(type);
  Value vec = b.create<LLVM::UndefOp>(loc, vt);
  for (int64_t e = 0; e < layout.perThread(); ++e) {
    SmallVector<Value> c = layout.coords(b, loc, tid, e);
    // Threads without an element e (round-robin tails) must not read past the spilled input.
    Value v = guarded(b, loc, layout.exists(b, loc, tid, e), type.getElementType(),
                      [&](OpBuilder &g, Location l) { return compute(g, l, c); });
    vec = b.create<LLVM::InsertElementOp>(loc, vec, v, i64Const(b, loc, e));
  }
  return vec;
}

template <typename OpT>
struct ExchangePattern : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  using OpAdaptor = typename OpT::Adaptor;
  LogicalResult matchAndRewrite(OpT op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Value base = scratchBase(rw, op);
    TileType in = cast<TileType>(op->getOperand(0).getType()), out = cast<TileType>(op->getResult(0).getType());
    Type vt = this->getTypeConverter()->convertType(out);
    if (!base || !vt || !fragLayout(in) || !fragLayout(out))
      return rw.notifyMatchFailure(op, "needs layouts and a scratch region (qla-plan-smem)");
    Location loc = op.getLoc();
    Value tid = threadIdx(rw, loc);
    spill(rw, loc, base, in, a.getOperands()[0], tid);
    rw.replaceOp(op, lower(op, rw, loc, base, in, out, vt, tid));
    return success();
  }
  virtual Value lower(OpT op, OpBuilder &b, Location loc, Value base, TileType in, TileType out, Type vt,
                      Value tid) const = 0;
};

struct BroadcastLowering : ExchangePattern<BroadcastOp> {
  using ExchangePattern::ExchangePattern;
  Value lower(BroadcastOp op, OpBuilder &b, Location loc, Value base, TileType in, TileType out, Type vt,
              Value tid) const override {
    return gather(b, loc, out, vt, tid, [&](OpBuilder &g, Location l, ArrayRef<Value> c) -> Value {
      SmallVector<Value> ic;
      for (auto [i, d] : llvm::enumerate(op.getDims()))
        ic.push_back(in.getShape()[i] == 1 ? i32Const(g, l, 0) : c[d]);
      return g.create<LLVM::LoadOp>(l, in.getElementType(),
                                    scratchPtr(g, l, base, linearIndex(g, l, in.getShape(), ic), in.getElementType()));
    });
  }
};

/// Σ or max over a line of the spilled input: coordinates `c` with dimension `dim` running over [0, count).
Value foldLine(OpBuilder &b, Location loc, Value base, TileType in, SmallVector<Value> c, int64_t dim, Value count,
               bool max) {
  Type elt = in.getElementType();
  Value init = max ? b.create<arith::ConstantOp>(loc, elt, b.getFloatAttr(elt, -INFINITY)).getResult()
                   : zeroOf(b, loc, elt);
  auto loop = b.create<scf::ForOp>(loc, i32Const(b, loc, 0), count, i32Const(b, loc, 1), ValueRange{init},
                                   [&](OpBuilder &f, Location l, Value k, ValueRange acc) {
                                     c[dim] = k;
                                     Value v = f.create<LLVM::LoadOp>(
                                         l, elt, scratchPtr(f, l, base, linearIndex(f, l, in.getShape(), c), elt));
                                     Value r = max ? f.create<arith::MaximumFOp>(l, acc[0], v).getResult()
                                                   : f.create<arith::AddFOp>(l, acc[0], v).getResult();
                                     f.create<scf::YieldOp>(l, r);
                                   });
  return loop.getResult(0);
}

struct ReduceLowering : ExchangePattern<ReduceOp> {
  using ExchangePattern::ExchangePattern;
  Value lower(ReduceOp op, OpBuilder &b, Location loc, Value base, TileType in, TileType out, Type vt,
              Value tid) const override {
    int64_t dim = op.getDim();
    return gather(b, loc, out, vt, tid, [&](OpBuilder &g, Location l, ArrayRef<Value> c) -> Value {
      SmallVector<Value> ic(c.begin(), c.end());
      ic.insert(ic.begin() + dim, i32Const(g, l, 0));
      return foldLine(g, l, base, in, ic, dim, i32Const(g, l, in.getShape()[dim]), op.getKind() == ReduceKind::max);
    });
  }
};

struct CumsumLowering : ExchangePattern<CumsumOp> {
  using ExchangePattern::ExchangePattern;
  Value lower(CumsumOp op, OpBuilder &b, Location loc, Value base, TileType in, TileType, Type vt,
              Value tid) const override {
    int64_t dim = op.getDim();
    return gather(b, loc, in, vt, tid, [&](OpBuilder &g, Location l, ArrayRef<Value> c) -> Value {
      Value count = g.create<arith::AddIOp>(l, c[dim], i32Const(g, l, 1));
      return foldLine(g, l, base, in, SmallVector<Value>(c.begin(), c.end()), dim, count, false);
    });
  }
};

/// Forward substitution by rows with one thread per column c of X = (I + StrictLower(A))^-1:
/// X[i][c] = -Σ_{j<i} A[i][j]·X[j][c] (1 on the diagonal, 0 above), with the thread's column in
/// registers and row i of A read from the scratch copy in 16-byte pieces (the same address for every
/// thread). Fully unrolled: the only dependence is from row to row, and each row's sum runs in four
/// independent partial sums. The column goes to a second scratch square, from which every thread
/// gathers its result elements.
struct TriInverseLowering : ExchangePattern<TriInverseOp> {
  using ExchangePattern::ExchangePattern;
  Value lower(TriInverseOp op, OpBuilder &b, Location loc, Value base, TileType in, TileType, Type vt,
              Value tid) const override {
    int64_t n = in.getShape()[0];
    Type elt = in.getElementType();
    int64_t eb = elementBytes(elt);
    Value xBase = gepBytes(b, loc, base, i64Const(b, loc, n * n * eb));
    auto at = [&](OpBuilder &f, Location l, Value m, Value i, Value j) {
      Value idx = f.create<arith::AddIOp>(l, f.create<arith::MulIOp>(l, i, i32Const(f, l, n)), j);
      return scratchPtr(f, l, m, idx, elt);
    };
    Value col = tid;
    Value isColumn = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, i32Const(b, loc, n));
    int64_t piece = (eb == 4 && n % 4 == 0) ? 4 : 1; // elements of A read at once
    guarded(b, loc, isColumn, Type(), [&](OpBuilder &t, Location l) -> Value {
      Value one = t.create<arith::ConstantOp>(l, elt, t.getFloatAttr(elt, 1.0));
      Value zero = zeroOf(t, l, elt);
      SmallVector<Value> x; // X[j][col], j < i
      for (int64_t i = 0; i < n; ++i) {
        SmallVector<Value> partial(4, zero);
        for (int64_t j = 0; j < i; j += piece) {
          Value ptr = scratchPtr(t, l, base, i32Const(t, l, i * n + j), elt);
          SmallVector<Value> aij;
          if (piece == 1) {
            aij.push_back(t.create<LLVM::LoadOp>(l, elt, ptr));
          } else {
            Value v = t.create<LLVM::LoadOp>(l, VectorType::get({piece}, elt), ptr, /*alignment=*/16);
            for (int64_t q = 0; q < piece; ++q)
              aij.push_back(t.create<LLVM::ExtractElementOp>(l, v, i64Const(t, l, q)));
          }
          for (int64_t q = 0; q < piece && j + q < i; ++q) {
            Value &acc = partial[(j + q) % 4];
            acc = t.create<LLVM::FMAOp>(l, aij[q], x[j + q], acc);
          }
        }
        Value sum = t.create<arith::AddFOp>(l, t.create<arith::AddFOp>(l, partial[0], partial[1]),
                                            t.create<arith::AddFOp>(l, partial[2], partial[3]));
        Value iv = i32Const(t, l, i);
        Value diag = t.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, iv, col);
        Value above = t.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, iv, col);
        Value xi = t.create<arith::SelectOp>(
            l, diag, one, t.create<arith::SelectOp>(l, above, zero, t.create<arith::NegFOp>(l, sum)));
        x.push_back(xi);
        t.create<LLVM::StoreOp>(l, xi, at(t, l, xBase, iv, col));
      }
      return {};
    });
    blockBarrier(b, loc);
    return gather(b, loc, in, vt, tid, [&](OpBuilder &g, Location l, ArrayRef<Value> c) -> Value {
      return g.create<LLVM::LoadOp>(l, elt, at(g, l, xBase, c[0], c[1]));
    });
  }
};

} // namespace

void populateExchangePatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BroadcastLowering, ReduceLowering, CumsumLowering, TriInverseLowering>(converter,
                                                                                       patterns.getContext());
}

} // namespace qla::lowering

// Ops whose result elements depend on elements other threads hold: broadcast, reduce, cumsum and
// tri_inverse. The input goes to the kernel's scratch shared memory (row-major), the block
// synchronises, and every thread computes its result elements from there. Correct for any layout;
// faster forms (shuffles, tensor cores) can replace them op by op.
#include "Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace qla::lowering {

namespace {

/// The op's scratch, placed by qla-plan-smem.
Value scratchBase(ConversionPatternRewriter &rw, Operation *op) {
  auto offset = op->getAttrOfType<IntegerAttr>(kScratchOffsetAttr);
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

/// Barrier, then every thread writes its elements of `input` row-major at `base`, then barrier. An input
/// held by each warpgroup (#qla.strided copies) goes to its warpgroup's copy of the scratch (`base` is
/// that copy's), between barriers of the warpgroup alone.
void spill(OpBuilder &b, Location loc, Value base, TileType type, Value vec, Value tid) {
  FragLayout layout = *fragLayout(type);
  auto barrier = [&] {
    if (layout.copies > 1)
      warpgroupBarrier(b, loc, tid);
    else
      blockBarrier(b, loc);
  };
  barrier();
  for (int64_t e = 0; e < layout.perThread(); ++e) {
    SmallVector<Value> c = layout.coords(b, loc, tid, e);
    Value v = b.create<LLVM::ExtractElementOp>(loc, vec, i64Const(b, loc, e));
    Value ptr = scratchPtr(b, loc, base, linearIndex(b, loc, type.getShape(), c), type.getElementType());
    guarded(b, loc, layout.exists(b, loc, tid, e), Type(), [&](OpBuilder &t, Location l) -> Value {
      t.create<LLVM::StoreOp>(l, v, ptr);
      return {};
    });
  }
  barrier();
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
    if (int64_t copies = stridedCopies(in); copies > 1 && 128 * copies != blockThreads(op)) {
      op->emitOpError() << "has a fragment held in " << copies << " copies of 128 threads, but its block has "
                        << blockThreads(op) << " threads: one copy a warpgroup (qla.warpgroup_local)";
      return failure();
    }
    if (stridedCopies(in) > 1 && !isa<BroadcastOp, ReduceOp>(op.getOperation())) {
      op->emitOpError() << "of a fragment held by each warpgroup (#qla.strided copies, a qla.warpgroup_local "
                           "kernel) is not supported: only broadcasts and reductions exchange per warpgroup";
      return failure();
    }
    if (stridedCopies(in) > 1) { // each warpgroup's copy of the input in scratch of its own (qla-plan-smem)
      Value bytes = rw.create<arith::MulIOp>(loc, warpgroupIndex(rw, loc, tid),
                                             i32Const(rw, loc, in.getNumElements() *
                                                                   std::max<int64_t>(4, elementBytes(in.getElementType()))));
      base = gepBytes(rw, loc, base, rw.create<arith::ExtUIOp>(loc, rw.getI64Type(), bytes));
    }
    spill(rw, loc, base, in, a.getOperands()[0], tid);
    Value result = lower(op, rw, loc, base, in, out, vt, tid);
    if (!result)
      return failure(); // lower() reported why
    rw.replaceOp(op, result);
    return success();
  }
  virtual Value lower(OpT op, OpBuilder &b, Location loc, Value base, TileType in, TileType out, Type vt,
                      Value tid) const = 0;
};

struct BroadcastLowering : ExchangePattern<BroadcastOp> {
  using ExchangePattern::ExchangePattern;
  /// From an acc_slice, in registers: result element e (64-row block mb, 8-column group nb, q) is the
  /// slice's element for its row (mb, q / 2) or column (nb, q % 2).
  LogicalResult matchAndRewrite(BroadcastOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    if (!op.readsSlice())
      return ExchangePattern::matchAndRewrite(op, a, rw);
    AccLayout acc = *accLayout(op.getResult().getType());
    SliceLayout slice = *sliceLayout(op.getInput().getType());
    SmallVector<int32_t> mask;
    for (int64_t e = 0; e < acc.perThread(); ++e) {
      int64_t mb = e / acc.perBlock(), j = e % acc.perBlock(), nb = j / 4, q = j % 4;
      mask.push_back(static_cast<int32_t>(slice.along == 0 ? mb * 2 + q / 2 : nb * 2 + q % 2));
    }
    rw.replaceOpWithNewOp<LLVM::ShuffleVectorOp>(op, a.getInput(), a.getInput(), mask);
    return success();
  }
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

/// Inclusive scan, in place, of every line along `dim` of the row-major tile at `base`: one thread a line
/// (the lines spread over `threads` in turn), the line's elements loaded ahead of its chain of adds.
/// Element i is ((x_0 + x_1) + …) + x_i, each partial sum rounded to the element type (the interpreter
/// adds in the same order, in double, and rounds each result).
void scanLines(OpBuilder &b, Location loc, Value base, TileType type, int64_t dim, Value tid, int64_t threads) {
  ArrayRef<int64_t> shape = type.getShape();
  Type elt = type.getElementType();
  int64_t len = shape[dim], inner = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t lines = type.getNumElements() / len;
  auto c32 = [&](OpBuilder &f, Location l, int64_t v) { return i32Const(f, l, v); };
  for (int64_t round = 0; round * threads < lines; ++round) {
    Value line = b.create<arith::AddIOp>(loc, tid, c32(b, loc, round * threads));
    // (tid < threads too: a thread past the fragment's would scan a line a second time, racing.)
    Value exists = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, line, c32(b, loc, lines)),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid, c32(b, loc, threads)));
    guarded(b, loc, exists, Type(), [&](OpBuilder &g, Location l) -> Value {
      // Line (outer, j): its elements at outer·len·inner + j + i·inner.
      Value outer = g.create<arith::DivUIOp>(l, line, c32(g, l, inner));
      Value j = g.create<arith::RemUIOp>(l, line, c32(g, l, inner));
      Value start = g.create<arith::AddIOp>(l, g.create<arith::MulIOp>(l, outer, c32(g, l, len * inner)), j);
      auto at = [&](OpBuilder &f, Location fl, Value i) {
        return scratchPtr(f, fl, base, f.create<arith::AddIOp>(fl, start, f.create<arith::MulIOp>(fl, i, c32(f, fl, inner))),
                          elt);
      };
      constexpr int64_t kUnrolled = 128; // longer lines run as a loop
      if (len <= kUnrolled) {
        SmallVector<Value> x;
        for (int64_t i = 0; i < len; ++i)
          x.push_back(g.create<LLVM::LoadOp>(l, elt, at(g, l, c32(g, l, i))));
        Value acc = x[0];
        for (int64_t i = 1; i < len; ++i) {
          acc = g.create<arith::AddFOp>(l, acc, x[i]);
          g.create<LLVM::StoreOp>(l, acc, at(g, l, c32(g, l, i)));
        }
      } else {
        Value first = g.create<LLVM::LoadOp>(l, elt, at(g, l, c32(g, l, 0)));
        g.create<scf::ForOp>(l, c32(g, l, 1), c32(g, l, len), c32(g, l, 1), ValueRange{first},
                             [&](OpBuilder &f, Location fl, Value i, ValueRange acc) {
                               Value sum = f.create<arith::AddFOp>(fl, acc[0], f.create<LLVM::LoadOp>(fl, elt, at(f, fl, i)));
                               f.create<LLVM::StoreOp>(fl, sum, at(f, fl, i));
                               f.create<scf::YieldOp>(fl, sum);
                             });
      }
      return {};
    });
  }
  blockBarrier(b, loc);
}

struct CumsumLowering : ExchangePattern<CumsumOp> {
  using ExchangePattern::ExchangePattern;
  Value lower(CumsumOp op, OpBuilder &b, Location loc, Value base, TileType in, TileType, Type vt,
              Value tid) const override {
    // The threads the fragment is spread over are the kernel's (qla-assign-layouts).
    FragLayout layout = *fragLayout(in);
    scanLines(b, loc, base, in, op.getDim(), tid, layout.acc ? layout.acc->warpgroups * 128 : layout.threads);
    return gather(b, loc, in, vt, tid, [&](OpBuilder &g, Location l, ArrayRef<Value> c) -> Value {
      return g.create<LLVM::LoadOp>(l, in.getElementType(),
                                    scratchPtr(g, l, base, linearIndex(g, l, in.getShape(), c), in.getElementType()));
    });
  }
};

/// Column `col` of the square block of X = (I + StrictLower(A))^-1 that starts at row and column
/// `first` (`size` rows, A and X row-major n x n in scratch) by forward substitution:
/// X[i][col] = -Σ_{first<=j<i} A[i][j]·X[j][col] (1 on the diagonal, 0 above), the column in registers
/// and row i of A read in 16-byte pieces where they line up. Unrolled; each row's sum runs in four
/// independent partial sums. Emitted at `t`'s insertion point, for the thread that owns `col`.
void substituteColumn(OpBuilder &t, Location l, Value base, Value xBase, int64_t n, Type elt, Value first,
                      int64_t size, Value col) {
  auto at = [&](Value m, Value i, Value j) {
    Value idx = t.create<arith::AddIOp>(l, t.create<arith::MulIOp>(l, i, i32Const(t, l, n)), j);
    return scratchPtr(t, l, m, idx, elt);
  };
  // Pieces of four when every row start (first + i·n) is 16-byte aligned (first is then too).
  int64_t piece = (elementBytes(elt) == 4 && n % 4 == 0 && size % 4 == 0) ? 4 : 1;
  Value one = t.create<arith::ConstantOp>(l, elt, t.getFloatAttr(elt, 1.0));
  Value zero = zeroOf(t, l, elt);
  Value local = t.create<arith::SubIOp>(l, col, first);
  SmallVector<Value> x; // X[first + q][col], q < r
  for (int64_t r = 0; r < size; ++r) {
    Value row = t.create<arith::AddIOp>(l, first, i32Const(t, l, r));
    SmallVector<Value> partial(4, zero);
    for (int64_t q = 0; q < r; q += piece) {
      Value ptr = at(base, row, t.create<arith::AddIOp>(l, first, i32Const(t, l, q)));
      SmallVector<Value> aiq;
      if (piece == 1) {
        aiq.push_back(t.create<LLVM::LoadOp>(l, elt, ptr));
      } else {
        Value v = t.create<LLVM::LoadOp>(l, VectorType::get({piece}, elt), ptr, /*alignment=*/16);
        for (int64_t e = 0; e < piece; ++e)
          aiq.push_back(t.create<LLVM::ExtractElementOp>(l, v, i64Const(t, l, e)));
      }
      for (int64_t e = 0; e < piece && q + e < r; ++e)
        partial[(q + e) % 4] = t.create<LLVM::FMAOp>(l, aiq[e], x[q + e], partial[(q + e) % 4]);
    }
    Value sum = t.create<arith::AddFOp>(l, t.create<arith::AddFOp>(l, partial[0], partial[1]),
                                        t.create<arith::AddFOp>(l, partial[2], partial[3]));
    Value rv = i32Const(t, l, r);
    Value diag = t.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, rv, local);
    Value above = t.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, rv, local);
    Value xr = t.create<arith::SelectOp>(
        l, diag, one, t.create<arith::SelectOp>(l, above, zero, t.create<arith::NegFOp>(l, sum)));
    x.push_back(xr);
    t.create<LLVM::StoreOp>(l, xr, at(xBase, row, col));
  }
}

/// X = (I + StrictLower(A))^-1 with one thread per column, the whole of it substituted (a chain n rows
/// deep). For any n; the blocked form below is used where it applies.
void substituteColumns(OpBuilder &b, Location loc, Value base, Value xBase, int64_t n, Type elt, Value tid) {
  Value isColumn = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid, i32Const(b, loc, n));
  guarded(b, loc, isColumn, Type(), [&](OpBuilder &t, Location l) -> Value {
    substituteColumn(t, l, base, xBase, n, elt, i32Const(t, l, 0), n, tid);
    return {};
  });
}

/// The blocked form, for n a multiple of 16 (f32): with 16x16 blocks, X_dd = (I + A_dd)^-1 for the
/// n/16 diagonal blocks at once (one thread per column of each: a 16-row substitution, unrolled),
/// then block row r after block row r:
///   T_rs = Σ_{s<=k<r} A_rk·X_ks   (every s < r at once; T_rs overwrites A_rs, no longer needed)
///   X_rs = -X_rr·T_rs
/// a strip of four columns per thread in turn (16-byte reads of X and T feed four FMAs each), with
/// barriers between the steps. The dependent chain is 16 rows deep instead of n, every thread works,
/// and shared-memory reads are a quarter of one per FMA.
void invertBlocked(OpBuilder &b, Location loc, Value base, Value xBase, int64_t n, Type elt, Value tid,
                   int64_t threads, bool diagonalOnly) {
  constexpr int64_t bs = 16;
  auto c32 = [&](OpBuilder &f, Location l, int64_t v) { return i32Const(f, l, v); };
  auto add = [](OpBuilder &f, Location l, Value x, Value y) { return f.create<arith::AddIOp>(l, x, y).getResult(); };
  auto mul = [](OpBuilder &f, Location l, Value x, Value y) { return f.create<arith::MulIOp>(l, x, y).getResult(); };
  auto ptr = [&](OpBuilder &f, Location l, Value m, Value i, Value j) {
    return scratchPtr(f, l, m, add(f, l, mul(f, l, i, c32(f, l, n)), j), elt);
  };
  auto load = [&](OpBuilder &f, Location l, Value m, Value i, Value j) -> Value {
    return f.create<LLVM::LoadOp>(l, elt, ptr(f, l, m, i, j));
  };
  Value zero = zeroOf(b, loc, elt), one = b.create<arith::ConstantOp>(loc, elt, b.getFloatAttr(elt, 1.0));

  // Diagonal blocks: thread c < n substitutes column c of its block (block d = c / 16).
  guarded(b, loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid, c32(b, loc, n)), Type(),
          [&](OpBuilder &t, Location l) -> Value {
            Value first = mul(t, l, t.create<arith::DivUIOp>(l, tid, c32(t, l, bs)), c32(t, l, bs));
            substituteColumn(t, l, base, xBase, n, elt, first, bs, tid);
            return {};
          });
  blockBarrier(b, loc);
  if (diagonalOnly)
    return;

  // Block row r: strips of four columns (i, j..j+3) of the blocks (r, s < r), spread over the threads
  // in turn (columns fastest, so a warp reads few rows of A and whole 16-byte pieces of X and T).
  auto vec4 = VectorType::get({4}, elt);
  Value zero4 = zeroOf(b, loc, vec4);
  auto load4 = [&](OpBuilder &f, Location l, Value m, Value i, Value j) -> Value {
    return f.create<LLVM::LoadOp>(l, vec4, ptr(f, l, m, i, j), 16);
  };
  auto splat = [&](OpBuilder &f, Location l, Value x) -> Value {
    Value v = f.create<LLVM::UndefOp>(l, vec4);
    for (int64_t e = 0; e < 4; ++e)
      v = f.create<LLVM::InsertElementOp>(l, v, x, i64Const(f, l, e));
    return v;
  };
  for (int64_t r = 1; r < n / bs; ++r) {
    int64_t perRow = r * bs / 4, count = bs * perRow, rounds = (count + threads - 1) / threads;
    // This thread's strip e: row i of block row r, first column j of block column s.
    auto strip = [&](OpBuilder &f, Location l, int64_t e) {
      Value lin = add(f, l, c32(f, l, e * threads), tid);
      Value i = add(f, l, c32(f, l, r * bs), f.create<arith::DivUIOp>(l, lin, c32(f, l, perRow)));
      Value j = mul(f, l, f.create<arith::RemUIOp>(l, lin, c32(f, l, perRow)), c32(f, l, 4));
      Value s = f.create<arith::DivUIOp>(l, j, c32(f, l, bs));
      Value exists = f.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, lin, c32(f, l, count));
      return std::make_tuple(i, j, s, exists);
    };
    // T_rs[i][j..j+3] = Σ_{16s <= k < 16r} A[i][k]·X[k][j..j+3], A's row four k at a time.
    SmallVector<Value> t;
    for (int64_t e = 0; e < rounds; ++e) {
      auto [i, j, s, exists] = strip(b, loc, e);
      t.push_back(guarded(b, loc, exists, vec4, [&](OpBuilder &g, Location l) -> Value {
        auto loop = g.create<scf::ForOp>(
            l, mul(g, l, s, c32(g, l, bs)), c32(g, l, r * bs), c32(g, l, 4), ValueRange{zero4},
            [&](OpBuilder &f, Location fl, Value k, ValueRange acc) {
              Value a = load4(f, fl, base, i, k), sum = acc[0];
              for (int64_t q = 0; q < 4; ++q)
                sum = f.create<LLVM::FMAOp>(fl, splat(f, fl, f.create<LLVM::ExtractElementOp>(fl, a, i64Const(f, fl, q))),
                                            load4(f, fl, xBase, add(f, fl, k, c32(f, fl, q)), j), sum);
              f.create<scf::YieldOp>(fl, sum);
            });
        return loop.getResult(0);
      }));
    }
    blockBarrier(b, loc);
    for (int64_t e = 0; e < rounds; ++e) {
      auto [i, j, s, exists] = strip(b, loc, e);
      guarded(b, loc, exists, Type(), [&](OpBuilder &g, Location l) -> Value {
        g.create<LLVM::StoreOp>(l, t[e], ptr(g, l, base, i, j), 16);
        return {};
      });
    }
    blockBarrier(b, loc);
    // X_rr is unit lower-triangular: X[i][j..] = -(T[i][j..] + Σ_{16r <= m < i} X[i][m]·T[m][j..]).
    for (int64_t e = 0; e < rounds; ++e) {
      auto [i, j, s, exists] = strip(b, loc, e);
      guarded(b, loc, exists, Type(), [&](OpBuilder &g, Location l) -> Value {
        auto loop = g.create<scf::ForOp>(
            l, c32(g, l, r * bs), i, c32(g, l, 1), ValueRange{t[e]}, [&](OpBuilder &f, Location fl, Value m, ValueRange acc) {
              f.create<scf::YieldOp>(
                  fl, f.create<LLVM::FMAOp>(fl, splat(f, fl, load(f, fl, xBase, i, m)), load4(f, fl, base, m, j), acc[0])
                          .getResult());
            });
        g.create<LLVM::StoreOp>(l, g.create<LLVM::FNegOp>(l, loop.getResult(0)), ptr(g, l, xBase, i, j), 16);
        return {};
      });
    }
    blockBarrier(b, loc);
  }
}

/// (I + StrictLower(A))^-1: A is spilled to scratch, X is built in a second scratch square, and every
/// thread gathers its result elements from there (zero above the diagonal).
struct TriInverseLowering : ExchangePattern<TriInverseOp> {
  using ExchangePattern::ExchangePattern;
  LogicalResult matchAndRewrite(TriInverseOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    if (op.mergesInWarps()) {
      Value scratch = scratchBase(rw, op);
      if (!scratch)
        return rw.notifyMatchFailure(op, "needs a scratch region (qla-plan-smem)");
      if (blockThreads(op) != 128)
        return op.emitOpError() << "with f16_merges inverts a one-warpgroup fragment inside its warps, but "
                                << blockThreads(op) << " threads run it: the warpgroup must be the block (or role)";
      rw.replaceOp(op, invertInWarps(rw, op.getLoc(), op.getInput().getType(), a.getInput(), threadIdx(rw, op.getLoc()),
                                     scratch));
      return success();
    }
    if (op.getF16Merges())
      return op.emitOpError() << "with f16_merges needs a 64x64 f32 wgmma accumulator fragment of one warpgroup, got "
                              << op.getInput().getType();
    if (!op.invertsInWarps())
      return ExchangePattern::matchAndRewrite(op, a, rw);
    rw.replaceOp(op, invertDiagonalBlocksInWarps(rw, op.getLoc(), op.getInput().getType(), a.getInput(),
                                                 threadIdx(rw, op.getLoc())));
    return success();
  }
  Value lower(TriInverseOp op, OpBuilder &b, Location loc, Value base, TileType in, TileType, Type vt,
              Value tid) const override {
    int64_t n = in.getShape()[0];
    Type elt = in.getElementType();
    Value xBase = gepBytes(b, loc, base, i64Const(b, loc, n * n * elementBytes(elt)));
    // The threads the fragment is spread over are the kernel's (qla-assign-layouts).
    FragLayout layout = *fragLayout(in);
    int64_t threads = layout.acc ? layout.acc->warpgroups * 128 : layout.threads;
    bool blocked = n % 16 == 0 && n >= 32 && elementBytes(elt) == 4 && threads >= n;
    int64_t block = op.getBlock().value_or(n);
    if (block != n && !(blocked && block == 16)) {
      op.emitOpError() << "lowers diagonal blocks of 16 only (f32, size a multiple of 16 from 32, at least as "
                          "many threads as rows), got block = "
                       << block;
      return {};
    }
    if (blocked)
      invertBlocked(b, loc, base, xBase, n, elt, tid, threads, block == 16);
    else {
      substituteColumns(b, loc, base, xBase, n, elt, tid);
      blockBarrier(b, loc);
    }
    return gather(b, loc, in, vt, tid, [&](OpBuilder &g, Location l, ArrayRef<Value> c) -> Value {
      Value lower = g.create<arith::CmpIOp>(l, arith::CmpIPredicate::uge, c[0], c[1]);
      if (block != n) // and in the same diagonal block
        lower = g.create<arith::AndIOp>(
            l, lower,
            g.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, g.create<arith::DivUIOp>(l, c[0], i32Const(g, l, block)),
                                    g.create<arith::DivUIOp>(l, c[1], i32Const(g, l, block))));
      return guarded(g, l, lower, elt, [&](OpBuilder &t, Location tl) -> Value {
        Value idx = t.create<arith::AddIOp>(tl, t.create<arith::MulIOp>(tl, c[0], i32Const(t, tl, n)), c[1]);
        return t.create<LLVM::LoadOp>(tl, elt, scratchPtr(t, tl, xBase, idx, elt));
      });
    });
  }
};

} // namespace

void populateExchangePatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BroadcastLowering, ReduceLowering, CumsumLowering, TriInverseLowering>(converter,
                                                                                       patterns.getContext());
}

} // namespace qla::lowering

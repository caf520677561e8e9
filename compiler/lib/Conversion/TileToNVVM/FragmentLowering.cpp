// Register fragments: fill, iota, map, loads from and stores to global memory, scalar loads.
// Every op handles the thread's elements one by one, with their tile coordinates from FragLayout.
#include "Lowering.h"

#include "mlir/IR/IRMapping.h"

namespace qla::lowering {

namespace {

Value emptyVector(OpBuilder &b, Location loc, Type vt) { return b.create<LLVM::UndefOp>(loc, vt); }

Value element(OpBuilder &b, Location loc, Value vec, int64_t e) {
  return b.create<LLVM::ExtractElementOp>(loc, vec, i64Const(b, loc, e));
}
Value insert(OpBuilder &b, Location loc, Value vec, Value v, int64_t e) {
  return b.create<LLVM::InsertElementOp>(loc, vec, v, i64Const(b, loc, e));
}

} // namespace

Value extentLimit(OpBuilder &b, Location loc, qla::TensorType t, ValueRange bounds, int64_t d) {
  int64_t extent = t.getShape()[d];
  Value fromExtent = extent == ShapedType::kDynamic ? Value() : i32Const(b, loc, extent);
  if (bounds.empty())
    return fromExtent;
  Value bound = toI32(b, loc, bounds[d]);
  return fromExtent ? b.create<arith::MinSIOp>(loc, bound, fromExtent).getResult() : bound;
}

namespace {

/// Global address of tensor element `offsets + coords` and whether it is inside the bounds.
std::pair<Value, Value> globalElement(OpBuilder &b, Location loc, Value base, qla::TensorType t, ValueRange offsets,
                                      ValueRange bounds, ArrayRef<Value> coords) {
  SmallVector<int64_t> strides = t.getEffectiveStrides();
  Value linear = i64Const(b, loc, 0);
  Value inside = b.create<arith::ConstantIntOp>(loc, b.getI1Type(), 1);
  for (size_t d = 0; d < coords.size(); ++d) {
    Value pos = b.create<arith::AddIOp>(loc, toI32(b, loc, offsets[d]), coords[d]);
    Value limit = extentLimit(b, loc, t, bounds, d);
    if (limit)
      inside = b.create<arith::AndIOp>(loc, inside,
                                       b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, pos, limit));
    linear = b.create<arith::AddIOp>(
        loc, linear, b.create<arith::MulIOp>(loc, b.create<arith::ExtSIOp>(loc, b.getI64Type(), pos),
                                             i64Const(b, loc, strides[d])));
  }
  Value ptr = b.create<LLVM::GEPOp>(loc, base.getType(), t.getElementType(), base, ValueRange{linear});
  return {ptr, inside};
}

/// Tensor coordinates of tile coordinates `c`: swapped for a transposed copy or store.
SmallVector<Value> placed(SmallVector<Value> c, bool transpose) {
  if (transpose)
    std::swap(c[0], c[1]);
  return c;
}

LogicalResult requireStaticStrides(Operation *op, qla::TensorType t) {
  if (ShapedType::isDynamicShape(t.getEffectiveStrides()))
    return op->emitOpError() << "needs a tensor with static strides (row-major with static inner dimensions)";
  return success();
}

struct BlockIdLowering : OpConversionPattern<BlockIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BlockIdOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type i32 = rw.getI32Type();
    Value id;
    switch (op.getDim()) {
    case 0: id = rw.create<NVVM::BlockIdXOp>(loc, i32); break;
    case 1: id = rw.create<NVVM::BlockIdYOp>(loc, i32); break;
    default: id = rw.create<NVVM::BlockIdZOp>(loc, i32); break;
    }
    rw.replaceOpWithNewOp<arith::IndexCastUIOp>(op, rw.getIndexType(), id);
    return success();
  }
};

struct FillLowering : OpConversionPattern<FillOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(FillOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto vt = dyn_cast_or_null<VectorType>(getTypeConverter()->convertType(op.getResult().getType()));
    if (!vt)
      return rw.notifyMatchFailure(op, "fragment has no layout");
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, vt, SplatElementsAttr::get(vt, op.getValue()));
    return success();
  }
};

struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(IotaOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto layout = fragLayout(op.getType());
    Type vt = getTypeConverter()->convertType(op.getType());
    if (!layout || !vt)
      return rw.notifyMatchFailure(op, "fragment has no layout");
    Location loc = op.getLoc();
    Value tid = threadIdx(rw, loc), vec = emptyVector(rw, loc, vt);
    for (int64_t e = 0; e < layout->perThread(); ++e)
      vec = insert(rw, loc, vec, layout->coords(rw, loc, tid, e)[op.getDim()], e);
    rw.replaceOp(op, vec);
    return success();
  }
};

/// The body's scalar ops, once per element of the thread (values captured from outside are uniform).
struct MapLowering : OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MapOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto layout = fragLayout(op.getType());
    Type vt = getTypeConverter()->convertType(op.getType());
    if (!layout || !vt)
      return rw.notifyMatchFailure(op, "fragment has no layout");
    Location loc = op.getLoc();
    Block &body = op.getBody().front();
    SmallVector<Value> results;
    for (int64_t e = 0; e < layout->perThread(); ++e) {
      IRMapping map;
      for (auto [arg, in] : llvm::zip(body.getArguments(), a.getInputs()))
        map.map(arg, element(rw, loc, in, e));
      for (Operation &inner : body.without_terminator())
        rw.clone(inner, map);
      results.push_back(map.lookupOrDefault(cast<YieldOp>(body.getTerminator()).getValues()[0])); // or captured
    }
    pairNarrowings(rw, loc, results);
    Value vec = emptyVector(rw, loc, vt);
    for (auto [e, v] : llvm::enumerate(results))
      vec = insert(rw, loc, vec, v, e);
    rw.replaceOp(op, vec);
    return success();
  }

  /// f32 → bf16/f16 narrowings of neighbouring elements as one two-lane conversion (cvt.rn.bf16x2.f32
  /// converts two values in one instruction; NVPTX splits a vector fptrunc whose halves have other uses).
  static void pairNarrowings(ConversionPatternRewriter &rw, Location loc, SmallVector<Value> &results) {
    auto narrowed = [](Value v) -> Value {
      auto trunc = v.getDefiningOp<arith::TruncFOp>();
      if (!trunc || trunc.getRoundingmodeAttr() || !trunc.getIn().getType().isF32())
        return {};
      return trunc.getIn();
    };
    for (size_t e = 0; e + 1 < results.size(); e += 2) {
      Value x0 = narrowed(results[e]), x1 = narrowed(results[e + 1]);
      if (!x0 || !x1)
        continue;
      Type narrow = results[e].getType();
      if (!narrow.isBF16() && !narrow.isF16())
        continue;
      // cvt.rn.{bf16,f16}x2.f32 d, a, b puts a in the upper half: element 1.
      StringRef name = narrow.isBF16() ? "llvm.nvvm.ff2bf16x2.rn" : "llvm.nvvm.ff2f16x2.rn";
      Value pair = rw.create<LLVM::CallIntrinsicOp>(loc, VectorType::get({2}, narrow), rw.getStringAttr(name),
                                                    ValueRange{x1, x0})
                       .getResult(0);
      results[e] = element(rw, loc, pair, 0);
      results[e + 1] = element(rw, loc, pair, 1);
    }
  }
};

/// `bytes` (4 or 8) from global memory at `ptr` when `pred` holds, else zeros, without a branch: a
/// predicated load in inline PTX. Returns one i32 per 4 bytes.
SmallVector<Value> predicatedLoad(OpBuilder &b, Location loc, Value ptr, Value pred, int64_t bytes) {
  Type i32 = b.getI32Type();
  Value p = b.create<arith::ExtUIOp>(loc, i32, pred);
  auto asmOp = [&](Type result, StringRef text, StringRef constraints) {
    return b.create<LLVM::InlineAsmOp>(loc, result, ValueRange{ptr, p}, text, constraints, /*has_side_effects=*/true,
                                       /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
                                       LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  };
  if (bytes == 4)
    return {asmOp(i32, "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, 0; @p ld.global.b32 $0, [$1]; }", "=r,l,r")};
  auto pair = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32});
  Value r = asmOp(pair,
                  "{ .reg .pred p; setp.ne.b32 p, $3, 0; mov.b32 $0, 0; mov.b32 $1, 0; "
                  "@p ld.global.v2.b32 {$0, $1}, [$2]; }",
                  "=r,=r,l,r");
  return {b.create<LLVM::ExtractValueOp>(loc, r, 0), b.create<LLVM::ExtractValueOp>(loc, r, 1)};
}

/// Accumulator layouts hold column pairs (e, e + 1): when the column offset and limit are even (checked at
/// run time, uniform over the block), each pair is one predicated 2-element load, all issued without a
/// branch. Null when the layout, element size or strides do not allow it.
Value copyPairs(OpBuilder &b, Location loc, CopyOp op, CopyOp::Adaptor a, const FragLayout &layout, Type vt,
                Value tid, function_ref<Value(OpBuilder &, Location)> elementwise) {
  auto t = op.getSource().getType();
  SmallVector<int64_t> strides = t.getEffectiveStrides();
  Type elt = op.getType().getElementType();
  int64_t eb = elementBytes(elt);
  if (op.getTranspose() || !layout.acc || strides.size() != 2 || strides[1] != 1 || strides[0] % 2 != 0 ||
      (eb != 2 && eb != 4))
    return {};
  Value limit0 = extentLimit(b, loc, t, a.getBounds(), 0), limit1 = extentLimit(b, loc, t, a.getBounds(), 1);
  Value off0 = toI32(b, loc, a.getOffsets()[0]), off1 = toI32(b, loc, a.getOffsets()[1]);
  auto even = [&](Value x) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                   b.create<arith::AndIOp>(loc, x, i32Const(b, loc, 1)), i32Const(b, loc, 0));
  };
  Value pairsOk = even(off1);
  if (limit1)
    pairsOk = b.create<arith::AndIOp>(loc, pairsOk, even(limit1));
  auto ifOp = b.create<scf::IfOp>(
      loc, pairsOk,
      [&](OpBuilder &t2, Location l) {
        Value vec = t2.create<LLVM::UndefOp>(l, vt);
        for (int64_t e = 0; e < layout.perThread(); e += 2) {
          SmallVector<Value> c = layout.coords(t2, l, tid, e);
          Value row = t2.create<arith::AddIOp>(l, off0, c[0]), col = t2.create<arith::AddIOp>(l, off1, c[1]);
          Value inside = t2.create<arith::ConstantIntOp>(l, t2.getI1Type(), 1);
          if (limit0)
            inside = t2.create<arith::AndIOp>(l, inside, t2.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, row, limit0));
          if (limit1)
            inside = t2.create<arith::AndIOp>(l, inside, t2.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, col, limit1));
          Value linear = t2.create<arith::AddIOp>(
              l, t2.create<arith::MulIOp>(l, t2.create<arith::ExtSIOp>(l, t2.getI64Type(), row), i64Const(t2, l, strides[0])),
              t2.create<arith::ExtSIOp>(l, t2.getI64Type(), col));
          Value ptr = t2.create<LLVM::GEPOp>(l, a.getSource().getType(), elt, a.getSource(), ValueRange{linear});
          SmallVector<Value> words = predicatedLoad(t2, l, ptr, inside, 2 * eb);
          SmallVector<Value> elems;
          if (eb == 2) {
            Value two = t2.create<LLVM::BitcastOp>(l, VectorType::get({2}, elt), words[0]);
            for (int64_t i = 0; i < 2; ++i)
              elems.push_back(t2.create<LLVM::ExtractElementOp>(l, two, i64Const(t2, l, i)));
          } else {
            for (Value w : words)
              elems.push_back(t2.create<LLVM::BitcastOp>(l, elt, w));
          }
          for (int64_t i = 0; i < 2; ++i)
            vec = insert(t2, l, vec, elems[i], e + i);
        }
        t2.create<scf::YieldOp>(l, vec);
      },
      [&](OpBuilder &e2, Location l) { e2.create<scf::YieldOp>(l, elementwise(e2, l)); });
  return ifOp.getResult(0);
}

/// A transposed box into registers through the op's scratch (qla-plan-smem places it): 16-byte pieces
/// of the tensor's rows go there (one vector load when inside the bounds and aligned, else element by
/// element, zero outside), then every thread reads its elements transposed.
Value copyTransposedViaScratch(ConversionPatternRewriter &rw, Location loc, CopyOp op, CopyOp::Adaptor a,
                               const FragLayout &layout, Type vt, int64_t scratchOffset) {
  TileType tile = op.getType();
  auto src = op.getSource().getType();
  Type elt = tile.getElementType();
  int64_t eb = elementBytes(elt), vec = 16 / eb;
  int64_t rows = tile.getShape()[1], rowLen = tile.getShape()[0]; // the tensor's rows of the box
  SmallVector<int64_t> strides = src.getEffectiveStrides();
  Value tid = threadIdx(rw, loc);
  Value base = smemAddress(rw, loc, scratchOffset);
  Value off0 = toI32(rw, loc, a.getOffsets()[0]), off1 = toI32(rw, loc, a.getOffsets()[1]);
  Value limit0 = extentLimit(rw, loc, src, a.getBounds(), 0), limit1 = extentLimit(rw, loc, src, a.getBounds(), 1);
  Value aligned = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                           rw.create<arith::RemUIOp>(loc, off1, i32Const(rw, loc, vec)),
                                           i32Const(rw, loc, 0));
  auto below = [&](OpBuilder &b, Location l, Value x, Value limit) -> Value {
    if (!limit)
      return b.create<arith::ConstantIntOp>(l, b.getI1Type(), 1);
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, limit);
  };
  auto ptrAt = [&](OpBuilder &b, Location l, Value row, Value col) {
    Value linear = b.create<arith::AddIOp>(
        l, b.create<arith::MulIOp>(l, b.create<arith::ExtSIOp>(l, b.getI64Type(), row), i64Const(b, l, strides[0])),
        b.create<arith::ExtSIOp>(l, b.getI64Type(), col));
    return b.create<LLVM::GEPOp>(l, a.getSource().getType(), elt, a.getSource(), ValueRange{linear}).getResult();
  };
  auto scratchAt = [&](OpBuilder &b, Location l, Value row, Value col) {
    Value at = b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, row, i32Const(b, l, rowLen)), col);
    return gepBytes(b, l, base,
                    b.create<arith::MulIOp>(l, b.create<arith::ExtUIOp>(l, b.getI64Type(), at), i64Const(b, l, eb)));
  };
  auto pieceType = VectorType::get({vec}, elt);
  blockBarrier(rw, loc);
  forEachPiece(rw, loc, rows, rowLen / vec, vec, blockThreads(op), tid, [&](OpBuilder &b, Location l, Value r, Value c0) {
    Value row = b.create<arith::AddIOp>(l, off0, r), col = b.create<arith::AddIOp>(l, off1, c0);
    Value rowInside = below(b, l, row, limit0);
    Value lastCol = b.create<arith::AddIOp>(l, col, i32Const(b, l, vec - 1));
    Value whole = b.create<arith::AndIOp>(l, b.create<arith::AndIOp>(l, rowInside, below(b, l, lastCol, limit1)),
                                          aligned);
    auto piece = b.create<scf::IfOp>(
        l, whole,
        [&](OpBuilder &t, Location tl) {
          t.create<scf::YieldOp>(tl, ValueRange{t.create<LLVM::LoadOp>(tl, pieceType, ptrAt(t, tl, row, col), 16).getResult()});
        },
        [&](OpBuilder &t, Location tl) {
          Value v = t.create<LLVM::UndefOp>(tl, pieceType);
          for (int64_t i = 0; i < vec; ++i) {
            Value ci = t.create<arith::AddIOp>(tl, col, i32Const(t, tl, i));
            Value inside = t.create<arith::AndIOp>(tl, rowInside, below(t, tl, ci, limit1));
            Value x = guarded(t, tl, inside, elt, [&](OpBuilder &g, Location gl) -> Value {
              return g.create<LLVM::LoadOp>(gl, elt, ptrAt(g, gl, row, ci));
            });
            v = t.create<LLVM::InsertElementOp>(tl, v, x, i64Const(t, tl, i));
          }
          t.create<scf::YieldOp>(tl, v);
        });
    b.create<LLVM::StoreOp>(l, piece.getResult(0), scratchAt(b, l, r, c0), 16);
  }, /*maxUnrolled=*/4);
  blockBarrier(rw, loc);
  Value vec0 = emptyVector(rw, loc, vt);
  for (int64_t e = 0; e < layout.perThread(); ++e) {
    SmallVector<Value> c = layout.coords(rw, loc, tid, e); // tile (i, j) = tensor row j, column i
    auto read = [&, c](OpBuilder &b, Location l) -> Value { return b.create<LLVM::LoadOp>(l, elt, scratchAt(b, l, c[1], c[0])); };
    Value v = layout.exists(rw, loc, tid, e) ? guarded(rw, loc, layout.exists(rw, loc, tid, e), elt, read) : read(rw, loc);
    vec0 = insert(rw, loc, vec0, v, e);
  }
  return vec0;
}

/// A box of a global tensor into registers, zero outside the bounds: column pairs (copyPairs) when the
/// layout allows, transposed through scratch when qla-plan-smem gave the op some, else element by element.
struct CopyToFragmentLowering : OpConversionPattern<CopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CopyOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto layout = fragLayout(op.getType());
    if (!op.getType().isFragment())
      return failure();
    Type vt = getTypeConverter()->convertType(op.getType());
    if (!layout || !vt)
      return rw.notifyMatchFailure(op, "fragment has no layout");
    if (failed(requireStaticStrides(op, op.getSource().getType())))
      return failure();
    Location loc = op.getLoc();
    if (auto scratch = op->getAttrOfType<IntegerAttr>(kScratchOffsetAttr)) {
      rw.replaceOp(op, copyTransposedViaScratch(rw, loc, op, a, *layout, vt, scratch.getInt()));
      return success();
    }
    Type elt = op.getType().getElementType();
    Value tid = threadIdx(rw, loc);
    auto elementwise = [&](OpBuilder &b, Location l) {
      Value vec = emptyVector(b, l, vt);
      for (int64_t e = 0; e < layout->perThread(); ++e) {
        auto [ptr, inside] = globalElement(b, l, a.getSource(), op.getSource().getType(), a.getOffsets(),
                                           a.getBounds(), placed(layout->coords(b, l, tid, e), op.getTranspose()));
        if (Value exists = layout->exists(b, l, tid, e))
          inside = b.create<arith::AndIOp>(l, inside, exists);
        Value v = guarded(b, l, inside, elt, [&, ptr = ptr](OpBuilder &g, Location gl) -> Value {
          return g.create<LLVM::LoadOp>(gl, elt, ptr);
        });
        vec = insert(b, l, vec, v, e);
      }
      return vec;
    };
    Value vec = copyPairs(rw, loc, op, a, *layout, vt, tid, elementwise);
    rw.replaceOp(op, vec ? vec : elementwise(rw, loc));
    return success();
  }
};

/// A store through the op's scratch (qla-plan-smem places it): the fragment is written there as the
/// tensor's rows of the box (row-major; the tile transposed for a transposed store), then whole 16-byte
/// pieces of those rows go to global memory (one vector store when the piece is inside the bounds and
/// aligned, element by element otherwise). Element-wise transposed stores scatter 2-byte writes a row
/// apart; an accumulator fragment of 2-byte elements would take four times the global stores. Without
/// transposition the accumulator's column pairs go to scratch as one 4-byte store each; transposed, a
/// 16-bit accumulator goes with stmatrix.trans (8x8 blocks, 16-byte rows). Either way the pieces of row r
/// sit at piece index p ^ (r mod 8): the eight rows a warp writes at once hit distinct banks.
void storeViaScratch(ConversionPatternRewriter &rw, Location loc, StoreOp op, StoreOp::Adaptor a,
                     const FragLayout &layout, int64_t scratchOffset) {
  auto tile = cast<TileType>(op.getValue().getType());
  auto dst = op.getDest().getType();
  bool transposed = op.getTranspose();
  Type elt = tile.getElementType();
  int64_t eb = elementBytes(elt), vec = 16 / eb;
  int64_t rows = tile.getShape()[transposed ? 1 : 0], rowLen = tile.getShape()[transposed ? 0 : 1];
  int64_t piecesPerRow = rowLen / vec;
  // A transposed 16-bit accumulator goes to scratch with stmatrix.trans (whole 16-byte pieces, like the
  // column pairs of an untransposed one); element-wise transposed writes gain nothing from the swizzle.
  bool stmatrix = transposed && layout.acc && eb == 2 && tile.getShape()[1] % 8 == 0 && rowLen % vec == 0;
  int64_t swizzle = stmatrix && piecesPerRow % 8 == 0                      ? 8
                    : transposed || !llvm::isPowerOf2_64(piecesPerRow) ? 1
                                                                        : std::min<int64_t>(8, piecesPerRow);
  SmallVector<int64_t> strides = dst.getEffectiveStrides();
  Value tid = threadIdx(rw, loc);
  Value base = smemAddress(rw, loc, scratchOffset);
  // Byte offset in scratch of element (r, c) of the tensor's rows.
  auto scratchBytes = [&](OpBuilder &b, Location l, Value r, Value c) {
    if (swizzle > 1) {
      Value piece = b.create<arith::DivUIOp>(l, c, i32Const(b, l, vec));
      Value within = b.create<arith::RemUIOp>(l, c, i32Const(b, l, vec));
      piece = b.create<arith::XOrIOp>(l, piece, b.create<arith::RemUIOp>(l, r, i32Const(b, l, swizzle)));
      c = b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, piece, i32Const(b, l, vec)), within);
    }
    Value at = b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, r, i32Const(b, l, rowLen)), c);
    return b.create<arith::MulIOp>(l, b.create<arith::ExtUIOp>(l, b.getI64Type(), at), i64Const(b, l, eb)).getResult();
  };
  // Per warpgroup (qla.warpgroup_local): each stages and stores its own fragment rows, the tensor's
  // columns [wg·R, (wg + 1)·R) when transposed (whole swizzle spans: the XOR keeps pieces inside them),
  // its rows otherwise, between barriers of its own threads.
  const bool perWarpgroup = op->hasAttr(kScratchPerWarpgroupAttr);
  auto barrier = [&] {
    if (perWarpgroup)
      warpgroupBarrier(rw, loc, tid);
    else
      blockBarrier(rw, loc);
  };
  barrier();
  bool pairs = !transposed && layout.acc;
  if (stmatrix) { // fragment element (r, c) is the tensor's (c, r)
    bool stored = storeAccWithStmatrix(rw, loc, tile, /*transposed=*/true, layout, a.getValue(), tid,
                                       [&](OpBuilder &b, Location l, Value r, Value c) {
                                         return gepBytes(b, l, base, scratchBytes(b, l, c, r));
                                       });
    assert(stored && "the stmatrix conditions above are storeAccWithStmatrix's");
    (void)stored;
  }
  for (int64_t e = 0; !stmatrix && e < layout.perThread(); e += pairs ? 2 : 1) {
    SmallVector<Value> c = placed(layout.coords(rw, loc, tid, e), transposed);
    Value bytes = scratchBytes(rw, loc, c[0], c[1]);
    Value v = element(rw, loc, a.getValue(), e);
    if (pairs)
      v = insert(rw, loc, insert(rw, loc, emptyVector(rw, loc, VectorType::get({2}, elt)), v, 0),
                 element(rw, loc, a.getValue(), e + 1), 1);
    if (Value exists = layout.writes(rw, loc, tid, e))
      guarded(rw, loc, exists, Type(), [&](OpBuilder &b, Location l) -> Value {
        b.create<LLVM::StoreOp>(l, v, gepBytes(b, l, base, bytes));
        return {};
      });
    else
      rw.create<LLVM::StoreOp>(loc, v, gepBytes(rw, loc, base, bytes));
  }
  barrier();
  Value off0 = toI32(rw, loc, a.getOffsets()[0]), off1 = toI32(rw, loc, a.getOffsets()[1]);
  Value limit0 = extentLimit(rw, loc, dst, a.getBounds(), 0), limit1 = extentLimit(rw, loc, dst, a.getBounds(), 1);
  Value aligned = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                           rw.create<arith::RemUIOp>(loc, off1, i32Const(rw, loc, vec)),
                                           i32Const(rw, loc, 0));
  auto below = [&](OpBuilder &b, Location l, Value x, Value limit) -> Value {
    if (!limit)
      return b.create<arith::ConstantIntOp>(l, b.getI1Type(), 1);
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, limit);
  };
  auto ptrAt = [&](OpBuilder &b, Location l, Value row, Value col) {
    Value linear = b.create<arith::AddIOp>(
        l, b.create<arith::MulIOp>(l, b.create<arith::ExtSIOp>(l, b.getI64Type(), row), i64Const(b, l, strides[0])),
        b.create<arith::ExtSIOp>(l, b.getI64Type(), col));
    return b.create<LLVM::GEPOp>(l, a.getDest().getType(), elt, a.getDest(), ValueRange{linear}).getResult();
  };
  auto vt = VectorType::get({vec}, elt);
  int64_t pieceRows = rows, pieceCols = rowLen, pieceThreads = blockThreads(op);
  Value pieceTid = tid, firstRow, firstCol;
  if (perWarpgroup) {
    int64_t share = layout.acc->rows / layout.acc->warpgroups; // fragment rows a warpgroup holds
    Value first = rw.create<arith::MulIOp>(loc, warpgroupIndex(rw, loc, tid), i32Const(rw, loc, share));
    (transposed ? pieceCols : pieceRows) = share;
    (transposed ? firstCol : firstRow) = first;
    pieceThreads = 128;
    pieceTid = rw.create<arith::RemUIOp>(loc, tid, i32Const(rw, loc, 128));
  }
  forEachPiece(rw, loc, pieceRows, pieceCols / vec, vec, pieceThreads, pieceTid,
               [&](OpBuilder &b, Location l, Value r, Value c0) {
    if (firstRow)
      r = b.create<arith::AddIOp>(l, r, firstRow);
    if (firstCol)
      c0 = b.create<arith::AddIOp>(l, c0, firstCol);
    Value v = b.create<LLVM::LoadOp>(l, vt, gepBytes(b, l, base, scratchBytes(b, l, r, c0)), 16);
    Value row = b.create<arith::AddIOp>(l, off0, r), col = b.create<arith::AddIOp>(l, off1, c0);
    Value rowInside = below(b, l, row, limit0);
    Value lastCol = b.create<arith::AddIOp>(l, col, i32Const(b, l, vec - 1));
    Value whole = b.create<arith::AndIOp>(l, b.create<arith::AndIOp>(l, rowInside, below(b, l, lastCol, limit1)),
                                          aligned);
    b.create<scf::IfOp>(
        l, whole,
        [&](OpBuilder &t, Location tl) {
          t.create<LLVM::StoreOp>(tl, v, ptrAt(t, tl, row, col), 16);
          t.create<scf::YieldOp>(tl);
        },
        [&](OpBuilder &t, Location tl) {
          for (int64_t i = 0; i < vec; ++i) {
            Value ci = t.create<arith::AddIOp>(tl, col, i32Const(t, tl, i));
            Value inside = t.create<arith::AndIOp>(tl, rowInside, below(t, tl, ci, limit1));
            Value x = t.create<LLVM::ExtractElementOp>(tl, v, i64Const(t, tl, i));
            guarded(t, tl, inside, Type(), [&](OpBuilder &g, Location gl) -> Value {
              g.create<LLVM::StoreOp>(gl, x, ptrAt(g, gl, row, ci));
              return {};
            });
          }
          t.create<scf::YieldOp>(tl);
        });
  }, /*maxUnrolled=*/4);
}

/// qla.prefetch: element e of the box (row-major) goes to thread e mod the block's threads, which
/// prefetches the line holding it into L2 when it is inside the tensor and the bounds.
struct PrefetchLowering : OpConversionPattern<PrefetchOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(PrefetchOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    if (failed(requireStaticStrides(op, op.getSource().getType())))
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> box = op.getShape();
    int64_t elements = 1, threads = blockThreads(op);
    for (int64_t e : box)
      elements *= e;
    Value tid = threadIdx(rw, loc);
    for (int64_t first = 0; first < elements; first += threads) {
      Value e = rw.create<arith::AddIOp>(loc, tid, i32Const(rw, loc, first));
      // Box coordinates of element e, innermost dimension fastest.
      SmallVector<Value> coords(box.size());
      Value rest = e;
      for (int64_t d = static_cast<int64_t>(box.size()) - 1; d >= 0; --d) {
        coords[d] = rw.create<arith::RemUIOp>(loc, rest, i32Const(rw, loc, box[d]));
        rest = rw.create<arith::DivUIOp>(loc, rest, i32Const(rw, loc, box[d]));
      }
      auto [ptr, inside] = globalElement(rw, loc, a.getSource(), op.getSource().getType(), a.getOffsets(),
                                         a.getBounds(), coords);
      Value mine = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, e, i32Const(rw, loc, elements));
      guarded(rw, loc, rw.create<arith::AndIOp>(loc, inside, mine), Type(), [&](OpBuilder &b, Location l) -> Value {
        b.create<LLVM::InlineAsmOp>(l, TypeRange{}, ValueRange{ptr}, "prefetch.global.L2 [$0];", "l",
                                    /*has_side_effects=*/true, /*is_align_stack=*/false,
                                    LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
        return {};
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

/// A fragment into a global tensor, element by element, skipping what is outside the bounds (through
/// scratch when qla-plan-smem gave the op some).
struct StoreLowering : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto layout = fragLayout(cast<TileType>(op.getValue().getType()));
    if (!layout)
      return op.emitOpError() << "stores register fragments with a layout only";
    if (failed(requireStaticStrides(op, op.getDest().getType())))
      return failure();
    if (auto scratch = op->getAttrOfType<IntegerAttr>(kScratchOffsetAttr)) {
      storeViaScratch(rw, op.getLoc(), op, a, *layout, scratch.getInt());
      rw.eraseOp(op);
      return success();
    }
    Location loc = op.getLoc();
    Value tid = threadIdx(rw, loc);
    SmallVector<int64_t> strides = op.getDest().getType().getEffectiveStrides();
    Type elt = cast<TileType>(op.getValue().getType()).getElementType();
    // Accumulator layouts hold column pairs (e, e+1): one 2-element store when both are inside.
    bool pairs = layout->acc && !op.getTranspose() && strides.size() == 2 && strides[0] % 2 == 0 && strides[1] == 1;
    for (int64_t e = 0; pairs && e < layout->perThread(); e += 2) {
      SmallVector<Value> c = layout->coords(rw, loc, tid, e);
      auto [ptr, inside] = globalElement(rw, loc, a.getDest(), op.getDest().getType(), a.getOffsets(), a.getBounds(), c);
      SmallVector<Value> c1{c[0], rw.create<arith::AddIOp>(loc, c[1], i32Const(rw, loc, 1))};
      Value inside1 = globalElement(rw, loc, a.getDest(), op.getDest().getType(), a.getOffsets(), a.getBounds(), c1).second;
      Value v0 = element(rw, loc, a.getValue(), e), v1 = element(rw, loc, a.getValue(), e + 1);
      Value pair = insert(rw, loc, insert(rw, loc, emptyVector(rw, loc, VectorType::get({2}, elt)), v0, 0), v1, 1);
      rw.create<scf::IfOp>(
          loc, inside1,
          [&, ptr = ptr](OpBuilder &b, Location l) {
            b.create<LLVM::StoreOp>(l, pair, ptr, /*alignment=*/2 * elementBytes(elt));
            b.create<scf::YieldOp>(l);
          },
          [&, ptr = ptr, inside = inside](OpBuilder &b, Location l) {
            guarded(b, l, inside, Type(), [&](OpBuilder &t, Location tl) -> Value {
              t.create<LLVM::StoreOp>(tl, v0, ptr);
              return {};
            });
            b.create<scf::YieldOp>(l);
          });
    }
    for (int64_t e = 0; !pairs && e < layout->perThread(); ++e) {
      auto [ptr, inside] = globalElement(rw, loc, a.getDest(), op.getDest().getType(), a.getOffsets(), a.getBounds(),
                                         placed(layout->coords(rw, loc, tid, e), op.getTranspose()));
      if (Value exists = layout->writes(rw, loc, tid, e))
        inside = rw.create<arith::AndIOp>(loc, inside, exists);
      Value v = element(rw, loc, a.getValue(), e);
      guarded(rw, loc, inside, Type(), [&, ptr = ptr](OpBuilder &b, Location l) -> Value {
        b.create<LLVM::StoreOp>(l, v, ptr);
        return {};
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

/// One element of a global tensor, read by every thread; integers become indices.
struct ScalarLoadLowering : OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LoadOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto t = op.getSource().getType();
    if (failed(requireStaticStrides(op, t)))
      return failure();
    Location loc = op.getLoc();
    SmallVector<int64_t> strides = t.getEffectiveStrides();
    Value linear = i64Const(rw, loc, 0);
    for (auto [i, idx] : llvm::enumerate(a.getIndices()))
      linear = rw.create<arith::AddIOp>(loc, linear,
                                        rw.create<arith::MulIOp>(loc, toI64(rw, loc, idx), i64Const(rw, loc, strides[i])));
    Value ptr = rw.create<LLVM::GEPOp>(loc, a.getSource().getType(), t.getElementType(), a.getSource(),
                                       ValueRange{linear});
    Value v = rw.create<LLVM::LoadOp>(loc, t.getElementType(), ptr);
    if (op.getType().isIndex())
      v = rw.create<arith::IndexCastOp>(loc, rw.getIndexType(), v);
    rw.replaceOp(op, v);
    return success();
  }
};

} // namespace

void populateFragmentPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<BlockIdLowering, FillLowering, IotaLowering, MapLowering, CopyToFragmentLowering, StoreLowering, PrefetchLowering,
               ScalarLoadLowering>(converter, patterns.getContext());
}

} // namespace qla::lowering

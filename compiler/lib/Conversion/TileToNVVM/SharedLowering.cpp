// Shared memory: rings and slots, TMA loads, qla.share (fragment -> shared tile) and copies that TMA
// does not perform (each thread loads elements and stores them swizzled).
#include "Lowering.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace qla::lowering {

void forEachPiece(ConversionPatternRewriter &rw, Location loc, int64_t rows, int64_t pieces, int64_t vec,
                  int64_t threads, Value tid, function_ref<void(OpBuilder &, Location, Value, Value)> body,
                  int64_t maxUnrolled) {
  int64_t total = rows * pieces;
  if (total % threads == 0 && total / threads > maxUnrolled) {
    // Many rounds: a loop, not that many copies of the body.
    rw.create<scf::ForOp>(loc, i32Const(rw, loc, 0), i32Const(rw, loc, total), i32Const(rw, loc, threads), ValueRange{},
                          [&](OpBuilder &b, Location l, Value base, ValueRange) {
                            Value lin = b.create<arith::AddIOp>(l, base, tid);
                            Value r = b.create<arith::DivUIOp>(l, lin, i32Const(b, l, pieces));
                            Value c0 = b.create<arith::MulIOp>(
                                l, b.create<arith::RemUIOp>(l, lin, i32Const(b, l, pieces)), i32Const(b, l, vec));
                            body(b, l, r, c0);
                            b.create<scf::YieldOp>(l);
                          });
    return;
  }
  for (int64_t e = 0; e * threads < total; ++e) {
    Value lin = rw.create<arith::AddIOp>(loc, i32Const(rw, loc, e * threads), tid);
    Value exists = (e + 1) * threads <= total
                       ? Value()
                       : rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, lin, i32Const(rw, loc, total));
    guarded(rw, loc, exists, Type(), [&](OpBuilder &b, Location l) -> Value {
      Value r = b.create<arith::DivUIOp>(l, lin, i32Const(b, l, pieces));
      Value c0 = b.create<arith::MulIOp>(l, b.create<arith::RemUIOp>(l, lin, i32Const(b, l, pieces)), i32Const(b, l, vec));
      body(b, l, r, c0);
      return {};
    });
  }
}

namespace {

Value offsetAttrAddress(ConversionPatternRewriter &rw, Operation *op) {
  auto offset = op->getAttrOfType<IntegerAttr>(kSmemOffsetAttr);
  if (!offset)
    return {};
  return smemAddress(rw, op->getLoc(), offset.getInt());
}

struct SmemAllocLowering : OpConversionPattern<SmemAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SmemAllocOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    if (!op.getOffset())
      return rw.notifyMatchFailure(op, "no offset: run qla-plan-smem first");
    rw.replaceOp(op, smemAddress(rw, op.getLoc(), *op.getOffset()));
    return success();
  }
};

struct SlotLowering : OpConversionPattern<SlotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SlotOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value offset = rw.create<arith::MulIOp>(loc, toI64(rw, loc, a.getIndex()),
                                            i64Const(rw, loc, op.getResult().getType().getSizeInBytes()));
    rw.replaceOp(op, gepBytes(rw, loc, a.getRing(), offset));
    return success();
  }
};

struct TmaLoadLowering : OpConversionPattern<TmaLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(TmaLoadOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    if (!a.getDescriptor())
      return rw.notifyMatchFailure(op, "no tensor-map parameter bound");
    Location loc = op.getLoc();
    SmallVector<Value> coords;
    for (Value o : llvm::reverse(a.getOffsets())) // TMA coordinates are innermost first
      coords.push_back(toI32(rw, loc, o));
    Value dest = a.getDest();
    if (auto blk = op.getColumnBlock()) {
      TileType tile = op.getDest().getType();
      int64_t eb = elementBytes(tile.getElementType());
      int64_t blockRow = smemBlockRowBytes(tile.getShape().back() * eb);
      int64_t rows = tile.getNumElements() / tile.getShape().back();
      coords[0] = rw.create<arith::AddIOp>(loc, coords[0], i32Const(rw, loc, *blk * blockRow / eb));
      dest = gepBytes(rw, loc, dest, i64Const(rw, loc, *blk * rows * blockRow));
    }
    Value barAddr = rw.create<nvgpu::MBarrierGetOp>(loc, rw.getI64Type(), op.getBarriers(), a.getBarrierIndex());
    Value bar = rw.create<LLVM::IntToPtrOp>(loc, LLVM::LLVMPointerType::get(rw.getContext(), 3), barAddr);
    // A CTA's own shared address is a valid shared::cluster address (PTX 8.0 has no shared::cta form).
    Value dst = rw.create<LLVM::AddrSpaceCastOp>(loc, LLVM::LLVMPointerType::get(rw.getContext(), 7), dest);
    rw.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        loc, dst, a.getDescriptor(), coords, bar, ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(), Value());
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncWaitLowering : OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AsyncWaitOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::WgmmaWaitGroupSyncOp>(op, op.getPending());
    return success();
  }
};

/// The warpgroups' turns at issuing gemm groups: warpgroup wg waits at named barrier 1 + W + wg (after
/// the barriers 1 .. W of qla.warpgroup_local) with the warpgroup before it, which arrives there to pass
/// the turn on. 256 threads a barrier: the waiting warpgroup and the passing one.
struct WarpgroupTurnLowering : OpConversionPattern<WarpgroupTurnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(WarpgroupTurnOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    int64_t warpgroups = blockThreads(op) / 128;
    if (warpgroups < 2)
      return rw.notifyMatchFailure(op, "one warpgroup takes no turns");
    Value wg = warpgroupIndex(rw, loc, threadIdx(rw, loc));
    Value base = i32Const(rw, loc, 1 + warpgroups), threads = i32Const(rw, loc, 256);
    auto barrierOf = [&](OpBuilder &b, Value index) { return b.create<arith::AddIOp>(loc, base, index).getResult(); };
    auto wait = [&](OpBuilder &b, Value index) {
      b.create<NVVM::BarrierOp>(loc, Type(), barrierOf(b, index), threads, NVVM::BarrierReductionAttr(), Value());
    };
    auto arrive = [&](OpBuilder &b, Value index) { b.create<NVVM::BarrierArriveOp>(loc, barrierOf(b, index), threads); };
    auto only = [&](int64_t which, function_ref<void(OpBuilder &)> body) {
      Value is = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, wg, i32Const(rw, loc, which));
      guarded(rw, loc, is, Type(), [&](OpBuilder &b, Location) -> Value {
        body(b);
        return {};
      });
    };
    StringRef step = op.getStep();
    if (step == "wait")
      wait(rw, wg);
    else if (step == "pass")
      arrive(rw, rw.create<arith::RemUIOp>(loc, rw.create<arith::AddIOp>(loc, wg, i32Const(rw, loc, 1)),
                                            i32Const(rw, loc, warpgroups)));
    else if (step == "begin")
      only(warpgroups - 1, [&](OpBuilder &b) { arrive(b, i32Const(b, loc, 0)); });
    else
      only(0, [&](OpBuilder &b) { wait(b, i32Const(b, loc, 0)); });
    rw.eraseOp(op);
    return success();
  }
};

/// Writes the elements of this thread to `tile` at `base`; the caller fences and synchronises.
void writeShared(OpBuilder &b, Location loc, TileType tile, Value base, const FragLayout &layout, Value tid,
                 function_ref<Value(OpBuilder &, Location, int64_t, ArrayRef<Value>, Value &)> valueOf) {
  for (int64_t e = 0; e < layout.perThread(); ++e) {
    SmallVector<Value> c = layout.coords(b, loc, tid, e);
    Value cond = layout.writes(b, loc, tid, e);
    Value v = valueOf(b, loc, e, c, cond);
    Value ptr = gepBytes(b, loc, base, sharedOffset(b, loc, tile, c[0], c[1]));
    guarded(b, loc, cond, Type(), [&](OpBuilder &t, Location l) -> Value {
      t.create<LLVM::StoreOp>(l, v, ptr);
      return {};
    });
  }
}

LogicalResult requireStoredLayout(Operation *op, TileType tile) {
  auto swz = dyn_cast_or_null<SwizzleAttr>(tile.getLayout());
  if (tile.getRank() != 2 || !swz || (swz.getBytes() != 0 && swz.getBytes() != 128))
    return op->emitOpError() << "writes 2-D shared tiles with a 128-byte swizzle (or none) so far, got " << tile;
  return success();
}

/// qla.read: each thread loads its fragment elements (or every thread the one element) from the tile's
/// stored layout; no barrier (a ring slot's mbarrier, or the code that wrote the tile, orders it).
struct ReadLowering : OpConversionPattern<ReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ReadOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    TileType src = op.getSource().getType();
    auto swz = dyn_cast_or_null<SwizzleAttr>(src.getLayout());
    if (src.getRank() != 2 || !swz || (swz.getBytes() != 0 && swz.getBytes() != 128))
      return op.emitOpError() << "reads 2-D shared tiles with a 128-byte swizzle (or none) so far, got " << src;
    Location loc = op.getLoc();
    auto elementAt = [&](OpBuilder &b, Location l, Type elt, Value row, Value col) -> Value {
      Value ptr = gepBytes(b, l, a.getSource(), sharedOffset(b, l, src, row, col));
      return b.create<LLVM::LoadOp>(l, elt, ptr);
    };
    Value r0 = toI32(rw, loc, a.getOffsets()[0]), c0 = toI32(rw, loc, a.getOffsets()[1]);
    auto frag = dyn_cast<TileType>(op.getType());
    if (!frag) {
      rw.replaceOp(op, elementAt(rw, loc, op.getType(), r0, c0));
      return success();
    }
    auto layout = fragLayout(frag);
    Type vt = getTypeConverter()->convertType(frag);
    if (!layout || !vt)
      return rw.notifyMatchFailure(op, "fragment has no layout");
    Type elt = frag.getElementType();
    Value tid = threadIdx(rw, loc);
    Value vec = rw.create<LLVM::UndefOp>(loc, vt);
    for (int64_t e = 0; e < layout->perThread(); ++e) {
      SmallVector<Value> c = layout->coords(rw, loc, tid, e);
      if (op.getTranspose())
        std::swap(c[0], c[1]);
      Value row = rw.create<arith::AddIOp>(loc, r0, c[0]), col = rw.create<arith::AddIOp>(loc, c0, c[1]);
      Value v = guarded(rw, loc, layout->exists(rw, loc, tid, e), elt,
                        [&](OpBuilder &g, Location gl) -> Value { return elementAt(g, gl, elt, row, col); });
      vec = rw.create<LLVM::InsertElementOp>(loc, vec, v, i64Const(rw, loc, e));
    }
    rw.replaceOp(op, vec);
    return success();
  }
};

/// A 16-bit wgmma accumulator fragment into shared memory with stmatrix: per thread, elements
/// 4·nb .. 4·nb + 3 of a 64-row block are the 8x8 matrices (rows +0 and +8) of 8-column block nb, so
/// four matrices (two column blocks) go out in one instruction, each lane giving the address of one
/// matrix row (a 16-byte piece of the stored tile, whatever the swizzle). A transposed tile takes the
/// .trans form: the matrix's stored rows are the fragment's columns.
bool shareWithStmatrix(OpBuilder &b, Location loc, TileType tile, Value base, const FragLayout &layout, Value frag,
                       Value tid) {
  return storeAccWithStmatrix(b, loc, tile, cast<SwizzleAttr>(tile.getLayout()).getTransposed(), layout, frag, tid,
                              [&](OpBuilder &b, Location l, Value r, Value c) {
                                return gepBytes(b, l, base, sharedOffset(b, l, tile, r, c));
                              });
}

} // namespace

bool storeAccWithStmatrix(OpBuilder &b, Location loc, TileType tile, bool transposed, const FragLayout &layout,
                          Value frag, Value tid, function_ref<Value(OpBuilder &, Location, Value, Value)> address) {
  if (!layout.acc || elementBytes(tile.getElementType()) != 2 || tile.getShape()[1] % 8 != 0)
    return false;
  const AccLayout &acc = *layout.acc;
  MLIRContext *ctx = b.getContext();
  Value wg = b.create<arith::DivUIOp>(loc, tid, i32Const(b, loc, 128));
  Value inWg = b.create<arith::RemUIOp>(loc, tid, i32Const(b, loc, 128));
  Value warp = b.create<arith::DivUIOp>(loc, inWg, i32Const(b, loc, 32));
  Value lane = b.create<arith::RemUIOp>(loc, inWg, i32Const(b, loc, 32));
  Value matrix = b.create<arith::DivUIOp>(loc, lane, i32Const(b, loc, 8)); // the matrix this lane addresses
  Value rowInMatrix = b.create<arith::RemUIOp>(loc, lane, i32Const(b, loc, 8));
  // Fragment row of the lane's matrix (for mb = 0, nb = 0): 16 w + 8 (matrix % 2); its column block: matrix / 2.
  Value rowBase = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, wg, i32Const(b, loc, acc.rowsPerWarpgroup())),
      b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, warp, i32Const(b, loc, 16)),
                              b.create<arith::MulIOp>(loc, b.create<arith::RemUIOp>(loc, matrix, i32Const(b, loc, 2)),
                                                      i32Const(b, loc, 8))));
  Value colBase = b.create<arith::MulIOp>(loc, b.create<arith::DivUIOp>(loc, matrix, i32Const(b, loc, 2)),
                                          i32Const(b, loc, 8));
  auto pairType = VectorType::get({2}, tile.getElementType());
  auto packed = [&](int64_t e) {
    Value v = b.create<LLVM::UndefOp>(loc, pairType);
    for (int64_t i = 0; i < 2; ++i)
      v = b.create<LLVM::InsertElementOp>(loc, v, b.create<LLVM::ExtractElementOp>(loc, frag, i64Const(b, loc, e + i)),
                                          i64Const(b, loc, i));
    return b.create<LLVM::BitcastOp>(loc, b.getI32Type(), v).getResult();
  };
  int64_t colBlocks = tile.getShape()[1] / 8;
  auto mmaLayout = transposed ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  for (int64_t mb = 0; mb < acc.mBlocks(); ++mb)
    for (int64_t nb = 0; nb < colBlocks;) {
      int64_t count = nb + 2 <= colBlocks ? 4 : 2; // matrices in this instruction
      Value row = b.create<arith::AddIOp>(loc, rowBase, i32Const(b, loc, mb * 64));
      Value col = b.create<arith::AddIOp>(loc, colBase, i32Const(b, loc, nb * 8));
      // Lanes past `count` matrices give addresses too (ignored): keep them inside the tile.
      if (count == 2)
        col = b.create<arith::ConstantIntOp>(loc, b.getI32Type(), nb * 8);
      Value r = transposed ? row : b.create<arith::AddIOp>(loc, row, rowInMatrix).getResult();
      Value c = transposed ? b.create<arith::AddIOp>(loc, col, rowInMatrix).getResult() : col;
      Value ptr = address(b, loc, r, c);
      SmallVector<Value> regs;
      int64_t e0 = mb * acc.perBlock() + 4 * nb;
      for (int64_t m = 0; m < count; ++m)
        regs.push_back(packed(e0 + 2 * m));
      b.create<NVVM::StMatrixOp>(loc, ptr, regs, mmaLayout, NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                                 NVVM::LdStMatrixEltType::B16);
      nb += count / 2;
    }
  return true;
}

namespace {

struct ShareLowering : OpConversionPattern<ShareOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ShareOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto layout = fragLayout(op.getInput().getType());
    Value base = offsetAttrAddress(rw, op);
    if (!layout || !base || failed(requireStoredLayout(op, op.getType())))
      return rw.notifyMatchFailure(op, "needs a fragment layout, a stored layout and an offset");
    Location loc = op.getLoc();
    Value tid = threadIdx(rw, loc);
    blockBarrier(rw, loc); // earlier readers of this buffer (e.g. last iteration's gemm) are done
    if (!shareWithStmatrix(rw, loc, op.getType(), base, *layout, a.getInput(), tid))
      writeShared(rw, loc, op.getType(), base, *layout, tid,
                  [&](OpBuilder &b, Location l, int64_t e, ArrayRef<Value>, Value &) -> Value {
                    return b.create<LLVM::ExtractElementOp>(l, a.getInput(), i64Const(b, l, e));
                  });
    fenceSharedForAsync(rw, loc);
    blockBarrier(rw, loc);
    rw.replaceOp(op, base);
    return success();
  }
};

/// qla.stash / qla.unstash: each thread's elements in 16-byte pieces at (piece · threads + tid) · 16
/// bytes of the stash's buffer — thread-major, so a warp's pieces are consecutive (no bank conflicts).
struct StashPieces {
  int64_t threads, perPiece, pieces;
  Type pieceType;
};
static FailureOr<StashPieces> stashPieces(Operation *op, TileType frag) {
  auto layout = fragLayout(frag);
  int64_t bytes = elementBytes(frag.getElementType());
  if (!layout || layout->copies != 1 || bytes > 16 || 16 % bytes != 0)
    return op->emitOpError() << "stashes fragments that every thread holds a part of, in one copy, got " << frag;
  int64_t threads = layout->acc ? layout->acc->warpgroups * 128 : layout->threads;
  int64_t perPiece = 16 / bytes, perThread = layout->perThread();
  if (perThread % perPiece != 0 || perThread * threads != frag.getNumElements())
    return op->emitOpError() << "stashes fragments whose threads hold the whole tile in 16-byte pieces, got " << frag;
  return StashPieces{threads, perPiece, perThread / perPiece, VectorType::get({perPiece}, frag.getElementType())};
}
static Value stashPiece(OpBuilder &b, Location loc, Value base, Value tid, const StashPieces &p, int64_t i) {
  Value index = b.create<arith::AddIOp>(loc, i32Const(b, loc, i * p.threads), tid);
  Value bytes = b.create<arith::MulIOp>(loc, b.create<arith::ExtUIOp>(loc, b.getI64Type(), index), i64Const(b, loc, 16));
  return gepBytes(b, loc, base, bytes);
}

struct StashLowering : OpConversionPattern<StashOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(StashOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    Value base = offsetAttrAddress(rw, op);
    if (!base)
      return rw.notifyMatchFailure(op, "needs an offset (qla-plan-smem)");
    FailureOr<StashPieces> p = stashPieces(op, op.getInput().getType());
    if (failed(p))
      return failure();
    Location loc = op.getLoc();
    Value tid = b0(rw, loc, *p);
    blockBarrier(rw, loc); // the bytes may be an earlier buffer's, still read by other threads
    for (int64_t i = 0; i < p->pieces; ++i) {
      Value piece = rw.create<LLVM::UndefOp>(loc, p->pieceType);
      for (int64_t j = 0; j < p->perPiece; ++j)
        piece = rw.create<LLVM::InsertElementOp>(
            loc, piece, rw.create<LLVM::ExtractElementOp>(loc, a.getInput(), i64Const(rw, loc, i * p->perPiece + j)),
            i64Const(rw, loc, j));
      rw.create<LLVM::StoreOp>(loc, piece, stashPiece(rw, loc, base, tid, *p, i), /*alignment=*/16);
    }
    rw.replaceOp(op, base);
    return success();
  }
  static Value b0(OpBuilder &b, Location loc, const StashPieces &p) {
    return b.create<arith::RemUIOp>(loc, threadIdx(b, loc), i32Const(b, loc, p.threads));
  }
};

struct UnstashLowering : OpConversionPattern<UnstashOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(UnstashOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto stash = op.getInput().getDefiningOp<StashOp>();
    if (stash && stash.getInput().getType() != op.getType())
      return op.emitOpError() << "reads back " << op.getType() << " from a stash of " << stash.getInput().getType()
                              << ": the layouts must be the same";
    FailureOr<StashPieces> p = stashPieces(op, op.getType());
    Type vt = getTypeConverter()->convertType(op.getType());
    if (failed(p) || !vt)
      return failure();
    Location loc = op.getLoc();
    Value tid = StashLowering::b0(rw, loc, *p);
    Value vec = rw.create<LLVM::UndefOp>(loc, vt);
    for (int64_t i = 0; i < p->pieces; ++i) {
      Value piece = rw.create<LLVM::LoadOp>(loc, p->pieceType, stashPiece(rw, loc, a.getInput(), tid, *p, i),
                                            /*alignment=*/16);
      for (int64_t j = 0; j < p->perPiece; ++j)
        vec = rw.create<LLVM::InsertElementOp>(loc, vec,
                                               rw.create<LLVM::ExtractElementOp>(loc, piece, i64Const(rw, loc, j)),
                                               i64Const(rw, loc, i * p->perPiece + j));
    }
    rw.replaceOp(op, vec);
    return success();
  }
};

/// Into a ring slot: no barriers (the ring's mbarriers order writers and readers).
struct ShareIntoLowering : OpConversionPattern<ShareIntoOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ShareIntoOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto layout = fragLayout(op.getInput().getType());
    if (!layout || failed(requireStoredLayout(op, op.getDest().getType())))
      return rw.notifyMatchFailure(op, "needs a fragment layout and a stored layout");
    Location loc = op.getLoc();
    Value tid = threadIdx(rw, loc);
    if (!shareWithStmatrix(rw, loc, op.getDest().getType(), a.getDest(), *layout, a.getInput(), tid))
      writeShared(rw, loc, op.getDest().getType(), a.getDest(), *layout, tid,
                  [&](OpBuilder &b, Location l, int64_t e, ArrayRef<Value>, Value &) -> Value {
                    return b.create<LLVM::ExtractElementOp>(l, a.getInput(), i64Const(b, l, e));
                  });
    fenceSharedForAsync(rw, loc);
    rw.eraseOp(op);
    return success();
  }
};

/// A copy into shared memory that TMA does not perform: every thread loads elements round-robin.
/// 16-byte pieces of rows: each thread loads whole pieces (one vector load when the piece is inside
/// the bounds and the column offset is piece-aligned, element by element otherwise) and stores them
/// (one 16-byte store unless the tile is stored transposed). False when the tile's rows or the tensor's
/// strides do not come in whole pieces; the caller then copies element by element.
bool copyVectorized(ConversionPatternRewriter &rw, Location loc, CopyOp op, CopyOp::Adaptor a, Value base,
                    int64_t threads, Value tid) {
  TileType tile = op.getType();
  auto src = op.getSource().getType();
  SmallVector<int64_t> strides = src.getEffectiveStrides();
  Type elt = tile.getElementType();
  int64_t eb = elementBytes(elt), vec = 16 / std::max<int64_t>(eb, 1);
  if (tile.getRank() != 2 || vec < 2 || tile.getShape()[1] % vec != 0 || strides[1] != 1 || strides[0] % vec != 0)
    return false;
  auto layout = cast<SwizzleAttr>(tile.getLayout());
  int64_t rows = tile.getShape()[0], pieces = tile.getShape()[1] / vec;
  auto vt = VectorType::get({vec}, elt);
  Value off0 = toI32(rw, loc, a.getOffsets()[0]), off1 = toI32(rw, loc, a.getOffsets()[1]);
  Value limit0 = extentLimit(rw, loc, src, a.getBounds(), 0), limit1 = extentLimit(rw, loc, src, a.getBounds(), 1);
  Value aligned = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                           rw.create<arith::RemUIOp>(loc, off1, i32Const(rw, loc, vec)),
                                           i32Const(rw, loc, 0));
  auto ptrAt = [&](OpBuilder &b, Location l, Value row, Value col) {
    Value linear = b.create<arith::AddIOp>(
        l, b.create<arith::MulIOp>(l, b.create<arith::ExtSIOp>(l, b.getI64Type(), row), i64Const(b, l, strides[0])),
        b.create<arith::ExtSIOp>(l, b.getI64Type(), col));
    return b.create<LLVM::GEPOp>(l, a.getSource().getType(), elt, a.getSource(), ValueRange{linear}).getResult();
  };
  auto below = [&](OpBuilder &b, Location l, Value x, Value limit) -> Value {
    if (!limit)
      return b.create<arith::ConstantIntOp>(l, b.getI1Type(), 1);
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, limit);
  };
  forEachPiece(rw, loc, rows, pieces, vec, threads, tid, [&](OpBuilder &b, Location l, Value r, Value c0) {
    Value row = b.create<arith::AddIOp>(l, off0, r), col = b.create<arith::AddIOp>(l, off1, c0);
    Value rowInside = below(b, l, row, limit0);
    Value lastCol = b.create<arith::AddIOp>(l, col, i32Const(b, l, vec - 1));
    Value whole = b.create<arith::AndIOp>(l, b.create<arith::AndIOp>(l, rowInside, below(b, l, lastCol, limit1)),
                                          aligned);
    auto piece = b.create<scf::IfOp>(
        l, whole,
        [&](OpBuilder &t, Location tl) {
          t.create<scf::YieldOp>(tl, ValueRange{t.create<LLVM::LoadOp>(tl, vt, ptrAt(t, tl, row, col), 16).getResult()});
        },
        [&](OpBuilder &t, Location tl) {
          Value v = t.create<LLVM::UndefOp>(tl, vt);
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
    Value v = piece.getResult(0);
    if (!layout.getTransposed()) {
      b.create<LLVM::StoreOp>(l, v, gepBytes(b, l, base, sharedOffset(b, l, tile, r, c0)), 16);
      return;
    }
    for (int64_t i = 0; i < vec; ++i) {
      Value ci = b.create<arith::AddIOp>(l, c0, i32Const(b, l, i));
      b.create<LLVM::StoreOp>(l, b.create<LLVM::ExtractElementOp>(l, v, i64Const(b, l, i)),
                              gepBytes(b, l, base, sharedOffset(b, l, tile, r, ci)));
    }
  });
  return true;
}

/// A row-major copy into shared memory with cp.async: every thread issues all its 16-byte pieces as one
/// group, which the caller waits for. Pieces past the bounds copy fewer bytes (none outside the rows)
/// and cp.async fills the rest with zeros, so there is no branch and no register round trip. Needs the column offset at a
/// piece boundary (checked at run time by the caller); false when the tile is stored transposed or the
/// rows and strides do not come in whole pieces.
bool copyAsync(ConversionPatternRewriter &rw, Location loc, CopyOp op, CopyOp::Adaptor a, Value base,
               int64_t threads, Value tid) {
  TileType tile = op.getType();
  auto src = op.getSource().getType();
  SmallVector<int64_t> strides = src.getEffectiveStrides();
  Type elt = tile.getElementType();
  int64_t eb = elementBytes(elt), vec = 16 / std::max<int64_t>(eb, 1);
  auto layout = cast<SwizzleAttr>(tile.getLayout());
  if (tile.getRank() != 2 || vec < 2 || layout.getTransposed() || tile.getShape()[1] % vec != 0 || strides[1] != 1 ||
      strides[0] % vec != 0)
    return false;
  int64_t pieces = tile.getShape()[1] / vec;
  Value off0 = toI32(rw, loc, a.getOffsets()[0]), off1 = toI32(rw, loc, a.getOffsets()[1]);
  Value limit0 = extentLimit(rw, loc, src, a.getBounds(), 0), limit1 = extentLimit(rw, loc, src, a.getBounds(), 1);
  Value zero = i32Const(rw, loc, 0);
  forEachPiece(rw, loc, tile.getShape()[0], pieces, vec, threads, tid, [&](OpBuilder &b, Location l, Value r, Value c0) {
    Value row = b.create<arith::AddIOp>(l, off0, r), col = b.create<arith::AddIOp>(l, off1, c0);
    Value valid = i32Const(b, l, vec); // elements of the piece inside the bounds
    if (limit1)
      valid = b.create<arith::MinSIOp>(
          l, valid, b.create<arith::MaxSIOp>(l, zero, b.create<arith::SubIOp>(l, limit1, col)));
    if (limit0)
      valid = b.create<arith::SelectOp>(l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, row, limit0),
                                        valid, zero);
    Value bytes = b.create<arith::MulIOp>(l, valid, i32Const(b, l, eb));
    // A piece with nothing to read points at the tensor's start, which is always a valid address.
    Value any = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sgt, valid, zero);
    Value linear = b.create<arith::AddIOp>(
        l, b.create<arith::MulIOp>(l, b.create<arith::ExtSIOp>(l, b.getI64Type(), row), i64Const(b, l, strides[0])),
        b.create<arith::ExtSIOp>(l, b.getI64Type(), col));
    linear = b.create<arith::SelectOp>(l, any, linear, i64Const(b, l, 0));
    Value from = b.create<LLVM::GEPOp>(l, a.getSource().getType(), elt, a.getSource(), ValueRange{linear});
    Value to = gepBytes(b, l, base, sharedOffset(b, l, tile, r, c0));
    b.create<NVVM::CpAsyncOp>(l, to, from, b.getI32IntegerAttr(16),
                              NVVM::LoadCacheModifierKindAttr::get(b.getContext(), NVVM::LoadCacheModifierKind::CG),
                              bytes);
  });
  rw.create<NVVM::CpAsyncCommitGroupOp>(loc); // the caller waits
  return true;
}

struct CopyToSharedLowering : OpConversionPattern<CopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CopyOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    TileType tile = op.getType();
    if (!tile.isShared())
      return failure();
    Value base = offsetAttrAddress(rw, op);
    auto src = op.getSource().getType();
    if (!base || failed(requireStoredLayout(op, tile)))
      return rw.notifyMatchFailure(op, "needs a stored layout and an offset");
    if (ShapedType::isDynamicShape(src.getEffectiveStrides()))
      return op.emitOpError() << "needs a tensor with static strides";
    Location loc = op.getLoc();
    FragLayout spread{TileType::get(tile.getShape(), tile.getElementType(), MemorySpace::frag), std::nullopt, std::nullopt, 128};
    spread.threads = blockThreads(op);
    Value tid = threadIdx(rw, loc);
    Type elt = tile.getElementType();
    SmallVector<int64_t> strides = src.getEffectiveStrides();
    // A run of copies (markCopyRuns) synchronises once: the first one waits for earlier readers of
    // shared memory, the last one for every copy of the run.
    bool first = !op->hasAttr(kCopyFollowsCopyAttr), last = !op->hasAttr(kCopyWaitsLaterAttr);
    bool issuedAsync = !first; // an earlier copy of the run may have issued cp.async groups
    auto finish = [&] {
      if (last) {
        if (issuedAsync)
          rw.create<NVVM::CpAsyncWaitGroupOp>(loc, 0);
        fenceSharedForAsync(rw, loc);
        blockBarrier(rw, loc);
      }
      rw.replaceOp(op, base);
      return success();
    };
    if (first)
      blockBarrier(rw, loc);
    // cp.async when the column offset is at a piece boundary (uniform across the block), else the
    // register path below.
    if (int64_t vec = 16 / std::max<int64_t>(elementBytes(elt), 1); vec >= 2) {
      Value off1 = toI32(rw, loc, a.getOffsets()[1]);
      Value aligned = rw.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq, rw.create<arith::RemUIOp>(loc, off1, i32Const(rw, loc, vec)),
          i32Const(rw, loc, 0));
      auto ifOp = rw.create<scf::IfOp>(loc, aligned, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(ifOp.thenBlock());
      if (copyAsync(rw, loc, op, a, base, spread.threads, tid)) {
        rw.setInsertionPointToStart(ifOp.elseBlock());
        if (!copyVectorized(rw, loc, op, a, base, spread.threads, tid))
          return op.emitOpError() << "internal: a cp.async copy without a vectorized fallback";
        rw.setInsertionPointAfter(ifOp);
        issuedAsync = true;
        return finish();
      }
      rw.setInsertionPoint(ifOp);
      rw.eraseOp(ifOp);
    }
    if (copyVectorized(rw, loc, op, a, base, spread.threads, tid))
      return finish();
    writeShared(rw, loc, tile, base, spread, tid,
                [&](OpBuilder &b, Location l, int64_t, ArrayRef<Value> c, Value &) -> Value {
                  Value linear = i64Const(b, l, 0);
                  Value inside = b.create<arith::ConstantIntOp>(l, b.getI1Type(), 1);
                  for (size_t d = 0; d < c.size(); ++d) {
                    Value pos = b.create<arith::AddIOp>(l, toI32(b, l, a.getOffsets()[d]), c[d]);
                    Value limit = extentLimit(b, l, src, a.getBounds(), d);
                    if (limit)
                      inside = b.create<arith::AndIOp>(
                          l, inside, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, pos, limit));
                    linear = b.create<arith::AddIOp>(
                        l, linear, b.create<arith::MulIOp>(l, b.create<arith::ExtSIOp>(l, b.getI64Type(), pos),
                                                           i64Const(b, l, strides[d])));
                  }
                  Value ptr = b.create<LLVM::GEPOp>(l, a.getSource().getType(), elt, a.getSource(), ValueRange{linear});
                  return guarded(b, l, inside, elt, [&](OpBuilder &t, Location tl) -> Value {
                    return t.create<LLVM::LoadOp>(tl, elt, ptr);
                  });
                });
    return finish();
  }
};

} // namespace

void populateSharedPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SmemAllocLowering, SlotLowering, TmaLoadLowering, AsyncWaitLowering, WarpgroupTurnLowering, ShareLowering, ShareIntoLowering,
               StashLowering, UnstashLowering,
               CopyToSharedLowering, ReadLowering>(converter, patterns.getContext());
}

} // namespace qla::lowering

// qla-convert-to-nvvm: qla kernels to LLVM/NVVM-level ops (see Passes.td). What is left of other
// dialects (nvgpu mbarriers, scf, arith, func) is lowered by the upstream passes that follow in
// the pipeline.
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

namespace qla {
#define GEN_PASS_DEF_QLACONVERTTONVVM
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

constexpr llvm::StringLiteral kSmemSymbol = "__qla_smem";
constexpr int64_t kSmemAlignment = 1024;

/// How a wgmma_acc fragment is spread over a warpgroup's threads.
struct AccLayout {
  int64_t rows, cols, warpgroups;
  int64_t rowsPerWarpgroup() const { return rows / warpgroups; }
  int64_t mBlocks() const { return rowsPerWarpgroup() / 64; }
  int64_t perBlock() const { return cols / 2; }
  int64_t perThread() const { return mBlocks() * perBlock(); }
};

std::optional<AccLayout> accLayout(TileType t) {
  auto l = dyn_cast_or_null<WgmmaAccLayoutAttr>(t.getLayout());
  if (!l)
    return std::nullopt;
  return AccLayout{t.getShape()[0], t.getShape()[1], l.getWarpgroups()};
}

struct TileTypeConverter : TypeConverter {
  explicit TileTypeConverter(MLIRContext *ctx) {
    addConversion([](Type t) { return t; });
    addConversion([ctx](qla::TensorType) -> Type { return LLVM::LLVMPointerType::get(ctx, 1); });
    addConversion([ctx](TileType t) -> std::optional<Type> {
      if (t.isShared())
        return LLVM::LLVMPointerType::get(ctx, 3);
      if (auto acc = accLayout(t))
        return VectorType::get({acc->perThread()}, t.getElementType());
      return std::nullopt;
    });
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
      return b.create<UnrealizedConversionCastOp>(loc, type, inputs).getResult(0);
    };
    addSourceMaterialization(cast);
    addTargetMaterialization(cast);
  }
};

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
}
Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIntOp>(loc, b.getI64Type(), v);
}
Value toI64(OpBuilder &b, Location loc, Value index) {
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
}
Value gepBytes(OpBuilder &b, Location loc, Value base, Value offsetI64) {
  return b.create<LLVM::GEPOp>(loc, base.getType(), b.getI8Type(), base, ValueRange{offsetI64});
}
Value threadIdx(OpBuilder &b, Location loc) {
  return b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

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

struct SmemAllocLowering : OpConversionPattern<SmemAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SmemAllocOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    if (!op.getOffset())
      return rw.notifyMatchFailure(op, "no offset: run qla-plan-smem first");
    Location loc = op.getLoc();
    auto ptr3 = LLVM::LLVMPointerType::get(rw.getContext(), 3);
    Value base = rw.create<LLVM::AddressOfOp>(loc, ptr3, kSmemSymbol);
    // Dynamic shared memory follows the static (mbarriers) and is not 1024-byte aligned by itself;
    // swizzled TMA/wgmma tiles need that, and qla-plan-smem reserved the slack.
    Value addr = rw.create<LLVM::PtrToIntOp>(loc, rw.getI64Type(), base);
    Value pad = rw.create<arith::AndIOp>(loc, rw.create<arith::SubIOp>(loc, i64Const(rw, loc, 0), addr),
                                         i64Const(rw, loc, kSmemAlignment - 1));
    Value offset = rw.create<arith::AddIOp>(loc, pad, i64Const(rw, loc, *op.getOffset()));
    rw.replaceOp(op, gepBytes(rw, loc, base, offset));
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
      coords.push_back(rw.create<arith::IndexCastOp>(loc, rw.getI32Type(), o));
    Value dest = a.getDest();
    if (auto blk = op.getColumnBlock()) {
      TileType tile = op.getDest().getType();
      int64_t eb = elementBytes(tile.getElementType());
      int64_t blockRow = smemBlockRowBytes(tile.getShape().back() * eb);
      int64_t rows = tile.getNumElements() / tile.getShape().back();
      coords[0] = rw.create<arith::AddIOp>(loc, coords[0], i32Const(rw, loc, *blk * blockRow / eb));
      dest = gepBytes(rw, loc, dest, i64Const(rw, loc, *blk * rows * blockRow));
    }
    auto groupType = cast<nvgpu::MBarrierGroupType>(op.getBarriers().getType());
    Value barAddr = rw.create<nvgpu::MBarrierGetOp>(loc, rw.getI64Type(), op.getBarriers(), a.getBarrierIndex());
    (void)groupType;
    Value bar = rw.create<LLVM::IntToPtrOp>(loc, LLVM::LLVMPointerType::get(rw.getContext(), 3), barAddr);
    // A CTA's own shared address is a valid shared::cluster address (PTX 8.0 has no shared::cta form).
    Value dst = rw.create<LLVM::AddrSpaceCastOp>(loc, LLVM::LLVMPointerType::get(rw.getContext(), 7), dest);
    rw.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        loc, dst, a.getDescriptor(), coords, bar, ValueRange{}, Value(), Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(), Value());
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

/// The body's scalar ops applied to whole per-thread vectors.
struct MapLowering : OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MapOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto resultType = dyn_cast_or_null<VectorType>(getTypeConverter()->convertType(op.getResult().getType()));
    if (!resultType)
      return rw.notifyMatchFailure(op, "fragment has no layout");
    int64_t n = resultType.getNumElements();
    Block &body = op.getBody().front();
    IRMapping map;
    for (auto [arg, in] : llvm::zip(body.getArguments(), a.getInputs()))
      map.map(arg, in);
    for (Operation &inner : body.without_terminator()) {
      if (inner.hasTrait<OpTrait::ConstantLike>() && inner.getNumResults() == 1) {
        auto attr = inner.getAttrOfType<TypedAttr>("value");
        auto vt = VectorType::get({n}, inner.getResult(0).getType());
        map.map(inner.getResult(0), rw.create<arith::ConstantOp>(inner.getLoc(), vt, SplatElementsAttr::get(vt, attr)));
        continue;
      }
      OperationState state(inner.getLoc(), inner.getName());
      for (Value v : inner.getOperands())
        state.addOperands(map.lookup(v));
      for (Type t : inner.getResultTypes())
        state.addTypes(VectorType::get({n}, t));
      state.addAttributes(inner.getAttrs());
      Operation *vectorized = rw.create(state);
      map.map(inner.getResults(), vectorized->getResults());
    }
    rw.replaceOp(op, map.lookup(cast<YieldOp>(body.getTerminator()).getValues()[0]));
    return success();
  }
};

/// A wgmma shared-memory descriptor for a K-major tile starting at `addr` (a pointer into shared memory).
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value addr, int64_t rowBytes) {
  int64_t mode = rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : rowBytes == 32 ? 3 : 0;
  int64_t sbo = 8 * rowBytes;         // 8-row core-matrix groups
  int64_t lbo = 16;                   // unused for swizzled K-major tiles
  Value a = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), addr);
  Value start = b.create<arith::ShRUIOp>(loc, b.create<arith::AndIOp>(loc, a, i64Const(b, loc, 0x3FFFF)),
                                         i64Const(b, loc, 4));
  uint64_t fixed = (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) | (uint64_t(mode) << 62);
  return b.create<arith::OrIOp>(loc, start, i64Const(b, loc, static_cast<int64_t>(fixed)));
}

struct GemmLowering : OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GemmOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    TileType at = op.getA().getType(), bt = op.getB().getType(), acct = op.getAcc().getType();
    auto acc = accLayout(acct);
    if (!acc)
      return rw.notifyMatchFailure(op, "accumulator has no wgmma_acc layout");
    if (!op.getTransposeB() || op.getTransposeA() || at.isFragment())
      return op.emitOpError() << "is only lowered to wgmma for A in shared memory, not transposed, and B "
                                 "transposed (stored N x K) so far";
    int64_t eb = elementBytes(at.getElementType());
    int64_t rowBytesA = at.getShape()[1] * eb, rowBytesB = bt.getShape()[1] * eb;
    auto swA = dyn_cast_or_null<SwizzleAttr>(at.getLayout()), swB = dyn_cast_or_null<SwizzleAttr>(bt.getLayout());
    if (!swA || !swB || swA.getBytes() == 0 || swA.getBytes() != smemSwizzleBytes(rowBytesA) ||
        swB.getBytes() != smemSwizzleBytes(rowBytesB) || swB.getBytes() == 0)
      return op.emitOpError() << "needs A and B tiles with 32-, 64- or 128-byte swizzled rows (K x "
                              << eb << " bytes = 32, 64 or a multiple of 128)";
    int64_t blockA = smemBlockRowBytes(rowBytesA), blockB = smemBlockRowBytes(rowBytesB);
    int64_t rowsA = at.getShape()[0], rowsB = bt.getShape()[0];
    // Byte offset of (row, k) in a column-blocked K-major tile, for k a multiple of 16.
    auto kOffset = [](int64_t rows, int64_t blockRow, int64_t row, int64_t kBytes) {
      return (kBytes / blockRow) * rows * blockRow + row * blockRow + kBytes % blockRow;
    };
    int64_t n = acc->cols;
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    Type f32 = rw.getF32Type();
    auto structType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(acc->perBlock(), f32));

    // Rows of A owned by this thread's warpgroup.
    Value wg = rw.create<arith::DivUIOp>(loc, threadIdx(rw, loc), i32Const(rw, loc, 128));
    Value wgRowBytes = rw.create<arith::ExtUIOp>(
        loc, rw.getI64Type(),
        rw.create<arith::MulIOp>(loc, wg, i32Const(rw, loc, acc->rowsPerWarpgroup() * blockA)));
    Value aBase = gepBytes(rw, loc, a.getA(), wgRowBytes);

    // Per-thread vector -> one wgmma struct per 64-row block.
    SmallVector<Value> blocks;
    for (int64_t mb = 0; mb < acc->mBlocks(); ++mb) {
      Value s = rw.create<LLVM::UndefOp>(loc, structType);
      for (int64_t j = 0; j < acc->perBlock(); ++j) {
        Value e = rw.create<LLVM::ExtractElementOp>(loc, a.getAcc(), i64Const(rw, loc, mb * acc->perBlock() + j));
        s = rw.create<LLVM::InsertValueOp>(loc, s, e, j);
      }
      blocks.push_back(s);
    }

    auto type = at.getElementType().isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    auto shape = NVVM::MMAShapeAttr::get(ctx, 64, n, 16);
    rw.create<NVVM::WgmmaFenceAlignedOp>(loc);
    int64_t kSteps = at.getShape()[1] / 16;
    for (int64_t kk = 0; kk < kSteps; ++kk) {
      int64_t kBytes = kk * 16 * eb;
      Value descB = wgmmaDescriptor(
          rw, loc, gepBytes(rw, loc, a.getB(), i64Const(rw, loc, kOffset(rowsB, blockB, 0, kBytes))), blockB);
      for (int64_t mb = 0; mb < acc->mBlocks(); ++mb) {
        Value aAddr = gepBytes(rw, loc, aBase, i64Const(rw, loc, kOffset(rowsA, blockA, mb * 64, kBytes)));
        Value descA = wgmmaDescriptor(rw, loc, aAddr, blockA);
        blocks[mb] = rw.create<NVVM::WgmmaMmaAsyncOp>(
            loc, structType, blocks[mb], descA, descB, shape, NVVM::WGMMATypesAttr::get(ctx, type),
            NVVM::WGMMATypesAttr::get(ctx, type), NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
            NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
            NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
            NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
            NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row), NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col),
            NVVM::MMAIntOverflowAttr());
      }
    }
    rw.create<NVVM::WgmmaGroupSyncAlignedOp>(loc);
    if (!op.getAsync())
      rw.create<NVVM::WgmmaWaitGroupSyncOp>(loc, 0);

    auto vt = VectorType::get({acc->perThread()}, f32);
    Value result = rw.create<LLVM::UndefOp>(loc, vt);
    for (int64_t mb = 0; mb < acc->mBlocks(); ++mb)
      for (int64_t j = 0; j < acc->perBlock(); ++j) {
        Value e = rw.create<LLVM::ExtractValueOp>(loc, blocks[mb], j);
        result = rw.create<LLVM::InsertElementOp>(loc, result, e, i64Const(rw, loc, mb * acc->perBlock() + j));
      }
    rw.replaceOp(op, result);
    return success();
  }
};

/// Fragment -> global memory, each thread writing its accumulator elements (pairs of adjacent columns).
struct StoreLowering : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    auto tile = cast<TileType>(op.getValue().getType());
    auto acc = accLayout(tile);
    qla::TensorType dest = op.getDest().getType();
    if (!acc || dest.getRank() != 2)
      return op.emitOpError() << "only stores 2-D fragments with a wgmma_acc layout so far";
    SmallVector<int64_t> strides = dest.getEffectiveStrides();
    if (ShapedType::isDynamicShape(dest.getShape()) || ShapedType::isDynamicShape(strides))
      return op.emitOpError() << "needs a destination with static shape and strides so far";
    Location loc = op.getLoc();
    Type elt = tile.getElementType();
    Type i32 = rw.getI32Type();
    Value tid = threadIdx(rw, loc);
    Value wg = rw.create<arith::DivUIOp>(loc, tid, i32Const(rw, loc, 128));
    Value inWg = rw.create<arith::RemUIOp>(loc, tid, i32Const(rw, loc, 128));
    Value warp = rw.create<arith::DivUIOp>(loc, inWg, i32Const(rw, loc, 32));
    Value lane = rw.create<arith::RemUIOp>(loc, inWg, i32Const(rw, loc, 32));
    auto idx32 = [&](Value v) { return rw.create<arith::IndexCastOp>(loc, i32, v); };
    // row0/col0: this thread's first element of the tile, in tensor coordinates.
    Value row0 = rw.create<arith::AddIOp>(
        loc, idx32(a.getOffsets()[0]),
        rw.create<arith::AddIOp>(
            loc, rw.create<arith::MulIOp>(loc, wg, i32Const(rw, loc, acc->rowsPerWarpgroup())),
            rw.create<arith::AddIOp>(loc, rw.create<arith::MulIOp>(loc, warp, i32Const(rw, loc, 16)),
                                     rw.create<arith::DivUIOp>(loc, lane, i32Const(rw, loc, 4)))));
    Value col0 = rw.create<arith::AddIOp>(
        loc, idx32(a.getOffsets()[1]),
        rw.create<arith::MulIOp>(loc, rw.create<arith::RemUIOp>(loc, lane, i32Const(rw, loc, 4)),
                                 i32Const(rw, loc, 2)));
    int64_t rows = dest.getShape()[0], cols = dest.getShape()[1];
    bool pairs = cols % 2 == 0 && strides[0] % 2 == 0;
    auto pairType = VectorType::get({2}, elt);
    for (int64_t mb = 0; mb < acc->mBlocks(); ++mb)
      for (int64_t nb = 0; nb < acc->cols / 8; ++nb)
        for (int64_t half = 0; half < 2; ++half) {
          int64_t e = mb * acc->perBlock() + nb * 4 + half * 2;
          Value row = rw.create<arith::AddIOp>(loc, row0, i32Const(rw, loc, mb * 64 + half * 8));
          Value col = rw.create<arith::AddIOp>(loc, col0, i32Const(rw, loc, nb * 8));
          for (int64_t c = 0; c < (pairs ? 1 : 2); ++c) {
            Value cc = c ? rw.create<arith::AddIOp>(loc, col, i32Const(rw, loc, 1)).getResult() : col;
            Value inBounds = rw.create<arith::AndIOp>(
                loc, rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, i32Const(rw, loc, rows)),
                rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, cc, i32Const(rw, loc, cols)));
            if (!a.getBounds().empty()) {
              Value r = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, idx32(a.getBounds()[0]));
              Value c = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, cc, idx32(a.getBounds()[1]));
              inBounds = rw.create<arith::AndIOp>(loc, inBounds, rw.create<arith::AndIOp>(loc, r, c));
            }
            rw.create<scf::IfOp>(loc, inBounds, [&](OpBuilder &b, Location l) {
              Value linear = b.create<arith::AddIOp>(
                  l, b.create<arith::MulIOp>(l, b.create<arith::ExtUIOp>(l, b.getI64Type(), row),
                                             i64Const(b, l, strides[0])),
                  b.create<arith::ExtUIOp>(l, b.getI64Type(), cc));
              Value ptr = b.create<LLVM::GEPOp>(l, a.getDest().getType(), elt, a.getDest(), ValueRange{linear});
              if (pairs) {
                Value v = b.create<LLVM::ShuffleVectorOp>(l, a.getValue(), a.getValue(),
                                                          ArrayRef<int32_t>{int32_t(e), int32_t(e + 1)});
                b.create<LLVM::StoreOp>(l, v, ptr, /*alignment=*/2 * elementBytes(elt));
              } else {
                Value v = b.create<LLVM::ExtractElementOp>(l, a.getValue(), i64Const(b, l, e + c));
                b.create<LLVM::StoreOp>(l, v, ptr, elementBytes(elt));
              }
              b.create<scf::YieldOp>(l);
            });
            (void)pairType;
          }
        }
    rw.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// qla.for loops that no pass pipelined are plain loops.
void lowerRemainingLoops(func::FuncOp kernel) {
  SmallVector<ForOp> loops;
  kernel.walk([&](ForOp loop) { loops.push_back(loop); });
  for (ForOp loop : loops) {
    OpBuilder b(loop);
    auto newLoop = b.create<scf::ForOp>(loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
                                        loop.getStep(), loop.getInitArgs());
    Block *newBody = newLoop.getBody();
    if (!newBody->empty())
      newBody->back().erase();
    Block *oldBody = loop.getBodyBlock();
    auto yield = cast<YieldOp>(oldBody->getTerminator());
    b.setInsertionPoint(yield);
    b.create<scf::YieldOp>(yield.getLoc(), yield.getValues());
    yield.erase();
    newBody->getOperations().splice(newBody->end(), oldBody->getOperations());
    for (auto [oldArg, newArg] : llvm::zip(oldBody->getArguments(), newBody->getArguments()))
      oldArg.replaceAllUsesWith(newArg);
    loop.replaceAllUsesWith(newLoop.getResults());
    loop.erase();
  }
}

Attribute i64Array(Builder &b, ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); }

/// Appends one tensor-map parameter per distinct (tensor, box, swizzle) and records the kernel ABI.
LogicalResult bindTensorMaps(func::FuncOp kernel, SmallVectorImpl<Attribute> &abiParams) {
  Builder b(kernel.getContext());
  unsigned numTensors = kernel.getNumArguments();
  for (unsigned i = 0; i < numTensors; ++i) {
    auto t = dyn_cast<qla::TensorType>(kernel.getArgument(i).getType());
    if (!t)
      return kernel.emitError() << "kernel argument " << i << " must be a !qla.tensor, got "
                                << kernel.getArgument(i).getType();
    auto name = kernel.getArgAttrOfType<StringAttr>(i, "qla.name");
    abiParams.push_back(b.getDictionaryAttr({
        b.getNamedAttr("kind", b.getStringAttr("tensor")),
        b.getNamedAttr("name", name ? name : b.getStringAttr("arg" + std::to_string(i))),
        b.getNamedAttr("dtype", TypeAttr::get(t.getElementType())),
        b.getNamedAttr("shape", i64Array(b, t.getShape())),
        b.getNamedAttr("strides", i64Array(b, t.getEffectiveStrides())),
    }));
  }
  std::map<std::tuple<unsigned, SmallVector<int64_t>, int64_t>, unsigned> params;
  WalkResult walk = kernel.walk([&](TmaLoadOp load) -> WalkResult {
    auto arg = dyn_cast<BlockArgument>(load.getSource());
    if (!arg || arg.getOwner() != &kernel.front())
      return load.emitOpError() << "TMA source must be a kernel argument";
    TileType tile = load.getDest().getType();
    auto swz = dyn_cast_or_null<SwizzleAttr>(tile.getLayout());
    int64_t swizzle = swz ? swz.getBytes() : 0;
    SmallVector<int64_t> box(tile.getShape());
    int64_t eb = elementBytes(tile.getElementType());
    box.back() = smemBlockRowBytes(box.back() * eb) / eb; // one column block per TMA box
    auto key = std::make_tuple(arg.getArgNumber(), box, swizzle);
    auto it = params.find(key);
    if (it == params.end()) {
      unsigned index = kernel.getNumArguments();
      (void)kernel.insertArgument(index, LLVM::LLVMPointerType::get(kernel.getContext()),
                                  b.getDictionaryAttr({}), load.getLoc());
      it = params.emplace(key, index).first;
      SmallVector<int64_t> innermostFirst(box.rbegin(), box.rend());
      abiParams.push_back(b.getDictionaryAttr({
          b.getNamedAttr("kind", b.getStringAttr("tensormap")),
          b.getNamedAttr("tensor", b.getI64IntegerAttr(arg.getArgNumber())),
          b.getNamedAttr("box", i64Array(b, innermostFirst)),
          b.getNamedAttr("swizzle", b.getI64IntegerAttr(swizzle)),
      }));
    }
    load.getDescriptorMutable().assign(kernel.getArgument(it->second));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Copies and stores check their bounds against explicit operands: a dynamic extent becomes a
/// qla.dim bound (the smaller of it and any given bound).
template <typename OpT>
void makeExtentsExplicit(OpT op, Value tensor) {
  auto t = cast<qla::TensorType>(tensor.getType());
  if (!ShapedType::isDynamicShape(t.getShape()))
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> bounds;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    Value extent = t.getShape()[d] == ShapedType::kDynamic
                       ? Value(b.create<DimOp>(loc, b.getIndexType(), tensor, b.getI64IntegerAttr(d)))
                       : Value(b.create<arith::ConstantIndexOp>(loc, t.getShape()[d]));
    if (!op.getBounds().empty())
      extent = b.create<arith::MinSIOp>(loc, extent, op.getBounds()[d]);
    bounds.push_back(extent);
  }
  op.getBoundsMutable().assign(bounds);
}

/// Each (tensor, dimension) that qla.dim reads becomes an i64 kernel parameter.
LogicalResult bindDims(func::FuncOp kernel, SmallVectorImpl<Attribute> &abiParams) {
  kernel.walk([&](CopyOp op) { makeExtentsExplicit(op, op.getSource()); });
  kernel.walk([&](StoreOp op) { makeExtentsExplicit(op, op.getDest()); });
  Builder b(kernel.getContext());
  std::map<std::pair<unsigned, int64_t>, unsigned> params;
  SmallVector<DimOp> dims;
  kernel.walk([&](DimOp op) { dims.push_back(op); });
  for (DimOp op : dims) {
    auto arg = dyn_cast<BlockArgument>(op.getTensor());
    if (!arg || arg.getOwner() != &kernel.front())
      return op.emitOpError() << "reads the extent of a value that is not a kernel argument";
    auto key = std::make_pair(arg.getArgNumber(), op.getDim());
    auto it = params.find(key);
    if (it == params.end()) {
      unsigned index = kernel.getNumArguments();
      (void)kernel.insertArgument(index, b.getI64Type(), b.getDictionaryAttr({}), op.getLoc());
      it = params.emplace(key, index).first;
      abiParams.push_back(b.getDictionaryAttr({
          b.getNamedAttr("kind", b.getStringAttr("dim")),
          b.getNamedAttr("tensor", b.getI64IntegerAttr(arg.getArgNumber())),
          b.getNamedAttr("dim", b.getI64IntegerAttr(op.getDim())),
      }));
    }
    OpBuilder ob(op);
    op.replaceAllUsesWith(ob.create<arith::IndexCastOp>(op.getLoc(), ob.getIndexType(),
                                                        kernel.getArgument(it->second)).getResult());
    op.erase();
  }
  return success();
}

struct ConvertToNVVMPass : qla::impl::QlaConvertToNVVMBase<ConvertToNVVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<NamedAttribute> abi;
    bool needsSmem = false;
    for (auto kernel : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        continue;
      WalkResult leftover = kernel.walk([&](CopyOp copy) {
        copy.emitError() << "qla.copy is lowered only inside a qla.for pipelined by qla-pipeline "
                            "(stages >= 2, TMA-compatible); see the remarks of that pass";
        return WalkResult::interrupt();
      });
      if (leftover.wasInterrupted())
        return signalPassFailure();
      lowerRemainingLoops(kernel);
      SmallVector<Attribute> params;
      if (failed(bindTensorMaps(kernel, params)) || failed(bindDims(kernel, params)))
        return signalPassFailure();
      needsSmem |= !kernel.getOps<SmemAllocOp>().empty() || kernel->hasAttr(QlaDialect::kSmemAttr);
      Builder b(ctx);
      SmallVector<NamedAttribute> entry{b.getNamedAttr("params", b.getArrayAttr(params))};
      for (StringRef attr : {QlaDialect::kGridAttr, QlaDialect::kBlockAttr, QlaDialect::kSmemAttr})
        if (Attribute v = kernel->getAttr(attr))
          entry.push_back(b.getNamedAttr(attr.drop_front(4), v));
      abi.push_back(b.getNamedAttr(kernel.getSymName(), b.getDictionaryAttr(entry)));
      for (StringRef attr : {QlaDialect::kKernelAttr, QlaDialect::kGridAttr, QlaDialect::kBlockAttr,
                             QlaDialect::kSmemAttr})
        kernel->removeAttr(attr); // qla.abi carries them from here on
    }
    // Declared with the 16-byte alignment the hardware guarantees: a larger declared alignment is not
    // honoured for dynamic shared memory, and would let LLVM fold away the run-time alignment.
    if (needsSmem && !module.lookupSymbol(kSmemSymbol)) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      b.create<LLVM::GlobalOp>(module.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0), /*isConstant=*/false,
                               LLVM::Linkage::External, kSmemSymbol, Attribute(), /*alignment=*/16,
                               /*addrSpace=*/3);
    }
    module->setAttr("qla.abi", DictionaryAttr::get(ctx, abi));

    TileTypeConverter converter(ctx);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<QlaDialect>();
    target.addLegalDialect<arith::ArithDialect, LLVM::LLVMDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect,
                           scf::SCFDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>(
        [&](func::FuncOp f) { return converter.isSignatureLegal(f.getFunctionType()) && converter.isLegal(&f.getBody()); });
    target.addDynamicallyLegalOp<func::ReturnOp>([&](func::ReturnOp op) { return converter.isLegal(op); });
    RewritePatternSet patterns(ctx);
    patterns.add<BlockIdLowering, SmemAllocLowering, SlotLowering, TmaLoadLowering, AsyncWaitLowering,
                 FillLowering, MapLowering, GemmLowering, StoreLowering>(converter, ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

// qla.gemm to wgmma: descriptors per 64-row block of A and per 16-wide step of K, one commit group per
// gemm. Operands are K-major in shared memory, or (16-bit types, 128-byte swizzle) MN-major: a tile
// stored row-major and read as Aᵀ or as a non-transposed B, through wgmma's transpose bit.
#include "Lowering.h"

namespace qla::lowering {

namespace {

/// A wgmma shared-memory descriptor for a K-major tile starting at `addr` (a pointer into shared memory).
/// For an MN-major tile (128-byte swizzle), `mnBlockBytes` is the distance between its 64-element
/// column blocks (the leading byte offset); 8-row groups along K are 1024 bytes apart.
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value addr, int64_t rowBytes, int64_t mnBlockBytes = 0) {
  int64_t mode = rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : rowBytes == 32 ? 3 : 0;
  int64_t sbo = 8 * rowBytes;                       // 8-row core-matrix groups
  int64_t lbo = mnBlockBytes ? mnBlockBytes : 16;   // unused for swizzled K-major tiles
  Value a = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), addr);
  Value start = b.create<arith::ShRUIOp>(loc, b.create<arith::AndIOp>(loc, a, i64Const(b, loc, 0x3FFFF)),
                                         i64Const(b, loc, 4));
  uint64_t fixed = (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) | (uint64_t(mode) << 62);
  return b.create<arith::OrIOp>(loc, start, i64Const(b, loc, static_cast<int64_t>(fixed)));
}

/// One wgmma with A from registers (MLIR's nvvm.wgmma.mma_async takes A only as a descriptor): `aRegs`
/// are the four 32-bit registers of A's 64x16 block, `acc` the accumulator struct (read unless
/// `scaleD` is 0). B is a K-major descriptor, or MN-major with `transposeB` (wgmma's transpose bit).
Value wgmmaRegisterA(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> aRegs, Value descB, int64_t n,
                     bool bf16, bool scaleD, bool transposeB) {
  const int64_t d = n / 2;
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * d + 5) + ", 0;\n";
  text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + (bf16 ? "bf16.bf16" : "f16.f16");
  std::string outs, constraints;
  for (int64_t i = 0; i < d; ++i) {
    outs += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=f,";
  }
  for (int64_t i = 0; i < d; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l,r";
  text += " {" + outs + "}, {$" + std::to_string(2 * d) + ", $" + std::to_string(2 * d + 1) + ", $" +
          std::to_string(2 * d + 2) + ", $" + std::to_string(2 * d + 3) + "}, $" + std::to_string(2 * d + 4) +
          ", p, 1, 1, " + (transposeB ? "1" : "0") + ";\n}";
  SmallVector<Value> operands;
  for (int64_t i = 0; i < d; ++i)
    operands.push_back(b.create<LLVM::ExtractValueOp>(loc, acc, i));
  operands.append(aRegs.begin(), aRegs.end());
  operands.push_back(descB);
  operands.push_back(i32Const(b, loc, scaleD ? 1 : 0));
  return b
      .create<LLVM::InlineAsmOp>(loc, acc.getType(), operands, text, constraints, /*has_side_effects=*/true,
                                 /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
                                 LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

/// The four 32-bit registers of A's 64x16 block (m-block `mb`, k-step `kk`) from a 16-bit fragment
/// with the wgmma accumulator layout: they are its elements 8kk .. 8kk+7 of that m-block, in pairs.
SmallVector<Value> registerABlock(OpBuilder &b, Location loc, Value aVec, Type elt, const AccLayout &a, int64_t mb,
                                  int64_t kk) {
  SmallVector<Value> regs;
  auto pair = VectorType::get({2}, elt);
  for (int64_t r = 0; r < 4; ++r) {
    Value v = b.create<LLVM::UndefOp>(loc, pair);
    for (int64_t i = 0; i < 2; ++i) {
      Value e = b.create<LLVM::ExtractElementOp>(loc, aVec, i64Const(b, loc, mb * a.perBlock() + 8 * kk + 2 * r + i));
      v = b.create<LLVM::InsertElementOp>(loc, v, e, i64Const(b, loc, i));
    }
    regs.push_back(b.create<LLVM::BitcastOp>(loc, b.getI32Type(), v));
  }
  return regs;
}

struct GemmLowering : OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GemmOp op, OpAdaptor a, ConversionPatternRewriter &rw) const override {
    TileType at = op.getA().getType(), bt = op.getB().getType(), acct = op.getAcc().getType();
    auto acc = accLayout(acct);
    if (!acc)
      return op.emitOpError() << "needs an accumulator spread like wgmma's over all the warpgroups that run it, "
                                 "got "
                              << acct
                              << ": 8 to 256 columns and rows a multiple of 64 per warpgroup (qla-assign-layouts)";
    // A from registers: a 16-bit fragment spread like the accumulator (its rows, K columns).
    std::optional<AccLayout> regA = at.isFragment() ? accLayout(at) : std::nullopt;
    if (at.isFragment() && (!regA || regA->warpgroups != acc->warpgroups || regA->rows != acc->rows))
      return op.emitOpError() << "a register A needs the accumulator's wgmma layout (qla-assign-layouts gives it "
                                 "one, or shares A when it cannot)";
    int64_t eb = elementBytes(at.getElementType());
    auto swA = dyn_cast_or_null<SwizzleAttr>(at.getLayout()), swB = dyn_cast_or_null<SwizzleAttr>(bt.getLayout());
    if ((!swA && !regA) || !swB)
      return op.emitOpError() << "needs A and B with stored layouts (qla-assign-layouts chooses them)";
    if (regA)
      swA = SwizzleAttr::get(rw.getContext(), smemSwizzleBytes(at.getShape()[1] * eb), false); // A is not in shared memory
    // K-major: A stored [M][K] (transposed storage when the role is Aᵀ), B stored [N][K]. MN-major: the other way.
    bool mnA = swA.getTransposed() != op.getTransposeA(), mnB = swB.getTransposed() == op.getTransposeB();
    auto mnMajorOk = [&](TileType t, SwizzleAttr sw) {
      return eb == 2 && !sw.getTransposed() && sw.getBytes() == 128 && smemSwizzleBytes(t.getShape()[1] * eb) == 128;
    };
    if ((mnA && !mnMajorOk(at, swA)) || (mnB && !mnMajorOk(bt, swB)))
      return op.emitOpError() << "reads a tile MN-major (Aᵀ or B stored row-major), which needs 16-bit elements "
                                 "and rows of a multiple of 128 bytes (128-byte swizzle)";
    // Stored (physical) shapes: rows x row length; K-major rows are M or N, MN-major rows are K.
    auto stored = [](TileType t, bool transposed) {
      return std::make_pair(t.getShape()[transposed ? 1 : 0], t.getShape()[transposed ? 0 : 1]);
    };
    auto [rowsA, lenA] = stored(at, swA.getTransposed());
    auto [rowsB, lenB] = stored(bt, swB.getTransposed());
    int64_t kA = mnA ? rowsA : lenA;
    int64_t rowBytesA = lenA * eb, rowBytesB = lenB * eb;
    if (swA.getBytes() == 0 || swA.getBytes() != smemSwizzleBytes(rowBytesA) || swB.getBytes() == 0 ||
        swB.getBytes() != smemSwizzleBytes(rowBytesB))
      return op.emitOpError() << "needs A and B tiles with 32-, 64- or 128-byte swizzled rows (K x "
                              << eb << " bytes = 32, 64 or a multiple of 128)";
    int64_t blockA = smemBlockRowBytes(rowBytesA), blockB = smemBlockRowBytes(rowBytesB);
    // Byte offset of (row, k) in a column-blocked K-major tile, for k a multiple of 16.
    auto kOffset = [](int64_t rows, int64_t blockRow, int64_t row, int64_t kBytes) {
      return (kBytes / blockRow) * rows * blockRow + row * blockRow + kBytes % blockRow;
    };
    // Byte offset of (mn, k) in a row-major (MN-major) tile of `rows` K-rows, 128-byte column blocks of
    // 64 elements: mn a multiple of 64, k of 16.
    auto mnOffset = [&](int64_t rows, int64_t mn, int64_t k) { return (mn * eb / 128) * rows * 128 + k * 128; };
    int64_t n = acc->cols;
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    Type f32 = rw.getF32Type();
    auto structType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(acc->perBlock(), f32));

    // Rows of A owned by this thread's warpgroup (MN-major: whole 64-element column blocks).
    Value wg = rw.create<arith::DivUIOp>(loc, threadIdx(rw, loc), i32Const(rw, loc, 128));
    int64_t wgStride = mnA ? mnOffset(rowsA, acc->rowsPerWarpgroup(), 0) : acc->rowsPerWarpgroup() * blockA;
    Value aBase;
    if (!regA) {
      Value wgRowBytes = rw.create<arith::ExtUIOp>(
          loc, rw.getI64Type(), rw.create<arith::MulIOp>(loc, wg, i32Const(rw, loc, wgStride)));
      aBase = gepBytes(rw, loc, a.getA(), wgRowBytes);
    }

    // Per-thread vector -> one wgmma struct per 64-row block. A zero accumulator is not read at all:
    // the first wgmma scales it by 0, so no registers are zeroed (and none are shared with other gemms
    // in flight that start from the same zeros).
    auto fill = op.getAcc().getDefiningOp<FillOp>();
    auto fillValue = fill ? dyn_cast<FloatAttr>(fill.getValue()) : FloatAttr();
    bool zeroAcc = fillValue && fillValue.getValue().isZero();
    SmallVector<Value> blocks;
    for (int64_t mb = 0; mb < acc->mBlocks(); ++mb) {
      Value s = rw.create<LLVM::UndefOp>(loc, structType);
      for (int64_t j = 0; j < acc->perBlock() && !zeroAcc; ++j) {
        Value e = rw.create<LLVM::ExtractElementOp>(loc, a.getAcc(), i64Const(rw, loc, mb * acc->perBlock() + j));
        s = rw.create<LLVM::InsertValueOp>(loc, s, e, j);
      }
      blocks.push_back(s);
    }

    auto type = at.getElementType().isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    auto shape = NVVM::MMAShapeAttr::get(ctx, 64, n, 16);
    // The k-steps issued: every 16-wide slice of K, or those k_slices lists.
    SmallVector<int64_t> kSteps;
    for (int64_t kk = 0; kk < kA / 16; ++kk)
      if (!op.getKSlices() || llvm::is_contained(*op.getKSlices(), kk))
        kSteps.push_back(kk);
    // A's registers are packed before the fence: registers written between the fence and a wgmma that
    // reads them make ptxas inject a warpgroup.arrive before that wgmma (C7519), serialising them.
    SmallVector<SmallVector<Value>> aRegs;
    for (int64_t step = 0; regA && step < static_cast<int64_t>(kSteps.size()); ++step)
      for (int64_t mb = 0; mb < acc->mBlocks(); ++mb)
        aRegs.push_back(registerABlock(rw, loc, a.getA(), at.getElementType(), *regA, mb, kSteps[step]));
    rw.create<NVVM::WgmmaFenceAlignedOp>(loc);
    for (int64_t step = 0; step < static_cast<int64_t>(kSteps.size()); ++step) {
      int64_t kk = kSteps[step];
      bool first = step == 0;
      int64_t kBytes = kk * 16 * eb;
      Value descB = mnB ? wgmmaDescriptor(rw, loc, gepBytes(rw, loc, a.getB(), i64Const(rw, loc, mnOffset(rowsB, 0, kk * 16))),
                                          128, rowsB * 128)
                        : wgmmaDescriptor(rw, loc,
                                          gepBytes(rw, loc, a.getB(), i64Const(rw, loc, kOffset(rowsB, blockB, 0, kBytes))),
                                          blockB);
      for (int64_t mb = 0; mb < acc->mBlocks(); ++mb) {
        if (regA) {
          blocks[mb] = wgmmaRegisterA(rw, loc, blocks[mb], aRegs[step * acc->mBlocks() + mb], descB, n,
                                      at.getElementType().isBF16(), !(zeroAcc && first), mnB);
          continue;
        }
        Value descA =
            mnA ? wgmmaDescriptor(rw, loc, gepBytes(rw, loc, aBase, i64Const(rw, loc, mnOffset(rowsA, mb * 64, kk * 16))),
                                  128, rowsA * 128)
                : wgmmaDescriptor(rw, loc, gepBytes(rw, loc, aBase, i64Const(rw, loc, kOffset(rowsA, blockA, mb * 64, kBytes))),
                                  blockA);
        blocks[mb] = rw.create<NVVM::WgmmaMmaAsyncOp>(
            loc, structType, blocks[mb], descA, descB, shape, NVVM::WGMMATypesAttr::get(ctx, type),
            NVVM::WGMMATypesAttr::get(ctx, type), NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
            NVVM::WGMMAScaleOutAttr::get(ctx, zeroAcc && first ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one),
            NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
            NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
            NVVM::MMALayoutAttr::get(ctx, mnA ? NVVM::MMALayout::col : NVVM::MMALayout::row),
            NVVM::MMALayoutAttr::get(ctx, mnB ? NVVM::MMALayout::row : NVVM::MMALayout::col), NVVM::MMAIntOverflowAttr());
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


} // namespace

void populateGemmPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<GemmLowering>(converter, patterns.getContext());
}

} // namespace qla::lowering

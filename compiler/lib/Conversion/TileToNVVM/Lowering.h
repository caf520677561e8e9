// Internal to qla-convert-to-nvvm: how fragments are spread over threads, small IR helpers, and the
// pattern sets of the lowering (one file each).
#ifndef QLA_LIB_CONVERSION_TILETONVVM_LOWERING_H
#define QLA_LIB_CONVERSION_TILETONVVM_LOWERING_H

#include "qla/Dialect/Tile/IR/QlaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace qla::lowering {

using namespace mlir;

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
std::optional<AccLayout> accLayout(TileType t);

/// An #qla.acc_slice vector: `n` elements along tile dimension `dim`, held like the rows (along = 0)
/// or columns (along = 1) of a wgmma_acc fragment of `warpgroups`.
struct SliceLayout {
  int64_t warpgroups, along, dim, n;
  int64_t perThread() const { return along == 0 ? n / warpgroups / 64 * 2 : n / 4; }
};
std::optional<SliceLayout> sliceLayout(TileType t);

/// Any fragment's distribution: which elements a thread holds, and where they are in the tile.
struct FragLayout {
  TileType type;
  std::optional<AccLayout> acc; // else a slice, else round-robin (#qla.strided) over `threads`
  std::optional<SliceLayout> slice;
  int64_t threads = 128;
  int64_t copies = 1; // #qla.strided copies: each group of `threads` threads holds the whole fragment

  int64_t perThread() const;
  /// Tile coordinates (i32) of this thread's element e.
  SmallVector<Value> coords(OpBuilder &b, Location loc, Value tid, int64_t e) const;
  /// Whether this thread has an element e (null when every thread has it).
  Value exists(OpBuilder &b, Location loc, Value tid, int64_t e) const;
  /// Whether this thread writes its element e to memory that all threads see (global or shared tiles,
  /// shared scratch): exists, and of a fragment held in copies, only the first group's (one writer an
  /// element; null when every thread writes).
  Value writes(OpBuilder &b, Location loc, Value tid, int64_t e) const;
};
std::optional<FragLayout> fragLayout(TileType t);

inline Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
}
inline Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIntOp>(loc, b.getI64Type(), v);
}
inline Value toI64(OpBuilder &b, Location loc, Value index) {
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
}
inline Value toI32(OpBuilder &b, Location loc, Value index) {
  return b.create<arith::IndexCastOp>(loc, b.getI32Type(), index);
}
inline Value gepBytes(OpBuilder &b, Location loc, Value base, Value offsetI64) {
  return b.create<LLVM::GEPOp>(loc, base.getType(), b.getI8Type(), base, ValueRange{offsetI64});
}
/// The thread's index in the block. Inside a loop it is read afresh each iteration: a pure read would
/// let LLVM hoist every per-element address out of the loop and keep them all live across it.
Value threadIdx(OpBuilder &b, Location loc);
/// Threads that run `op`: its role's, else the block of the kernel around it (its qla.block, or its
/// qla.abi entry once the lowering has moved it there).
int64_t blockThreads(Operation *op);
inline Value zeroOf(OpBuilder &b, Location loc, Type t) {
  return b.create<arith::ConstantOp>(loc, t, b.getZeroAttr(t));
}
/// The 1024-byte-aligned start of the kernel's dynamic shared memory, plus `offset` bytes.
Value smemAddress(OpBuilder &b, Location loc, int64_t offset);
/// A barrier over the threads that run the code at `b` (the whole block, or a role's named barrier).
void blockBarrier(OpBuilder &b, Location loc);
/// The warpgroup of thread `tid` (of a kernel without roles), and a barrier of its 128 threads alone
/// (named barrier 1 + the warpgroup's index: qla.warpgroup_local kernels).
Value warpgroupIndex(OpBuilder &b, Location loc, Value tid);
void warpgroupBarrier(OpBuilder &b, Location loc, Value tid);
/// Makes generic-proxy shared-memory writes visible to the async proxy (TMA, wgmma).
void fenceSharedForAsync(OpBuilder &b, Location loc);
/// Byte offset of logical element (row, col) of a shared tile in its stored, swizzled layout.
Value sharedOffset(OpBuilder &b, Location loc, TileType tile, Value row, Value col);
/// The exclusive limit of dimension d of a copy or store: the smaller of its bound and the tensor's
/// static extent (null when neither is known; dynamic extents arrive as bounds).
Value extentLimit(OpBuilder &b, Location loc, qla::TensorType t, ValueRange bounds, int64_t d);
/// `then` under `cond`, yielding its value or zero of `type` otherwise (no value when type is null).
Value guarded(OpBuilder &b, Location loc, Value cond, Type type, function_ref<Value(OpBuilder &, Location)> then);
/// Calls `body(b, l, r, c0)` for each 16-byte piece of a [rows][pieces · vec] tile that this thread
/// handles: round-robin over `threads`, piece `r`, `c0` the row and first column inside the tile.
/// Unrolled up to `maxUnrolled` pieces a thread (all loads in flight at once), else an scf.for.
void forEachPiece(ConversionPatternRewriter &rw, Location loc, int64_t rows, int64_t pieces, int64_t vec,
                  int64_t threads, Value tid, function_ref<void(OpBuilder &, Location, Value, Value)> body,
                  int64_t maxUnrolled = 1 << 30);

/// tri_inverse's diagonal 16x16 blocks of an f32 wgmma accumulator fragment `vec` (of `type`), each
/// inverted by the warp that holds it (TriInverseOp::invertsInWarps); zero outside them.
Value invertDiagonalBlocksInWarps(OpBuilder &b, Location loc, TileType type, Value vec, Value tid);

/// tri_inverse of a whole 64x64 f32 accumulator fragment of one warpgroup (TriInverseOp::mergesInWarps):
/// each warp's diagonal 16x16 block as above, then the two merges X_lo·N·X_up on mma.sync (f16 operands,
/// f32 sums) through `scratch` (TriInverseOp::kInWarpsScratchBytes, shared memory; three block barriers).
Value invertInWarps(OpBuilder &b, Location loc, TileType type, Value vec, Value tid, Value scratch);

/// A 16-bit wgmma accumulator fragment (`tile` its type) into shared memory with stmatrix, four 8x8
/// matrices an instruction; `transposed`: the .trans form, each matrix stored with the fragment's
/// columns as rows. `address(r, c)` is where the 16 bytes starting at fragment element (r, c) go: the
/// elements (r, c .. c+7), or transposed (r .. r+7, c). False (nothing emitted) when the fragment is not
/// such an accumulator.
bool storeAccWithStmatrix(OpBuilder &b, Location loc, TileType tile, bool transposed, const FragLayout &layout,
                          Value frag, Value tid, function_ref<Value(OpBuilder &, Location, Value, Value)> address);

void populateFragmentPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateSharedPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateGemmPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateExchangePatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateMathPatterns(RewritePatternSet &patterns);

} // namespace qla::lowering

#endif

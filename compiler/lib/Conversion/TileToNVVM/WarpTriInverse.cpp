// tri_inverse with block = 16 on a wgmma accumulator fragment, inside the warps: warp w of a 64-row
// block holds rows 16w … 16w + 15, so the diagonal 16x16 block on those rows is the warp's alone. Each
// warp inverts its own with shuffles, in registers: no shared memory, no block barrier, every warp busy
// (the scratch form substitutes with one thread a column: half the warpgroup waits at a barrier).
#include "Lowering.h"

namespace qla::lowering {

namespace {

/// shfl.sync.idx over the whole warp: `v` from lane `src`.
Value shuffle(OpBuilder &b, Location loc, Value v, Value src) {
  Value all = i32Const(b, loc, -1), clamp = i32Const(b, loc, 31);
  return b.create<NVVM::ShflOp>(loc, v.getType(), all, v, src, clamp, NVVM::ShflKind::idx, UnitAttr()).getResult();
}

} // namespace

/// Lane l of warp w holds, in each 8-column group of the fragment, rows 16w + l/4 (+8) and columns
/// 2(l%4) (+1): of its own diagonal block (columns 16w …), the 8 elements x[h][q] at block row
/// l/4 + 8(q/2), block column 8h + 2(l%4) + q%2. Right-looking elimination from X = I:
///   for k = 0 … 14:  X[i][:] −= N[i][k]·X[k][:]  for the rows i > k
/// (N strictly lower; N[i][k] is zero for i <= k, so every row takes the update unmasked). Row k of X
/// is final when step k starts; its four columns of this lane come from lane 4(k%8) + l%4, and
/// N[i][k] of this lane's two rows from lane 4(l/4) + (k%8)/2. 15 steps of 6 shuffles and 8 FMAs.
/// (Rows i <= k take X[i] −= 0·X[k]: with a non-finite X[k], from a non-finite input, they turn NaN
/// where the scratch form keeps them; the chunk's later merges mix the rows anyway.)
Value invertDiagonalBlocksInWarps(OpBuilder &b, Location loc, TileType type, Value vec, Value tid) {
  AccLayout acc = *accLayout(type);
  Type f32 = b.getF32Type();
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) { return b.create<arith::CmpIOp>(loc, p, x, y).getResult(); };
  auto extract = [&](Value v, int64_t e) { return b.create<LLVM::ExtractElementOp>(loc, v, i64Const(b, loc, e)).getResult(); };
  auto select = [&](Value c, Value x, Value y) { return b.create<arith::SelectOp>(loc, c, x, y).getResult(); };
  Value zero = zeroOf(b, loc, f32), one = b.create<arith::ConstantOp>(loc, f32, b.getF32FloatAttr(1.0));

  Value wg = b.create<arith::DivUIOp>(loc, tid, c32(128));
  Value inWg = b.create<arith::RemUIOp>(loc, tid, c32(128));
  Value warp = b.create<arith::DivUIOp>(loc, inWg, c32(32));
  Value lane = b.create<arith::RemUIOp>(loc, inWg, c32(32));
  Value laneRow = b.create<arith::DivUIOp>(loc, lane, c32(4)), laneCol = b.create<arith::RemUIOp>(loc, lane, c32(4));
  const int64_t blocks = acc.cols / 16; // diagonal blocks along the tile
  Value result = vec;
  for (int64_t mb = 0; mb < acc.mBlocks(); ++mb) {
    // The warp's diagonal block d (rows and columns 16d …), one of `blocks`: its elements are picked
    // out of the fragment by a select over the candidates.
    Value firstRow = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, wg, c32(acc.rowsPerWarpgroup())),
        b.create<arith::AddIOp>(loc, c32(mb * 64), b.create<arith::MulIOp>(loc, warp, c32(16))));
    Value d = b.create<arith::DivUIOp>(loc, firstRow, c32(16));
    SmallVector<Value> isBlock;
    for (int64_t dd = 0; dd < blocks; ++dd)
      isBlock.push_back(cmp(arith::CmpIPredicate::eq, d, c32(dd)));
    auto element = [&](int64_t nb, int64_t q) { return mb * acc.perBlock() + nb * 4 + q; };
    Value n[2][4], x[2][4];
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t q = 0; q < 4; ++q) {
        Value a = extract(vec, element(h, q));
        for (int64_t dd = 1; dd < blocks; ++dd)
          a = select(isBlock[dd], extract(vec, element(2 * dd + h, q)), a);
        Value row = b.create<arith::AddIOp>(loc, laneRow, c32(8 * (q / 2)));
        Value col = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, laneCol, c32(2)), c32(8 * h + q % 2));
        n[h][q] = select(cmp(arith::CmpIPredicate::ugt, row, col), a, zero);
        x[h][q] = select(cmp(arith::CmpIPredicate::eq, row, col), one, zero);
      }
    for (int64_t k = 0; k < 15; ++k) {
      Value rowLane = b.create<arith::AddIOp>(loc, c32(4 * (k % 8)), laneCol);
      Value nLane = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, laneRow, c32(4)), c32((k % 8) / 2));
      Value xk[2][2], nik[2];
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e)
          xk[h][e] = shuffle(b, loc, x[h][2 * (k / 8) + e], rowLane);
      for (int64_t half = 0; half < 2; ++half)
        nik[half] = b.create<LLVM::FNegOp>(loc, shuffle(b, loc, n[k / 8][2 * half + k % 2], nLane));
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t q = 0; q < 4; ++q)
          x[h][q] = b.create<LLVM::FMAOp>(loc, nik[q / 2], xk[h][q % 2], x[h][q]);
    }
    // The result: X in the warp's diagonal block, zero elsewhere.
    for (int64_t nb = 0; nb < acc.cols / 8; ++nb)
      for (int64_t q = 0; q < 4; ++q)
        result = b.create<LLVM::InsertElementOp>(loc, result, select(isBlock[nb / 2], x[nb % 2][q], zero),
                                                 i64Const(b, loc, element(nb, q)));
  }
  return result;
}

} // namespace qla::lowering

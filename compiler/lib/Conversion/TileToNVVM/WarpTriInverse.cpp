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

/// Lane l of warp w holds, in each 8-column group of the fragment, rows 16w + l/4 (+8) and columns
/// 2(l%4) (+1): of its own diagonal block (columns 16w …), the 8 elements x[h][q] at block row
/// l/4 + 8(q/2), block column 8h + 2(l%4) + q%2. Right-looking elimination from X = I:
///   for k = 0 … 14:  X[i][:] −= N[i][k]·X[k][:]  for the rows i > k
/// (N strictly lower; N[i][k] is zero for i <= k, so every row takes the update unmasked). Row k of X
/// is final when step k starts; its four columns of this lane come from lane 4(k%8) + l%4, and
/// N[i][k] of this lane's two rows from lane 4(l/4) + (k%8)/2. 15 steps of 6 shuffles and 8 FMAs.
/// (Rows i <= k take X[i] −= 0·X[k]: with a non-finite X[k], from a non-finite input, they turn NaN
/// where the scratch form keeps them; the chunk's later merges mix the rows anyway.)
/// `element(h, q)` makes the lane's elements of the warp's diagonal block (any values on and above its
/// diagonal); the inverse's go to `x`.
void invertWarpDiagonalBlock(OpBuilder &b, Location loc, Value laneRow, Value laneCol,
                             function_ref<Value(int64_t, int64_t)> element, Value x[2][4]) {
  Type f32 = b.getF32Type();
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) { return b.create<arith::CmpIOp>(loc, p, l, r).getResult(); };
  auto select = [&](Value c, Value t, Value f) { return b.create<arith::SelectOp>(loc, c, t, f).getResult(); };
  Value zero = zeroOf(b, loc, f32), one = b.create<arith::ConstantOp>(loc, f32, b.getF32FloatAttr(1.0));
  Value n[2][4];
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 4; ++q) {
      Value a = element(h, q);
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
}

} // namespace

Value invertDiagonalBlocksInWarps(OpBuilder &b, Location loc, TileType type, Value vec, Value tid) {
  AccLayout acc = *accLayout(type);
  Type f32 = b.getF32Type();
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) { return b.create<arith::CmpIOp>(loc, p, x, y).getResult(); };
  auto extract = [&](Value v, int64_t e) { return b.create<LLVM::ExtractElementOp>(loc, v, i64Const(b, loc, e)).getResult(); };
  auto select = [&](Value c, Value x, Value y) { return b.create<arith::SelectOp>(loc, c, x, y).getResult(); };
  Value zero = zeroOf(b, loc, f32);

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
    Value x[2][4];
    invertWarpDiagonalBlock(b, loc, laneRow, laneCol, [&](int64_t h, int64_t q) {
      Value a = extract(vec, element(h, q));
      for (int64_t dd = 1; dd < blocks; ++dd)
        a = select(isBlock[dd], extract(vec, element(2 * dd + h, q)), a);
      return a;
    }, x);
    // The result: X in the warp's diagonal block, zero elsewhere.
    for (int64_t nb = 0; nb < acc.cols / 8; ++nb)
      for (int64_t q = 0; q < 4; ++q)
        result = b.create<LLVM::InsertElementOp>(loc, result, select(isBlock[nb / 2], x[nb % 2][q], zero),
                                                 i64Const(b, loc, element(nb, q)));
  }
  return result;
}

namespace {

/// Halves a row of the transposed scratch squares of invertInWarps: 64 and 8 of padding, so that the
/// 32-bit operand loads of a warp (rows l/4 + …, columns 2(l%4) + …) fall in 32 different banks.
constexpr int64_t kScratchRow = 72;

/// mma.sync m16n8k16, f16 operands (A row-major, four pairs; B column-major, two pairs), f32 `c`.
std::array<Value, 4> mmaF16(OpBuilder &b, Location loc, ArrayRef<Value> a, ArrayRef<Value> bOp,
                            const std::array<Value, 4> &c) {
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = b.create<NVVM::MmaOp>(loc, resultType, a, bOp, ValueRange(c), ArrayRef<int64_t>{16, 8, 16},
                                  std::nullopt, std::nullopt,
                                  std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16, NVVM::MMATypes::f16},
                                  std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  std::array<Value, 4> out;
  for (int64_t i = 0; i < 4; ++i)
    out[i] = b.create<LLVM::ExtractValueOp>(loc, d, i);
  return out;
}

} // namespace

Value invertInWarps(OpBuilder &b, Location loc, TileType type, Value vec, Value tid, Value scratch) {
  Type f32 = b.getF32Type(), f16 = b.getF16Type();
  auto pairType = VectorType::get({2}, f16);
  auto c32 = [&](int64_t v) { return i32Const(b, loc, v); };
  auto add = [&](Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y).getResult(); };
  auto mul = [&](Value x, int64_t y) { return b.create<arith::MulIOp>(loc, x, c32(y)).getResult(); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) { return b.create<arith::CmpIOp>(loc, p, x, y).getResult(); };
  auto select = [&](Value c, Value x, Value y) { return b.create<arith::SelectOp>(loc, c, x, y).getResult(); };
  auto extract = [&](int64_t e) { return b.create<LLVM::ExtractElementOp>(loc, vec, i64Const(b, loc, e)).getResult(); };
  auto neg = [&](Value v) { return b.create<LLVM::FNegOp>(loc, v).getResult(); };
  Value zero = zeroOf(b, loc, f32);
  // The scratch squares, f16, transposed: XT[c][r] = X[r][c] and NT[c][r] = N[r][c] at half c·72 + r.
  Value xt = scratch, nt = gepBytes(b, loc, scratch, i64Const(b, loc, 64 * kScratchRow * 2));
  auto at = [&](Value base, OpBuilder &o, Location l, Value c, Value r) {
    Value half = o.create<arith::AddIOp>(l, o.create<arith::MulIOp>(l, c, i32Const(o, l, kScratchRow)), r);
    return gepBytes(o, l, base, o.create<arith::MulIOp>(l, o.create<arith::ExtUIOp>(l, o.getI64Type(), half),
                                                        i64Const(o, l, 2)));
  };
  auto store = [&](OpBuilder &o, Location l, Value base, Value c, Value r, Value v) {
    o.create<LLVM::StoreOp>(l, o.create<arith::TruncFOp>(l, f16, v), at(base, o, l, c, r));
  };
  // A B-operand register: the pair (k, k+1) of column n, i.e. the f16 pair at T[n][k] of a transposed square.
  auto pairAt = [&](Value base, Value n, Value k) {
    return b.create<LLVM::LoadOp>(loc, pairType, at(base, b, loc, n, k), /*alignment=*/4).getResult();
  };
  // An A-operand register: two f32 of a row, as an f16 pair.
  auto pack = [&](Value lo, Value hi) {
    Value v = b.create<LLVM::UndefOp>(loc, pairType);
    v = b.create<LLVM::InsertElementOp>(loc, v, b.create<arith::TruncFOp>(loc, f16, lo), i64Const(b, loc, 0));
    return b.create<LLVM::InsertElementOp>(loc, v, b.create<arith::TruncFOp>(loc, f16, hi), i64Const(b, loc, 1))
        .getResult();
  };
  // A 16x16 block in the accumulator layout (two 8-column groups h, elements q) as mma's A registers.
  auto aRegs = [&](const std::array<Value, 4> &left, const std::array<Value, 4> &right) {
    return SmallVector<Value>{pack(left[0], left[1]), pack(left[2], left[3]), pack(right[0], right[1]),
                              pack(right[2], right[3])};
  };
  std::array<Value, 4> zeros = {zero, zero, zero, zero};

  Value inWg = b.create<arith::RemUIOp>(loc, tid, c32(128));
  Value warp = b.create<arith::DivUIOp>(loc, inWg, c32(32)), lane = b.create<arith::RemUIOp>(loc, inWg, c32(32));
  Value g = b.create<arith::DivUIOp>(loc, lane, c32(4)), t = b.create<arith::RemUIOp>(loc, lane, c32(4));
  Value t2 = mul(t, 2), rows0 = mul(warp, 16);
  auto rowOf = [&](int64_t q) { return add(rows0, add(g, c32(8 * (q / 2)))); };        // fragment row of q
  auto colOf = [&](Value first, int64_t q) { return add(first, add(t2, c32(q % 2))); }; // column in a group
  SmallVector<Value> isBlock; // the warp's rows are diagonal block d
  for (int64_t d = 0; d < 4; ++d)
    isBlock.push_back(cmp(arith::CmpIPredicate::eq, warp, c32(d)));

  // 1. The warp's diagonal block D_w by elimination in registers; then (once the scratch's previous
  // readers are done) D_w, zeros right of it, and N's rows of the warp (the columns 0 … 47 that the
  // merges read) into the transposed squares. (Of the zeros only warp 0's are read: X[0:16, 16:32].)
  Value x[2][4];
  invertWarpDiagonalBlock(b, loc, g, t, [&](int64_t h, int64_t q) {
    Value a = extract(h * 4 + q);
    for (int64_t d = 1; d < 4; ++d)
      a = select(isBlock[d], extract((2 * d + h) * 4 + q), a);
    return a;
  }, x);
  blockBarrier(b, loc);
  Value rightOfDiagonal = mul(b.create<arith::AndIOp>(loc, add(warp, c32(1)), c32(3)), 16);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 4; ++q) {
      store(b, loc, xt, colOf(add(rows0, c32(8 * h)), q), rowOf(q), x[h][q]);
      store(b, loc, xt, colOf(add(rightOfDiagonal, c32(8 * h)), q), rowOf(q), zero);
    }
  for (int64_t nb = 0; nb < 6; ++nb)
    for (int64_t q = 0; q < 4; ++q)
      store(b, loc, nt, colOf(c32(8 * nb), q), rowOf(q), extract(nb * 4 + q));
  blockBarrier(b, loc);

  // 2. Merge 16 -> 32: the odd warps w make X[rows w, columns w − 1] = −D_w·N[rows w, columns w − 1]·D_(w−1).
  // Every warp runs it (pb: the column block, w − 1 or, for even warps, w: a result they drop).
  Value odd = cmp(arith::CmpIPredicate::eq, b.create<arith::AndIOp>(loc, warp, c32(1)), c32(1));
  Value pb16 = mul(b.create<arith::AndIOp>(loc, warp, c32(2)), 16); // first column of block pb
  Value k0 = add(rows0, t2);                                            // the warp's rows as K, this lane's pair
  SmallVector<Value> dRegs = aRegs({x[0][0], x[0][1], x[0][2], x[0][3]}, {x[1][0], x[1][1], x[1][2], x[1][3]});
  std::array<Value, 4> u[2], level1[2];
  for (int64_t j = 0; j < 2; ++j) { // U = D_w·N[rows w, columns pb]: B from NT
    Value n = add(pb16, add(c32(8 * j), g));
    u[j] = mmaF16(b, loc, dRegs, {pairAt(nt, n, k0), pairAt(nt, n, add(k0, c32(8)))}, zeros);
  }
  SmallVector<Value> uRegs = aRegs(u[0], u[1]);
  Value kPb = add(pb16, t2);
  for (int64_t j = 0; j < 2; ++j) { // U·D_pb: B from XT
    Value n = add(pb16, add(c32(8 * j), g));
    level1[j] = mmaF16(b, loc, uRegs, {pairAt(xt, n, kPb), pairAt(xt, n, add(kPb, c32(8)))}, zeros);
    for (Value &v : level1[j])
      v = neg(v);
  }
  // Warp 1's block is part of X[0:32, 0:32], which the next merge reads from XT (warp 3's stays in
  // registers: it is that merge's A).
  guarded(b, loc, odd, Type(), [&](OpBuilder &o, Location l) -> Value {
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t q = 0; q < 4; ++q)
        store(o, l, xt, colOf(add(pb16, c32(8 * j)), q), rowOf(q), level1[j][q]);
    return {};
  });
  blockBarrier(b, loc);

  // The warp's rows of X so far: D_w at column groups 2w, 2w + 1; the merge's block at 2(w − 1), 2w − 1
  // for odd w; zero elsewhere.
  auto rowValue = [&](int64_t nb, int64_t q) {
    Value v = select(isBlock[nb / 2], x[nb % 2][q], zero);
    if (nb / 2 == 0 || nb / 2 == 2) // the column blocks a merge writes (w − 1 for w = 1, 3)
      v = select(isBlock[nb / 2 + 1], level1[nb % 2][q], v);
    return v;
  };
  // 3. Merge 32 -> 64: warps 2 and 3 make X[rows w, 0:32] = −X[rows w, 32:64]·N[32:64, 0:32]·X[0:32, 0:32]
  // (warps 0 and 1 run it too, on zeros, and drop it).
  std::array<Value, 4> u2[4], level2[4];
  for (int64_t j = 0; j < 4; ++j) {
    u2[j] = zeros;
    Value n = add(c32(8 * j), g);
    for (int64_t ks = 0; ks < 2; ++ks) {
      std::array<Value, 4> left, right;
      for (int64_t q = 0; q < 4; ++q) {
        left[q] = rowValue(4 + 2 * ks, q);
        right[q] = rowValue(5 + 2 * ks, q);
      }
      Value k = add(c32(32 + 16 * ks), t2);
      u2[j] = mmaF16(b, loc, aRegs(left, right), {pairAt(nt, n, k), pairAt(nt, n, add(k, c32(8)))}, u2[j]);
    }
  }
  for (int64_t j = 0; j < 4; ++j) {
    level2[j] = zeros;
    Value n = add(c32(8 * j), g);
    for (int64_t ks = 0; ks < 2; ++ks) {
      Value k = add(c32(16 * ks), t2);
      level2[j] = mmaF16(b, loc, aRegs(u2[2 * ks], u2[2 * ks + 1]), {pairAt(xt, n, k), pairAt(xt, n, add(k, c32(8)))},
                         level2[j]);
    }
  }
  Value lower = cmp(arith::CmpIPredicate::uge, warp, c32(2));
  Value result = vec;
  for (int64_t nb = 0; nb < 8; ++nb)
    for (int64_t q = 0; q < 4; ++q) {
      Value v = rowValue(nb, q);
      if (nb < 4)
        v = select(lower, neg(level2[nb][q]), v);
      result = b.create<LLVM::InsertElementOp>(loc, result, v, i64Const(b, loc, nb * 4 + q));
    }
  return result;
}

} // namespace qla::lowering

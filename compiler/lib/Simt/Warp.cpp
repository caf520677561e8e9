// SIMT simulator: Warp- and warpgroup-wide ops: shuffles, mma.sync, wgmma (both forms), stmatrix.
#include "Simulator.h"

namespace qla::simt::detail {

/// mma.sync m16n8k16, row-major A and column-major B of f16, f32 C and D: each warp's 32 lanes
/// together (PTX ISA's fragment layouts; the lower half of an f16x2 register is the lower index).
void Simulator::runMma(NVVM::MmaOp op, const std::vector<char> &active) {
  auto shape = op.getShape();
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 || op.getOperandA().size() != 4 ||
      op.getOperandB().size() != 2 || op.getOperandC().size() != 4 ||
      !laneType(op.getOperandA()[0].getType(), 0).isF16() || !op.getOperandC()[0].getType().isF32())
    fail(op, "only mma.sync m16n8k16 with f16 A, B (vector<2xf16>) and f32 C is supported");
  PerThread out(threads_, Bits(4, 0));
  for (int64_t warp = 0; warp < threads_ / 32; ++warp) {
    bool any = false;
    for (int64_t l = 0; l < 32; ++l)
      any |= active[warp * 32 + l];
    if (!any)
      continue;
    double a[16][16], b[16][8], c[16][8];
    Type f16 = Float16Type::get(op.getContext());
    for (int64_t l = 0; l < 32; ++l) {
      int64_t t = warp * 32 + l, g = l / 4, tig = l % 4;
      if (!active[t])
        fail(op, "mma.sync with lane " + std::to_string(l) + " of warp " + std::to_string(warp) + " inactive");
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t h = 0; h < 2; ++h)
          a[g + 8 * (r % 2)][2 * tig + h + 8 * (r / 2)] = toDouble(f16, get(op, op.getOperandA()[r])[t][h]);
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t h = 0; h < 2; ++h)
          b[2 * tig + h + 8 * r][g] = toDouble(f16, get(op, op.getOperandB()[r])[t][h]);
      for (int64_t r = 0; r < 4; ++r)
        c[g + 8 * (r / 2)][2 * tig + r % 2] = asFloat(get(op, op.getOperandC()[r])[t][0]);
    }
    for (int64_t l = 0; l < 32; ++l) {
      int64_t g = l / 4, tig = l % 4;
      for (int64_t r = 0; r < 4; ++r) {
        int64_t row = g + 8 * (r / 2), col = 2 * tig + r % 2;
        double d = c[row][col];
        for (int64_t k = 0; k < 16; ++k)
          d += a[row][k] * b[k][col];
        out[warp * 32 + l][r] = floatBits(static_cast<float>(d));
      }
    }
  }
  set(op.getResult(), std::move(out));
}

/// The warpgroups of 128 threads that run a warpgroup-wide op: all their threads active, or none.
std::vector<int64_t> Simulator::warpgroups(Operation *op, const std::vector<char> &active) {
  std::vector<int64_t> out;
  for (int64_t wg = 0; wg < threads_ / 128; ++wg) {
    int64_t issued = 0;
    for (int64_t t = wg * 128; t < wg * 128 + 128; ++t)
      issued += active[t];
    if (issued && issued != 128)
      fail(op, "a warpgroup-wide op with only part of warpgroup " + std::to_string(wg) + " active");
    if (issued)
      out.push_back(wg);
  }
  return out;
}

/// A wgmma operand (`rows` of M or N, 16 of K) from shared memory through its descriptor, with the
/// 128-byte swizzle: every address's 16-byte chunk (bits 4-6) XORed with its bits 7-9. K-major: row r
/// at start + (r / 8)·SBO + (r % 8)·128, its K elements from there. MN-major: K row k at
/// start + (k / 8)·SBO + (k % 8)·128, element r at 2r there (+ LBO for each further 64 of them).
std::vector<double> Simulator::wgmmaOperand(Operation *op, uint64_t desc, int64_t rows, bool mnMajor, Type elt, int64_t t) {
  if ((desc >> 62) != 1)
    fail(op, "wgmma descriptor without the 128-byte swizzle");
  uint64_t start = (desc & 0x3FFF) << 4, lbo = ((desc >> 16) & 0x3FFF) << 4, sbo = ((desc >> 32) & 0x3FFF) << 4;
  int64_t bytes = scalarBits(elt) / 8, perRow = 128 / bytes;
  std::vector<double> m(rows * 16);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < 16; ++k) {
      uint64_t logical = mnMajor ? start + (k / 8) * sbo + (k % 8) * 128 + (r / perRow) * lbo + (r % perRow) * bytes
                                 : start + (r / 8) * sbo + (r % 8) * 128 + k * bytes;
      uint64_t physical = logical ^ (((logical >> 7) & 7) << 4), bits = 0;
      std::memcpy(&bits, memory(op, LLVM::LLVMPointerType::get(op->getContext(), 3), physical, bytes, t, false), bytes);
      m[r * 16 + k] = toDouble(elt, bits);
    }
  return m;
}

/// D = A·B (+ C) for one warpgroup, m64nNk16, into the wgmma accumulator fragment (warp w: rows
/// 16w + l/4 (+8); n-group j: columns 8j + 2(l%4) (+1)).
void Simulator::wgmmaProduct(int64_t wg, int64_t n, const std::vector<double> &a, const std::vector<double> &b,
                  const PerThread *acc, PerThread &out) {
  for (int64_t t = wg * 128; t < wg * 128 + 128; ++t) {
    int64_t w = (t % 128) / 32, l = t % 32;
    out[t].assign(n / 2, 0);
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t q = 0; q < 4; ++q) {
        int64_t row = 16 * w + l / 4 + 8 * (q / 2), col = 8 * j + 2 * (l % 4) + q % 2, e = 4 * j + q;
        double d = acc ? asFloat((*acc)[t][e]) : 0.0;
        for (int64_t k = 0; k < 16; ++k)
          d += a[row * 16 + k] * b[col * 16 + k];
        out[t][e] = floatBits(static_cast<float>(d));
      }
  }
}

/// wgmma.mma_async m64nNk16 (nvvm op): A and B from shared memory (bf16 or f16, either major-ness),
/// f32 accumulators.
void Simulator::runWgmma(NVVM::WgmmaMmaAsyncOp op, const std::vector<char> &active) {
  auto shape = op.getShape();
  int64_t n = shape.getN();
  auto isHalf = [](NVVM::WGMMATypes t) { return t == NVVM::WGMMATypes::bf16 || t == NVVM::WGMMATypes::f16; };
  if (shape.getM() != 64 || shape.getK() != 16 || !isHalf(op.getTypeA()) || op.getTypeA() != op.getTypeB() ||
      op.getTypeD() != NVVM::WGMMATypes::f32 || op.getScaleA() != NVVM::WGMMAScaleIn::one ||
      op.getScaleB() != NVVM::WGMMAScaleIn::one)
    fail(op, "only m64nNk16 wgmma of bf16/f16 operands with f32 accumulators is supported");
  Type elt = op.getTypeA() == NVVM::WGMMATypes::bf16 ? Type(BFloat16Type::get(op.getContext()))
                                                       : Type(Float16Type::get(op.getContext()));
  bool accumulate = op.getScaleD() == NVVM::WGMMAScaleOut::one;
  const PerThread &descA = get(op, op.getDescriptorA()), &descB = get(op, op.getDescriptorB());
  const PerThread &acc = get(op, op.getInouts());
  PerThread out(threads_);
  for (int64_t wg : warpgroups(op, active)) {
    int64_t first = wg * 128;
    std::vector<double> a = wgmmaOperand(op, descA[first][0], 64, op.getLayoutA() == NVVM::MMALayout::col, elt, first);
    std::vector<double> b = wgmmaOperand(op, descB[first][0], n, op.getLayoutB() == NVVM::MMALayout::row, elt, first);
    wgmmaProduct(wg, n, a, b, accumulate ? &acc : nullptr, out);
  }
  set(op.getResult(), std::move(out));
}

/// The register-A wgmma of the lowering's inline assembly: "{accumulators}, {a0..a3}, descB, p, 1, 1,
/// tnspB" with p = (scale-d operand != 0); A's four f16x2/bf16x2 registers a thread hold its warp's rows
/// 16w + l/4 (+8), columns 2(l%4) (+1) (+8), as mma.sync's A.
bool Simulator::runWgmmaAsm(LLVM::InlineAsmOp op, const std::vector<char> &active) {
  static const std::regex form(R"(setp\.ne\.b32 p, \$(\d+), 0;\s*wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(bf16|f16)\.(bf16|f16) \{[^}]*\}, \{\$(\d+), \$(\d+), \$(\d+), \$(\d+)\}, \$(\d+), p, 1, 1, ([01]);)");
  std::smatch m;
  std::string text = op.getAsmString().str();
  if (!std::regex_search(text, m, form))
    return false;
  int64_t n = std::stoi(m[2]), outs = n / 2;
  Type elt = m[3] == "bf16" ? Type(BFloat16Type::get(op.getContext())) : Type(Float16Type::get(op.getContext()));
  auto operand = [&](int64_t dollar) -> const PerThread & { return get(op, op.getOperands()[dollar - outs]); };
  PerThread acc(threads_, Bits(outs, 0)), out(threads_);
  for (int64_t i = 0; i < outs; ++i) { // the tied accumulator inputs, operands 0 .. outs - 1
    const PerThread &v = get(op, op.getOperands()[i]);
    for (int64_t t = 0; t < threads_; ++t)
      if (active[t])
        acc[t][i] = v[t][0];
  }
  for (int64_t wg : warpgroups(op, active)) {
    int64_t first = wg * 128;
    std::vector<double> a(64 * 16);
    for (int64_t t = first; t < first + 128; ++t) {
      int64_t w = (t % 128) / 32, l = t % 32;
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t h = 0; h < 2; ++h)
          a[(16 * w + l / 4 + 8 * (r % 2)) * 16 + 2 * (l % 4) + h + 8 * (r / 2)] =
              toDouble(elt, (operand(std::stoi(m[5 + r]))[t][0] >> (16 * h)) & 0xFFFF);
    }
    std::vector<double> b = wgmmaOperand(op, operand(std::stoi(m[9]))[first][0], n, m[10] == "1", elt, first);
    wgmmaProduct(wg, n, a, b, operand(std::stoi(m[1]))[first][0] ? &acc : nullptr, out);
  }
  set(op.getResult(0), std::move(out));
  return true;
}

/// stmatrix m8n8 b16 (.x1/.x2/.x4, .trans for the col layout), per warp: lane 8i + r gives the address
/// of row r of matrix i; register i of lane l holds that matrix's (l/4, 2(l%4) .. +1). Transposed, the
/// row at lane 8i + r's address is column r of the fragment.
void Simulator::runStmatrix(NVVM::StMatrixOp op, const std::vector<char> &active) {
  auto shape = op.getShape();
  if (shape.getM() != 8 || shape.getN() != 8 || op.getEltType() != NVVM::LdStMatrixEltType::B16)
    fail(op, "only stmatrix m8n8 of b16 is supported");
  bool trans = op.getLayout() == NVVM::MMALayout::col;
  int64_t count = op.getSources().size();
  const PerThread &ptr = get(op, op.getPtr());
  for (int64_t warp = 0; warp < threads_ / 32; ++warp) {
    int64_t issued = 0;
    for (int64_t l = 0; l < 32; ++l)
      issued += active[warp * 32 + l];
    if (!issued)
      continue;
    if (issued != 32)
      fail(op, "stmatrix with part of warp " + std::to_string(warp) + " inactive");
    for (int64_t i = 0; i < count; ++i) {
      const PerThread &reg = get(op, op.getSources()[i]);
      for (int64_t r = 0; r < 8; ++r) {
        int64_t t = warp * 32 + 8 * i + r;
        uint8_t *row = memory(op, op.getPtr().getType(), ptr[t][0], 16, t, true);
        for (int64_t c = 0; c < 8; ++c) {
          // The fragment's element (row, col) of this matrix: lane 4·row + col/2, half col % 2.
          int64_t fr = trans ? c : r, fc = trans ? r : c;
          uint16_t h = static_cast<uint16_t>(reg[warp * 32 + 4 * fr + fc / 2][0] >> (16 * (fc % 2)));
          std::memcpy(row + 2 * c, &h, 2);
        }
      }
    }
  }
}

void Simulator::runShuffle(NVVM::ShflOp op, const std::vector<char> &active) {
  if (op.getReturnValueAndIsValid())
    fail(op, "shfl.sync with a validity result is not supported");
  const PerThread &value = get(op, op.getVal()), &offset = get(op, op.getOffset()), &clamp = get(op, op.getMaskAndClamp());
  PerThread out(threads_);
  for (int64_t t = 0; t < threads_; ++t) {
    if (!active[t])
      continue;
    int64_t lane = t % 32, b = offset[t][0] & 31, c = clamp[t][0] & 31, seg = (clamp[t][0] >> 8) & 31;
    int64_t minLane = lane & seg, maxLane = minLane | (c & ~seg), j = lane;
    bool valid = true;
    switch (op.getKind()) {
    case NVVM::ShflKind::idx:
      j = minLane | (b & ~seg);
      valid = j <= maxLane;
      break;
    case NVVM::ShflKind::bfly:
      j = lane ^ b;
      valid = j <= maxLane;
      break;
    case NVVM::ShflKind::down:
      j = lane + b;
      valid = j <= maxLane;
      break;
    case NVVM::ShflKind::up:
      j = lane - b;
      valid = j >= minLane;
      break;
    }
    int64_t src = valid ? t - lane + j : t;
    if (!active[src])
      fail(op, "thread " + std::to_string(t) + " reads inactive thread " + std::to_string(src));
    out[t] = value[src];
  }
  set(op.getResult(), std::move(out));
}

} // namespace qla::simt::detail

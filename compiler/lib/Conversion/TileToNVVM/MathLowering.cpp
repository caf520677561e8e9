// math ops in fragment bodies to NVPTX's approximate special functions (ex2, lg2, rsqrt).
#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace qla::lowering {

namespace {

constexpr double kLog2E = 1.4426950408889634, kLn2 = 0.6931471805599453;

Value fconst(OpBuilder &b, Location loc, Type t, double v) {
  return b.create<arith::ConstantOp>(loc, t, b.getFloatAttr(t, v));
}

Value f32(OpBuilder &b, Location loc, Value x) {
  return x.getType().isF32() ? x : b.create<arith::ExtFOp>(loc, b.getF32Type(), x).getResult();
}
Value back(OpBuilder &b, Location loc, Value x, Type t) {
  return t.isF32() ? x : b.create<arith::TruncFOp>(loc, t, x).getResult();
}

Value exp2(OpBuilder &b, Location loc, Value x) {
  auto fm = LLVM::FastmathFlagsAttr::get(b.getContext(), LLVM::FastmathFlags::afn);
  return b.create<LLVM::Exp2Op>(loc, x.getType(), x, fm);
}
Value intrinsic(OpBuilder &b, Location loc, StringRef name, Value x) {
  return b.create<LLVM::CallIntrinsicOp>(loc, x.getType(), b.getStringAttr(name), ValueRange{x}).getResult(0);
}

template <typename MathOp>
struct SpecialFunction : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type t = op.getType();
    if (!isa<FloatType>(t))
      return failure();
    Value x = f32(rw, loc, op->getOperand(0)), r;
    Type f = rw.getF32Type();
    if constexpr (std::is_same_v<MathOp, math::ExpOp>)
      r = exp2(rw, loc, rw.create<arith::MulFOp>(loc, x, fconst(rw, loc, f, kLog2E)));
    else if constexpr (std::is_same_v<MathOp, math::Exp2Op>)
      r = exp2(rw, loc, x);
    else if constexpr (std::is_same_v<MathOp, math::LogOp>)
      r = rw.create<arith::MulFOp>(loc, intrinsic(rw, loc, "llvm.nvvm.lg2.approx.f", x), fconst(rw, loc, f, kLn2));
    else if constexpr (std::is_same_v<MathOp, math::Log1pOp>)
      r = rw.create<arith::MulFOp>(
          loc, intrinsic(rw, loc, "llvm.nvvm.lg2.approx.f", rw.create<arith::AddFOp>(loc, x, fconst(rw, loc, f, 1.0))),
          fconst(rw, loc, f, kLn2));
    else if constexpr (std::is_same_v<MathOp, math::SqrtOp>)
      r = rw.create<LLVM::SqrtOp>(loc, x);
    else
      r = intrinsic(rw, loc, "llvm.nvvm.rsqrt.approx.f", x);
    rw.replaceOp(op, back(rw, loc, r, t));
    return success();
  }
};

} // namespace

void populateMathPatterns(RewritePatternSet &patterns) {
  patterns.add<SpecialFunction<math::ExpOp>, SpecialFunction<math::Exp2Op>, SpecialFunction<math::LogOp>,
               SpecialFunction<math::Log1pOp>, SpecialFunction<math::SqrtOp>, SpecialFunction<math::RsqrtOp>>(
      patterns.getContext());
}

} // namespace qla::lowering

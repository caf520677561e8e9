// Scalar arithmetic inside DSL map bodies: each operator builds one arith/math op.
#include "KernelImpl.h"
#include "qla/runtime/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace qla::dsl {

namespace {
enum Op { Add, Sub, Mul, Div, Lt, Le, Gt, Ge, Eq, And, Max, Min, Neg, Exp, Exp2, Log, Log1p, Sqrt, Rsqrt };
} // namespace

Scalar::Scalar(double constant) : constant_(constant) {}

/// The scalar as an SSA value; constants take the type of `typeLike` (f32 when it is null).
void *Kernel::scalarValue(const Scalar &s, void *typeLike) {
  if (s.value_)
    return s.value_;
  Value like = val(typeLike);
  Type t = like ? like.getType() : Type(impl_->builder.getF32Type());
  auto &b = impl_->builder;
  Location l = b.getUnknownLoc();
  if (t.isIndex())
    return ptr(b.create<arith::ConstantIndexOp>(l, static_cast<int64_t>(s.constant_)));
  if (auto it = dyn_cast<IntegerType>(t))
    return ptr(b.create<arith::ConstantIntOp>(l, t, static_cast<int64_t>(s.constant_)));
  return ptr(b.create<arith::ConstantOp>(l, t, b.getFloatAttr(t, s.constant_)));
}

static Kernel *kernelOf(const Scalar &a, const Scalar &b, Kernel *ka, Kernel *kb) {
  Kernel *k = ka ? ka : kb;
  if (!k)
    throw Error("scalar expression of constants only: use plain C++ arithmetic");
  return k;
}

Scalar scalarBinary(const Scalar &a, const Scalar &b, int op) {
  Kernel *k = kernelOf(a, b, a.kernel_, b.kernel_);
  Value x = val(k->scalarValue(a, b.value_)), y = val(k->scalarValue(b, a.value_));
  if (x.getType() != y.getType())
    throw Error(fmt::format("kernel '{}': scalar operands of different types", k->name()));
  auto &bld = k->impl_->builder;
  Location l = bld.getUnknownLoc();
  bool isFloat = isa<FloatType>(x.getType());
  Value r;
  auto cmp = [&](arith::CmpFPredicate fp, arith::CmpIPredicate ip) -> Value {
    if (isFloat)
      return bld.create<arith::CmpFOp>(l, fp, x, y);
    return bld.create<arith::CmpIOp>(l, ip, x, y);
  };
  switch (op) {
  case Add: r = isFloat ? Value(bld.create<arith::AddFOp>(l, x, y)) : Value(bld.create<arith::AddIOp>(l, x, y)); break;
  case Sub: r = isFloat ? Value(bld.create<arith::SubFOp>(l, x, y)) : Value(bld.create<arith::SubIOp>(l, x, y)); break;
  case Mul: r = isFloat ? Value(bld.create<arith::MulFOp>(l, x, y)) : Value(bld.create<arith::MulIOp>(l, x, y)); break;
  case Div: r = isFloat ? Value(bld.create<arith::DivFOp>(l, x, y)) : Value(bld.create<arith::DivSIOp>(l, x, y)); break;
  case Lt: r = cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt); break;
  case Le: r = cmp(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle); break;
  case Gt: r = cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt); break;
  case Ge: r = cmp(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge); break;
  case Eq: r = cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq); break;
  case And: r = bld.create<arith::AndIOp>(l, x, y); break;
  case Max: r = isFloat ? Value(bld.create<arith::MaximumFOp>(l, x, y)) : Value(bld.create<arith::MaxSIOp>(l, x, y)); break;
  default: r = isFloat ? Value(bld.create<arith::MinimumFOp>(l, x, y)) : Value(bld.create<arith::MinSIOp>(l, x, y)); break;
  }
  return Scalar(k, ptr(r));
}

Scalar scalarUnary(const Scalar &a, int op) {
  if (!a.kernel_)
    throw Error("scalar function of a constant: use plain C++ arithmetic");
  Kernel *k = a.kernel_;
  auto &b = k->impl_->builder;
  Location l = b.getUnknownLoc();
  Value x = val(a.value_);
  if (!isa<FloatType>(x.getType()))
    throw Error(fmt::format("kernel '{}': exp, log, sqrt and negation take floating-point scalars", k->name()));
  Value r;
  switch (op) {
  case Neg: r = b.create<arith::NegFOp>(l, x); break;
  case Exp: r = b.create<math::ExpOp>(l, x); break;
  case Exp2: r = b.create<math::Exp2Op>(l, x); break;
  case Log: r = b.create<math::LogOp>(l, x); break;
  case Log1p: r = b.create<math::Log1pOp>(l, x); break;
  case Sqrt: r = b.create<math::SqrtOp>(l, x); break;
  default: r = b.create<math::RsqrtOp>(l, x); break;
  }
  return Scalar(k, ptr(r));
}

Scalar operator+(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Add); }
Scalar operator-(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Sub); }
Scalar operator*(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Mul); }
Scalar operator/(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Div); }
Scalar operator<(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Lt); }
Scalar operator<=(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Le); }
Scalar operator>(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Gt); }
Scalar operator>=(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Ge); }
Scalar operator==(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Eq); }
Scalar operator&&(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, And); }
Scalar max(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Max); }
Scalar min(const Scalar &a, const Scalar &b) { return scalarBinary(a, b, Min); }
Scalar operator-(const Scalar &a) { return scalarUnary(a, Neg); }
Scalar exp(const Scalar &x) { return scalarUnary(x, Exp); }
Scalar exp2(const Scalar &x) { return scalarUnary(x, Exp2); }
Scalar log(const Scalar &x) { return scalarUnary(x, Log); }
Scalar log1p(const Scalar &x) { return scalarUnary(x, Log1p); }
Scalar sqrt(const Scalar &x) { return scalarUnary(x, Sqrt); }
Scalar rsqrt(const Scalar &x) { return scalarUnary(x, Rsqrt); }

Scalar select(const Scalar &cond, const Scalar &a, const Scalar &b) {
  Kernel *k = cond.kernel_;
  if (!k)
    throw Error("select needs a computed condition");
  Value c = val(cond.value_);
  Value x = val(k->scalarValue(a, b.value_)), y = val(k->scalarValue(b, a.value_));
  auto &bld = k->impl_->builder;
  return Scalar(k, ptr(bld.create<arith::SelectOp>(bld.getUnknownLoc(), c, x, y)));
}

Scalar Scalar::to(DType t) const {
  if (!kernel_)
    return *this;
  Kernel *k = kernel_;
  auto &b = k->impl_->builder;
  Location l = b.getUnknownLoc();
  Value x = val(value_);
  Type want = toMlir(&k->impl_->ctx, t);
  if (x.getType() == want)
    return *this;
  Value r;
  if (isa<IntegerType>(x.getType()) && isa<FloatType>(want))
    r = b.create<arith::SIToFPOp>(l, want, x);
  else if (isa<IntegerType>(x.getType()) && isa<IntegerType>(want))
    r = x.getType().getIntOrFloatBitWidth() > want.getIntOrFloatBitWidth()
            ? Value(b.create<arith::TruncIOp>(l, want, x))
            : Value(b.create<arith::ExtSIOp>(l, want, x));
  else if (isa<FloatType>(x.getType()) && isa<IntegerType>(want)) // toward zero
    r = b.create<arith::FPToSIOp>(l, want, x);
  else if (isa<FloatType>(x.getType()) && isa<FloatType>(want))
    r = x.getType().getIntOrFloatBitWidth() > want.getIntOrFloatBitWidth()
            ? Value(b.create<arith::TruncFOp>(l, want, x))
            : Value(b.create<arith::ExtFOp>(l, want, x));
  else
    throw Error(fmt::format("kernel '{}': unsupported scalar conversion to {}", k->name(), dtypeName(t)));
  return Scalar(k, ptr(r));
}

} // namespace qla::dsl

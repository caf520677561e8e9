// SIMT simulator: Scalar ops, thread by thread: arith, llvm and nvvm math, conversions, constants, bit casts.
#include "Simulator.h"

namespace qla::simt::detail {

/// One thread's result of a scalar-level op.
Bits Simulator::eval(Operation *op, int64_t t) {
  auto in = [&](unsigned i) -> const Bits & { return get(op, op->getOperand(i))[t]; };
  Type rt = op->getNumResults() ? op->getResult(0).getType() : Type();
  auto lanewise = [&](auto f) {
    Bits out(laneCount(rt));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = f(i, laneType(rt, i));
    return out;
  };
  auto intBinary = [&](auto f) {
    return lanewise([&](size_t i, Type lt) {
      int64_t w = scalarBits(lt);
      return f(in(0)[i] & mask(w), in(1)[i] & mask(w), w) & mask(w);
    });
  };
  auto floatBinary = [&](auto f) {
    return lanewise([&](size_t i, Type lt) {
      if (lt.isF32())
        return floatBits(f(asFloat(in(0)[i]), asFloat(in(1)[i])));
      return fromDouble(lt, f(toDouble(lt, in(0)[i]), toDouble(lt, in(1)[i])));
    });
  };
  auto floatUnary = [&](Value x, auto f) {
    return lanewise([&](size_t i, Type lt) {
      double v = toDouble(laneType(x.getType(), i), get(op, x)[t][i]);
      return fromDouble(lt, f(v));
    });
  };
  using P = arith::CmpIPredicate;
  return llvm::TypeSwitch<Operation *, Bits>(op)
      .Case([&](arith::ConstantOp c) { return constant(op, c.getValue(), rt); })
      .Case([&](LLVM::ConstantOp c) { return constant(op, c.getValue(), rt); })
      .Case<LLVM::UndefOp, LLVM::ZeroOp, LLVM::PoisonOp>([&](Operation *) { return Bits(laneCount(rt), 0); })
      .Case([&](arith::AddIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a + b; }); })
      .Case([&](arith::SubIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a - b; }); })
      .Case([&](arith::MulIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a * b; }); })
      .Case([&](arith::AndIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a & b; }); })
      .Case([&](arith::OrIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a | b; }); })
      .Case([&](arith::XOrIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return a ^ b; }); })
      .Case([&](arith::ShLIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return b >= 64 ? 0 : a << b; }); })
      .Case([&](arith::ShRUIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return b >= 64 ? 0 : a >> b; }); })
      .Case([&](arith::ShRSIOp) {
        return intBinary([](uint64_t a, uint64_t b, int64_t w) { return uint64_t(signExtend(a, w) >> std::min<uint64_t>(b, 63)); });
      })
      .Case([&](arith::DivUIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t) { return b ? a / b : (fail(op, "division by zero"), 0); });
      })
      .Case([&](arith::RemUIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t) { return b ? a % b : (fail(op, "division by zero"), 0); });
      })
      .Case([&](arith::DivSIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
          return b ? uint64_t(signExtend(a, w) / signExtend(b, w)) : (fail(op, "division by zero"), 0);
        });
      })
      .Case([&](arith::RemSIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
          return b ? uint64_t(signExtend(a, w) % signExtend(b, w)) : (fail(op, "division by zero"), 0);
        });
      })
      .Case([&](arith::CeilDivSIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
          int64_t x = signExtend(a, w), y = signExtend(b, w);
          if (!y)
            fail(op, "division by zero");
          int64_t q = x / y;
          return uint64_t(q + ((x % y != 0) && ((x < 0) == (y < 0)) ? 1 : 0));
        });
      })
      .Case([&](arith::FloorDivSIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t w) {
          int64_t x = signExtend(a, w), y = signExtend(b, w);
          if (!y)
            fail(op, "division by zero");
          int64_t q = x / y;
          return uint64_t(q - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0));
        });
      })
      .Case([&](arith::CeilDivUIOp) {
        return intBinary([&](uint64_t a, uint64_t b, int64_t) {
          if (!b)
            fail(op, "division by zero");
          return a / b + (a % b != 0);
        });
      })
      .Case([&](arith::MinSIOp) {
        return intBinary([](uint64_t a, uint64_t b, int64_t w) { return signExtend(a, w) < signExtend(b, w) ? a : b; });
      })
      .Case([&](arith::MaxSIOp) {
        return intBinary([](uint64_t a, uint64_t b, int64_t w) { return signExtend(a, w) > signExtend(b, w) ? a : b; });
      })
      .Case([&](arith::MinUIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return std::min(a, b); }); })
      .Case([&](arith::MaxUIOp) { return intBinary([](uint64_t a, uint64_t b, int64_t) { return std::max(a, b); }); })
      .Case([&](arith::CmpIOp c) {
        Type ot = c.getLhs().getType();
        return lanewise([&](size_t i, Type) -> uint64_t {
          int64_t w = scalarBits(laneType(ot, i));
          uint64_t a = in(0)[i] & mask(w), b = in(1)[i] & mask(w);
          int64_t sa = signExtend(a, w), sb = signExtend(b, w);
          switch (c.getPredicate()) {
          case P::eq: return a == b;
          case P::ne: return a != b;
          case P::slt: return sa < sb;
          case P::sle: return sa <= sb;
          case P::sgt: return sa > sb;
          case P::sge: return sa >= sb;
          case P::ult: return a < b;
          case P::ule: return a <= b;
          case P::ugt: return a > b;
          case P::uge: return a >= b;
          }
          return 0;
        });
      })
      .Case([&](arith::CmpFOp c) {
        Type ot = c.getLhs().getType();
        return lanewise([&](size_t i, Type) -> uint64_t {
          double a = toDouble(laneType(ot, i), in(0)[i]), b = toDouble(laneType(ot, i), in(1)[i]);
          bool unordered = std::isnan(a) || std::isnan(b);
          using F = arith::CmpFPredicate;
          switch (c.getPredicate()) {
          case F::OEQ: return !unordered && a == b;
          case F::ONE: return !unordered && a != b;
          case F::OLT: return !unordered && a < b;
          case F::OLE: return !unordered && a <= b;
          case F::OGT: return !unordered && a > b;
          case F::OGE: return !unordered && a >= b;
          case F::UEQ: return unordered || a == b;
          case F::UNE: return unordered || a != b;
          case F::ULT: return unordered || a < b;
          case F::ULE: return unordered || a <= b;
          case F::UGT: return unordered || a > b;
          case F::UGE: return unordered || a >= b;
          case F::ORD: return !unordered;
          case F::UNO: return unordered;
          case F::AlwaysTrue: return 1;
          case F::AlwaysFalse: return 0;
          }
          return 0;
        });
      })
      .Case([&](arith::SelectOp s) {
        return lanewise([&](size_t i, Type) {
          const Bits &cond = in(0);
          bool pick = cond.size() > 1 ? cond[i] & 1 : cond[0] & 1;
          return pick ? in(1)[i] : in(2)[i];
        });
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp>([&](Operation *) {
        Type from = op->getOperand(0).getType();
        return lanewise([&](size_t i, Type lt) {
          return uint64_t(signExtend(in(0)[i] & mask(scalarBits(laneType(from, i))), scalarBits(laneType(from, i)))) &
                 mask(scalarBits(lt));
        });
      })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp, LLVM::PtrToIntOp, LLVM::IntToPtrOp,
            LLVM::ZExtOp, LLVM::TruncOp>([&](Operation *) {
        Type from = op->getOperand(0).getType();
        return lanewise([&](size_t i, Type lt) {
          return in(0)[i] & mask(scalarBits(laneType(from, i))) & mask(scalarBits(lt));
        });
      })
      .Case([&](LLVM::SExtOp) {
        Type from = op->getOperand(0).getType();
        return lanewise([&](size_t i, Type lt) {
          int64_t w = scalarBits(laneType(from, i));
          return uint64_t(signExtend(in(0)[i] & mask(w), w)) & mask(scalarBits(lt));
        });
      })
      .Case<arith::AddFOp, LLVM::FAddOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a + b; }); })
      .Case<arith::SubFOp, LLVM::FSubOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a - b; }); })
      .Case<arith::MulFOp, LLVM::FMulOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a * b; }); })
      .Case<arith::DivFOp, LLVM::FDivOp>([&](Operation *) { return floatBinary([](auto a, auto b) { return a / b; }); })
      .Case<arith::MaximumFOp, arith::MinimumFOp>([&](Operation *) { // NaN wins
        bool max = isa<arith::MaximumFOp>(op);
        return floatBinary([&](auto a, auto b) { return std::isnan(a) ? a : std::isnan(b) ? b : max ? std::max(a, b) : std::min(a, b); });
      })
      .Case<arith::MaxNumFOp, arith::MinNumFOp>([&](Operation *) { // the number wins
        bool max = isa<arith::MaxNumFOp>(op);
        return floatBinary([&](auto a, auto b) { return std::isnan(a) ? b : std::isnan(b) ? a : max ? std::max(a, b) : std::min(a, b); });
      })
      .Case<arith::NegFOp, LLVM::FNegOp>([&](Operation *) {
        return lanewise([&](size_t i, Type lt) { return in(0)[i] ^ (1ull << (scalarBits(lt) - 1)); });
      })
      .Case([&](LLVM::FMAOp) {
        return lanewise([&](size_t i, Type lt) {
          if (!lt.isF32())
            fail(op, "fma of a type other than f32");
          return floatBits(std::fma(asFloat(in(0)[i]), asFloat(in(1)[i]), asFloat(in(2)[i])));
        });
      })
      .Case<arith::TruncFOp, arith::ExtFOp, LLVM::FPTruncOp, LLVM::FPExtOp>(
          [&](Operation *) { return floatUnary(op->getOperand(0), [](double v) { return v; }); })
      .Case<arith::SIToFPOp, arith::UIToFPOp>([&](Operation *) {
        Type from = op->getOperand(0).getType();
        return lanewise([&](size_t i, Type lt) {
          int64_t w = scalarBits(laneType(from, i));
          uint64_t v = in(0)[i] & mask(w);
          return fromDouble(lt, isa<arith::SIToFPOp>(op) ? double(signExtend(v, w)) : double(v));
        });
      })
      .Case<arith::FPToSIOp, arith::FPToUIOp>([&](Operation *) {
        Type from = op->getOperand(0).getType();
        return lanewise([&](size_t i, Type lt) {
          double v = std::trunc(toDouble(laneType(from, i), in(0)[i]));
          return (isa<arith::FPToSIOp>(op) ? uint64_t(int64_t(v)) : uint64_t(v)) & mask(scalarBits(lt));
        });
      })
      .Case<LLVM::BitcastOp, arith::BitcastOp>([&](Operation *) { return bitcast(op, in(0), op->getOperand(0).getType(), rt); })
      .Case([&](LLVM::ExtractElementOp e) { return Bits{in(0)[in(1)[0]]}; })
      .Case([&](LLVM::InsertElementOp e) {
        Bits v = in(0);
        uint64_t i = in(2)[0];
        if (i >= v.size())
          fail(op, "insertelement index out of range");
        v[i] = in(1)[0];
        return v;
      })
      .Case([&](LLVM::ExtractValueOp e) {
        if (e.getPosition().size() != 1)
          fail(op, "nested extractvalue is not supported");
        return Bits{in(0)[e.getPosition()[0]]};
      })
      .Case([&](LLVM::InsertValueOp e) {
        if (e.getPosition().size() != 1)
          fail(op, "nested insertvalue is not supported");
        Bits v = in(0);
        v[e.getPosition()[0]] = in(1)[0];
        return v;
      })
      .Case([&](LLVM::AddressOfOp a) {
        if (a.getGlobalName() != "__qla_smem")
          fail(op, "only the kernel's shared memory (@__qla_smem) has an address");
        return Bits{kSmemBase};
      })
      .Case([&](LLVM::GEPOp g) {
        auto indices = g.getIndices();
        if (indices.size() != 1)
          fail(op, "only getelementptr with one index is supported");
        int64_t bits = scalarBits(g.getElemType());
        if (bits < 8)
          fail(op, "getelementptr over an aggregate element type is not supported");
        int64_t index;
        if (auto v = llvm::dyn_cast_if_present<Value>(indices[0])) {
          index = signExtend(get(op, v)[t][0], scalarBits(v.getType()));
        } else {
          index = llvm::cast<IntegerAttr>(llvm::cast<Attribute>(indices[0])).getInt();
        }
        return Bits{in(0)[0] + uint64_t(index * (bits / 8))};
      })
      .Case([&](LLVM::LoadOp l) { return load(op, l.getAddr(), rt, t); })
      .Case([&](LLVM::StoreOp s) {
        store(op, s.getAddr(), s.getValue(), t);
        return Bits{};
      })
      .Case([&](NVVM::ThreadIdXOp) { return Bits{uint64_t(t)}; })
      .Case<NVVM::ThreadIdYOp, NVVM::ThreadIdZOp>([&](Operation *) { return Bits{0}; })
      .Case([&](NVVM::BlockIdXOp) { return Bits{uint64_t(blockIdx_[0])}; })
      .Case([&](NVVM::BlockIdYOp) { return Bits{uint64_t(blockIdx_[1])}; })
      .Case([&](NVVM::BlockIdZOp) { return Bits{uint64_t(blockIdx_[2])}; })
      .Case([&](NVVM::CpAsyncOp c) {
        // cp.async: `size` bytes, of which the first cpSize (all without it) from global, the rest zeros.
        int64_t size = c.getSize(), from = c.getCpSize() ? int64_t(get(op, c.getCpSize())[t][0]) : size;
        uint8_t *dst = memory(op, c.getDst().getType(), get(op, c.getDst())[t][0], size, t, true);
        std::memset(dst, 0, size);
        if (from > 0)
          std::memcpy(dst, memory(op, c.getSrc().getType(), get(op, c.getSrc())[t][0], from, t, false), from);
        return Bits{};
      })
      .Case<LLVM::LogOp, LLVM::Log2Op, LLVM::ExpOp, LLVM::SqrtOp, LLVM::FAbsOp>([&](Operation *) {
        return lanewise([&](size_t i, Type lt) {
          if (!lt.isF32())
            fail(op, "math of a type other than f32");
          float x = asFloat(in(0)[i]);
          float r = isa<LLVM::LogOp>(op)    ? std::log(x)
                    : isa<LLVM::Log2Op>(op) ? std::log2(x)
                    : isa<LLVM::ExpOp>(op)  ? std::exp(x)
                    : isa<LLVM::SqrtOp>(op) ? std::sqrt(x)
                                            : std::fabs(x);
          return floatBits(r);
        });
      })
      .Case<LLVM::MaxNumOp, LLVM::MinNumOp>([&](Operation *) {
        return floatBinary([&](auto a, auto b) {
          if (std::isnan(a))
            return b;
          if (std::isnan(b))
            return a;
          return isa<LLVM::MaxNumOp>(op) ? std::max(a, b) : std::min(a, b);
        });
      })
      .Case([&](LLVM::Exp2Op) {
        return lanewise([&](size_t i, Type lt) {
          if (!lt.isF32())
            fail(op, "exp2 of a type other than f32");
          return floatBits(std::exp2(asFloat(in(0)[i])));
        });
      })
      .Case([&](LLVM::CallIntrinsicOp c) {
        // The unary f32 approximations of the math lowering, as exact f32 math (the GPU's approximations
        // are within a few ulps of it).
        static const std::map<std::string, float (*)(float)> unary = {
            {"llvm.nvvm.lg2.approx.f", [](float x) { return std::log2(x); }},
            {"llvm.nvvm.lg2.approx.ftz.f", [](float x) { return std::log2(x); }},
            {"llvm.nvvm.ex2.approx.f", [](float x) { return std::exp2(x); }},
            {"llvm.nvvm.ex2.approx.ftz.f", [](float x) { return std::exp2(x); }},
            {"llvm.nvvm.rsqrt.approx.f", [](float x) { return 1.0f / std::sqrt(x); }},
            {"llvm.nvvm.rsqrt.approx.ftz.f", [](float x) { return 1.0f / std::sqrt(x); }},
            {"llvm.nvvm.sqrt.approx.f", [](float x) { return std::sqrt(x); }},
            {"llvm.nvvm.rcp.approx.ftz.f", [](float x) { return 1.0f / x; }},
            {"llvm.nvvm.tanh.approx.f32", [](float x) { return std::tanh(x); }}};
        if (auto f = unary.find(c.getIntrin().str()); f != unary.end())
          return Bits{floatBits(f->second(asFloat(in(0)[0])))};
        // cvt.rn.{bf16x2,f16x2}.f32 d, a, b: a in the upper half, b in the lower.
        Type half;
        if (c.getIntrin() == "llvm.nvvm.ff2bf16x2.rn")
          half = BFloat16Type::get(op->getContext());
        else if (c.getIntrin() == "llvm.nvvm.ff2f16x2.rn")
          half = Float16Type::get(op->getContext());
        else
          fail(op, "intrinsic not supported: " + c.getIntrin().str());
        return Bits{fromDouble(half, asFloat(in(1)[0])), fromDouble(half, asFloat(in(0)[0]))};
      })
      .Case([&](NVVM::BlockDimXOp) { return Bits{uint64_t(threads_)}; })
      .Case<NVVM::BlockDimYOp, NVVM::BlockDimZOp>([&](Operation *) { return Bits{1}; })
      .Case([&](LLVM::InlineAsmOp a) { return inlineAsm(a, t); })
      .Case([&](nvgpu::MBarrierGetOp g) { return Bits{mbarrierAddress(op, g.getBarriers(), g.getMbarId(), t)}; })
      .Case([&](LLVM::AddrSpaceCastOp) { return in(0); })
      .Default([&](Operation *) -> Bits { fail(op, "not supported by the SIMT simulator"); });
}

Bits Simulator::constant(Operation *op, Attribute value, Type rt) {
  if (auto i = dyn_cast<IntegerAttr>(value))
    return Bits{i.getValue().getZExtValue() & mask(scalarBits(laneType(rt, 0)))};
  if (auto f = dyn_cast<FloatAttr>(value))
    return Bits{f.getValue().bitcastToAPInt().getZExtValue()};
  if (auto d = dyn_cast<DenseElementsAttr>(value)) {
    Bits out;
    if (isa<FloatType>(d.getElementType()))
      for (llvm::APFloat f : d.getValues<llvm::APFloat>())
        out.push_back(f.bitcastToAPInt().getZExtValue());
    else
      for (llvm::APInt i : d.getValues<llvm::APInt>())
        out.push_back(i.getZExtValue());
    return out;
  }
  fail(op, "constant of an unsupported kind");
}

/// The bits of `from`'s lanes, reread as `to`'s (little-endian: lane 0 in the low bits).
Bits Simulator::bitcast(Operation *op, const Bits &in, Type from, Type to) {
  llvm::APInt all(std::max<int64_t>(laneCount(from) * scalarBits(laneType(from, 0)), 1), 0);
  int64_t w = scalarBits(laneType(from, 0)), pos = 0;
  for (size_t i = 0; i < laneCount(from); ++i, pos += w)
    all.insertBits(llvm::APInt(w, in[i] & mask(w)), pos);
  int64_t tw = scalarBits(laneType(to, 0));
  if (int64_t(laneCount(to)) * tw != all.getBitWidth())
    fail(op, "bitcast between types of different sizes");
  Bits out;
  for (size_t i = 0; i < laneCount(to); ++i)
    out.push_back(all.extractBits(tw, i * tw).getZExtValue());
  return out;
}

} // namespace qla::simt::detail

#include "qla/Interpreter/Interpreter.h"
#include "qla/Dialect/Tile/IR/QlaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <memory>

using namespace mlir;

namespace qla {

double roundTo(Type type, double value) {
  if (type.isF32())
    return static_cast<float>(value);
  if (type.isBF16() || type.isF16()) {
    llvm::APFloat f(value);
    bool lost;
    f.convert(type.isBF16() ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  return value;
}

namespace {

struct TileData {
  std::vector<int64_t> shape;
  std::vector<double> data;
  int64_t cols() const { return shape.back(); }
};

/// A runtime value: an index or integer, a float, or a tile.
struct RtValue {
  int64_t i = 0;
  double f = 0;
  std::shared_ptr<TileData> tile;
};

class BlockInterpreter {
public:
  BlockInterpreter(func::FuncOp kernel, ArrayRef<HostTensor *> args, std::array<int64_t, 3> blockId)
      : kernel_(kernel), args_(args), blockId_(blockId) {}

  LogicalResult run() { return runBlock(kernel_.front(), {}); }

private:
  func::FuncOp kernel_;
  ArrayRef<HostTensor *> args_;
  std::array<int64_t, 3> blockId_;
  llvm::DenseMap<Value, RtValue> env_;

  HostTensor &tensorOf(Value v) { return *args_[cast<BlockArgument>(v).getArgNumber()]; }

  /// Runs `block` with its arguments bound to `args`; the terminator's operands are left in `yielded`.
  LogicalResult runBlock(Block &block, ArrayRef<RtValue> args, SmallVectorImpl<RtValue> *yielded = nullptr) {
    for (auto [arg, v] : llvm::zip(block.getArguments(), args))
      env_[arg] = v;
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        if (yielded)
          for (Value v : op.getOperands())
            yielded->push_back(env_.lookup(v));
        return success();
      }
      if (failed(step(op)))
        return failure();
    }
    return success();
  }

  int64_t idx(Value v) { return env_.lookup(v).i; }
  double flt(Value v) { return env_.lookup(v).f; }
  void setI(Value v, int64_t x) { env_[v].i = x; }
  void setF(Value v, double x) { env_[v].f = roundTo(v.getType(), x); }

  std::shared_ptr<TileData> newTile(Value v) {
    auto t = cast<TileType>(v.getType());
    auto d = std::make_shared<TileData>();
    d->shape.assign(t.getShape().begin(), t.getShape().end());
    d->data.assign(t.getNumElements(), 0.0);
    env_[v].tile = d;
    return d;
  }

  LogicalResult step(Operation &op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
        .Case([&](arith::ConstantOp c) -> LogicalResult {
          if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            setI(c, i.getInt());
          else if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            setF(c, f.getValueAsDouble());
          else
            return LogicalResult(c.emitOpError() << "constant kind not interpreted");
          return success();
        })
        .Case([&](arith::AddIOp o) -> LogicalResult { setI(o, idx(o.getLhs()) + idx(o.getRhs())); return success(); })
        .Case([&](arith::SubIOp o) -> LogicalResult { setI(o, idx(o.getLhs()) - idx(o.getRhs())); return success(); })
        .Case([&](arith::MulIOp o) -> LogicalResult { setI(o, idx(o.getLhs()) * idx(o.getRhs())); return success(); })
        .Case([&](arith::DivSIOp o) -> LogicalResult { return divide(o, idx(o.getLhs()), idx(o.getRhs()), false); })
        .Case([&](arith::DivUIOp o) -> LogicalResult { return divide(o, idx(o.getLhs()), idx(o.getRhs()), false); })
        .Case([&](arith::CeilDivSIOp o) -> LogicalResult { return divide(o, idx(o.getLhs()), idx(o.getRhs()), true); })
        .Case<arith::RemUIOp, arith::RemSIOp>([&](auto o) -> LogicalResult { // C++'s % is remsi's (truncated)
          if (idx(o.getRhs()) == 0)
            return LogicalResult(o.emitOpError() << "remainder by zero");
          setI(o, idx(o.getLhs()) % idx(o.getRhs()));
          return success();
        })
        .Case([&](arith::AndIOp o) -> LogicalResult { setI(o, idx(o.getLhs()) & idx(o.getRhs())); return success(); })
        .Case([&](arith::OrIOp o) -> LogicalResult { setI(o, idx(o.getLhs()) | idx(o.getRhs())); return success(); })
        .Case([&](arith::MinSIOp o) -> LogicalResult { setI(o, std::min(idx(o.getLhs()), idx(o.getRhs()))); return success(); })
        .Case([&](arith::MaxSIOp o) -> LogicalResult { setI(o, std::max(idx(o.getLhs()), idx(o.getRhs()))); return success(); })
        .Case([&](arith::ExtSIOp o) -> LogicalResult { setI(o, idx(o.getIn())); return success(); })
        .Case([&](arith::TruncIOp o) -> LogicalResult { setI(o, idx(o.getIn())); return success(); })
        .Case([&](arith::IndexCastOp o) -> LogicalResult { setI(o, idx(o.getIn())); return success(); })
        .Case([&](arith::IndexCastUIOp o) -> LogicalResult { setI(o, idx(o.getIn())); return success(); })
        .Case([&](arith::AddFOp o) -> LogicalResult { setF(o, flt(o.getLhs()) + flt(o.getRhs())); return success(); })
        .Case([&](arith::SubFOp o) -> LogicalResult { setF(o, flt(o.getLhs()) - flt(o.getRhs())); return success(); })
        .Case([&](arith::MulFOp o) -> LogicalResult { setF(o, flt(o.getLhs()) * flt(o.getRhs())); return success(); })
        .Case([&](arith::DivFOp o) -> LogicalResult { setF(o, flt(o.getLhs()) / flt(o.getRhs())); return success(); })
        .Case([&](arith::NegFOp o) -> LogicalResult { setF(o, -flt(o.getOperand())); return success(); })
        .Case([&](arith::MaximumFOp o) -> LogicalResult { setF(o, std::max(flt(o.getLhs()), flt(o.getRhs()))); return success(); })
        .Case([&](arith::MinimumFOp o) -> LogicalResult { setF(o, std::min(flt(o.getLhs()), flt(o.getRhs()))); return success(); })
        .Case([&](arith::TruncFOp o) -> LogicalResult { setF(o, flt(o.getIn())); return success(); })
        .Case([&](arith::ExtFOp o) -> LogicalResult { setF(o, flt(o.getIn())); return success(); })
        .Case([&](arith::SelectOp o) -> LogicalResult {
          env_[o] = idx(o.getCondition()) ? env_.lookup(o.getTrueValue()) : env_.lookup(o.getFalseValue());
          return success();
        })
        .Case([&](arith::CmpIOp o) -> LogicalResult { return compare(o); })
        .Case([&](arith::SIToFPOp o) -> LogicalResult { setF(o, double(idx(o.getIn()))); return success(); })
        .Case([&](arith::FPToSIOp o) -> LogicalResult { setI(o, static_cast<int64_t>(flt(o.getIn()))); return success(); })
        .Case([&](arith::UIToFPOp o) -> LogicalResult { setF(o, double(idx(o.getIn()))); return success(); })
        .Case([&](arith::CmpFOp o) -> LogicalResult { return compareF(o); })
        .Case([&](math::Exp2Op o) -> LogicalResult { setF(o, std::exp2(flt(o.getOperand()))); return success(); })
        .Case([&](math::Log1pOp o) -> LogicalResult { setF(o, std::log1p(flt(o.getOperand()))); return success(); })
        .Case([&](math::ExpOp o) -> LogicalResult { setF(o, std::exp(flt(o.getOperand()))); return success(); })
        .Case([&](math::LogOp o) -> LogicalResult { setF(o, std::log(flt(o.getOperand()))); return success(); })
        .Case([&](math::SqrtOp o) -> LogicalResult { setF(o, std::sqrt(flt(o.getOperand()))); return success(); })
        .Case([&](math::RsqrtOp o) -> LogicalResult { setF(o, 1.0 / std::sqrt(flt(o.getOperand()))); return success(); })
        .Case([&](DimOp o) -> LogicalResult {
          setI(o, tensorOf(o.getTensor()).shape[o.getDim()]);
          return success();
        })
        .Case([&](LoadOp o) -> LogicalResult { return load(o); })
        .Case([&](IotaOp o) -> LogicalResult {
          auto t = newTile(o);
          forEach(t->shape, SmallVector<int64_t>(t->shape.size(), 0),
                  [&](int64_t e, ArrayRef<int64_t> pos) { t->data[e] = double(pos[o.getDim()]); });
          return success();
        })
        .Case([&](BroadcastOp o) -> LogicalResult { return broadcast(o); })
        .Case([&](ReduceOp o) -> LogicalResult { return reduce(o); })
        .Case([&](CumsumOp o) -> LogicalResult { return cumsum(o); })
        .Case([&](ShareOp o) -> LogicalResult {
          env_[o.getResult()].tile = std::make_shared<TileData>(*env_.lookup(o.getInput()).tile);
          return success();
        })
        .Case<StashOp, UnstashOp>([&](Operation *o) -> LogicalResult {
          env_[o->getResult(0)].tile = std::make_shared<TileData>(*env_.lookup(o->getOperand(0)).tile);
          return success();
        })
        .Case([&](TriInverseOp o) -> LogicalResult { return triInverse(o); })
        .Case([&](BlockIdOp o) -> LogicalResult { setI(o, blockId_[o.getDim()]); return success(); })
        .Case([&](CopyOp o) -> LogicalResult { return copy(o); })
        .Case([&](ReadOp o) -> LogicalResult { return read(o); })
        .Case([&](FillOp o) -> LogicalResult {
          auto t = newTile(o);
          double v = roundTo(o.getType().getElementType(), cast<FloatAttr>(o.getValue()).getValueAsDouble());
          std::fill(t->data.begin(), t->data.end(), v);
          return success();
        })
        .Case([&](GemmOp o) -> LogicalResult { return gemm(o); })
        .Case([&](MapOp o) -> LogicalResult { return map(o); })
        .Case([&](StoreOp o) -> LogicalResult { return store(o); })
        .Case([&](PrefetchOp) -> LogicalResult { return success(); }) // a cache hint: no values change
        .Case([&](ForOp o) -> LogicalResult {
          return loop(o, idx(o.getLowerBound()), idx(o.getUpperBound()), idx(o.getStep()), o.getInitArgs(),
                      o.getBody().front());
        })
        .Case([&](scf::ForOp o) -> LogicalResult {
          return loop(o, idx(o.getLowerBound()), idx(o.getUpperBound()), idx(o.getStep()), o.getInitArgs(),
                      *o.getBody());
        })
        .Default([&](Operation *other) -> LogicalResult {
          return (other->emitOpError() << "is not supported by the CPU interpreter (it runs tile-level "
                                                 "kernels, before qla-pipeline)");
        });
  }

  LogicalResult divide(Operation *op, int64_t a, int64_t b, bool ceil) {
    if (b == 0)
      return LogicalResult(op->emitOpError() << "division by zero");
    setI(op->getResult(0), ceil ? (a + b - 1) / b : a / b);
    return success();
  }

  LogicalResult compare(arith::CmpIOp o) {
    int64_t a = idx(o.getLhs()), b = idx(o.getRhs());
    bool r = false;
    switch (o.getPredicate()) {
    case arith::CmpIPredicate::eq: r = a == b; break;
    case arith::CmpIPredicate::ne: r = a != b; break;
    case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult: r = a < b; break;
    case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule: r = a <= b; break;
    case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt: r = a > b; break;
    case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge: r = a >= b; break;
    }
    setI(o, r);
    return success();
  }

  LogicalResult compareF(arith::CmpFOp o) {
    double a = flt(o.getLhs()), b = flt(o.getRhs());
    bool r = false;
    switch (o.getPredicate()) {
    case arith::CmpFPredicate::OEQ: case arith::CmpFPredicate::UEQ: r = a == b; break;
    case arith::CmpFPredicate::ONE: case arith::CmpFPredicate::UNE: r = a != b; break;
    case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::ULT: r = a < b; break;
    case arith::CmpFPredicate::OLE: case arith::CmpFPredicate::ULE: r = a <= b; break;
    case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::UGT: r = a > b; break;
    case arith::CmpFPredicate::OGE: case arith::CmpFPredicate::UGE: r = a >= b; break;
    default: return o.emitOpError() << "predicate not interpreted";
    }
    setI(o, r);
    return success();
  }

  LogicalResult load(LoadOp o) {
    HostTensor &src = tensorOf(o.getSource());
    SmallVector<int64_t> pos;
    for (Value v : o.getIndices())
      pos.push_back(idx(v));
    int64_t lin = linear(src, pos);
    if (lin < 0)
      return o.emitOpError() << "reads outside the tensor";
    if (o.getType().isIndex())
      setI(o, static_cast<int64_t>(src.data[lin]));
    else
      setF(o, src.data[lin]);
    return success();
  }

  LogicalResult broadcast(BroadcastOp o) {
    const TileData &in = *env_.lookup(o.getInput()).tile;
    auto out = newTile(o);
    ArrayRef<int64_t> dims = o.getDims();
    forEach(out->shape, SmallVector<int64_t>(out->shape.size(), 0), [&](int64_t e, ArrayRef<int64_t> pos) {
      int64_t lin = 0;
      for (size_t i = 0; i < dims.size(); ++i)
        lin = lin * in.shape[i] + (in.shape[i] == 1 ? 0 : pos[dims[i]]);
      out->data[e] = in.data[lin];
    });
    return success();
  }

  /// Calls f(outer, inner, stride-free index) over the elements of `t` grouped along dimension `dim`:
  /// for each position of the other dimensions, the linear indices of the elements along `dim`.
  template <typename F>
  static void forEachLine(const TileData &t, int64_t dim, F f) {
    int64_t inner = 1, outer = 1;
    for (size_t d = dim + 1; d < t.shape.size(); ++d)
      inner *= t.shape[d];
    for (int64_t d = 0; d < dim; ++d)
      outer *= t.shape[d];
    int64_t n = t.shape[dim];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        SmallVector<int64_t> line;
        for (int64_t k = 0; k < n; ++k)
          line.push_back((o * n + k) * inner + i);
        f(o * inner + i, line);
      }
  }

  LogicalResult reduce(ReduceOp o) {
    const TileData &in = *env_.lookup(o.getInput()).tile;
    auto out = newTile(o);
    Type elt = o.getType().getElementType();
    forEachLine(in, o.getDim(), [&](int64_t outIndex, ArrayRef<int64_t> line) {
      double acc = o.getKind() == ReduceKind::add ? 0.0 : -INFINITY;
      for (int64_t l : line)
        acc = o.getKind() == ReduceKind::add ? acc + in.data[l] : std::max(acc, in.data[l]);
      out->data[outIndex] = roundTo(elt, acc);
    });
    return success();
  }

  LogicalResult cumsum(CumsumOp o) {
    const TileData &in = *env_.lookup(o.getInput()).tile;
    auto out = newTile(o);
    Type elt = o.getType().getElementType();
    forEachLine(in, o.getDim(), [&](int64_t, ArrayRef<int64_t> line) {
      double acc = 0;
      for (int64_t l : line)
        out->data[l] = roundTo(elt, acc += in.data[l]);
    });
    return success();
  }

  /// Forward substitution: row i of X = (I + L)^-1 is e_i - sum_{j<i} L[i][j] X[j].
  LogicalResult triInverse(TriInverseOp o) {
    const TileData &a = *env_.lookup(o.getInput()).tile;
    auto x = newTile(o);
    int64_t n = a.shape[0], block = o.getBlock().value_or(n);
    std::vector<double> inv(n * n, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      inv[i * n + i] = 1.0;
      for (int64_t j = i / block * block; j < i; ++j) {
        double l = a.data[i * n + j];
        if (l == 0.0)
          continue;
        for (int64_t c = i / block * block; c <= j; ++c)
          inv[i * n + c] -= l * inv[j * n + c];
      }
    }
    Type elt = o.getType().getElementType();
    for (int64_t e = 0; e < n * n; ++e)
      x->data[e] = roundTo(elt, inv[e]);
    return success();
  }

  static bool beyond(ArrayRef<int64_t> bounds, ArrayRef<int64_t> pos) {
    for (size_t d = 0; d < bounds.size(); ++d)
      if (pos[d] >= bounds[d])
        return true;
    return false;
  }

  /// Linear index of element `pos` in the tensor, or -1 when outside its bounds.
  static int64_t linear(const HostTensor &t, ArrayRef<int64_t> pos) {
    int64_t lin = 0;
    for (size_t d = 0; d < pos.size(); ++d) {
      if (pos[d] < 0 || pos[d] >= t.shape[d])
        return -1;
      lin = lin * t.shape[d] + pos[d];
    }
    return lin;
  }

  /// Calls f(tileLinearIndex, tensorPosition) for every element of a tile placed at `offsets`.
  template <typename F>
  static void forEach(ArrayRef<int64_t> tileShape, ArrayRef<int64_t> offsets, F f) {
    int64_t n = 1;
    for (int64_t d : tileShape)
      n *= d;
    SmallVector<int64_t> pos(tileShape.size());
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e;
      for (size_t d = tileShape.size(); d-- > 0;) {
        pos[d] = offsets[d] + rest % tileShape[d];
        rest /= tileShape[d];
      }
      f(e, pos);
    }
  }

  SmallVector<int64_t> offsetsOf(OperandRange offsets) {
    SmallVector<int64_t> out;
    for (Value v : offsets)
      out.push_back(idx(v));
    return out;
  }

  /// forEach over a tile placed at `offsets`, its element (i, j) at tensor position (i, j), or (j, i)
  /// when `transpose`.
  template <typename F>
  static void forEachPlaced(ArrayRef<int64_t> tileShape, ArrayRef<int64_t> offsets, bool transpose, F f) {
    if (!transpose)
      return forEach(tileShape, offsets, f);
    int64_t rows = tileShape[0], cols = tileShape[1];
    SmallVector<int64_t> pos(2);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        pos[0] = offsets[0] + j;
        pos[1] = offsets[1] + i;
        f(i * cols + j, pos);
      }
  }

  LogicalResult copy(CopyOp o) {
    HostTensor &src = tensorOf(o.getSource());
    auto tile = newTile(o);
    SmallVector<int64_t> bounds = offsetsOf(o.getBounds());
    forEachPlaced(tile->shape, offsetsOf(o.getOffsets()), o.getTranspose(), [&](int64_t e, ArrayRef<int64_t> pos) {
      int64_t lin = beyond(bounds, pos) ? -1 : linear(src, pos);
      tile->data[e] = lin < 0 ? 0.0 : src.data[lin]; // out of bounds reads zero, as TMA does
    });
    return success();
  }

  LogicalResult read(ReadOp o) {
    const TileData &src = *env_.lookup(o.getSource()).tile;
    SmallVector<int64_t> offsets = offsetsOf(o.getOffsets());
    auto at = [&](ArrayRef<int64_t> pos, double &x) -> bool {
      int64_t lin = 0;
      for (auto [d, p] : llvm::enumerate(pos)) {
        if (p < 0 || p >= src.shape[d])
          return false;
        lin = lin * src.shape[d] + p;
      }
      x = src.data[lin];
      return true;
    };
    if (!isa<TileType>(o.getType())) {
      double x;
      if (!at(offsets, x))
        return o.emitOpError() << "reads outside the tile";
      setF(o, x);
      return success();
    }
    auto tile = newTile(o);
    bool inside = true;
    forEachPlaced(tile->shape, offsets, o.getTranspose(), [&](int64_t e, ArrayRef<int64_t> pos) {
      inside &= at(pos, tile->data[e]);
    });
    if (!inside)
      return o.emitOpError() << "reads a box outside the tile";
    return success();
  }

  LogicalResult store(StoreOp o) {
    HostTensor &dst = tensorOf(o.getDest());
    Type elt = o.getDest().getType().getElementType();
    const TileData &tile = *env_.lookup(o.getValue()).tile;
    SmallVector<int64_t> bounds = offsetsOf(o.getBounds());
    forEachPlaced(tile.shape, offsetsOf(o.getOffsets()), o.getTranspose(), [&](int64_t e, ArrayRef<int64_t> pos) {
      if (int64_t lin = beyond(bounds, pos) ? -1 : linear(dst, pos); lin >= 0)
        dst.data[lin] = roundTo(elt, tile.data[e]);
    });
    return success();
  }

  LogicalResult gemm(GemmOp o) {
    const TileData &a = *env_.lookup(o.getA()).tile, &b = *env_.lookup(o.getB()).tile;
    const TileData &acc = *env_.lookup(o.getAcc()).tile;
    auto out = newTile(o);
    bool at = o.getTransposeA(), bt = o.getTransposeB();
    int64_t m = acc.shape[0], n = acc.shape[1], k = at ? a.shape[0] : a.shape[1];
    // The contraction indices summed: all of K, or its listed 16-wide slices.
    SmallVector<int64_t> ks;
    for (int64_t kk = 0; kk < k; ++kk)
      if (!o.getKSlices() || llvm::is_contained(*o.getKSlices(), kk / 16))
        ks.push_back(kk);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = acc.data[i * n + j];
        for (int64_t kk : ks)
          s += (at ? a.data[kk * m + i] : a.data[i * k + kk]) * (bt ? b.data[j * k + kk] : b.data[kk * n + j]);
        out->data[i * n + j] = roundTo(o.getType().getElementType(), s);
      }
    return success();
  }

  LogicalResult map(MapOp o) {
    auto out = newTile(o);
    Block &body = o.getBody().front();
    SmallVector<std::shared_ptr<TileData>> ins;
    for (Value in : o.getInputs())
      ins.push_back(env_.lookup(in).tile);
    for (size_t e = 0; e < out->data.size(); ++e) {
      SmallVector<RtValue> args;
      for (auto [t, arg] : llvm::zip(ins, body.getArguments())) {
        RtValue v;
        if (isa<IntegerType>(arg.getType()))
          v.i = static_cast<int64_t>(t->data[e]);
        else
          v.f = t->data[e];
        args.push_back(v);
      }
      SmallVector<RtValue> y;
      if (failed(runBlock(body, args, &y)))
        return failure();
      Type elt = o.getType().getElementType();
      out->data[e] = isa<IntegerType>(elt) ? double(y[0].i) : roundTo(elt, y[0].f);
    }
    return success();
  }

  LogicalResult loop(Operation *op, int64_t lb, int64_t ub, int64_t st, ValueRange inits, Block &body) {
    if (st <= 0)
      return LogicalResult(op->emitOpError() << "step must be positive, got " << st);
    SmallVector<RtValue> carried;
    for (Value v : inits)
      carried.push_back(env_.lookup(v));
    for (int64_t iv = lb; iv < ub; iv += st) {
      SmallVector<RtValue> args{RtValue{iv, 0, nullptr}};
      args.append(carried.begin(), carried.end());
      SmallVector<RtValue> next;
      if (failed(runBlock(body, args, &next)))
        return failure();
      carried = std::move(next);
    }
    for (auto [r, v] : llvm::zip(op->getResults(), carried))
      env_[r] = v;
    return success();
  }
};

} // namespace

LogicalResult interpretKernel(func::FuncOp kernel, ArrayRef<HostTensor *> args, std::array<int64_t, 3> gridOverride) {
  if (args.size() != kernel.getNumArguments())
    return kernel.emitError() << "interpreter: kernel takes " << kernel.getNumArguments() << " tensors, got "
                              << args.size();
  for (auto [i, arg] : llvm::enumerate(args)) {
    auto t = dyn_cast<qla::TensorType>(kernel.getArgument(i).getType());
    if (!t)
      return kernel.emitError() << "interpreter: argument " << i << " is not a !qla.tensor";
    int64_t n = 1;
    for (auto [d, dim] : llvm::enumerate(t.getShape())) {
      if (d >= arg->shape.size() || (dim != ShapedType::kDynamic && dim != arg->shape[d]))
        return kernel.emitError() << "interpreter: argument " << i << " has the wrong shape";
      n *= arg->shape[d];
    }
    if (arg->shape.size() != static_cast<size_t>(t.getRank()) || static_cast<int64_t>(arg->data.size()) != n)
      return kernel.emitError() << "interpreter: argument " << i << " has " << arg->data.size()
                                << " values for its shape";
  }
  auto grid = kernel->getAttrOfType<DenseI64ArrayAttr>(QlaDialect::kGridAttr);
  std::array<int64_t, 3> g{1, 1, 1};
  if (grid)
    std::copy(grid.asArrayRef().begin(), grid.asArrayRef().end(), g.begin());
  for (int d = 0; d < 3; ++d) {
    if (gridOverride[d] > 0)
      g[d] = gridOverride[d];
    if (g[d] < 1)
      return kernel.emitError() << "interpreter: grid dimension " << d << " is given at launch; pass it";
  }
  for (int64_t z = 0; z < g[2]; ++z)
    for (int64_t y = 0; y < g[1]; ++y)
      for (int64_t x = 0; x < g[0]; ++x)
        if (failed(BlockInterpreter(kernel, args, {x, y, z}).run()))
          return failure();
  return success();
}

} // namespace qla

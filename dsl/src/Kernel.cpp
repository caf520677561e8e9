// Builds qla IR from DSL calls, with the caller's source location on every op.
#include "qla/dsl/Kernel.h"
#include "KernelImpl.h"
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Pipeline/Pipeline.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"
#include "qla/runtime/Sha256.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;

namespace qla::dsl {




Index::Index(int64_t constant) : constant_(constant) {}


Index Index::operator+(const Index &o) const { return combine(*this, o, '+'); }
Index Index::operator-(const Index &o) const { return combine(*this, o, '-'); }
Index Index::operator*(const Index &o) const { return combine(*this, o, '*'); }
Index Index::operator/(const Index &o) const { return combine(*this, o, '/'); }

Kernel::Kernel(std::string name, Loc loc) : name_(std::move(name)), impl_(std::make_unique<Impl>()) {
  DialectRegistry registry;
  registerQlaDialects(registry);
  impl_->ctx.appendDialectRegistry(registry);
  // Only the dialects the builder creates ops of: building and hashing a kernel (a warm-cache load)
  // then skips loading the lowering's dialects, which compile() loads.
  impl_->ctx.loadDialect<QlaDialect, arith::ArithDialect, func::FuncDialect, math::MathDialect>();
  impl_->module = ModuleOp::create(impl_->loc(loc));
  impl_->builder.setInsertionPointToEnd(impl_->module->getBody());
  impl_->func = impl_->builder.create<func::FuncOp>(impl_->loc(loc), name_, impl_->builder.getFunctionType({}, {}));
  impl_->func->setAttr(QlaDialect::kKernelAttr, impl_->builder.getUnitAttr());
  Block *entry = impl_->func.addEntryBlock();
  impl_->builder.setInsertionPointToEnd(entry);
  impl_->builder.create<func::ReturnOp>(impl_->loc(loc));
  impl_->builder.setInsertionPoint(entry->getTerminator());
  impl_->builder.setListener(&impl_->roleTagger);
}

Kernel::~Kernel() = default;

void *Kernel::materialize(const Index &i) {
  if (i.value_) {
    if (i.kernel_ != this)
      throw Error(fmt::format("kernel '{}': an index from another kernel was used", name_));
    return i.value_;
  }
  auto &b = impl_->builder;
  return ptr(b.create<arith::ConstantIndexOp>(b.getUnknownLoc(), i.constant_));
}

Index combine(const Index &a, const Index &b, char op) {
  if (!a.kernel_ && !b.kernel_) {
    switch (op) {
    case '+': return Index(a.constant_ + b.constant_);
    case '-': return Index(a.constant_ - b.constant_);
    case '*': return Index(a.constant_ * b.constant_);
    default:
      if (b.constant_ == 0)
        throw Error("index division by zero");
      return Index(a.constant_ / b.constant_);
    }
  }
  Kernel *k = a.kernel_ ? a.kernel_ : b.kernel_;
  return k->indexOp(a, b, op);
}

Index Kernel::indexOp(const Index &a, const Index &b, char op) {
  auto &bld = impl_->builder;
  Location l = bld.getUnknownLoc();
  Value x = val(materialize(a)), y = val(materialize(b));
  Value r;
  switch (op) {
  case '+': r = bld.create<arith::AddIOp>(l, x, y); break;
  case '-': r = bld.create<arith::SubIOp>(l, x, y); break;
  case '*': r = bld.create<arith::MulIOp>(l, x, y); break;
  default: r = bld.create<arith::DivSIOp>(l, x, y); break;
  }
  return Index(this, ptr(r));
}

Index Kernel::min(Index a, Index b) {
  if (!a.value_ && !b.value_)
    return Index(std::min(a.constant_, b.constant_));
  auto &bld = impl_->builder;
  return Index(this, ptr(bld.create<arith::MinSIOp>(bld.getUnknownLoc(), val(materialize(a)), val(materialize(b)))));
}

Tensor Kernel::tensor(std::string name, std::vector<int64_t> shape, DType dtype, Loc loc) {
  SmallVector<int64_t> dims;
  for (int64_t d : shape) {
    if (d <= 0 && d != -1)
      throw Error(fmt::format("{}: kernel '{}': tensor '{}' has a non-positive dimension in shape [{}] "
                              "(use -1 for a dimension known at launch)",
                              where(loc), name_, name, fmt::join(shape, ", ")));
    dims.push_back(d == -1 ? ShapedType::kDynamic : d);
  }
  Type t = qla::TensorType::get(dims, toMlir(&impl_->ctx, dtype));
  unsigned index = impl_->func.getNumArguments();
  (void)impl_->func.insertArgument(index, t, impl_->builder.getDictionaryAttr({}), impl_->loc(loc));
  impl_->func.setArgAttr(index, "qla.name", impl_->builder.getStringAttr(name));
  return Tensor{this, ptr(impl_->func.getArgument(index)), std::move(name), std::move(shape), dtype};
}

void Kernel::grid(int64_t x, int64_t y, int64_t z) {
  impl_->func->setAttr(QlaDialect::kGridAttr, impl_->builder.getDenseI64ArrayAttr({x, y, z}));
}

void Kernel::threads(int64_t n, Loc loc) {
  if (n <= 0 || n % 128 != 0 || n > 1024)
    throw Error(fmt::format("{}: kernel '{}': threads must be a multiple of 128 up to 1024, got {}", where(loc),
                            name_, n));
  impl_->func->setAttr(QlaDialect::kBlockAttr, impl_->builder.getDenseI64ArrayAttr({n, 1, 1}));
}

void Kernel::roles(const std::vector<Role> &roles, Loc loc) {
  if (roles.empty())
    throw Error(fmt::format("{}: kernel '{}': roles needs at least one role", where(loc), name_));
  SmallVector<Attribute> attrs;
  int64_t warpgroups = 0;
  std::string why;
  ScopedDiagnosticHandler capture(&impl_->ctx, [&](Diagnostic &d) {
    why = d.str();
    return success();
  });
  for (const Role &r : roles) {
    auto emit = [&] { return mlir::emitError(impl_->loc(loc)); };
    if (failed(RoleAttr::verify(emit, impl_->builder.getStringAttr(r.name), r.warpgroups, r.registers, r.producer)))
      throw Error(fmt::format("{}: kernel '{}': role '{}' is invalid: {}", where(loc), name_, r.name, why));
    attrs.push_back(RoleAttr::get(&impl_->ctx, impl_->builder.getStringAttr(r.name), r.warpgroups, r.registers,
                                  r.producer));
    warpgroups += r.warpgroups;
  }
  threads(warpgroups * 128, loc);
  impl_->func->setAttr(QlaDialect::kRolesAttr, impl_->builder.getArrayAttr(attrs));
  if (failed(verify(impl_->func)))
    throw Error(fmt::format("{}: kernel '{}': the roles do not verify: {}", where(loc), name_, why));
}

void Kernel::inRole(const std::string &name, const std::function<void()> &body, Loc loc) {
  auto roles = impl_->func->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr);
  bool known = roles && llvm::any_of(roles.getAsRange<RoleAttr>(), [&](RoleAttr r) { return r.getName() == name; });
  if (!known)
    throw Error(fmt::format("{}: kernel '{}': inRole('{}'): no such role (declare it with roles() first)", where(loc),
                            name_, name));
  mlir::StringAttr outer = impl_->roleTagger.role;
  impl_->roleTagger.role = impl_->builder.getStringAttr(name);
  try {
    body();
  } catch (...) {
    impl_->roleTagger.role = outer;
    throw;
  }
  impl_->roleTagger.role = outer;
}

void Kernel::minBlocksPerSM(int64_t n, Loc loc) {
  if (n < 1 || n > 32)
    throw Error(fmt::format("{}: kernel '{}': minBlocksPerSM must be from 1 to 32, got {}", where(loc), name_, n));
  impl_->func->setAttr(QlaDialect::kMinBlocksAttr, impl_->builder.getI64IntegerAttr(n));
}

void Kernel::dependentLaunch() { impl_->func->setAttr(QlaDialect::kDependentLaunchAttr, impl_->builder.getUnitAttr()); }
void Kernel::sliceBroadcasts() { impl_->func->setAttr(QlaDialect::kSliceBroadcastsAttr, impl_->builder.getUnitAttr()); }
void Kernel::warpgroupLocal() { impl_->func->setAttr(QlaDialect::kWarpgroupLocalAttr, impl_->builder.getUnitAttr()); }
void Kernel::warpgroupTurns() { impl_->func->setAttr(QlaDialect::kWarpgroupTurnsAttr, impl_->builder.getUnitAttr()); }

Index Kernel::blockId(int dim, Loc loc) {
  if (dim < 0 || dim > 2)
    throw Error(fmt::format("{}: kernel '{}': blockId dimension must be 0, 1 or 2, got {}", where(loc), name_, dim));
  return Index(this, ptr(impl_->builder.create<BlockIdOp>(impl_->loc(loc), impl_->builder.getIndexType(), impl_->builder.getI64IntegerAttr(dim))));
}

Tile Kernel::copy(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
                  std::vector<Index> bounds, Loc loc) {
  if (!bounds.empty() && bounds.size() != src.shape.size())
    throw Error(fmt::format("{}: kernel '{}': copy of '{}' needs no bounds or {}, got {}", where(loc), name_,
                            src.name, src.shape.size(), bounds.size()));
  if (offsets.size() != src.shape.size() || tileShape.size() != src.shape.size())
    throw Error(fmt::format("{}: kernel '{}': copy of '{}' needs {} offsets and a {}-D tile shape, got {} and {}",
                            where(loc), name_, src.name, src.shape.size(), src.shape.size(), offsets.size(),
                            tileShape.size()));
  SmallVector<Value> offs;
  for (const Index &i : offsets)
    offs.push_back(val(materialize(i)));
  auto type = TileType::get(tileShape, toMlir(&impl_->ctx, src.dtype), MemorySpace::smem);
  SmallVector<Value> bnds;
  for (const Index &i : bounds)
    bnds.push_back(val(materialize(i)));
  Value r = impl_->builder.create<CopyOp>(impl_->loc(loc), type, val(src.value), offs, bnds);
  return Tile{this, ptr(r), std::move(tileShape), src.dtype, true};
}

Tile Kernel::load(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
                  std::vector<Index> bounds, Loc loc) {
  Tile t = copy(src, std::move(offsets), std::move(tileShape), std::move(bounds), loc);
  Value v = val(t.value);
  auto smem = mlir::cast<TileType>(v.getType());
  v.setType(TileType::get(smem.getShape(), smem.getElementType(), MemorySpace::frag));
  t.shared = false;
  return t;
}

Tile Kernel::loadTransposed(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> tileShape,
                            std::vector<Index> bounds, Loc loc) {
  if (tileShape.size() != 2 || src.shape.size() != 2)
    throw Error(fmt::format("{}: kernel '{}': a transposed load of '{}' needs a 2-D tensor and tile", where(loc), name_,
                            src.name));
  Tile t = load(src, std::move(offsets), std::move(tileShape), std::move(bounds), loc);
  mlir::cast<CopyOp>(val(t.value).getDefiningOp()).setTranspose(true);
  return t;
}

Tile Kernel::read(const Tile &smem, std::vector<Index> offsets, std::vector<int64_t> shape, bool transpose,
                  Loc loc) {
  if (!smem.shared)
    throw Error(fmt::format("{}: kernel '{}': read takes a shared tile (a copy's); this one is in registers",
                            where(loc), name_));
  if (offsets.size() != smem.shape.size() || shape.size() != smem.shape.size() || (transpose && shape.size() != 2))
    throw Error(fmt::format("{}: kernel '{}': read of a {}-D tile needs {} offsets and a {}-D box{}, got {} and {}",
                            where(loc), name_, smem.shape.size(), smem.shape.size(), smem.shape.size(),
                            transpose ? " (2-D to transpose)" : "", offsets.size(), shape.size()));
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t extent = shape[transpose ? 1 - d : d];
    if (extent <= 0 || extent > smem.shape[d])
      throw Error(fmt::format("{}: kernel '{}': read's box extent {} in dimension {} must be in 1..{} (the tile's)",
                              where(loc), name_, extent, d, smem.shape[d]));
  }
  SmallVector<Value> offs;
  for (const Index &i : offsets)
    offs.push_back(val(materialize(i)));
  auto type = TileType::get(shape, toMlir(&impl_->ctx, smem.dtype), MemorySpace::frag);
  auto op = impl_->builder.create<ReadOp>(impl_->loc(loc), type, val(smem.value), offs);
  op.setTranspose(transpose);
  return Tile{this, ptr(op.getResult()), std::move(shape), smem.dtype, false};
}

Scalar Kernel::readScalar(const Tile &smem, std::vector<Index> indices, Loc loc) {
  if (!smem.shared || !isFloatingPoint(smem.dtype) || indices.size() != smem.shape.size())
    throw Error(fmt::format("{}: kernel '{}': readScalar takes a shared floating-point tile and one index per "
                            "dimension ({}), got {} indices",
                            where(loc), name_, smem.shape.size(), indices.size()));
  SmallVector<Value> idx;
  for (const Index &i : indices)
    idx.push_back(val(materialize(i)));
  Value v = impl_->builder.create<ReadOp>(impl_->loc(loc), toMlir(&impl_->ctx, smem.dtype), val(smem.value), idx);
  return Scalar(this, ptr(v));
}

Tile Kernel::fill(std::vector<int64_t> shape, DType dtype, double value, Loc loc) {
  Type elt = toMlir(&impl_->ctx, dtype);
  auto type = TileType::get(shape, elt, MemorySpace::frag);
  TypedAttr attr = isa<FloatType>(elt) ? TypedAttr(impl_->builder.getFloatAttr(elt, value))
                                       : TypedAttr(impl_->builder.getIntegerAttr(elt, static_cast<int64_t>(value)));
  Value r = impl_->builder.create<FillOp>(impl_->loc(loc), type, attr);
  return Tile{this, ptr(r), std::move(shape), dtype, false};
}

Tile Kernel::gemm(const Tile &a, const Tile &b, const Tile &acc, Transpose tr, Loc loc) {
  return gemm(a, b, acc, tr, {}, loc);
}

Tile Kernel::gemm(const Tile &a, const Tile &b, const Tile &acc, Transpose tr, std::vector<int64_t> kSlices,
                  Loc loc) {
  if (!b.shared || acc.shared || (!a.shared && tr.a))
    throw Error(fmt::format("{}: kernel '{}': gemm takes B in shared memory, A in shared memory (or in registers when "
                            "not transposed) and a register accumulator",
                            where(loc), name_));
  if (a.shape.size() != 2 || b.shape.size() != 2 || acc.shape.size() != 2)
    throw Error(fmt::format("{}: kernel '{}': gemm operands must be 2-D", where(loc), name_));
  int64_t m = tr.a ? a.shape[1] : a.shape[0], k = tr.a ? a.shape[0] : a.shape[1];
  int64_t kb = tr.b ? b.shape[1] : b.shape[0], n = tr.b ? b.shape[0] : b.shape[1];
  if (k != kb || acc.shape != std::vector<int64_t>{m, n})
    throw Error(fmt::format("{}: kernel '{}': gemm shapes do not agree: A{} {}, B{} {}, acc {} (expected acc {}x{})",
                            where(loc), name_, tr.a ? "ᵀ" : "", shapeStr(a.shape), tr.b ? "ᵀ" : "",
                            shapeStr(b.shape), shapeStr(acc.shape), m, n));
  if (acc.dtype != DType::f32)
    throw Error(fmt::format("{}: kernel '{}': gemm accumulates in f32, got a {} accumulator", where(loc), name_,
                            dtypeName(acc.dtype)));
  for (size_t i = 0; i < kSlices.size(); ++i)
    if (k % 16 != 0 || kSlices[i] < 0 || kSlices[i] >= k / 16 || (i > 0 && kSlices[i] <= kSlices[i - 1]))
      throw Error(fmt::format("{}: kernel '{}': gemm k slices must be increasing 16-wide slices of K = {} (each in "
                              "[0, {})), got [{}]",
                              where(loc), name_, k, k / 16, fmt::join(kSlices, ", ")));
  auto op = impl_->builder.create<GemmOp>(impl_->loc(loc), val(acc.value).getType(), val(a.value), val(b.value),
                                          val(acc.value), tr.a, tr.b, /*async=*/false,
                                          kSlices.empty() ? DenseI64ArrayAttr()
                                                          : impl_->builder.getDenseI64ArrayAttr(kSlices));
  return Tile{this, ptr(op.getResult()), acc.shape, acc.dtype, false};
}

Tile Kernel::cast(const Tile &t, DType to, Loc loc) {
  if (t.shared)
    throw Error(fmt::format("{}: kernel '{}': cast applies to register fragments", where(loc), name_));
  auto &b = impl_->builder;
  Type from = toMlir(&impl_->ctx, t.dtype), toType = toMlir(&impl_->ctx, to);
  if (!isa<FloatType>(from) || !isa<FloatType>(toType))
    throw Error(fmt::format("{}: kernel '{}': cast converts between float types, got {} -> {}", where(loc), name_,
                            dtypeName(t.dtype), dtypeName(to)));
  auto resultType = mlir::cast<TileType>(val(t.value).getType()).withElementType(toType);
  Location l = impl_->loc(loc);
  auto map = b.create<MapOp>(l, resultType, ValueRange{val(t.value)});
  Block *body = b.createBlock(&map.getBody(), {}, {from}, {l});
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  Value x = body->getArgument(0), y;
  if (from.getIntOrFloatBitWidth() > toType.getIntOrFloatBitWidth())
    y = inner.create<arith::TruncFOp>(l, toType, x);
  else if (from.getIntOrFloatBitWidth() < toType.getIntOrFloatBitWidth())
    y = inner.create<arith::ExtFOp>(l, toType, x);
  else
    y = x;
  inner.create<YieldOp>(l, ValueRange{y});
  b.setInsertionPointAfter(map);
  return Tile{this, ptr(map.getResult()), t.shape, to, false};
}

void Kernel::store(const Tile &t, const Tensor &dst, std::vector<Index> offsets, std::vector<Index> bounds,
                   Loc loc) {
  storeTile(t, dst, std::move(offsets), std::move(bounds), /*transpose=*/false, loc);
}

void Kernel::storeTile(const Tile &t, const Tensor &dst, std::vector<Index> offsets, std::vector<Index> bounds,
                       bool transpose, Loc loc) {
  if (!bounds.empty() && bounds.size() != dst.shape.size())
    throw Error(fmt::format("{}: kernel '{}': store into '{}' needs no bounds or {}, got {}", where(loc), name_,
                            dst.name, dst.shape.size(), bounds.size()));
  if (t.dtype != dst.dtype)
    throw Error(fmt::format("{}: kernel '{}': cannot store a {} tile into '{}' ({}); cast it first", where(loc),
                            name_, dtypeName(t.dtype), dst.name, dtypeName(dst.dtype)));
  if (offsets.size() != dst.shape.size())
    throw Error(fmt::format("{}: kernel '{}': store into '{}' needs {} offsets, got {}", where(loc), name_, dst.name,
                            dst.shape.size(), offsets.size()));
  SmallVector<Value> offs;
  for (const Index &i : offsets)
    offs.push_back(val(materialize(i)));
  SmallVector<Value> bnds;
  for (const Index &i : bounds)
    bnds.push_back(val(materialize(i)));
  impl_->builder.create<StoreOp>(impl_->loc(loc), val(t.value), val(dst.value), offs, bnds, transpose);
}

void Kernel::prefetch(const Tensor &src, std::vector<Index> offsets, std::vector<int64_t> boxShape,
                      std::vector<Index> bounds, Loc loc) {
  if (offsets.size() != src.shape.size() || boxShape.size() != src.shape.size() ||
      (!bounds.empty() && bounds.size() != src.shape.size()) ||
      llvm::any_of(boxShape, [](int64_t e) { return e <= 0; }))
    throw Error(fmt::format("{}: kernel '{}': prefetch of '{}' needs {} offsets, a box of rank {} with positive extents "
                            "and no bounds or {}, got {} offsets, a box of rank {} and {} bounds",
                            where(loc), name_, src.name, src.shape.size(), src.shape.size(), src.shape.size(),
                            offsets.size(), boxShape.size(), bounds.size()));
  SmallVector<Value> offs, bnds;
  for (const Index &i : offsets)
    offs.push_back(val(materialize(i)));
  for (const Index &i : bounds)
    bnds.push_back(val(materialize(i)));
  impl_->builder.create<PrefetchOp>(impl_->loc(loc), val(src.value), offs, bnds,
                                    impl_->builder.getDenseI64ArrayAttr(boxShape));
}

void Kernel::storeTransposed(const Tile &t, const Tensor &dst, std::vector<Index> offsets, std::vector<Index> bounds,
                             Loc loc) {
  if (t.shape.size() != 2 || dst.shape.size() != 2)
    throw Error(fmt::format("{}: kernel '{}': a transposed store into '{}' needs a 2-D tensor and tile", where(loc),
                            name_, dst.name));
  storeTile(t, dst, std::move(offsets), std::move(bounds), /*transpose=*/true, loc);
}

Tiles Kernel::loop(Index lb, Index ub, Index step, int64_t stages, Tiles carried,
                   const std::function<Tiles(Index, const Tiles &)> &body, Loc loc) {
  auto &b = impl_->builder;
  SmallVector<Value> inits;
  for (const Tile &t : carried)
    inits.push_back(val(t.value));
  Value lbv = val(materialize(lb)), ubv = val(materialize(ub)), stepv = val(materialize(step));
  auto loop = b.create<ForOp>(impl_->loc(loc), lbv, ubv, stepv, inits, stages);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBodyBlock());
  Tiles args = carried;
  for (size_t i = 0; i < args.size(); ++i)
    args[i].value = ptr(loop.getRegionIterArgs()[i]);
  Tiles results = body(Index(this, ptr(loop.getInductionVar())), args);
  if (results.size() != carried.size())
    throw Error(fmt::format("{}: kernel '{}': loop body returns {} tiles for {} carried", where(loc), name_,
                            results.size(), carried.size()));
  SmallVector<Value> yielded;
  for (const Tile &t : results)
    yielded.push_back(val(t.value));
  b.create<YieldOp>(impl_->loc(loc), yielded);
  Tiles out = carried;
  for (size_t i = 0; i < out.size(); ++i)
    out[i].value = ptr(loop.getResult(i));
  return out;
}

Tile Kernel::scan(Index lb, Index ub, int64_t stages, const Tile &state, std::vector<std::string> inputTerms,
                  const std::function<Tile(Index, const Tile &)> &body, Loc loc) {
  Tiles out = loop(lb, ub, 1, stages, {state}, [&](Index i, const Tiles &carried) { return Tiles{body(i, carried[0])}; },
                   loc);
  auto &b = impl_->builder;
  SmallVector<Attribute> names;
  for (const std::string &n : inputTerms)
    names.push_back(b.getStringAttr(n));
  val(out[0].value).getDefiningOp()->setAttr(QlaDialect::kScanAttr, b.getArrayAttr(names));
  return out[0];
}

Scalar Kernel::scanDecay(const Scalar &logDecay, Loc loc) {
  Operation *op = logDecay.value_ ? val(logDecay.value_).getDefiningOp() : nullptr;
  if (!op || op->getNumResults() != 1 || !op->getResult(0).getType().isF32())
    throw Error(fmt::format("{}: kernel '{}': scanDecay takes an f32 scalar computed in the scan's body", where(loc),
                            name_));
  op->setAttr(QlaDialect::kScanDecayAttr, UnitAttr::get(&impl_->ctx));
  return logDecay;
}

std::string Kernel::ir() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  impl_->module->print(os);
  return s;
}

std::string Kernel::structuralHash() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  // Printed without locations, SSA names are renumbered: the text is a canonical form of the structure.
  impl_->module->print(os, OpPrintingFlags().printGenericOpForm().enableDebugInfo(false));
  return sha256Hex(s);
}

} // namespace qla::dsl

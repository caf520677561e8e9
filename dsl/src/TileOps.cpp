// DSL calls for register-fragment math: map, iota, broadcast, reduce, cumsum, share, triInverse,
// and scalar reads of tensors.
#include "KernelImpl.h"
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/runtime/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace qla::dsl {

namespace {

TileType fragType(MLIRContext *ctx, const std::vector<int64_t> &shape, DType dtype) {
  return TileType::get(shape, toMlir(ctx, dtype), MemorySpace::frag);
}

void requireFragment(const Tile &t, const char *what, const std::string &kernel, const Loc &loc) {
  if (t.shared)
    throw Error(fmt::format("{}: kernel '{}': {} takes a register fragment, not a shared-memory tile", where(loc),
                            kernel, what));
}

} // namespace

Index Kernel::dim(const Tensor &t, int d, Loc loc) {
  if (d < 0 || d >= static_cast<int>(t.shape.size()))
    throw Error(fmt::format("{}: kernel '{}': tensor '{}' has no dimension {}", where(loc), name_, t.name, d));
  return Index(this, ptr(impl_->builder.create<DimOp>(impl_->loc(loc), impl_->builder.getIndexType(),
                                                      val(t.value), impl_->builder.getI64IntegerAttr(d))));
}

Scalar Kernel::scalar(Index i) {
  auto &b = impl_->builder;
  Value v = b.create<arith::IndexCastOp>(b.getUnknownLoc(), b.getI32Type(), val(materialize(i)));
  return Scalar(this, ptr(v));
}

Index Kernel::loadIndex(const Tensor &t, std::vector<Index> indices, Loc loc) {
  if (t.dtype != DType::i32 && t.dtype != DType::i64)
    throw Error(fmt::format("{}: kernel '{}': loadIndex reads integer tensors; '{}' is {}", where(loc), name_, t.name,
                            dtypeName(t.dtype)));
  SmallVector<Value> idx;
  for (const Index &i : indices)
    idx.push_back(val(materialize(i)));
  return Index(this, ptr(impl_->builder.create<LoadOp>(impl_->loc(loc), impl_->builder.getIndexType(),
                                                       val(t.value), idx)));
}

Scalar Kernel::loadScalar(const Tensor &t, std::vector<Index> indices, Loc loc) {
  if (!isFloatingPoint(t.dtype))
    throw Error(fmt::format("{}: kernel '{}': loadScalar reads floating-point tensors; '{}' is {}", where(loc),
                            name_, t.name, dtypeName(t.dtype)));
  SmallVector<Value> idx;
  for (const Index &i : indices)
    idx.push_back(val(materialize(i)));
  Value v = impl_->builder.create<LoadOp>(impl_->loc(loc), toMlir(&impl_->ctx, t.dtype), val(t.value), idx);
  return Scalar(this, ptr(v));
}

Tile Kernel::map(const Tiles &inputs, DType result, const std::function<Scalar(const Scalars &)> &f, Loc loc) {
  if (inputs.empty())
    throw Error(fmt::format("{}: kernel '{}': map needs at least one input", where(loc), name_));
  SmallVector<Value> ins;
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (const Tile &t : inputs) {
    requireFragment(t, "map", name_, loc);
    if (t.shape != inputs[0].shape)
      throw Error(fmt::format("{}: kernel '{}': map inputs must share one shape: {} vs {} (use broadcast)",
                              where(loc), name_, shapeStr(t.shape), shapeStr(inputs[0].shape)));
    ins.push_back(val(t.value));
    argTypes.push_back(toMlir(&impl_->ctx, t.dtype));
    argLocs.push_back(impl_->loc(loc));
  }
  auto &b = impl_->builder;
  Location l = impl_->loc(loc);
  auto op = b.create<MapOp>(l, fragType(&impl_->ctx, inputs[0].shape, result), ins);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&op.getBody(), {}, argTypes, argLocs);
  Scalars args;
  for (BlockArgument a : body->getArguments())
    args.push_back(Scalar(this, ptr(a)));
  Scalar r = f(args);
  Value rv = val(scalarValue(r, ptr(Value())));
  Type want = toMlir(&impl_->ctx, result);
  if (!rv || rv.getType() != want)
    throw Error(fmt::format("{}: kernel '{}': map body must return a {} scalar", where(loc), name_, dtypeName(result)));
  b.create<YieldOp>(l, ValueRange{rv});
  return Tile{this, ptr(op.getResult()), inputs[0].shape, result, false};
}

Tile Kernel::iota(std::vector<int64_t> shape, int64_t dim, Loc loc) {
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    throw Error(fmt::format("{}: kernel '{}': iota dimension {} out of range", where(loc), name_, dim));
  Value v = impl_->builder.create<IotaOp>(impl_->loc(loc), fragType(&impl_->ctx, shape, DType::i32),
                                          impl_->builder.getI64IntegerAttr(dim));
  return Tile{this, ptr(v), std::move(shape), DType::i32, false};
}

Tile Kernel::broadcast(const Tile &t, std::vector<int64_t> shape, std::vector<int64_t> dims, Loc loc) {
  requireFragment(t, "broadcast", name_, loc);
  if (dims.size() != t.shape.size())
    throw Error(fmt::format("{}: kernel '{}': broadcast needs one result dimension per input dimension", where(loc),
                            name_));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(shape.size()) || (shape[dims[i]] != t.shape[i] && t.shape[i] != 1))
      throw Error(fmt::format("{}: kernel '{}': cannot broadcast {} to {} along dims [{}]", where(loc), name_,
                              shapeStr(t.shape), shapeStr(shape), fmt::join(dims, ", ")));
  Value v = impl_->builder.create<BroadcastOp>(impl_->loc(loc), fragType(&impl_->ctx, shape, t.dtype), val(t.value),
                                               impl_->builder.getDenseI64ArrayAttr(dims));
  return Tile{this, ptr(v), std::move(shape), t.dtype, false};
}

Tile Kernel::reduce(const Tile &t, int64_t dim, Reduce kind, Loc loc) {
  requireFragment(t, "reduce", name_, loc);
  if (dim < 0 || dim >= static_cast<int64_t>(t.shape.size()) || t.shape.size() < 2)
    throw Error(fmt::format("{}: kernel '{}': cannot reduce a {} tile along dimension {}", where(loc), name_,
                            shapeStr(t.shape), dim));
  std::vector<int64_t> shape = t.shape;
  shape.erase(shape.begin() + dim);
  Value v = impl_->builder.create<ReduceOp>(impl_->loc(loc), fragType(&impl_->ctx, shape, t.dtype), val(t.value),
                                            impl_->builder.getI64IntegerAttr(dim),
                                            ReduceKindAttr::get(&impl_->ctx, kind == Reduce::add ? ReduceKind::add : ReduceKind::max));
  return Tile{this, ptr(v), std::move(shape), t.dtype, false};
}

Tile Kernel::cumsum(const Tile &t, int64_t dim, Loc loc) {
  requireFragment(t, "cumsum", name_, loc);
  if (dim < 0 || dim >= static_cast<int64_t>(t.shape.size()) || !isFloatingPoint(t.dtype))
    throw Error(fmt::format("{}: kernel '{}': cumsum needs a floating-point tile and a dimension of it", where(loc),
                            name_));
  Value v = impl_->builder.create<CumsumOp>(impl_->loc(loc), val(t.value), impl_->builder.getI64IntegerAttr(dim));
  return Tile{this, ptr(v), t.shape, t.dtype, false};
}

Tile Kernel::share(const Tile &t, Loc loc) {
  requireFragment(t, "share", name_, loc);
  auto type = TileType::get(t.shape, toMlir(&impl_->ctx, t.dtype), MemorySpace::smem);
  Value v = impl_->builder.create<ShareOp>(impl_->loc(loc), type, val(t.value));
  return Tile{this, ptr(v), t.shape, t.dtype, true};
}

Tile Kernel::stash(const Tile &t, Loc loc) {
  requireFragment(t, "stash", name_, loc);
  auto type = TileType::get(t.shape, toMlir(&impl_->ctx, t.dtype), MemorySpace::smem);
  Value v = impl_->builder.create<StashOp>(impl_->loc(loc), type, val(t.value));
  return Tile{this, ptr(v), t.shape, t.dtype, true};
}

Tile Kernel::unstash(const Tile &stashed, Loc loc) {
  if (!stashed.shared || !val(stashed.value).getDefiningOp<StashOp>())
    throw Error(fmt::format("{}: kernel '{}': unstash takes the result of stash", where(loc), name_));
  auto type = TileType::get(stashed.shape, toMlir(&impl_->ctx, stashed.dtype), MemorySpace::frag);
  Value v = impl_->builder.create<UnstashOp>(impl_->loc(loc), type, val(stashed.value));
  return Tile{this, ptr(v), stashed.shape, stashed.dtype, false};
}

Tile Kernel::triInverse(const Tile &t, int64_t block, Loc loc) { return triInverse(t, block, false, loc); }

Tile Kernel::triInverse(const Tile &t, int64_t block, bool f16Merges, Loc loc) {
  requireFragment(t, "triInverse", name_, loc);
  if (t.shape.size() != 2 || t.shape[0] != t.shape[1] || !isFloatingPoint(t.dtype))
    throw Error(fmt::format("{}: kernel '{}': triInverse needs a square floating-point tile, got {}", where(loc),
                            name_, shapeStr(t.shape)));
  if (block < 0 || (block > 0 && t.shape[0] % block != 0))
    throw Error(fmt::format("{}: kernel '{}': triInverse block = {} must divide the size {}", where(loc), name_,
                            block, t.shape[0]));
  if (f16Merges && (block || t.shape[0] != 64 || t.dtype != DType::f32))
    throw Error(fmt::format("{}: kernel '{}': triInverse with f16 merges inverts a whole 64x64 f32 tile (block = 0), "
                            "got {}{} with block = {}",
                            where(loc), name_, shapeStr(t.shape), t.dtype == DType::f32 ? " f32" : " (not f32)",
                            block));
  auto op = impl_->builder.create<TriInverseOp>(impl_->loc(loc), val(t.value),
                                                block ? impl_->builder.getI64IntegerAttr(block) : IntegerAttr());
  if (f16Merges)
    op.setF16Merges(true);
  Value v = op;
  return Tile{this, ptr(v), t.shape, t.dtype, false};
}

} // namespace qla::dsl

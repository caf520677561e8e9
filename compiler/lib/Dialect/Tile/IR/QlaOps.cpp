// Verifiers and builders of the qla ops: what ODS cannot say.
#include "qla/Dialect/Tile/IR/QlaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace qla;

#define GET_OP_CLASSES
#include "qla/Dialect/Tile/IR/QlaOps.cpp.inc"

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + (shape[i] == ShapedType::kDynamic ? std::string("?") : std::to_string(shape[i]));
  return s;
}

LogicalResult CopyOp::verify() {
  auto src = getSource().getType();
  auto dst = getResult().getType();
  if (getOffsets().size() != static_cast<size_t>(src.getRank()))
    return emitOpError() << "needs one offset per tensor dimension: " << src.getRank() << ", got "
                         << getOffsets().size();
  if (dst.getRank() != src.getRank())
    return emitOpError() << "tile rank " << dst.getRank() << " differs from tensor rank " << src.getRank();
  if (!getBounds().empty() && getBounds().size() != getOffsets().size())
    return emitOpError() << "needs no bounds or one per tensor dimension, got " << getBounds().size();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "tile element type " << dst.getElementType() << " differs from tensor's "
                         << src.getElementType();
  if (getTranspose() && (dst.getRank() != 2 || !dst.isFragment()))
    return emitOpError() << "copies transposed only 2-D tiles into registers, got " << dst;
  return success();
}

LogicalResult FillOp::verify() {
  auto t = getResult().getType();
  if (cast<TypedAttr>(getValue()).getType() != t.getElementType())
    return emitOpError() << "value of type " << cast<TypedAttr>(getValue()).getType()
                         << " does not match the fragment's element type " << t.getElementType();
  return success();
}

LogicalResult GemmOp::verify() {
  TileType a = getA().getType(), b = getB().getType(), acc = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return emitOpError() << "operands must be 2-D tiles";
  if (a.isFragment() && getTransposeA())
    return emitOpError() << "a register-fragment A cannot be transposed (store it with qla.share first)";
  if (a.getElementType() != b.getElementType() || !(a.getElementType().isBF16() || a.getElementType().isF16()))
    return emitOpError() << "A and B must both be bf16 or both f16, got " << a.getElementType() << " and "
                         << b.getElementType();
  if (!acc.getElementType().isF32())
    return emitOpError() << "the accumulator must be f32, got " << acc.getElementType();
  int64_t m = getTransposeA() ? a.getShape()[1] : a.getShape()[0];
  int64_t k = getTransposeA() ? a.getShape()[0] : a.getShape()[1];
  int64_t kb = getTransposeB() ? b.getShape()[1] : b.getShape()[0];
  int64_t n = getTransposeB() ? b.getShape()[0] : b.getShape()[1];
  if (k != kb)
    return emitOpError() << "contraction sizes differ: A" << (getTransposeA() ? "ᵀ" : "") << " is "
                         << shapeStr(a.getShape()) << ", B" << (getTransposeB() ? "ᵀ" : "") << " is "
                         << shapeStr(b.getShape());
  if (acc.getShape()[0] != m || acc.getShape()[1] != n)
    return emitOpError() << "accumulator must be " << m << "x" << n << ", got " << shapeStr(acc.getShape());
  if (getResult().getType() != acc)
    return emitOpError() << "result type must equal the accumulator type";
  if (auto slices = getKSlices()) {
    int64_t previous = -1;
    for (int64_t s : *slices) {
      if (k % 16 != 0 || s <= previous || s >= k / 16)
        return emitOpError() << "k_slices must be increasing 16-wide slices of K = " << k << " (each in [0, "
                             << k / 16 << ")), got [" << llvm::make_range(slices->begin(), slices->end()) << "]";
      previous = s;
    }
    if (slices->empty())
      return emitOpError() << "k_slices must name at least one slice of K (drop the gemm instead)";
  }
  return success();
}

LogicalResult MapOp::verify() {
  auto result = getResult().getType();
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body takes " << body.getNumArguments() << " arguments for " << getInputs().size()
                         << " inputs";
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto t = cast<TileType>(in.getType());
    if (t.getShape() != result.getShape())
      return emitOpError() << "input " << i << " has shape " << shapeStr(t.getShape()) << ", the result "
                           << shapeStr(result.getShape());
    if (t.getLayout() != result.getLayout())
      return emitOpError() << "input " << i << " has a different fragment layout from the result";
    if (body.getArgument(i).getType() != t.getElementType())
      return emitOpError() << "body argument " << i << " must be " << t.getElementType();
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 || yield.getValues()[0].getType() != result.getElementType())
    return emitOpError() << "body must yield one " << result.getElementType();
  for (Operation &op : body.without_terminator())
    if (op.getNumRegions() != 0 || !isPure(&op))
      return op.emitOpError() << "cannot appear in qla.map: its body must be pure scalar arithmetic";
  return success();
}

LogicalResult StoreOp::verify() {
  auto v = cast<TileType>(getValue().getType());
  auto d = getDest().getType();
  if (getOffsets().size() != static_cast<size_t>(d.getRank()))
    return emitOpError() << "needs one offset per tensor dimension: " << d.getRank() << ", got "
                         << getOffsets().size();
  if (v.getRank() != d.getRank())
    return emitOpError() << "tile rank " << v.getRank() << " differs from tensor rank " << d.getRank();
  if (!getBounds().empty() && getBounds().size() != getOffsets().size())
    return emitOpError() << "needs no bounds or one per tensor dimension, got " << getBounds().size();
  if (v.getElementType() != d.getElementType())
    return emitOpError() << "cannot store a " << v.getElementType() << " tile into a " << d.getElementType()
                         << " tensor (convert it with qla.map first)";
  if (getTranspose() && v.getRank() != 2)
    return emitOpError() << "stores transposed only 2-D tiles, got " << v;
  return success();
}

LogicalResult ReadOp::verify() {
  TileType src = getSource().getType();
  if (src.getRank() != 2)
    return emitOpError() << "reads 2-D shared tiles so far, got " << src;
  if (int64_t swizzle = smemSwizzleBytes(src.getShape()[1] * elementBytes(src.getElementType()));
      swizzle == 32 || swizzle == 64)
    return emitOpError() << "reads shared tiles stored unswizzled or with a 128-byte swizzle so far; rows of "
                         << src.getShape()[1] * elementBytes(src.getElementType()) << " bytes are stored with a "
                         << swizzle << "-byte swizzle";
  if (getOffsets().size() != static_cast<size_t>(src.getRank()))
    return emitOpError() << "needs one offset per tile dimension: " << src.getRank() << ", got "
                         << getOffsets().size();
  auto frag = dyn_cast<TileType>(getResult().getType());
  Type elt = frag ? frag.getElementType() : getResult().getType();
  if (elt != src.getElementType())
    return emitOpError() << "reads " << src.getElementType() << " elements into " << elt;
  if (!frag) {
    if (getTranspose())
      return emitOpError() << "reads one element: transpose has no meaning";
    return success();
  }
  if (frag.getRank() != src.getRank())
    return emitOpError() << "fragment rank " << frag.getRank() << " differs from tile rank " << src.getRank();
  if (getTranspose() && frag.getRank() != 2)
    return emitOpError() << "reads transposed only 2-D boxes";
  SmallVector<int64_t> box(frag.getShape());
  if (getTranspose())
    std::swap(box[0], box[1]);
  for (auto [d, extent] : llvm::enumerate(box))
    if (extent > src.getShape()[d])
      return emitOpError() << "box of " << extent << " in dimension " << d << " exceeds the tile's "
                           << src.getShape()[d];
  return success();
}

LogicalResult PrefetchOp::verify() {
  auto t = getSource().getType();
  if (getOffsets().size() != static_cast<size_t>(t.getRank()) || getShape().size() != getOffsets().size())
    return emitOpError() << "needs one offset and one box extent per tensor dimension: " << t.getRank() << ", got "
                         << getOffsets().size() << " offsets and a box of rank " << getShape().size();
  if (!getBounds().empty() && getBounds().size() != getOffsets().size())
    return emitOpError() << "needs no bounds or one per tensor dimension, got " << getBounds().size();
  if (llvm::any_of(getShape(), [](int64_t e) { return e <= 0; }))
    return emitOpError() << "needs a box of positive extents";
  return success();
}

void ForOp::build(OpBuilder &b, OperationState &state, Value lb, Value ub, Value step, ValueRange inits,
                  int64_t stages) {
  state.addOperands({lb, ub, step});
  state.addOperands(inits);
  state.addAttribute(getStagesAttrName(state.name), b.getI64IntegerAttr(stages));
  for (Value v : inits)
    state.addTypes(v.getType());
  Region *region = state.addRegion();
  Block *block = new Block();
  region->push_back(block);
  block->addArgument(b.getIndexType(), state.location);
  for (Value v : inits)
    block->addArgument(v.getType(), v.getLoc());
}

LogicalResult ForOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 + getInitArgs().size())
    return emitOpError() << "body must take the induction variable and one value per iter_arg";
  if (!body.getArgument(0).getType().isIndex())
    return emitOpError() << "induction variable must be an index";
  if (getResults().size() != getInitArgs().size())
    return emitOpError() << "needs one result per iter_arg";
  for (auto [i, init] : llvm::enumerate(getInitArgs())) {
    if (body.getArgument(i + 1).getType() != init.getType() || getResult(i).getType() != init.getType())
      return emitOpError() << "iter_arg " << i << " changes type across the loop";
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != getInitArgs().size())
    return emitOpError() << "body yields " << yield.getValues().size() << " values for " << getInitArgs().size()
                         << " iter_args";
  for (auto [i, v] : llvm::enumerate(yield.getValues()))
    if (v.getType() != getInitArgs()[i].getType())
      return emitOpError() << "yielded value " << i << " has type " << v.getType() << ", expected "
                           << getInitArgs()[i].getType();
  return success();
}

std::optional<SmallVector<Value>> ForOp::getLoopInductionVars() { return SmallVector<Value>{getInductionVar()}; }
SmallVector<Region *> ForOp::getLoopRegions() { return {&getBody()}; }
std::optional<ResultRange> ForOp::getLoopResults() { return getResults(); }
Block::BlockArgListType ForOp::getRegionIterArgs() { return getBodyBlock()->getArguments().drop_front(); }
MutableArrayRef<OpOperand> ForOp::getInitsMutable() { return getInitArgsMutable(); }
std::optional<MutableArrayRef<OpOperand>> ForOp::getYieldedValuesMutable() {
  return cast<YieldOp>(getBodyBlock()->getTerminator()).getValuesMutable();
}

LogicalResult SmemAllocOp::verify() {
  // The getter is unsigned (ODS's I64Attr); read the attribute's signed value.
  if (auto off = getOffsetAttr(); off && (off.getInt() < 0 || off.getInt() % 16 != 0))
    return emitOpError() << "shared-memory offset must be a non-negative multiple of 16, got " << off.getInt();
  return success();
}

LogicalResult SlotOp::verify() {
  TileType ring = getRing().getType(), slot = getResult().getType();
  if (ring.getRank() != slot.getRank() + 1 || ring.getShape().drop_front() != slot.getShape() ||
      ring.getElementType() != slot.getElementType() || ring.getLayout() != slot.getLayout())
    return emitOpError() << "slot type must be the ring type without its leading dimension";
  return success();
}

LogicalResult TmaLoadOp::verify() {
  auto src = getSource().getType();
  auto dst = getDest().getType();
  if (getOffsets().size() != static_cast<size_t>(src.getRank()) || dst.getRank() != src.getRank())
    return emitOpError() << "needs a tile and offsets of the tensor's rank " << src.getRank();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "element types differ";
  for (int64_t d : dst.getShape())
    if (d > 256)
      return emitOpError() << "a TMA box dimension is at most 256, got " << d;
  return success();
}

static LogicalResult checkDim(Operation *op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << "dimension " << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult DimOp::verify() { return checkDim(*this, getDim(), getTensor().getType().getRank()); }

LogicalResult LoadOp::verify() {
  auto t = getSource().getType();
  if (getIndices().size() != static_cast<size_t>(t.getRank()))
    return emitOpError() << "needs one index per tensor dimension: " << t.getRank() << ", got "
                         << getIndices().size();
  Type elt = t.getElementType(), r = getResult().getType();
  if (isa<IntegerType>(elt) ? !r.isIndex() : r != elt)
    return emitOpError() << "loads a " << elt << " element as " << (isa<IntegerType>(elt) ? "index" : "itself")
                         << ", not " << r;
  return success();
}

LogicalResult IotaOp::verify() {
  auto t = getResult().getType();
  if (!t.getElementType().isInteger(32))
    return emitOpError() << "produces i32 indices, not " << t.getElementType();
  return checkDim(*this, getDim(), t.getRank());
}

LogicalResult BroadcastOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "element types differ";
  if (getDims().size() != static_cast<size_t>(in.getRank()))
    return emitOpError() << "needs one result dimension per input dimension";
  llvm::SmallDenseSet<int64_t> seen;
  for (auto [i, d] : llvm::enumerate(getDims())) {
    if (d < 0 || d >= out.getRank() || !seen.insert(d).second)
      return emitOpError() << "dims must be distinct result dimensions";
    if (out.getShape()[d] != in.getShape()[i] && in.getShape()[i] != 1)
      return emitOpError() << "input dimension " << i << " (" << in.getShape()[i] << ") does not match result "
                           << "dimension " << d << " (" << out.getShape()[d] << ") and is not 1";
  }
  return success();
}

LogicalResult ReduceOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (failed(checkDim(*this, getDim(), in.getRank())))
    return failure();
  SmallVector<int64_t> expect(in.getShape());
  expect.erase(expect.begin() + getDim());
  if (in.getRank() < 2)
    return emitOpError() << "reduces fragments of rank 2 or more (the result is a tile), got rank " << in.getRank();
  if (ArrayRef<int64_t>(expect) != out.getShape() || in.getElementType() != out.getElementType())
    return emitOpError() << "result must be the input without dimension " << getDim() << ": shape "
                         << shapeStr(expect) << " of " << in.getElementType();
  return success();
}

LogicalResult CumsumOp::verify() {
  if (!isa<FloatType>(getInput().getType().getElementType()))
    return emitOpError() << "sums floating-point fragments only";
  return checkDim(*this, getDim(), getInput().getType().getRank());
}

LogicalResult ShareOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape() || in.getElementType() != out.getElementType())
    return emitOpError() << "the shared tile must have the fragment's shape and element type";
  return success();
}

LogicalResult StashOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape() || in.getElementType() != out.getElementType())
    return emitOpError() << "the stash must have the fragment's shape and element type";
  return success();
}

LogicalResult UnstashOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape() || in.getElementType() != out.getElementType())
    return emitOpError() << "the fragment must have the stash's shape and element type";
  if (!getInput().getDefiningOp<StashOp>() && !isa<BlockArgument>(getInput()))
    return emitOpError() << "reads a stash (qla.stash's result) only";
  return success();
}

LogicalResult ShareIntoOp::verify() {
  TileType in = getInput().getType(), out = getDest().getType();
  if (in.getShape() != out.getShape() || in.getElementType() != out.getElementType())
    return emitOpError() << "the shared tile must have the fragment's shape and element type";
  return success();
}

LogicalResult TriInverseOp::verify() {
  auto t = getInput().getType();
  if (t.getRank() != 2 || t.getShape()[0] != t.getShape()[1] || !isa<FloatType>(t.getElementType()))
    return emitOpError() << "needs a square floating-point fragment, got " << shapeStr(t.getShape());
  if (auto block = getBlock(); block && (*block <= 0 || t.getShape()[0] % *block != 0))
    return emitOpError() << "block = " << *block << " must be positive and divide the size " << t.getShape()[0];
  if (getF16Merges() && (getBlock() || t.getShape()[0] != 64 || !t.getElementType().isF32()))
    return emitOpError() << "f16_merges inverts a whole 64x64 f32 tile (no block), got "
                         << shapeStr(t.getShape()) << (getBlock() ? " with block" : "");
  return success();
}

bool BroadcastOp::readsSlice() {
  TileType in = getInput().getType(), out = getResult().getType();
  auto slice = dyn_cast_or_null<AccSliceLayoutAttr>(in.getLayout());
  auto acc = dyn_cast_or_null<WgmmaAccLayoutAttr>(out.getLayout());
  std::optional<int64_t> dim = sliceVectorDim(in.getShape());
  return slice && acc && dim && slice.getWarpgroups() == acc.getWarpgroups() && out.getRank() == 2 &&
         getDims()[*dim] == slice.getAlong() && out.getShape()[slice.getAlong()] == in.getShape()[*dim];
}

bool TriInverseOp::invertsInWarps() {
  TileType t = getInput().getType();
  return getBlock() == 16 && isa_and_nonnull<WgmmaAccLayoutAttr>(t.getLayout()) && t.getElementType().isF32();
}

bool TriInverseOp::mergesInWarps() {
  TileType t = getInput().getType();
  auto acc = dyn_cast_or_null<WgmmaAccLayoutAttr>(t.getLayout());
  return getF16Merges() && acc && acc.getWarpgroups() == 1;
}

LogicalResult RoleRegionOp::verify() {
  auto kernel = (*this)->getParentOfType<func::FuncOp>();
  auto roles = kernel ? kernel->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr) : ArrayAttr();
  if (roles)
    for (auto r : roles.getAsRange<RoleAttr>())
      if (r.getName().getValue() == getRole())
        return success();
  return emitOpError() << "role '" << getRole() << "' is not among the kernel's qla.roles";
}

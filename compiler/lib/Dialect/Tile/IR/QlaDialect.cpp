// The qla dialect's registration, its types' syntax and verifiers, and kernel attribute checks.
#include "qla/Dialect/Tile/IR/QlaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace qla;

#include "qla/Dialect/Tile/IR/QlaDialect.cpp.inc"
#include "qla/Dialect/Tile/IR/QlaEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "qla/Dialect/Tile/IR/QlaAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "qla/Dialect/Tile/IR/QlaTypes.cpp.inc"

void QlaDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "qla/Dialect/Tile/IR/QlaOps.cpp.inc"
      >();
}

void QlaDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "qla/Dialect/Tile/IR/QlaTypes.cpp.inc"
      >();
}

void QlaDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "qla/Dialect/Tile/IR/QlaAttrs.cpp.inc"
      >();
}

int64_t qla::elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
  return 0;
}

int64_t qla::smemSwizzleBytes(int64_t rowBytes) {
  if (rowBytes == 32 || rowBytes == 64 || (rowBytes > 0 && rowBytes % 128 == 0))
    return std::min<int64_t>(rowBytes, 128);
  return 0;
}

int64_t qla::smemBlockRowBytes(int64_t rowBytes) {
  return smemSwizzleBytes(rowBytes) == 128 ? 128 : rowBytes;
}

int64_t qla::smemColumnBlocks(int64_t rowBytes) { return rowBytes / smemBlockRowBytes(rowBytes); }

ThreadGroup qla::threadGroup(Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp()) {
    if (auto group = at->getAttrOfType<DenseI64ArrayAttr>(kRoleGroupAttr); group && group.size() == 3)
      return {group[0], group[1], group[2]};
    if (auto region = dyn_cast<RoleRegionOp>(at)) {
      auto kernel = region->getParentOfType<func::FuncOp>();
      auto roles = kernel ? kernel->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr) : ArrayAttr();
      if (!roles)
        return {};
      int64_t first = 0, index = 0;
      for (auto role : roles.getAsRange<RoleAttr>()) {
        ++index;
        if (role.getName().getValue() == region.getRole())
          return {first, role.getWarpgroups() * 128, index};
        first += role.getWarpgroups() * 128;
      }
      return {};
    }
    if (auto kernel = dyn_cast<func::FuncOp>(at))
      return {0, kernelThreads(kernel), 0};
  }
  return {};
}

int64_t qla::stridedCopies(Type type) {
  auto tile = dyn_cast<TileType>(type);
  auto strided = tile ? dyn_cast_or_null<StridedLayoutAttr>(tile.getLayout()) : StridedLayoutAttr();
  return strided ? strided.getCopies() : 1;
}

bool qla::storesPerWarpgroup(Operation *op) {
  auto store = dyn_cast<StoreOp>(op);
  auto kernel = op->getParentOfType<func::FuncOp>();
  // (Outside loops a store's block barriers cost little, and let its scratch share the rings' bytes.)
  if (!store || !kernel || !kernel->hasAttr(QlaDialect::kWarpgroupLocalAttr) || threadGroup(op).isRole() ||
      !(op->getParentOfType<scf::ForOp>() || op->getParentOfType<ForOp>()))
    return false;
  auto tile = cast<TileType>(store.getValue().getType());
  auto acc = dyn_cast_or_null<WgmmaAccLayoutAttr>(tile.getLayout());
  if (!acc || acc.getWarpgroups() < 2)
    return false;
  int64_t rowsPerWarpgroup = tile.getShape()[0] / acc.getWarpgroups();
  return !store.getTranspose() || (rowsPerWarpgroup * elementBytes(tile.getElementType())) % 128 == 0;
}

int64_t qla::kernelThreads(Operation *kernel) {
  auto block = kernel->getAttrOfType<DenseI64ArrayAttr>(QlaDialect::kBlockAttr);
  if (!block)
    return 0;
  int64_t n = 1;
  for (int64_t d : block.asArrayRef())
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult SwizzleAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t bytes, bool) {
  if (bytes != 0 && bytes != 32 && bytes != 64 && bytes != 128)
    return emitError() << "swizzle must be 0, 32, 64 or 128 bytes, got " << bytes;
  return success();
}

LogicalResult RoleAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringAttr name, int64_t warpgroups,
                               int64_t registers, bool) {
  if (!name || name.getValue().empty())
    return emitError() << "a role needs a name";
  if (warpgroups < 1)
    return emitError() << "role '" << name.getValue() << "' needs at least one warpgroup, got " << warpgroups;
  if (registers != 0 && (registers < 24 || registers > 256 || registers % 8 != 0))
    return emitError() << "role '" << name.getValue()
                       << "': registers must be 0 (no budget) or a multiple of 8 from 24 to 256 (setmaxnreg), got "
                       << registers;
  return success();
}

LogicalResult WgmmaAccLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                         int64_t warpgroups) {
  if (warpgroups < 1 || warpgroups > 4)
    return emitError() << "wgmma_acc layout needs 1 to 4 warpgroups, got " << warpgroups;
  return success();
}

LogicalResult AccSliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t warpgroups,
                                         int64_t along) {
  if (warpgroups < 1 || warpgroups > 4)
    return emitError() << "acc_slice layout needs 1 to 4 warpgroups, got " << warpgroups;
  if (along != 0 && along != 1)
    return emitError() << "acc_slice layout runs along the rows (0) or the columns (1), got " << along;
  return success();
}

std::optional<int64_t> qla::sliceVectorDim(ArrayRef<int64_t> shape) {
  std::optional<int64_t> dim;
  for (auto [d, n] : llvm::enumerate(shape))
    if (n != 1) {
      if (dim)
        return std::nullopt;
      dim = d;
    }
  return dim;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

static bool isSupportedElementType(Type t) {
  return t.isBF16() || t.isF16() || t.isF32() || t.isF64() || t.isInteger(64) || t.isInteger(32) || t.isInteger(8);
}

SmallVector<int64_t> qla::TensorType::getEffectiveStrides() const {
  if (!getStrides().empty())
    return SmallVector<int64_t>(getStrides());
  SmallVector<int64_t> strides(getRank(), 1);
  for (int64_t i = getRank() - 2; i >= 0; --i) {
    int64_t next = getShape()[i + 1];
    strides[i] = (next == ShapedType::kDynamic || strides[i + 1] == ShapedType::kDynamic)
                     ? ShapedType::kDynamic
                     : strides[i + 1] * next;
  }
  return strides;
}

LogicalResult qla::TensorType::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                                 Type elementType, ArrayRef<int64_t> strides) {
  if (shape.empty() || shape.size() > 5)
    return emitError() << "tensor rank must be 1 to 5, got " << shape.size();
  for (int64_t d : shape)
    if (d != ShapedType::kDynamic && d <= 0)
      return emitError() << "tensor dimensions must be positive or '?', got " << d;
  if (!isSupportedElementType(elementType))
    return emitError() << "unsupported tensor element type " << elementType
                       << " (expected bf16, f16, f32, f64, i64, i32 or i8)";
  if (!strides.empty() && strides.size() != shape.size())
    return emitError() << "tensor has " << shape.size() << " dimensions but " << strides.size()
                       << " strides";
  for (int64_t s : strides)
    if (s != ShapedType::kDynamic && s <= 0)
      return emitError() << "tensor strides must be positive or '?', got " << s;
  return success();
}

static ParseResult parseShapeAndType(AsmParser &p, SmallVectorImpl<int64_t> &shape, Type &elt) {
  if (p.parseDimensionList(shape, /*allowDynamic=*/true, /*withTrailingX=*/true) || p.parseType(elt))
    return failure();
  return success();
}

static void printShape(AsmPrinter &p, ArrayRef<int64_t> shape) {
  for (int64_t d : shape) {
    if (d == ShapedType::kDynamic)
      p << "?";
    else
      p << d;
    p << "x";
  }
}

Type qla::TensorType::parse(AsmParser &p) {
  SmallVector<int64_t> shape, strides;
  Type elt;
  if (p.parseLess() || parseShapeAndType(p, shape, elt))
    return {};
  if (succeeded(p.parseOptionalComma())) {
    if (p.parseKeyword("strides") || p.parseEqual() || p.parseLSquare())
      return {};
    auto parseOne = [&]() -> ParseResult {
      if (succeeded(p.parseOptionalQuestion())) {
        strides.push_back(ShapedType::kDynamic);
        return success();
      }
      int64_t s;
      if (p.parseInteger(s))
        return failure();
      strides.push_back(s);
      return success();
    };
    if (p.parseCommaSeparatedList(parseOne) || p.parseRSquare())
      return {};
  }
  if (p.parseGreater())
    return {};
  return p.getChecked<qla::TensorType>(p.getContext(), shape, elt, strides);
}

void qla::TensorType::print(AsmPrinter &p) const {
  p << "<";
  printShape(p, getShape());
  p << getElementType();
  if (!getStrides().empty()) {
    p << ", strides = [";
    llvm::interleaveComma(getStrides(), p, [&](int64_t s) {
      if (s == ShapedType::kDynamic)
        p << "?";
      else
        p << s;
    });
    p << "]";
  }
  p << ">";
}

int64_t TileType::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  return n;
}

int64_t TileType::getSizeInBytes() const { return getNumElements() * elementBytes(getElementType()); }

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                               Type elementType, MemorySpace space, Attribute layout) {
  if (shape.empty() || shape.size() > 4)
    return emitError() << "tile rank must be 1 to 4, got " << shape.size();
  for (int64_t d : shape)
    if (d <= 0 || d == ShapedType::kDynamic)
      return emitError() << "tile dimensions must be static and positive, got "
                         << (d == ShapedType::kDynamic ? std::string("?") : std::to_string(d));
  if (!isSupportedElementType(elementType))
    return emitError() << "unsupported tile element type " << elementType;
  if (layout) {
    if (space == MemorySpace::smem && !isa<SwizzleAttr>(layout))
      return emitError() << "a shared-memory tile's layout must be #qla.swizzle, got " << layout;
    if (space == MemorySpace::frag && !isa<WgmmaAccLayoutAttr, qla::StridedLayoutAttr, AccSliceLayoutAttr>(layout))
      return emitError() << "a fragment's layout must be #qla.wgmma_acc, #qla.strided or #qla.acc_slice, got "
                         << layout;
  }
  if (auto slice = dyn_cast_or_null<AccSliceLayoutAttr>(layout)) {
    std::optional<int64_t> dim = sliceVectorDim(shape);
    int64_t n = dim ? shape[*dim] : 0;
    if (!dim || (slice.getAlong() == 0 ? n % (64 * slice.getWarpgroups()) != 0 : n % 8 != 0 || n > 256))
      return emitError() << "an acc_slice fragment is a vector (one dimension other than 1) of a wgmma_acc "
                            "fragment's rows (a multiple of 64 x warpgroups) or columns (a multiple of 8 up to 256)";
  }
  if (auto acc = dyn_cast_or_null<WgmmaAccLayoutAttr>(layout)) {
    if (shape.size() != 2 || shape[0] % (64 * acc.getWarpgroups()) != 0)
      return emitError() << "a wgmma_acc fragment needs 2-D shape with rows a multiple of 64 x "
                         << acc.getWarpgroups() << " warpgroups, got " << shape[0] << " rows";
    if (shape[1] % 8 != 0 || shape[1] > 256)
      return emitError() << "a wgmma_acc fragment needs columns a multiple of 8 up to 256, got "
                         << shape[1];
  }
  return success();
}

Type TileType::parse(AsmParser &p) {
  SmallVector<int64_t> shape;
  Type elt;
  if (p.parseLess() || parseShapeAndType(p, shape, elt) || p.parseComma())
    return {};
  StringRef spaceName;
  SMLoc loc = p.getCurrentLocation();
  if (p.parseKeyword(&spaceName))
    return {};
  std::optional<MemorySpace> space = symbolizeMemorySpace(spaceName);
  if (!space) {
    p.emitError(loc) << "expected 'smem' or 'frag', got '" << spaceName << "'";
    return {};
  }
  Attribute layout;
  if (succeeded(p.parseOptionalComma()) && p.parseAttribute(layout))
    return {};
  if (p.parseGreater())
    return {};
  return p.getChecked<TileType>(p.getContext(), shape, elt, *space, layout);
}

void TileType::print(AsmPrinter &p) const {
  p << "<";
  printShape(p, getShape());
  p << getElementType() << ", " << stringifyMemorySpace(getMemorySpace());
  if (getLayout())
    p << ", " << getLayout();
  p << ">";
}

//===----------------------------------------------------------------------===//
// Kernel attributes on func.func
//===----------------------------------------------------------------------===//

LogicalResult QlaDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto requireFunc = [&]() -> LogicalResult {
    if (!isa<func::FuncOp>(op))
      return op->emitError() << "'" << name << "' belongs on a func.func kernel";
    return success();
  };
  auto check3 = [&](StringRef what, int64_t maxProduct) -> LogicalResult {
    auto dims = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!dims || dims.size() != 3)
      return op->emitError() << "'" << name << "' must be array<i64: x, y, z>";
    int64_t prod = 1;
    for (int64_t d : dims.asArrayRef()) {
      if (d < 1 && !(d == -1 && maxProduct == 0))
        return op->emitError() << what << " dimensions must be positive"
                               << (maxProduct == 0 ? " or -1 (given at launch)" : "");
      prod *= std::max<int64_t>(d, 1);
    }
    if (maxProduct && prod > maxProduct)
      return op->emitError() << what << " has " << prod << " threads, more than " << maxProduct;
    return success();
  };
  if (name == kKernelAttr)
    return requireFunc();
  if (name == kScratchPerWarpgroupAttr) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<StoreOp>(op))
      return op->emitError() << "'" << name << "' must be a unit attribute on a qla.store";
    return success();
  }
  if (name == kSmemOffsetAttr || name == kScratchOffsetAttr) {
    auto v = dyn_cast<IntegerAttr>(attr.getValue());
    if (!v || v.getInt() < 0)
      return op->emitError() << "'" << name << "' must be a non-negative byte offset";
    return success();
  }
  if (name == kAbiAttr) {
    if (!isa<ModuleOp>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a dictionary on the module";
    return success();
  }
  if (name == kGridAttr)
    return failure(failed(requireFunc()) || failed(check3("grid", 0)));
  if (name == kBlockAttr) {
    if (failed(requireFunc()) || failed(check3("block", 1024)))
      return failure();
    if (kernelThreads(op) % 128 != 0)
      return op->emitError() << "block must be a whole number of warpgroups (128 threads), got "
                             << kernelThreads(op);
    return success();
  }
  if (name == kRolesAttr) {
    auto roles = dyn_cast<ArrayAttr>(attr.getValue());
    if (failed(requireFunc()) || !roles || roles.empty() ||
        !llvm::all_of(roles, [](Attribute a) { return isa<RoleAttr>(a); }))
      return op->emitError() << "'" << name << "' must be a non-empty array of #qla.role on a func.func kernel";
    llvm::StringSet<> names;
    int64_t warpgroups = 0, registers = 0;
    bool budgeted = true;
    for (auto role : roles.getAsRange<RoleAttr>()) {
      if (!names.insert(role.getName().getValue()).second)
        return op->emitError() << "role '" << role.getName().getValue() << "' is declared twice";
      warpgroups += role.getWarpgroups();
      registers += role.getWarpgroups() * 128 * role.getRegisters();
      budgeted &= role.getRegisters() != 0;
    }
    if (int64_t threads = kernelThreads(op); threads && threads != warpgroups * 128)
      return op->emitError() << "the roles have " << warpgroups << " warpgroups (" << warpgroups * 128
                             << " threads), the block " << threads;
    // setmaxnreg moves registers within the block's: ptxas gives every thread the same cap (.maxnreg:
    // 65536 over the threads, in steps of 8, at most 255); a budget past it waits forever.
    const int64_t threads = warpgroups * 128, cap = std::min<int64_t>(255, 65536 / threads / 8 * 8);
    if (budgeted && registers > cap * threads)
      return op->emitError() << "the roles' register budgets need " << registers << " registers, more than the block's "
                             << cap * threads << " (" << cap << " a thread x " << threads << " threads)";
    return success();
  }
  if (name == kRoleAttr) {
    auto role = dyn_cast<StringAttr>(attr.getValue());
    auto kernel = op->getParentOfType<func::FuncOp>();
    auto roles = kernel ? kernel->getAttrOfType<ArrayAttr>(kRolesAttr) : ArrayAttr();
    if (!role || !roles)
      return op->emitError() << "'" << name << "' must name a role of the enclosing kernel's qla.roles";
    for (auto r : roles.getAsRange<RoleAttr>())
      if (r.getName() == role)
        return success();
    return op->emitError() << "role '" << role.getValue() << "' is not among the kernel's qla.roles";
  }
  if (name == kDependentLaunchAttr || name == kSliceBroadcastsAttr || name == kWarpgroupLocalAttr ||
      name == kWarpgroupTurnsAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    if ((name == kWarpgroupLocalAttr || name == kWarpgroupTurnsAttr) && op->hasAttr(kRolesAttr))
      return op->emitError() << "'" << name << "' is for kernels without roles (roles synchronise on their own "
                             << "named barriers already)";
    return requireFunc();
  }
  if (name == kMinBlocksAttr) {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 1 || n.getInt() > 32)
      return op->emitError() << "'" << name << "' must be an integer from 1 to 32 (blocks an SM)";
    return requireFunc();
  }
  if (name == kSmemAttr) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!bytes || bytes.getInt() < 0 || bytes.getInt() > 227 * 1024)
      return op->emitError() << "'" << name << "' must be an integer up to 232448 (227 KiB)";
    return requireFunc();
  }
  if (name == kRoleGroupAttr) {
    auto group = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!group || group.size() != 3 || group[0] % 128 != 0 || group[1] <= 0 || group[1] % 128 != 0 ||
        group[2] < 1 || group[2] > 15)
      return op->emitError() << "'" << name
                             << "' must be [first thread, threads, barrier id] with whole warpgroups and an id "
                                "from 1 to 15";
    return success();
  }
  if (name == kScanAttr) {
    auto inputs = dyn_cast<ArrayAttr>(attr.getValue());
    auto loop = dyn_cast<ForOp>(op);
    if (!loop || loop.getInitArgs().size() != 1 || !inputs ||
        !llvm::all_of(inputs, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError() << "'" << name
                             << "' must be an array of tensor names on a qla.for that carries one tile";
    auto kernel = op->getParentOfType<func::FuncOp>();
    for (auto input : inputs.getAsRange<StringAttr>()) {
      bool found = false;
      for (unsigned i = 0; kernel && i < kernel.getNumArguments(); ++i)
        found |= kernel.getArgAttrOfType<StringAttr>(i, "qla.name") == input;
      if (!found)
        return op->emitError() << "scan input '" << input.getValue() << "' is not a tensor of the kernel";
    }
    return success();
  }
  if (name == kScanDecayAttr) {
    // (Inside the scan's loop when declared — qla-context-split checks that; lowering passes rebuild the
    // loop and do not keep qla.scan.)
    if (!isa<UnitAttr>(attr.getValue()) || op->getNumResults() != 1 || !op->getResult(0).getType().isF32())
      return op->emitError() << "'" << name << "' marks an op with one f32 result";
    return success();
  }
  return op->emitError() << "unknown qla attribute '" << name << "'";
}

LogicalResult WarpgroupTurnOp::verify() {
  StringRef step = getStep();
  if (step != "begin" && step != "wait" && step != "pass" && step != "end")
    return emitOpError() << "step must be begin, wait, pass or end, got '" << step << "'";
  if (threadGroup(*this).isRole())
    return emitOpError() << "is for kernels without roles (roles have their own named barriers)";
  return success();
}

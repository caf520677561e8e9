// qla-convert-to-nvvm: qla kernels to LLVM/NVVM-level ops (see Passes.td). What is left of other
// dialects (nvgpu mbarriers, scf, arith, func) is lowered by the upstream passes that follow in
// the pipeline.
#include "Lowering.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

namespace qla {
#define GEN_PASS_DEF_QLACONVERTTONVVM
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

using namespace mlir;
using namespace qla;

namespace {

using namespace qla::lowering;

struct TileTypeConverter : TypeConverter {
  explicit TileTypeConverter(MLIRContext *ctx) {
    addConversion([](Type t) { return t; });
    addConversion([ctx](qla::TensorType) -> Type { return LLVM::LLVMPointerType::get(ctx, 1); });
    addConversion([ctx](TileType t) -> std::optional<Type> {
      if (t.isShared())
        return LLVM::LLVMPointerType::get(ctx, 3);
      if (auto layout = fragLayout(t))
        return VectorType::get({layout->perThread()}, t.getElementType());
      return std::nullopt;
    });
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
      return b.create<UnrealizedConversionCastOp>(loc, type, inputs).getResult(0);
    };
    addSourceMaterialization(cast);
    addTargetMaterialization(cast);
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The registers per thread a kernel with register budgets per role starts with (ptxas's .maxnreg:
/// what 65536 registers give every thread of the block, in steps of 8), from which `setmaxnreg` moves
/// each role; 0 without budgets.
int64_t registerCapWithRoles(func::FuncOp kernel) {
  auto roles = kernel->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr);
  if (!roles || llvm::none_of(roles.getAsRange<RoleAttr>(), [](RoleAttr r) { return r.getRegisters() != 0; }))
    return 0;
  return std::min<int64_t>(255, 65536 / kernelThreads(kernel) / 8 * 8);
}

/// A fragment spread like a wgmma accumulator over fewer warpgroups than the threads that run it would
/// have the other threads address rows past the tile (the layout's rows come from tid / 128): refused.
LogicalResult checkFragmentsCoverThreads(func::FuncOp kernel) {
  WalkResult result = kernel.walk([&](Operation *op) {
    const int64_t threads = threadGroup(op).threads;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
      auto tile = dyn_cast<TileType>(v.getType());
      auto acc = tile ? dyn_cast_or_null<WgmmaAccLayoutAttr>(tile.getLayout()) : nullptr;
      auto slice = tile ? dyn_cast_or_null<AccSliceLayoutAttr>(tile.getLayout()) : nullptr;
      int64_t warpgroups = acc ? acc.getWarpgroups() : slice ? slice.getWarpgroups() : 0;
      if (warpgroups && threads && warpgroups * 128 != threads) {
        op->emitOpError() << "has a " << tile << " spread over " << warpgroups
                          << " warpgroup(s) but runs on " << threads
                          << " threads: a wgmma-accumulator fragment must span all of them";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}


/// Each qla.role_region becomes a branch that only its warpgroups take (marked qla.role_group, which
/// the lowering of the ops inside reads: role-local thread index, named barrier), starting with the
/// role's setmaxnreg.
LogicalResult lowerRoleRegions(func::FuncOp kernel) {
  int64_t cap = registerCapWithRoles(kernel);
  auto roles = kernel->getAttrOfType<ArrayAttr>(QlaDialect::kRolesAttr);
  SmallVector<RoleRegionOp> regions;
  kernel.walk([&](RoleRegionOp r) { regions.push_back(r); });
  for (RoleRegionOp region : regions) {
    if (region->getParentOp() != kernel.getOperation())
      return region.emitOpError() << "must be at the top level of its kernel";
    ThreadGroup g = threadGroup(region);
    RoleAttr role = cast<RoleAttr>(roles[g.barrierId - 1]);
    Location loc = region.getLoc();
    OpBuilder b(region);
    Value tid = b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
    Value from = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, tid, i32Const(b, loc, g.firstThread));
    Value to = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid, i32Const(b, loc, g.firstThread + g.threads));
    auto branch = b.create<scf::IfOp>(loc, b.create<arith::AndIOp>(loc, from, to), /*withElseRegion=*/false);
    branch->setAttr(kRoleGroupAttr, b.getDenseI64ArrayAttr({g.firstThread, g.threads, g.barrierId}));
    Block *then = branch.thenBlock();
    then->getOperations().splice(then->begin(), region.getBody().front().getOperations());
    if (int64_t want = role.getRegisters(); want && cap && want != cap) {
      OpBuilder t = OpBuilder::atBlockBegin(then);
      t.create<NVVM::SetMaxRegisterOp>(loc, want, want > cap ? NVVM::SetMaxRegisterAction::increase
                                                             : NVVM::SetMaxRegisterAction::decrease);
    }
    region.erase();
  }
  return success();
}

/// qla.for loops that no pass pipelined are plain loops.
void lowerRemainingLoops(func::FuncOp kernel) {
  SmallVector<ForOp> loops;
  kernel.walk([&](ForOp loop) { loops.push_back(loop); });
  for (ForOp loop : loops) {
    OpBuilder b(loop);
    auto newLoop = b.create<scf::ForOp>(loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
                                        loop.getStep(), loop.getInitArgs());
    Block *newBody = newLoop.getBody();
    if (!newBody->empty())
      newBody->back().erase();
    Block *oldBody = loop.getBodyBlock();
    auto yield = cast<YieldOp>(oldBody->getTerminator());
    b.setInsertionPoint(yield);
    b.create<scf::YieldOp>(yield.getLoc(), yield.getValues());
    yield.erase();
    newBody->getOperations().splice(newBody->end(), oldBody->getOperations());
    for (auto [oldArg, newArg] : llvm::zip(oldBody->getArguments(), newBody->getArguments()))
      oldArg.replaceAllUsesWith(newArg);
    loop.replaceAllUsesWith(newLoop.getResults());
    loop.erase();
  }
}

/// Marks runs of copies into shared memory with nothing between them that touches shared memory
/// (index arithmetic, loads into registers or of scalars), so the run synchronises once. An op with
/// scratch (an exchange, a transposed copy or store through shared memory) ends the run even when it
/// is pure: the next copy may take its bytes, and must wait for every thread to be done with them.
void markCopyRuns(func::FuncOp kernel) {
  auto isSharedCopy = [](Operation *op) {
    auto copy = dyn_cast<CopyOp>(op);
    return copy && copy.getType().isShared();
  };
  kernel.walk([&](Block *block) {
    Operation *previous = nullptr;
    for (Operation &op : *block) {
      if (isSharedCopy(&op)) {
        if (previous) {
          previous->setAttr(kCopyWaitsLaterAttr, UnitAttr::get(op.getContext()));
          op.setAttr(kCopyFollowsCopyAttr, UnitAttr::get(op.getContext()));
        }
        previous = &op;
      } else if (op.hasAttr(kScratchOffsetAttr) || !(isPure(&op) || isa<CopyOp, LoadOp, PrefetchOp>(op))) {
        previous = nullptr;
      }
    }
  });
}

Attribute i64Array(Builder &b, ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); }

/// Appends one tensor-map parameter per distinct (tensor, box, swizzle) and records the kernel ABI.
LogicalResult bindTensorMaps(func::FuncOp kernel, SmallVectorImpl<Attribute> &abiParams) {
  Builder b(kernel.getContext());
  unsigned numTensors = kernel.getNumArguments();
  for (unsigned i = 0; i < numTensors; ++i) {
    auto t = dyn_cast<qla::TensorType>(kernel.getArgument(i).getType());
    if (!t)
      return kernel.emitError() << "kernel argument " << i << " must be a !qla.tensor, got "
                                << kernel.getArgument(i).getType();
    auto name = kernel.getArgAttrOfType<StringAttr>(i, "qla.name");
    abiParams.push_back(b.getDictionaryAttr({
        b.getNamedAttr("kind", b.getStringAttr("tensor")),
        b.getNamedAttr("name", name ? name : b.getStringAttr("arg" + std::to_string(i))),
        b.getNamedAttr("dtype", TypeAttr::get(t.getElementType())),
        b.getNamedAttr("shape", i64Array(b, t.getShape())),
        b.getNamedAttr("strides", i64Array(b, t.getEffectiveStrides())),
    }));
  }
  std::map<std::tuple<unsigned, SmallVector<int64_t>, int64_t>, unsigned> params;
  WalkResult walk = kernel.walk([&](TmaLoadOp load) -> WalkResult {
    auto arg = dyn_cast<BlockArgument>(load.getSource());
    if (!arg || arg.getOwner() != &kernel.front())
      return load.emitOpError() << "TMA source must be a kernel argument";
    TileType tile = load.getDest().getType();
    auto swz = dyn_cast_or_null<SwizzleAttr>(tile.getLayout());
    int64_t swizzle = swz ? swz.getBytes() : 0;
    SmallVector<int64_t> box(tile.getShape());
    int64_t eb = elementBytes(tile.getElementType());
    box.back() = smemBlockRowBytes(box.back() * eb) / eb; // one column block per TMA box
    auto key = std::make_tuple(arg.getArgNumber(), box, swizzle);
    auto it = params.find(key);
    if (it == params.end()) {
      unsigned index = kernel.getNumArguments();
      (void)kernel.insertArgument(index, LLVM::LLVMPointerType::get(kernel.getContext()),
                                  b.getDictionaryAttr({}), load.getLoc());
      it = params.emplace(key, index).first;
      SmallVector<int64_t> innermostFirst(box.rbegin(), box.rend());
      abiParams.push_back(b.getDictionaryAttr({
          b.getNamedAttr("kind", b.getStringAttr("tensormap")),
          b.getNamedAttr("tensor", b.getI64IntegerAttr(arg.getArgNumber())),
          b.getNamedAttr("box", i64Array(b, innermostFirst)),
          b.getNamedAttr("swizzle", b.getI64IntegerAttr(swizzle)),
      }));
    }
    load.getDescriptorMutable().assign(kernel.getArgument(it->second));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Copies and stores check their bounds against explicit operands: a dynamic extent becomes a
/// qla.dim bound (the smaller of it and any given bound).
template <typename OpT>
void makeExtentsExplicit(OpT op, Value tensor) {
  auto t = cast<qla::TensorType>(tensor.getType());
  if (!ShapedType::isDynamicShape(t.getShape()))
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> bounds;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    Value extent = t.getShape()[d] == ShapedType::kDynamic
                       ? Value(b.create<DimOp>(loc, b.getIndexType(), tensor, b.getI64IntegerAttr(d)))
                       : Value(b.create<arith::ConstantIndexOp>(loc, t.getShape()[d]));
    if (!op.getBounds().empty())
      extent = b.create<arith::MinSIOp>(loc, extent, op.getBounds()[d]);
    bounds.push_back(extent);
  }
  op.getBoundsMutable().assign(bounds);
}

/// Each (tensor, dimension) that qla.dim reads becomes an i64 kernel parameter.
LogicalResult bindDims(func::FuncOp kernel, SmallVectorImpl<Attribute> &abiParams) {
  kernel.walk([&](CopyOp op) { makeExtentsExplicit(op, op.getSource()); });
  kernel.walk([&](StoreOp op) { makeExtentsExplicit(op, op.getDest()); });
  Builder b(kernel.getContext());
  std::map<std::pair<unsigned, int64_t>, unsigned> params;
  SmallVector<DimOp> dims;
  kernel.walk([&](DimOp op) { dims.push_back(op); });
  for (DimOp op : dims) {
    auto arg = dyn_cast<BlockArgument>(op.getTensor());
    if (!arg || arg.getOwner() != &kernel.front())
      return op.emitOpError() << "reads the extent of a value that is not a kernel argument";
    auto key = std::make_pair(arg.getArgNumber(), op.getDim());
    auto it = params.find(key);
    if (it == params.end()) {
      unsigned index = kernel.getNumArguments();
      (void)kernel.insertArgument(index, b.getI64Type(), b.getDictionaryAttr({}), op.getLoc());
      it = params.emplace(key, index).first;
      abiParams.push_back(b.getDictionaryAttr({
          b.getNamedAttr("kind", b.getStringAttr("dim")),
          b.getNamedAttr("tensor", b.getI64IntegerAttr(arg.getArgNumber())),
          b.getNamedAttr("dim", b.getI64IntegerAttr(op.getDim())),
      }));
    }
    OpBuilder ob(op);
    op.replaceAllUsesWith(ob.create<arith::IndexCastOp>(op.getLoc(), ob.getIndexType(),
                                                        kernel.getArgument(it->second)).getResult());
    op.erase();
  }
  return success();
}

/// qla.dependent_launch: before anything else the kernel waits for the grids before it on the stream
/// (their writes visible), then lets the grid after it launch: that grid's blocks start as this one's
/// finish and wait in turn, so only launch latency and block start-up overlap, never data.
void emitGridDependencies(func::FuncOp kernel) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  b.create<NVVM::GriddepcontrolOp>(kernel.getLoc(), NVVM::GridDepActionKind::wait);
  b.create<NVVM::GriddepcontrolOp>(kernel.getLoc(), NVVM::GridDepActionKind::launch_dependents);
}

struct ConvertToNVVMPass : qla::impl::QlaConvertToNVVMBase<ConvertToNVVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<NamedAttribute> abi;
    bool needsSmem = false;
    for (auto kernel : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!kernel->hasAttr(QlaDialect::kKernelAttr))
        continue;
      if (failed(checkFragmentsCoverThreads(kernel)) || failed(lowerRoleRegions(kernel)))
        return signalPassFailure();
      lowerRemainingLoops(kernel);
      markCopyRuns(kernel);
      SmallVector<Attribute> params;
      if (failed(bindTensorMaps(kernel, params)) || failed(bindDims(kernel, params)))
        return signalPassFailure();
      needsSmem |= kernel->hasAttr(QlaDialect::kSmemAttr);
      Builder b(ctx);
      SmallVector<NamedAttribute> entry{b.getNamedAttr("params", b.getArrayAttr(params))};
      for (StringRef attr :
           {QlaDialect::kGridAttr, QlaDialect::kBlockAttr, QlaDialect::kSmemAttr, QlaDialect::kMinBlocksAttr})
        if (Attribute v = kernel->getAttr(attr))
          entry.push_back(b.getNamedAttr(attr.drop_front(4), v));
      if (int64_t cap = registerCapWithRoles(kernel))
        entry.push_back(b.getNamedAttr("max_registers", b.getI64IntegerAttr(cap)));
      if (kernel->hasAttr(QlaDialect::kDependentLaunchAttr)) {
        entry.push_back(b.getNamedAttr("dependent_launch", b.getUnitAttr()));
        emitGridDependencies(kernel);
      }
      abi.push_back(b.getNamedAttr(kernel.getSymName(), b.getDictionaryAttr(entry)));
      for (StringRef attr : {QlaDialect::kKernelAttr, QlaDialect::kGridAttr, QlaDialect::kBlockAttr,
                             QlaDialect::kSmemAttr, QlaDialect::kMinBlocksAttr})
        kernel->removeAttr(attr); // qla.abi carries them from here on (qla.scratch_offset is read by the lowering)
      kernel->removeAttr(QlaDialect::kDependentLaunchAttr);
      kernel->removeAttr(QlaDialect::kWarpgroupLocalAttr); // (in the layouts and scratch attributes from here on)
      kernel->removeAttr(QlaDialect::kRolesAttr);
    }
    // Declared with the 16-byte alignment the hardware guarantees: a larger declared alignment is not
    // honoured for dynamic shared memory, and would let LLVM fold away the run-time alignment.
    if (needsSmem && !module.lookupSymbol(kSmemSymbol)) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      b.create<LLVM::GlobalOp>(module.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0), /*isConstant=*/false,
                               LLVM::Linkage::External, kSmemSymbol, Attribute(), /*alignment=*/16,
                               /*addrSpace=*/3);
    }
    module->setAttr("qla.abi", DictionaryAttr::get(ctx, abi));

    TileTypeConverter converter(ctx);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<QlaDialect, math::MathDialect>();
    target.addLegalDialect<arith::ArithDialect, LLVM::LLVMDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect,
                           scf::SCFDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>(
        [&](func::FuncOp f) { return converter.isSignatureLegal(f.getFunctionType()) && converter.isLegal(&f.getBody()); });
    target.addDynamicallyLegalOp<func::ReturnOp>([&](func::ReturnOp op) { return converter.isLegal(op); });
    RewritePatternSet patterns(ctx);
    populateFragmentPatterns(converter, patterns);
    populateSharedPatterns(converter, patterns);
    populateGemmPatterns(converter, patterns);
    populateExchangePatterns(converter, patterns);
    populateMathPatterns(patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

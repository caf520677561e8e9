// The pass pipeline, listed in one place, one line per pass.
#include "qla/Pipeline/Pipeline.h"
#include "qla/Dialect/Tile/IR/QlaDialect.h"
#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace qla {

void registerQlaDialects(DialectRegistry &registry) {
  registry.insert<QlaDialect, arith::ArithDialect, scf::SCFDialect, func::FuncDialect, cf::ControlFlowDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect, gpu::GPUDialect,
                  memref::MemRefDialect, vector::VectorDialect, math::MathDialect>();
}

void buildPipeline(OpPassManager &pm, const CompileOptions &options) {
  // Tile level.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createQlaAssignRoles()); // DESIGN.md §4: roles (warp specialization) before pipelining
  pm.addPass(createQlaWarpSpecialize());
  pm.addPass(createQlaPipeline());
  pm.addPass(createQlaAssignLayouts());
  pm.addPass(createQlaOverlapGemms());
  pm.addPass(createQlaOrderWarpgroups());
  pm.addPass(createQlaPlanSmem(QlaPlanSmemOptions{options.smemBudgetBytes}));
  // To NVVM and LLVM.
  pm.addPass(createQlaConvertToNVVM());
  if (options.stopAfterConvertToNVVM) // what the SIMT simulator runs
    return;
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

std::vector<std::string> pipelinePassNames() {
  MLIRContext ctx;
  PassManager pm(&ctx);
  buildPipeline(pm, CompileOptions{});
  std::vector<std::string> names;
  for (Pass &p : pm.getPasses())
    names.push_back(p.getArgument().str());
  return names;
}

void registerPassesAndPipelines() {
  registerQlaPasses();
  PassPipelineRegistration<>("qla-lower-to-llvm", "the whole qla pipeline, tile IR to LLVM dialect",
                             [](OpPassManager &pm) { buildPipeline(pm, CompileOptions{}); });
}

LogicalResult lowerToLLVM(ModuleOp module, const CompileOptions &options, std::string *dump) {
  if ((!options.dumpAfter.empty() && dump) || !options.dumpDir.empty())
    module.getContext()->disableMultithreading(); // IR printing needs it
  PassManager pm(module.getContext());
  buildPipeline(pm, options);
  std::optional<llvm::raw_string_ostream> stream; // must outlive pm.run
  if (!options.dumpAfter.empty() && dump) {
    stream.emplace(*dump);
    pm.enableIRPrinting(
        [](Pass *, Operation *) { return false; },
        [name = options.dumpAfter](Pass *p, Operation *) { return p->getArgument() == name; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false, /*printAfterOnlyOnFailure=*/false, *stream);
  }
  if (!options.dumpDir.empty()) {
    llvm::sys::fs::create_directories(options.dumpDir);
    pm.enableIRPrintingToFileTree([](Pass *, Operation *) { return false; },
                                  [](Pass *, Operation *) { return true; },
                                  /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                                  /*printAfterOnlyOnFailure=*/false, options.dumpDir);
  }
  return pm.run(module);
}

static std::vector<int64_t> ints(Attribute a) {
  if (auto arr = dyn_cast_or_null<DenseI64ArrayAttr>(a))
    return std::vector<int64_t>(arr.asArrayRef().begin(), arr.asArrayRef().end());
  return {};
}

static std::string dtypeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::vector<KernelAbi> readKernelAbis(ModuleOp module) {
  std::vector<KernelAbi> abis;
  auto all = module->getAttrOfType<DictionaryAttr>("qla.abi");
  if (!all)
    return abis;
  for (NamedAttribute k : all) {
    auto d = cast<DictionaryAttr>(k.getValue());
    KernelAbi abi;
    abi.entry = k.getName().str();
    if (auto g = ints(d.get("grid")); g.size() == 3)
      std::copy(g.begin(), g.end(), abi.grid.begin());
    if (auto bl = ints(d.get("block")); bl.size() == 3)
      std::copy(bl.begin(), bl.end(), abi.block.begin());
    if (auto s = dyn_cast_or_null<IntegerAttr>(d.get("smem_bytes")))
      abi.smemBytes = s.getInt();
    abi.dependentLaunch = d.get("dependent_launch") != nullptr;
    for (Attribute pa : cast<ArrayAttr>(d.get("params"))) {
      auto p = cast<DictionaryAttr>(pa);
      KernelParam param;
      StringRef kind = cast<StringAttr>(p.get("kind")).getValue();
      if (kind == "dim") {
        param.kind = KernelParam::Kind::Dim;
        param.tensor = cast<IntegerAttr>(p.get("tensor")).getInt();
        param.dim = cast<IntegerAttr>(p.get("dim")).getInt();
      } else if (kind == "tensor") {
        param.kind = KernelParam::Kind::Tensor;
        param.name = cast<StringAttr>(p.get("name")).str();
        param.dtype = dtypeName(cast<TypeAttr>(p.get("dtype")).getValue());
        param.shape = ints(p.get("shape"));
        for (int64_t &dim : param.shape)
          dim = ShapedType::isDynamic(dim) ? -1 : dim;
        param.strides = ints(p.get("strides"));
        for (int64_t &st : param.strides)
          st = ShapedType::isDynamic(st) ? -1 : st;
      } else {
        param.kind = KernelParam::Kind::TensorMap;
        param.tensor = cast<IntegerAttr>(p.get("tensor")).getInt();
        param.box = ints(p.get("box"));
        param.swizzle = cast<IntegerAttr>(p.get("swizzle")).getInt();
      }
      abi.params.push_back(std::move(param));
    }
    abis.push_back(std::move(abi));
  }
  return abis;
}

} // namespace qla

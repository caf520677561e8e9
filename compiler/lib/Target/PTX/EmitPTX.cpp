// PTX from an LLVM-dialect module by LLVM's NVPTX backend, in-process.
#include "qla/Pipeline/Pipeline.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;

namespace qla {

namespace {

/// PTX ISA versions this toolchain's ptxas accepts; asking LLVM for others can abort the process.
bool isSupportedPtxFeature(llvm::StringRef f) {
  static const char *ok[] = {"+ptx80", "+ptx81", "+ptx82", "+ptx83", "+ptx84", "+ptx85", "+ptx86", "+ptx87", "+ptx88", "+ptx90"};
  return llvm::is_contained(ok, f);
}

/// Kernel entry attributes that the lowering leaves to the end: entry, block size, by-value tensor maps.
LogicalResult markKernels(ModuleOp module) {
  auto abi = module->getAttrOfType<DictionaryAttr>("qla.abi");
  if (!abi)
    return module.emitError() << "no qla.abi: run the qla pipeline before emitting PTX";
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  for (NamedAttribute k : abi) {
    auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(k.getName());
    if (!fn)
      return module.emitError() << "kernel " << k.getName() << " was not lowered to llvm.func";
    auto d = cast<DictionaryAttr>(k.getValue());
    fn->setAttr("nvvm.kernel", b.getUnitAttr());
    if (auto block = dyn_cast_or_null<DenseI64ArrayAttr>(d.get("block"))) {
      SmallVector<int32_t> dims(block.asArrayRef().begin(), block.asArrayRef().end());
      fn->setAttr("nvvm.maxntid", b.getDenseI32ArrayAttr(dims));
    }
    if (auto cap = dyn_cast_or_null<IntegerAttr>(d.get("max_registers"))) // setmaxnreg needs .maxnreg
      fn->setAttr("nvvm.maxnreg", b.getI32IntegerAttr(static_cast<int32_t>(cap.getInt())));
    if (auto minBlocks = dyn_cast_or_null<IntegerAttr>(d.get("min_blocks_per_sm")))
      fn->setAttr("nvvm.minctasm", b.getI32IntegerAttr(static_cast<int32_t>(minBlocks.getInt())));
    auto params = cast<ArrayAttr>(d.get("params"));
    for (auto [i, p] : llvm::enumerate(params)) {
      if (cast<StringAttr>(cast<DictionaryAttr>(p).get("kind")).getValue() != "tensormap")
        continue;
      fn.setArgAttr(i, "llvm.byval", TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
      fn.setArgAttr(i, "llvm.align", b.getI64IntegerAttr(64));
      fn.setArgAttr(i, "nvvm.grid_constant", b.getUnitAttr());
    }
  }
  return success();
}

} // namespace

FailureOr<std::string> emitPTX(ModuleOp module, const CompileOptions &options) {
  if (!isSupportedPtxFeature(options.ptxFeatures))
    return module.emitError() << "unsupported PTX feature '" << options.ptxFeatures
                              << "': use +ptx80 .. +ptx90 (ptxas 13.0 rejects later versions)";
  if (options.chip != "sm_90a")
    return module.emitError() << "unsupported chip '" << options.chip << "': QLA targets sm_90a";
  if (failed(markKernels(module)))
    return failure();

  static std::once_flag initOnce;
  std::call_once(initOnce, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // 32-bit shared-memory addresses: half the registers for the many per-element addresses.
    auto &opts = llvm::cl::getRegisteredOptions();
    if (auto it = opts.find("nvptx-short-ptr"); it != opts.end())
      static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
  });
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, "qla");
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";

  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << "NVPTX target unavailable: " << error;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, options.chip, options.ptxFeatures, llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(tm->createDataLayout());

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*llvmModule, mam);
  }

  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      return module.emitError() << "NVPTX cannot emit assembly";
    codegen.run(*llvmModule);
  }
  return std::string(ptx.str());
}

} // namespace qla

// The compiler's pass pipeline, in order, and PTX emission.
#ifndef QLA_PIPELINE_PIPELINE_H
#define QLA_PIPELINE_PIPELINE_H

#include "qla/Pipeline/KernelAbi.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace qla {

struct CompileOptions {
  std::string chip = "sm_90a";
  std::string ptxFeatures = "+ptx80";   // PTX ISA 8.0 .. 9.0 are accepted by ptxas 13.0
  int64_t smemBudgetBytes = 232448;
  std::string dumpAfter;                // pass argument (e.g. "qla-pipeline"): print the IR after it
  std::string dumpDir;                  // write the IR after every pass there
  bool stopAfterConvertToNVVM = false;  // end the pipeline at qla-convert-to-nvvm (the SIMT simulator's input)
};

/// Every pass, in order, from tile IR to LLVM dialect. `qlac dump --after=` uses these names.
std::vector<std::string> pipelinePassNames();
void buildPipeline(mlir::OpPassManager &pm, const CompileOptions &options);
/// Registers the passes and the `qla-lower-to-llvm` pipeline with the global registry (for qla-opt).
void registerPassesAndPipelines();
/// Dialects the pipeline's input and output use.
void registerQlaDialects(mlir::DialectRegistry &registry);

/// Runs the pipeline in place; diagnostics go to the context's handler.
mlir::LogicalResult lowerToLLVM(mlir::ModuleOp module, const CompileOptions &options, std::string *dump = nullptr);
/// The ABI of each kernel, from the lowered module's qla.abi.
std::vector<KernelAbi> readKernelAbis(mlir::ModuleOp module);
/// PTX for an LLVM-dialect module (after lowerToLLVM), by LLVM's NVPTX backend in-process.
mlir::FailureOr<std::string> emitPTX(mlir::ModuleOp module, const CompileOptions &options);

} // namespace qla

#endif

// Kernel::compile: the pipeline and NVPTX on a copy of the kernel's IR, and its manifest.
#include "qla/dsl/Kernel.h"
#include "KernelImpl.h"

#include "qla/Interpreter/Interpreter.h"
#include "qla/Pipeline/Pipeline.h"
#include "qla/Simt/Simt.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"

#include "qla/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/IR/Verifier.h"

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>

using namespace mlir;

namespace qla::dsl {

namespace {

std::string describe(Diagnostic &d) {
  std::string where;
  if (auto loc = dyn_cast<FileLineColLoc>(d.getLocation())) {
    std::string file = loc.getFilename().str();
    if (auto slash = file.rfind('/'); slash != std::string::npos)
      file = file.substr(slash + 1);
    where = fmt::format("{}:{}: ", file, loc.getLine());
  }
  return where + d.str();
}

Json ints(const std::vector<int64_t> &v) {
  Json a = Json::array();
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

Json manifestOf(const std::string &kernel, const KernelAbi &abi, const std::string &features) {
  Json m = Json::object();
  m.set("kernel", kernel);
  m.set("entry", abi.entry);
  m.set("arch", "sm_90a");
  m.set("ptx_features", features);
  m.set("grid", ints({abi.grid[0], abi.grid[1], abi.grid[2]}));
  m.set("block", ints({abi.block[0], abi.block[1], abi.block[2]}));
  m.set("smem_bytes", abi.smemBytes);
  if (abi.dependentLaunch)
    m.set("dependent_launch", true);
  Json params = Json::array();
  for (const KernelParam &p : abi.params) {
    Json j = Json::object();
    if (p.kind == KernelParam::Kind::Tensor) {
      j.set("kind", "tensor");
      j.set("name", p.name);
      j.set("dtype", p.dtype);
      j.set("shape", ints(p.shape));
      j.set("strides", ints(p.strides));
    } else if (p.kind == KernelParam::Kind::Dim) {
      j.set("kind", "dim");
      j.set("tensor", p.tensor);
      j.set("dim", p.dim);
    } else {
      j.set("kind", "tensormap");
      j.set("tensor", p.tensor);
      j.set("box", ints(p.box));
      j.set("swizzle", p.swizzle);
    }
    params.push_back(std::move(j));
  }
  m.set("params", std::move(params));
  return m;
}

} // namespace

CompiledPtx Kernel::compile(const CompileOptions &options) const {
  auto start = std::chrono::steady_clock::now();
  MLIRContext &ctx = impl_->ctx;
  ctx.loadAllAvailableDialects(); // the lowering's dialects (the builder loads only its own)
  OwningOpRef<ModuleOp> module = impl_->module->clone();
  std::vector<std::string> errors, remarks;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    (d.getSeverity() == DiagnosticSeverity::Remark ? remarks : errors).push_back(describe(d));
    for (Diagnostic &note : d.getNotes())
      errors.push_back("  note: " + describe(note));
    return success();
  });
  auto fail = [&](const char *stage) {
    std::string why = fmt::format("kernel '{}': {} failed:\n  {}", name_, stage, fmt::join(errors, "\n  "));
    if (!remarks.empty()) // e.g. why a loop was not pipelined, which often explains the error
      why += fmt::format("\n  remarks:\n  {}", fmt::join(remarks, "\n  "));
    return Error(why);
  };
  if (failed(verify(*module)))
    throw fail("IR verification");
  qla::CompileOptions co;
  co.ptxFeatures = options.ptxFeatures;
  co.dumpAfter = options.dumpAfter;
  co.dumpDir = options.dumpDir;
  if (const char *dir = std::getenv("QLA_DUMP_DIR"); dir && *dir && co.dumpDir.empty())
    co.dumpDir = std::string(dir) + "/" + name_; // the IR after every pass, one file each (DESIGN §4)
  if (failed(lowerToLLVM(*module, co, options.dump)))
    throw fail("lowering");
  std::vector<KernelAbi> abis = readKernelAbis(*module);
  if (abis.size() != 1)
    throw Error(fmt::format("kernel '{}': expected one lowered kernel, got {}", name_, abis.size()));
  FailureOr<std::string> ptx = emitPTX(*module, co);
  if (failed(ptx))
    throw fail("PTX emission");
  CompiledPtx out;
  out.ptx = std::move(*ptx);
  out.entry = abis[0].entry;
  out.manifestJson = manifestOf(name_, abis[0], options.ptxFeatures).dump();
  out.remarks = std::move(remarks);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void Kernel::dropLoopOutputs() {
  MLIRContext &ctx = impl_->ctx;
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors.push_back(describe(d));
    return success();
  });
  PassManager pm(&ctx);
  pm.addPass(qla::createQlaDropLoopOutputs());
  if (failed(pm.run(*impl_->module)))
    throw Error(fmt::format("kernel '{}': qla-drop-loop-outputs failed:\n  {}", name_, fmt::join(errors, "\n  ")));
}

void Kernel::contextSplitRun(const std::string &form, int64_t decayColumns) {
  MLIRContext &ctx = impl_->ctx;
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors.push_back(describe(d));
    return success();
  });
  PassManager pm(&ctx);
  pm.addPass(qla::createQlaContextSplit({.form = form, .decayColumns = decayColumns}));
  if (failed(pm.run(*impl_->module)))
    throw Error(fmt::format("kernel '{}': qla-context-split failed:\n  {}", name_, fmt::join(errors, "\n  ")));
}

void Kernel::interpret(const std::vector<HostTensor *> &args, std::array<int64_t, 3> grid) const {
  MLIRContext &ctx = impl_->ctx;
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors.push_back(describe(d));
    return success();
  });
  if (failed(verify(*impl_->module)) || failed(interpretKernel(impl_->func, args, grid)))
    throw Error(fmt::format("kernel '{}': interpreter failed:\n  {}", name_, fmt::join(errors, "\n  ")));
}

void Kernel::simulate(const std::vector<HostTensor *> &args, std::array<int64_t, 3> grid) const {
  if (failed(verify(*impl_->module)))
    throw Error(fmt::format("kernel '{}': the tile IR does not verify", name_));
  qla::simt::Report r = qla::simt::simulateKernel(impl_->func, args, grid);
  if (!r.errors.empty() || !r.hazards.empty())
    throw Error(fmt::format("kernel '{}': SIMT simulator: {}{}", name_, fmt::join(r.errors, "\n  "),
                            r.hazards.empty() ? "" : fmt::format("{} shared-memory hazards, the first: {}",
                                                                 r.hazards.size(), r.hazards.front())));
}

} // namespace qla::dsl

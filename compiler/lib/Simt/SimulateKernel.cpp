// simulateKernel (qla/Simt/Simt.h): a tile-level kernel through the pipeline to qla-convert-to-nvvm,
// then every block of its grid on the SIMT simulator, with host tensors converted to the GPU's bytes.
#include "qla/Pipeline/Pipeline.h"
#include "qla/Simt/Simt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>
#include <cstring>

namespace qla::simt {

using namespace mlir;

namespace {

int64_t dtypeBytes(const std::string &dtype) {
  return dtype == "bf16" || dtype == "f16" ? 2 : dtype == "f32" || dtype == "i32" ? 4 : 8;
}

/// `v` as the bytes of `dtype` (floats rounded to nearest even, as the GPU would store them).
void toBytes(const std::string &dtype, double v, uint8_t *out) {
  if (dtype == "f32") {
    float f = static_cast<float>(v);
    std::memcpy(out, &f, 4);
  } else if (dtype == "f64") {
    std::memcpy(out, &v, 8);
  } else if (dtype == "bf16" || dtype == "f16") {
    llvm::APFloat f(v);
    bool lost;
    f.convert(dtype == "bf16" ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    uint16_t h = static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
    std::memcpy(out, &h, 2);
  } else if (dtype == "i32") {
    int32_t i = static_cast<int32_t>(v);
    std::memcpy(out, &i, 4);
  } else {
    int64_t i = static_cast<int64_t>(v);
    std::memcpy(out, &i, 8);
  }
}
double fromBytes(const std::string &dtype, const uint8_t *in) {
  if (dtype == "f32") {
    float f;
    std::memcpy(&f, in, 4);
    return f;
  }
  if (dtype == "f64") {
    double d;
    std::memcpy(&d, in, 8);
    return d;
  }
  if (dtype == "bf16" || dtype == "f16") {
    uint16_t h;
    std::memcpy(&h, in, 2);
    llvm::APFloat f(dtype == "bf16" ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf(), llvm::APInt(16, h));
    bool lost;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  if (dtype == "i32") {
    int32_t i;
    std::memcpy(&i, in, 4);
    return i;
  }
  int64_t i;
  std::memcpy(&i, in, 8);
  return double(i);
}

} // namespace

Report simulateKernel(func::FuncOp tileKernel, const std::vector<HostTensor *> &args, std::array<int64_t, 3> grid) {
  Report report;
  MLIRContext *ctx = tileKernel.getContext();
  std::vector<std::string> diagnostics;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    diagnostics.push_back(d.str());
    return success();
  });
  auto fail = [&](const std::string &what) {
    report.errors.push_back(what);
    for (const std::string &d : diagnostics)
      report.errors.push_back(d);
    return report;
  };
  // The pipeline changes the module in place: a copy of the kernel's goes through it, to
  // qla-convert-to-nvvm (the ops keep the DSL program's locations: opsBySource).
  auto source = tileKernel->getParentOfType<ModuleOp>();
  OwningOpRef<ModuleOp> lowered = cast<ModuleOp>(source->clone());
  ctx->loadAllAvailableDialects();
  CompileOptions options;
  options.stopAfterConvertToNVVM = true;
  if (failed(lowerToLLVM(*lowered, options)))
    return fail("the pipeline failed on kernel '" + tileKernel.getName().str() + "'");
  std::vector<KernelAbi> abis = readKernelAbis(*lowered);
  auto abi = llvm::find_if(abis, [&](const KernelAbi &a) { return a.entry == tileKernel.getName(); });
  if (abi == abis.end())
    return fail("no ABI for kernel '" + tileKernel.getName().str() + "'");
  func::FuncOp entry = lowered->lookupSymbol<func::FuncOp>(tileKernel.getName());
  if (!entry)
    return fail("no kernel '" + tileKernel.getName().str() + "' after qla-convert-to-nvvm");

  // Tensors (first among the parameters), then dims and tensor maps made from them.
  std::vector<Buffer> buffers(args.size());
  std::vector<std::unique_ptr<TensorMap>> maps;
  std::vector<Arg> simArgs;
  for (const KernelParam &p : abi->params) {
    if (p.kind == KernelParam::Kind::Tensor) {
      size_t i = simArgs.size();
      if (i >= args.size())
        return fail("kernel '" + tileKernel.getName().str() + "' has more tensor parameters than arguments given");
      int64_t bytes = dtypeBytes(p.dtype);
      buffers[i].bytes.assign(args[i]->data.size() * bytes, 0);
      for (size_t e = 0; e < args[i]->data.size(); ++e)
        toBytes(p.dtype, args[i]->data[e], &buffers[i].bytes[e * bytes]);
      simArgs.push_back({&buffers[i]});
    } else if (p.kind == KernelParam::Kind::Dim) {
      simArgs.push_back({nullptr, args[p.tensor]->shape[p.dim]});
    } else {
      const KernelParam &t = abi->params[p.tensor];
      auto map = std::make_unique<TensorMap>();
      map->buffer = &buffers[p.tensor];
      map->elementBytes = dtypeBytes(t.dtype);
      const std::vector<int64_t> &shape = args[p.tensor]->shape;
      for (size_t d = shape.size(); d-- > 0;) {
        map->dims.push_back(shape[d]);
        if (d + 1 < shape.size())
          map->stridesBytes.push_back(t.strides[d] * map->elementBytes);
      }
      map->box = p.box;
      map->swizzle = p.swizzle;
      simArgs.push_back({nullptr, 0, map.get()});
      maps.push_back(std::move(map));
    }
  }
  for (int d = 0; d < 3; ++d)
    if (grid[d] == 0)
      grid[d] = abi->grid[d];
  if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1)
    return fail("kernel '" + tileKernel.getName().str() + "' needs its grid given (dimensions set at launch)");
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        Report block = simulateBlock(entry, abi->block[0], abi->smemBytes, simArgs, {x, y, z});
        report.barriers += block.barriers;
        report.ops += block.ops;
        for (const auto &[source, n] : block.opsBySource)
          report.opsBySource[source] += n;
        std::string where = " (block " + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
        for (const std::string &h : block.hazards)
          report.hazards.push_back(h + where);
        for (const std::string &e : block.errors)
          report.errors.push_back(e + where);
        if (!block.errors.empty())
          return report;
      }
  for (size_t i = 0; i < args.size() && i < buffers.size(); ++i) {
    const KernelParam &p = abi->params[i];
    int64_t bytes = dtypeBytes(p.dtype);
    for (size_t e = 0; e < args[i]->data.size(); ++e)
      args[i]->data[e] = fromBytes(p.dtype, &buffers[i].bytes[e * bytes]);
  }
  return report;
}

} // namespace qla::simt

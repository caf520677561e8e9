// The qla passes. Declared in Passes.td.
#ifndef QLA_DIALECT_TILE_TRANSFORMS_PASSES_H
#define QLA_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gpu { class GPUDialect; }
namespace nvgpu { class NVGPUDialect; }
namespace scf { class SCFDialect; }
namespace arith { class ArithDialect; }
namespace LLVM { class LLVMDialect; }
namespace NVVM { class NVVMDialect; }
} // namespace mlir

namespace qla {
#define GEN_PASS_DECL
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qla/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace qla

#endif

// A CPU interpreter of tile-level qla kernels: every block of the grid runs in turn, tiles are
// plain arrays, and every value is rounded to its element type after each op, as the GPU would
// store it. It checks DSL programs against references without a GPU (DESIGN.md §7).
#ifndef QLA_INTERPRETER_INTERPRETER_H
#define QLA_INTERPRETER_INTERPRETER_H

#include "qla/Interpreter/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <cstdint>
#include <vector>

namespace qla {

/// Runs `kernel` (tile level: before qla-pipeline) on `args`, one per kernel argument, over its
/// whole grid. Stores are rounded to the tensors' element types. Errors (unsupported ops, shape
/// mismatches) are emitted as diagnostics on the offending op.
/// `grid` overrides the kernel's qla.grid where nonzero (required for dimensions given at launch).
mlir::LogicalResult interpretKernel(mlir::func::FuncOp kernel, llvm::ArrayRef<HostTensor *> args,
                                    std::array<int64_t, 3> grid = {0, 0, 0});

/// `value` rounded to `type` (bf16, f16, f32: round to nearest even; f64 and integers as given).
double roundTo(mlir::Type type, double value);

} // namespace qla

#endif

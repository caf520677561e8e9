// The state-only form of a kernel, shared by qla-drop-loop-outputs and qla-context-split.
#ifndef QLA_DIALECT_TILE_TRANSFORMS_LOOPOUTPUTS_H
#define QLA_DIALECT_TILE_TRANSFORMS_LOOPOUTPUTS_H

#include "mlir/IR/BuiltinOps.h"

namespace qla {

/// Erases the stores inside every qla.for that carries values, then every op left without a use and
/// without side effects.
void dropLoopOutputs(mlir::ModuleOp module);

/// Erases every op without a use and without side effects, innermost first, until none is left.
void eraseDeadOps(mlir::ModuleOp module);

} // namespace qla

#endif

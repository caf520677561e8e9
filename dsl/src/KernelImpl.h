// The MLIR state behind a qla::dsl::Kernel (private to dsl/src).
#ifndef QLA_DSL_KERNELIMPL_H
#define QLA_DSL_KERNELIMPL_H

#include "qla/dsl/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace qla::dsl {

struct Kernel::Impl {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  mlir::OpBuilder builder{&ctx};

  mlir::Location loc(const Loc &l) {
    return mlir::FileLineColLoc::get(&ctx, l.file_name(), l.line(), l.column());
  }
};

} // namespace qla::dsl

#endif

// The MLIR state behind a qla::dsl::Kernel (private to dsl/src).
#ifndef QLA_DSL_KERNELIMPL_H
#define QLA_DSL_KERNELIMPL_H

#include "qla/dsl/Kernel.h"
#include "qla/Dialect/Tile/IR/QlaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <fmt/format.h>
#include <string>
#include <vector>

namespace qla::dsl {

inline std::string where(const Loc &loc) {
  std::string file = loc.file_name();
  if (auto slash = file.rfind('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  return fmt::format("{}:{}", file, loc.line());
}

inline std::string shapeStr(const std::vector<int64_t> &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

inline mlir::Type toMlir(mlir::MLIRContext *ctx, DType t) {
  switch (t) {
  case DType::bf16: return mlir::BFloat16Type::get(ctx);
  case DType::f16: return mlir::Float16Type::get(ctx);
  case DType::f32: return mlir::Float32Type::get(ctx);
  case DType::f64: return mlir::Float64Type::get(ctx);
  case DType::i32: return mlir::IntegerType::get(ctx, 32);
  case DType::i8: return mlir::IntegerType::get(ctx, 8);
  case DType::i64: return mlir::IntegerType::get(ctx, 64);
  }
  return {};
}

inline mlir::Value val(void *p) { return mlir::Value::getFromOpaquePointer(p); }
inline void *ptr(mlir::Value v) { return v.getAsOpaquePointer(); }


/// Tags every op the DSL creates (outside qla.map bodies) with the role being built, if any.
struct RoleTagger : mlir::OpBuilder::Listener {
  mlir::StringAttr role;
  void notifyOperationInserted(mlir::Operation *op, mlir::OpBuilder::InsertPoint) override {
    bool tileWork = mlir::isa<qla::StoreOp, qla::PrefetchOp>(op) ||
                    llvm::any_of(op->getResultTypes(), [](mlir::Type t) { return mlir::isa<qla::TileType>(t); });
    if (role && tileWork && !mlir::isa<qla::MapOp>(op->getParentOp()))
      op->setAttr(qla::QlaDialect::kRoleAttr, role);
  }
};

struct Kernel::Impl {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  mlir::OpBuilder builder{&ctx};
  RoleTagger roleTagger;

  mlir::Location loc(const Loc &l) {
    return mlir::FileLineColLoc::get(&ctx, l.file_name(), l.line(), l.column());
  }
};

} // namespace qla::dsl

#endif

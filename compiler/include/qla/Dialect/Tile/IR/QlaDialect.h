// The qla dialect: types, attributes and ops. Include this to use any of them.
#ifndef QLA_DIALECT_TILE_IR_QLADIALECT_H
#define QLA_DIALECT_TILE_IR_QLADIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "qla/Dialect/Tile/IR/QlaEnums.h.inc"
#include "qla/Dialect/Tile/IR/QlaDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "qla/Dialect/Tile/IR/QlaAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "qla/Dialect/Tile/IR/QlaTypes.h.inc"
#define GET_OP_CLASSES
#include "qla/Dialect/Tile/IR/QlaOps.h.inc"

namespace qla {
/// Set by qla-plan-smem: a qla.share or shared qla.copy tile's byte offset in dynamic shared memory,
/// and the kernel's scratch region for fragments exchanged between threads.
constexpr llvm::StringLiteral kSmemOffsetAttr = "qla.smem_offset";
constexpr llvm::StringLiteral kScratchOffsetAttr = "qla.scratch_offset";
/// Set by qla-plan-smem beside qla.scratch_offset on a store each warpgroup stages alone
/// (storesPerWarpgroup): the bytes are the op's own, and its barriers are its warpgroup's.
constexpr llvm::StringLiteral kScratchPerWarpgroupAttr = "qla.scratch_per_warpgroup";
/// Set by qla-convert-to-nvvm on consecutive copies into shared memory, which synchronise once:
/// a copy that follows another skips the leading barrier, one followed by another skips the wait.
constexpr llvm::StringLiteral kCopyFollowsCopyAttr = "qla.copy_follows_copy";
constexpr llvm::StringLiteral kCopyWaitsLaterAttr = "qla.copy_waits_later";

/// Bytes of one element of a tile or tensor element type.
int64_t elementBytes(mlir::Type t);
/// The dimension of a vector shape (one dimension other than 1), if it is one: the elements of an
/// #qla.acc_slice fragment run along it.
std::optional<int64_t> sliceVectorDim(llvm::ArrayRef<int64_t> shape);
/// The kernel's threads per block (qla.block), or 0 when the function is not a kernel.
int64_t kernelThreads(mlir::Operation *kernel);

/// Set by qla-convert-to-nvvm on the branch a qla.role_region becomes: [first thread, threads, named
/// barrier id] of the role.
constexpr llvm::StringLiteral kRoleGroupAttr = "qla.role_group";
/// The threads that run `op`: the warpgroups of the role around it (a qla.role_region, or the branch
/// marked qla.role_group once lowered), with the named barrier they synchronise on (role i: i + 1);
/// else the whole block (threads = the kernel's, or 0 when unknown; barrier 0).
struct ThreadGroup {
  int64_t firstThread = 0, threads = 0, barrierId = 0;
  bool isRole() const { return barrierId != 0; }
};
ThreadGroup threadGroup(mlir::Operation *op);

/// How many warpgroups hold their own copy of a round-robin fragment (#qla.strided copies; 1 for any
/// other type): an exchange from it runs in each warpgroup alone, on named barrier 1 + its index.
int64_t stridedCopies(mlir::Type type);
/// Whether a store of an accumulator fragment inside a loop of a kernel marked qla.warpgroup_local stages each
/// warpgroup's rows (the tensor's columns when transposed) through scratch of its own on its own
/// named barrier: the fragment spans several warpgroups and, transposed, each one's share of a tensor
/// row is whole 128-byte swizzle spans.
bool storesPerWarpgroup(mlir::Operation *store);

/// Shared-memory layout of a tile (rank >= 2; rings use their slot shape). Rows of 32 or 64 bytes are
/// swizzled at their own width; rows that are a multiple of 128 bytes are stored as column blocks,
/// each [rows][128 bytes] with the 128-byte swizzle: the layout of a TMA box and of a K-major wgmma
/// operand. Other widths are not swizzled.
int64_t smemSwizzleBytes(int64_t rowBytes);
/// Row bytes of one column block (the swizzle span, or the whole row when not blocked).
int64_t smemBlockRowBytes(int64_t rowBytes);
int64_t smemColumnBlocks(int64_t rowBytes);
} // namespace qla

#endif

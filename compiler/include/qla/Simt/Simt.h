// A SIMT simulator of lowered kernels on the CPU: one thread block of a kernel after
// qla-convert-to-nvvm (arith, scf, llvm and nvvm ops), every thread in lockstep, op by op. It runs the
// code the GPU would run — the lowering's index arithmetic, shuffles, mma.sync, shared memory — so
// that a lowering can be checked numerically without a GPU. Every memory access is bounds-checked, and
// shared-memory accesses of different threads to the same bytes between two barriers are reported as
// hazards (what compute-sanitizer's racecheck reports).
#ifndef QLA_SIMT_SIMT_H
#define QLA_SIMT_SIMT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qla::simt {

/// A global-memory buffer a kernel's pointer parameter points to (its bytes are read and written).
struct Buffer {
  std::vector<uint8_t> bytes;
};

struct Report {
  std::vector<std::string> errors;  // unsupported ops, out-of-bounds accesses, divergent barriers
  std::vector<std::string> hazards; // shared-memory races between barriers
  int64_t barriers = 0;
  int64_t ops = 0; // ops executed (all threads of the block together)
};

/// Runs `kernel` as block (0, 0, 0) of `threads` threads with `smemBytes` of dynamic shared memory.
/// `args`: one buffer for each pointer parameter, in order (no other parameter kinds).
Report simulateBlock(mlir::func::FuncOp kernel, int64_t threads, int64_t smemBytes, std::vector<Buffer *> args);

} // namespace qla::simt

#endif

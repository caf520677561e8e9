// A SIMT simulator of lowered kernels on the CPU: one thread block of a kernel after
// qla-convert-to-nvvm (arith, scf, llvm and nvvm ops), every thread in lockstep, op by op. It runs the
// code the GPU would run — the lowering's index arithmetic, shuffles, mma.sync, shared memory — so
// that a lowering can be checked numerically without a GPU. Every memory access is bounds-checked, and
// shared-memory accesses of different threads to the same bytes between two barriers are reported as
// hazards (what compute-sanitizer's racecheck reports).
#ifndef QLA_SIMT_SIMT_H
#define QLA_SIMT_SIMT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
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

/// A kernel argument: a buffer for a pointer parameter, else an integer for an integer one.
struct Arg {
  Buffer *buffer = nullptr;
  int64_t scalar = 0;
};

/// Runs `kernel` as block `blockIdx` of `threads` threads with `smemBytes` of dynamic shared memory.
/// Supported beyond arith, scf and plain llvm ops: thread and block indices, shfl.sync, barriers,
/// mma.sync (m16n8k16 f16), wgmma.mma_async (K-major operands with the 128-byte swizzle, f32
/// accumulators), cp.async (done at once: its waits and the wgmma/proxy fences are no-ops), exp2, the
/// f32 -> bf16x2 conversion, and the predicated global loads of the copies' inline assembly.
Report simulateBlock(mlir::func::FuncOp kernel, int64_t threads, int64_t smemBytes, std::vector<Arg> args,
                     std::array<int64_t, 3> blockIdx = {0, 0, 0});

} // namespace qla::simt

#endif

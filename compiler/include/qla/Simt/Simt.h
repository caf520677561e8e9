// A SIMT simulator of lowered kernels on the CPU: one thread block of a kernel after
// qla-convert-to-nvvm (arith, scf, llvm and nvvm ops), every thread in lockstep, op by op. It runs the
// code the GPU would run — the lowering's index arithmetic, shuffles, mma.sync, shared memory — so
// that a lowering can be checked numerically without a GPU. Every memory access is bounds-checked, and
// shared-memory accesses of different threads to the same bytes between two barriers are reported as
// hazards (what compute-sanitizer's racecheck reports).
#ifndef QLA_SIMT_SIMT_H
#define QLA_SIMT_SIMT_H

#include "qla/Interpreter/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <cstdint>
#include <map>
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
  int64_t ops = 0; // ops executed (each by all of a context's active threads together)
  // The same by source line (the kernel's "file:line", from the ops' locations): where the executed
  // code comes from in the DSL program — a CPU-side profile of the lowered code's op count.
  std::map<std::string, int64_t> opsBySource;
};

/// A TMA descriptor, as the runtime encodes it (qla::TensorMapSpec): the global tensor `buffer` with
/// `dims` (innermost first) and the byte strides of dims 1 …, boxes of `box` elements, the 128-byte
/// swizzle or none; out-of-bounds elements read as zeros.
struct TensorMap {
  Buffer *buffer = nullptr;
  int64_t elementBytes = 2;
  std::vector<int64_t> dims, stridesBytes, box;
  int64_t swizzle = 0;
};

/// A kernel argument: a buffer for a pointer parameter, a tensor map for a TMA descriptor's pointer
/// parameter, else an integer for an integer one.
struct Arg {
  Buffer *buffer = nullptr;
  int64_t scalar = 0;
  TensorMap *map = nullptr;
};

/// Runs `kernel` as block `blockIdx` of `threads` threads with `smemBytes` of dynamic shared memory.
/// Supported beyond arith, scf and plain llvm ops: thread and block indices, shfl.sync, block and named
/// barriers, mbarriers (nvgpu), TMA tile loads, mma.sync (m16n8k16 f16), wgmma.mma_async (K- or
/// MN-major operands with the 128-byte swizzle, f32 accumulators), stmatrix, cp.async (asynchronous
/// copies complete when issued), exp2, the f32 -> 16-bit pair conversions, and the copies' predicated
/// global loads. Races are found by vector clocks: barriers, mbarrier arrivals and waits, and TMA
/// completions order the threads they involve.
Report simulateBlock(mlir::func::FuncOp kernel, int64_t threads, int64_t smemBytes, std::vector<Arg> args,
                     std::array<int64_t, 3> blockIdx = {0, 0, 0});

/// A tile-level kernel (what the interpreter runs: `qla::interpretKernel`) lowered by the pipeline to
/// qla-convert-to-nvvm and run on the simulator over its whole grid, block after block, on `args` (one
/// per tensor parameter, values converted to and from each tensor's dtype as the GPU would hold them;
/// dims and tensor maps follow from them). `grid` overrides the kernel's where nonzero. The module of
/// `tileKernel` is not changed. Errors (lowering failures, unsupported ops, out-of-bounds accesses,
/// deadlocks) and hazards of every block are collected in the report.
Report simulateKernel(mlir::func::FuncOp tileKernel, const std::vector<HostTensor *> &args,
                      std::array<int64_t, 3> grid = {0, 0, 0});

} // namespace qla::simt

#endif

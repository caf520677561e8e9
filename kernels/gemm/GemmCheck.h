// Checking and timing a compiled GEMM (C = A·Bᵀ, bf16) on the GPU, MLIR-free: fresh random inputs, C
// poisoned first, every element against an fp32 GPU reference (NVRTC) and a float64 sample, then the
// median of CUDA-event-timed launches. Used by the GPU test (qla_gpu_gemm) and by `qlac tune`.
#ifndef QLA_KERNELS_GEMM_GEMMCHECK_H
#define QLA_KERNELS_GEMM_GEMMCHECK_H

#include "qla/runtime/CompiledKernel.h"

#include <cstdint>

namespace qla::kernels {

struct GemmCheck {
  double relL2 = 0;        // against the fp32 GPU reference, every element
  double relL2Float64 = 0; // against float64 dot products on 4096 sampled elements
  std::size_t unwritten = 0;
  bool pass = false;       // nothing unwritten, both errors below 5e-3
  double ms = 0;           // median of the timed launches (0: not timed)
  double hostLaunchUs = 0; // host time of a warm launch (1000 back to back)
};

/// Needs a GPU (the driver's context current). `timedIters` > 0 times the kernel when it passes.
GemmCheck checkGemm(CompiledKernel &kernel, std::int64_t M, std::int64_t N, std::int64_t K, unsigned seed,
                    int timedIters);

} // namespace qla::kernels

#endif

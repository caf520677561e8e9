// C = A·Bᵀ in bf16 with fp32 accumulation, written in the QLA DSL.
#ifndef QLA_KERNELS_GEMM_GEMM_H
#define QLA_KERNELS_GEMM_GEMM_H

#include "qla/dsl/Kernel.h"

#include <memory>
#include <string>

namespace qla::kernels {

struct GemmConfig {
  int64_t M = 0, N = 0, K = 0;           // A: M×K, B: N×K, C: M×N, all row-major
  int64_t BM = 128, BN = 256, BK = 64;   // tile of C per block, and of K per step
  int64_t stages = 4;                    // shared-memory ring depth
  int64_t specialize = 0;                // 1: a producer warpgroup issues the loads (roles), the others compute;
                                         // 2: also a warpgroup loading A into registers for them
  int64_t loadsRegs = 0, mmaRegs = 0;    // specialize >= 1: the roles' register budgets (setmaxnreg;
                                         // 0: 40 and 232/256 (184/232 with specialize = 2)), tunable
  std::string str() const;
};

/// Validates the config (throws qla::Error naming the field and what is supported) and builds the kernel.
std::unique_ptr<dsl::Kernel> buildGemm(const GemmConfig &config);

/// Parses "M=4096,N=4096,K=4096,BM=128,..." over the defaults; unknown keys are errors.
GemmConfig parseGemmConfig(const std::string &settings);

} // namespace qla::kernels

#endif

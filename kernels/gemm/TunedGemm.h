// The GEMM's use of the tuning database (`qlac tune gemm`, docs/tuning.md): the tile config tuned on
// this GPU for a product's shape, the default where nothing was tuned.
#ifndef QLA_KERNELS_GEMM_TUNEDGEMM_H
#define QLA_KERNELS_GEMM_TUNEDGEMM_H

#include "gemm/Gemm.h"
#include "qla/runtime/TuningDb.h"

#include <filesystem>
#include <optional>

namespace qla::kernels {

/// The fastest passing tuned config for an M×N×K product on `gpu`, from the tuned shape nearest to it
/// (the same shape if it was tuned, else the smallest sum of |log| ratios of M, N and K), with this
/// product's M, N, K; none when no GEMM was tuned on `gpu` or the tuned tiles do not fit this shape.
std::optional<GemmConfig> tunedGemm(const TuningDb &db, const std::string &gpu, int64_t M, int64_t N, int64_t K);

/// tunedGemm for the GPU of this process (the database at `db`, else TuningDb::defaultPath()); the
/// default config for M, N, K without a GPU, a database, or a tuned GEMM on this GPU.
GemmConfig tunedGemmConfig(int64_t M, int64_t N, int64_t K, const std::filesystem::path &db = {});

} // namespace qla::kernels

#endif

// The GDN planner's use of the tuning database (`qlac tune gdn`, docs/tuning.md): which tuned build
// of the forward's kernel set suits a call shape. MLIR-free.
#ifndef QLA_KERNELS_GDN_API_TUNEDCONFIG_H
#define QLA_KERNELS_GDN_API_TUNEDCONFIG_H

#include "qla/runtime/TuningDb.h"

#include <cstdint>
#include <optional>
#include <string>

namespace qla::gdn {

/// The database's shape key of a GDN forward call ("H=16,HV=32,K=128,V=128,B=4,T=8192").
std::string gdnTuningShape(int64_t H, int64_t HV, int64_t K, int64_t V, int64_t B, int64_t T);

/// The fastest passing tuned config for these heads (H, HV, K, V) on `gpu`, from the shape nearest to
/// B sequences of T tokens: the same B if any was tuned (then the nearest T), else the nearest total
/// token count (both on a log scale). None when these heads were never tuned on `gpu`.
std::optional<TuningEntry> tunedGdnForward(const TuningDb &db, const std::string &gpu, int64_t H, int64_t HV, int64_t K,
                                           int64_t V, int64_t B, int64_t T);

} // namespace qla::gdn

#endif

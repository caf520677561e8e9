// Seeded GDN inputs drawn as the peers draw them (BENCHMARKS.md), and their rounding to the
// precisions kernels read.
#pragma once

#include <cstdint>

#include "gdn/reference/GdnReference.h"

namespace qla::gdn {

enum class GdnGateKind {
  logsigmoid, // g = logsigmoid(randn)
  // g = −exp(A_log)·softplus(a + dt_bias): value heads hv % 4 == 0 have A_log = −inf (no decay:
  // g = 0), hv % 4 == 1 the strongest A = 16, the rest A ~ U(1, 16); a ~ N(0, 1),
  // dt_bias = softplus⁻¹(dt), dt log-uniform in [1e-3, 1e-1]. With gateInKernel the inputs carry
  // a, b, A_log, dt_bias of this form whatever the kind.
  mixedDecay,
};

struct GdnRandomOptions {
  std::uint64_t seed = 0;
  GdnGateKind gate = GdnGateKind::logsigmoid;
};

// q, k: N(0, 1) rows, L2-normalised unless problem.l2normQK (then the kernel normalises them);
// v: N(0, 1); β = sigmoid(N(0, 1)); initial state N(0, 1) when useInitialState. The same seed
// gives the same values on every platform.
GdnInputs gdnRandomInputs(const GdnProblem& problem, const GdnRandomOptions& options = {});

// The A_log of value head hv under GdnGateKind::mixedDecay, for a given U(0, 1) draw.
double mixedDecayALog(std::int64_t hv, double uniform01);

// What a kernel reads: q, k, v, a, b rounded to bf16; g, β, A_log, dt_bias and the initial state
// rounded to float.
GdnInputs roundInputsForKernel(GdnInputs inputs);

} // namespace qla::gdn

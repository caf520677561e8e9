// The float64 Gated DeltaNet references every GDN kernel is checked against (GDN.md §1, §2):
// the per-token recurrence and the chunked form, on host tensors of doubles.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gdn/reference/HostTensor.h"

namespace qla::gdn {

struct GdnProblem {
  std::int64_t B = 1;
  std::int64_t T = 0; // tokens per sequence; total tokens when varlen
  std::int64_t H = 1, HV = 1, K = 0, V = 0;
  // Empty: B sequences of T tokens. Else varlen: B == 1 and N + 1 non-decreasing offsets from 0 to T.
  std::vector<std::int64_t> cuSeqlens;
  double scale = 0; // <= 0: K^-1/2
  bool l2normQK = false;
  bool stateVFirst = false; // states stored [V][K] instead of [K][V]
  bool useInitialState = false;
  bool outputFinalState = false;
  // g = −exp(A_log)·softplus(a + dt_bias), β = sigmoid(b), from a, b, A_log, dt_bias.
  bool gateInKernel = false;

  bool varlen() const { return !cuSeqlens.empty(); }
  std::int64_t numSequences() const; // N
  double resolvedScale() const;
  std::vector<std::int64_t> stateShape() const; // [N, HV, K, V] or [N, HV, V, K]
};

// Tensors that a flag leaves unused must be left undefined (empty shape).
struct GdnInputs {
  Tensor q, k;         // [B, T, H, K]
  Tensor v;            // [B, T, HV, V]
  Tensor g, beta;      // [B, T, HV], unless gateInKernel
  Tensor a, b;         // [B, T, HV], gateInKernel only
  Tensor aLog, dtBias; // [HV], gateInKernel only
  Tensor initialState; // problem.stateShape(), useInitialState only
};

struct GdnOutputs {
  Tensor o;          // [B, T, HV, V]
  Tensor finalState; // problem.stateShape() when outputFinalState, else undefined
};

// Throws qla::Error "<who>: argument '<name>': expected …, got …" for the first violated rule:
// positive B, H, HV, K, V, T >= 0, HV % H == 0, a finite scale, cu_seqlens (B == 1, at least two
// offsets, starting at 0, non-decreasing, ending at T).
void validateGdnProblem(const GdnProblem& problem, std::string_view who = "gdn reference");
// validateGdnProblem, then every tensor's shape and size, and no tensor that a flag leaves unused.
void validateGdn(const GdnProblem& problem, const GdnInputs& inputs,
                 std::string_view who = "gdn reference");

// GDN.md §1 token by token. Validates first.
GdnOutputs gdnRecurrentReference(const GdnProblem& problem, const GdnInputs& inputs);
// GDN.md §2 with chunks of `chunk` tokens, restarted at every sequence start. Validates first.
GdnOutputs gdnChunkedReference(const GdnProblem& problem, const GdnInputs& inputs,
                               std::int64_t chunk = 64);

// The per-token decay and β: copies of g and beta, or computed from a, b, A_log, dt_bias.
// Each [B, T, HV].
struct GdnGate {
  Tensor g, beta;
};
GdnGate gdnGateValues(const GdnProblem& problem, const GdnInputs& inputs);

// --- Per-chunk pieces, for kernel tests -------------------------------------------------------

// Inclusive prefix sum: G_i = Σ_{s≤i} g_s.
std::vector<double> chunkLocalCumsum(std::span<const double> g);
// A = StrictLower(diag(β)(Kc Kcᵀ) ∘ Γ), Γ_ij = exp(G_i − G_j), exponentiated only below the
// diagonal. kc is [L, K]; beta and G have L entries; the result is [L, L]. G all zero gives the
// ungated A₀ of the faster algebra.
Tensor chunkStrictLowerA(const Tensor& kc, std::span<const double> beta,
                         std::span<const double> G);
// (I + A)⁻¹ for a strictly lower triangular [L, L] A, by forward substitution (unit lower result).
Tensor unitLowerInverse(const Tensor& a);

// Chunk-local cumsum of the problem's g (computed in-kernel gates included), restarted at every
// chunk and every sequence start: [B, T, HV].
Tensor gdnChunkLocalCumsum(const GdnProblem& problem, const GdnInputs& inputs,
                           std::int64_t chunk = 64);
// T = (I + A)⁻¹ of every chunk, [B, T, HV, chunk]: token t's entry holds row t − chunkStart of
// its chunk's T, columns past the chunk's length zero. k is L2-normalised when the problem says
// so. gated = false gives A₀ = (I + StrictLower(diag(β) Kc Kcᵀ))⁻¹.
Tensor gdnChunkInverse(const GdnProblem& problem, const GdnInputs& inputs, std::int64_t chunk = 64,
                       bool gated = true);

} // namespace qla::gdn

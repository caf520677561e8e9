// Internal: what the references share about one (sequence, value head) chain: token ranges, the
// q/k rows a value head reads, its gate, and the state in the working [K][V] layout.
#pragma once

#include <cstdint>
#include <vector>

#include "gdn/reference/GdnReference.h"

namespace qla::gdn::detail {

// Token rows [bos, eos) of a sequence; a row indexes the flattened [B·T] token axis.
struct Sequence {
  std::int64_t bos, eos;
};
std::vector<Sequence> sequences(const GdnProblem& p);

// GVA: value head hv reads q/k head hv / (HV / H).
inline std::int64_t qkHead(const GdnProblem& p, std::int64_t hv) { return hv / (p.HV / p.H); }

// Row `row` of q or k ([B, T, H, K]) for head h, L2-normalised when the problem says so.
std::vector<double> qkRow(const GdnProblem& p, const Tensor& x, std::int64_t row, std::int64_t h);

inline const double* vRow(const GdnProblem& p, const GdnInputs& in, std::int64_t row,
                          std::int64_t hv) {
  return in.v.data.data() + (row * p.HV + hv) * p.V;
}

struct Gate {
  double g, beta;
};
Gate gateAt(const GdnProblem& p, const GdnInputs& in, std::int64_t row, std::int64_t hv);

// The initial state of chain (n, hv) as [K][V], zeros without one.
std::vector<double> loadState(const GdnProblem& p, const GdnInputs& in, std::int64_t n,
                              std::int64_t hv);
// Writes a [K][V] state into `out` (problem.stateShape()) in the problem's layout.
void storeState(const GdnProblem& p, const std::vector<double>& s, std::int64_t n, std::int64_t hv,
                Tensor& out);

} // namespace qla::gdn::detail

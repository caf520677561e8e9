#include <fmt/format.h>

#include <cmath>

#include "gdn/reference/GdnReference.h"
#include "qla/runtime/Error.h"

namespace qla::gdn {

std::int64_t GdnProblem::numSequences() const {
  return varlen() ? static_cast<std::int64_t>(cuSeqlens.size()) - 1 : B;
}

double GdnProblem::resolvedScale() const {
  return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(K));
}

std::vector<std::int64_t> GdnProblem::stateShape() const {
  const std::int64_t n = numSequences();
  return stateVFirst ? std::vector<std::int64_t>{n, HV, V, K}
                     : std::vector<std::int64_t>{n, HV, K, V};
}

namespace {

[[noreturn]] void fail(std::string_view who, std::string_view arg, const std::string& what) {
  throw Error(fmt::format("{}: argument '{}': {}", who, arg, what));
}

void requirePositive(std::string_view who, std::string_view arg, std::int64_t value) {
  if (value <= 0)
    fail(who, arg, fmt::format("expected a positive value, got {}", value));
}

void checkTensor(std::string_view who, std::string_view arg, const Tensor& t, bool used,
                 const std::vector<std::int64_t>& shape, std::string_view dims,
                 std::string_view flag) {
  if (!used) {
    if (t.defined())
      fail(who, arg, fmt::format("expected no tensor ({}), got shape {}", flag,
                                 shapeString(t.shape)));
    return;
  }
  if (!t.defined())
    fail(who, arg, fmt::format("expected a tensor of shape {} = {}, got none", dims,
                               shapeString(shape)));
  if (t.shape != shape)
    fail(who, arg, fmt::format("expected shape {} = {}, got {}", dims, shapeString(shape),
                               shapeString(t.shape)));
  if (static_cast<std::int64_t>(t.data.size()) != numel(shape))
    fail(who, arg, fmt::format("expected {} values for shape {}, got {}", numel(shape),
                               shapeString(shape), t.data.size()));
}

} // namespace

void validateGdnProblem(const GdnProblem& p, std::string_view who) {
  requirePositive(who, "B", p.B);
  requirePositive(who, "H", p.H);
  requirePositive(who, "HV", p.HV);
  requirePositive(who, "K", p.K);
  requirePositive(who, "V", p.V);
  if (p.T < 0)
    fail(who, "T", fmt::format("expected a non-negative token count, got {}", p.T));
  if (p.HV % p.H != 0)
    fail(who, "HV", fmt::format("expected a multiple of H = {}, got {}", p.H, p.HV));
  if (!std::isfinite(p.scale))
    fail(who, "scale", fmt::format("expected a finite value (<= 0 for K^-1/2), got {}", p.scale));
  if (!p.varlen())
    return;
  if (p.B != 1)
    fail(who, "B", fmt::format("expected 1 with cu_seqlens, got {}", p.B));
  const auto& cu = p.cuSeqlens;
  if (cu.size() < 2)
    fail(who, "cu_seqlens", fmt::format("expected at least 2 offsets (N + 1), got {}", cu.size()));
  if (cu.front() != 0)
    fail(who, "cu_seqlens", fmt::format("expected to start at 0, got {}", cu.front()));
  for (std::size_t i = 1; i < cu.size(); ++i)
    if (cu[i] < cu[i - 1])
      fail(who, "cu_seqlens", fmt::format("expected non-decreasing offsets, got {} after {} at "
                                          "index {}", cu[i], cu[i - 1], i));
  if (cu.back() != p.T)
    fail(who, "cu_seqlens", fmt::format("expected to end at T = {}, got {}", p.T, cu.back()));
}

void validateGdn(const GdnProblem& p, const GdnInputs& in, std::string_view who) {
  validateGdnProblem(p, who);
  const std::vector<std::int64_t> qk{p.B, p.T, p.H, p.K}, v{p.B, p.T, p.HV, p.V},
      perToken{p.B, p.T, p.HV}, perHead{p.HV};
  const bool gate = p.gateInKernel;
  checkTensor(who, "q", in.q, true, qk, "[B, T, H, K]", "");
  checkTensor(who, "k", in.k, true, qk, "[B, T, H, K]", "");
  checkTensor(who, "v", in.v, true, v, "[B, T, HV, V]", "");
  checkTensor(who, "g", in.g, !gate, perToken, "[B, T, HV]", "gate computed in kernel");
  checkTensor(who, "beta", in.beta, !gate, perToken, "[B, T, HV]", "gate computed in kernel");
  checkTensor(who, "a", in.a, gate, perToken, "[B, T, HV]", "gate not computed in kernel");
  checkTensor(who, "b", in.b, gate, perToken, "[B, T, HV]", "gate not computed in kernel");
  checkTensor(who, "A_log", in.aLog, gate, perHead, "[HV]", "gate not computed in kernel");
  checkTensor(who, "dt_bias", in.dtBias, gate, perHead, "[HV]", "gate not computed in kernel");
  checkTensor(who, "initial_state", in.initialState, p.useInitialState, p.stateShape(),
              p.stateVFirst ? "[N, HV, V, K]" : "[N, HV, K, V]", "useInitialState is false");
}

} // namespace qla::gdn

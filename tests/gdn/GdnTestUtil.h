// Helpers shared by the GDN reference tests.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "gdn/reference/GdnRandom.h"
#include "gdn/reference/GdnReference.h"

namespace qla::gdn::test {

// A configuration of the sweeps: a problem, how its gate is drawn, a name for the report.
struct Case {
  std::string name;
  GdnProblem problem;
  GdnGateKind gate = GdnGateKind::logsigmoid;
};

inline double norm(const Tensor& t) {
  double s = 0;
  for (double x : t.data)
    s += x * x;
  return std::sqrt(s);
}

// A comparison is only meaningful against a finite, non-zero reference.
inline void requireMeaningful(const Tensor& t, const char* what) {
  INFO(what);
  const double n = norm(t);
  REQUIRE(std::isfinite(n));
  REQUIRE(n > 0);
}

} // namespace qla::gdn::test

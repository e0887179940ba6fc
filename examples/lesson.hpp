#pragma once
// The checks every lesson makes: each mismatch is printed and counted, and the lesson exits
// non-zero when any was found (every example is a test).

#include <symtrace/symtrace.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace lesson {

/// The number of mismatches found so far.
inline int failures = 0;

/// Counts and prints a mismatch when `ok` is false.
inline void expect(bool ok, const std::string& what) {
  if (!ok) {
    fmt::print(stderr, "MISMATCH: {}\n", what);
    ++failures;
  }
}

/// lint() throws LintError naming the node and the broken rule: counted as a mismatch.
inline void expect_lints(const symtrace::Graph& g, const std::string& what) {
  try {
    g.lint();
  } catch (const symtrace::LintError& e) {
    expect(false, fmt::format("{} fails lint: {}", what, e.what()));
  }
}

/// The largest |a - b| over two tensors (infinite when their shapes differ or a value is NaN).
inline double max_abs_error(const symtrace::Tensor& a, const symtrace::Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  const auto x = a.to_vector<double>();
  const auto y = b.to_vector<double>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] == y[i] ? 0.0 : std::abs(x[i] - y[i]);
    if (!(d <= m)) m = std::isnan(d) ? INFINITY : d;
  }
  return m;
}

}  // namespace lesson

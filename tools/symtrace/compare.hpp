#pragma once
// How `symtrace check` compares the graph's result with the eager forward's.

#include <symtrace/symtrace.hpp>

#include <string>

namespace symtrace::cli {

/// The difference between two forward results (a tensor or a list of tensors).
struct OutputComparison {
  double max_abs_error = 0;  ///< max |graph - eager| over every element of every output
  double max_rel_error = 0;  ///< max_abs_error / max |eager| (0 when they are equal)
  std::string mismatch;      ///< a structural difference (count, shape, dtype), if any
};

/// Compares `traced` (the graph's result) with `eager`. Equal values agree (infinities
/// included), NaN agrees with NaN, and a NaN against a number is an infinite error.
[[nodiscard]] OutputComparison compare_outputs(const Value& traced, const Value& eager);

}  // namespace symtrace::cli

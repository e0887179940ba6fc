#pragma once
// Internal (symtrace::detail, not part of the API): the metadata of a module's nested result
// (OutputMeta::nesting), shared by the tracer's leaves (src/trace/result_meta.cpp defines it)
// and the robust tracer's failed modules whose result is found by running them
// (src/robust/executed_result.cpp).

#include "symtrace/core/value.hpp"
#include "symtrace/ops/op.hpp"

namespace symtrace::detail {

/// Adds `v` to a nested result's metadata; false when it holds something other than tensors,
/// None, lists and str-keyed dicts.
bool flatten_result(const Value& v, OutputMeta& meta);

}  // namespace symtrace::detail

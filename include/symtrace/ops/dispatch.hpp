#pragma once
/// \file
/// The one dispatch point every op call goes through (docs/design.md, decision 1): all inputs
/// concrete -> meta function then eager kernel; any input symbolic -> the thread's interposer
/// (core/thread_context.hpp: the active trace records a node). Keep this path cheap: it runs
/// once per op.

#include "symtrace/ops/op.hpp"

#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace {

using KeywordValues = std::vector<std::pair<std::string, Value>>;

/// Calls `op` with complete positional `args` (one per schema argument, in order).
/// Checks the argument types against the schema (OpError naming the argument otherwise).
Value dispatch(const OpDef& op, std::span<const Value> args, std::source_location where,
               CallStyle style = CallStyle::function);

/// Calls the op called `name` with positional and keyword arguments, as an interpreter or a
/// user writing `call("add", {x, 1})` does; omitted arguments take their schema defaults.
/// Errors (unknown op, unknown or repeated keyword, missing argument, wrong type) are OpError.
Value call(std::string_view name, ValueList args, KeywordValues kwargs = {},
           std::source_location where = std::source_location::current());

/// Completes `args` + `kwargs` into one positional list per `op`'s schema (defaults filled in).
ValueList bind_arguments(const OpDef& op, ValueList args, KeywordValues kwargs,
                         std::source_location where);

/// Runs only the meta function of `op` on complete positional `args` (concrete or symbolic).
OutputMeta infer_meta(const OpDef& op, std::span<const Value> args,
                      std::source_location where = std::source_location::current());

/// True when `value` is, or is a list containing, a symbolic tensor.
[[nodiscard]] bool contains_symbolic(const Value& value) noexcept;

/// True when `value` is, or its lists and dicts hold, a tensor (concrete or symbolic, defined or not).
[[nodiscard]] bool holds_tensor(const Value& value) noexcept;

/// True when `value` is, or its lists hold, a dict (no graph argument can hold one).
[[nodiscard]] bool holds_dict(const Value& value) noexcept;

}  // namespace symtrace

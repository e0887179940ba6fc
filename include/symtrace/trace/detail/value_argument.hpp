#pragma once
// Internal (symtrace::detail, not part of the API): a value of the traced code turned into a
// node argument, the one conversion shared by the symbolic tracer (Tracer::create_arg,
// src/trace/tracer.cpp) and the trace by execution (src/observe/trace_by_execution.cpp). What
// a tensor or a proxy SymInt becomes is each one's own (a symbolic tensor's node, a recorded
// tensor's node, a get_attr); the rest is the same for both.

#include "symtrace/core/error.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/graph/argument.hpp"

#include <boost/variant2/variant.hpp>

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>

namespace symtrace::detail {

/// Throws the TraceError for another library's object met where a graph would have to hold it.
[[noreturn]] inline void throw_opaque_not_recordable(std::string_view type_name, std::source_location where) {
  throw_trace_error(where,
                    "an object of class {} (another library's, which symtrace holds without looking into it) cannot "
                    "be recorded in a graph; a module whose code hands it to an op can be a leaf",
                    type_name);
}

/// Throws TraceError when a key of `dict` is not a str: only dicts with str keys can be
/// recorded (they become `dict` nodes).
inline void check_dict_keys(const ValueDict& dict, std::source_location where) {
  for (const Value& key : dict.keys) {
    if (!key.is_string()) [[unlikely]]
      throw_trace_error(where, "a dict whose keys are {} values cannot be recorded in a graph: only dicts with "
                               "str keys can (they become `dict` nodes)",
                        key.type_name());
  }
}

/// `value` as a node argument: None, bools, ints, floats, strings and dtypes as themselves; a
/// Tensor `maker.tensor(t)`; a proxy SymInt `maker.sym_int(s)`, a proxy SymFloat `maker.sym_float(s)`; a list element by element,
/// each `maker.item(v)`; a dict, as `dict(out=x, aux=y)` in Python, the node made by
/// `maker.dict(kwargs)` from its items in insertion order (keys as keyword names, values
/// `maker.item(v)`; TraceError for a key that is not a str). `maker.item` is how an element is
/// converted: this function again, or a hook that calls it (Tracer::create_arg). An OpaqueObject is
/// a TraceError: a graph cannot hold it.
template <class Maker>
Argument to_argument(const Value& value, std::source_location where, Maker& maker) {
  return boost::variant2::visit(
      overloaded{
          [](Value::None) { return Argument(); },
          [](bool b) { return Argument(b); },
          [](std::int64_t i) { return Argument(i); },
          [](double d) { return Argument(d); },
          [](const std::string& s) { return Argument(s); },
          [](DType d) { return Argument(d); },
          [&](const Tensor& t) -> Argument { return maker.tensor(t); },
          [&](const SymInt& s) -> Argument { return maker.sym_int(s); },
          [&](const SymFloat& s) -> Argument { return maker.sym_float(s); },
          [&](const ValueList& list) {
            ArgumentList items;
            items.reserve(list.size());
            for (const Value& v : list) items.push_back(maker.item(v));
            return Argument(std::move(items));
          },
          [&](const ValueDict& dict) -> Argument {
            check_dict_keys(dict, where);
            KeywordArguments items;
            items.reserve(dict.size());
            for (std::size_t i = 0; i < dict.size(); ++i)
              items.emplace_back(dict.keys[i].to_string_ref(), maker.item(dict.values[i]));
            return maker.dict(std::move(items));
          },
          // Never met: no ref leaves the TorchScript executor (Note [Lists and dicts are
          // references]); as what it shares, should one.
          [&](const ValueRef& ref) { return to_argument(*ref, where, maker); },
          [&](const OpaqueObject& o) -> Argument { throw_opaque_not_recordable(o.type_name, where); },
      },
      value.value);
}

}  // namespace symtrace::detail

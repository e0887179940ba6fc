#pragma once
// Private: what the builtins' files share (builtins.cpp, tensor_builtins.cpp): reading and
// writing an instruction's slots, and calling a registry op by name.

#include "symtrace/core/error.hpp"
#include "symtrace/ops/dispatch.hpp"

#include "torchscript/program.hpp"

#include <initializer_list>
#include <string_view>
#include <unordered_map>

namespace symtrace::torchscript::detail {

using BuiltinTable = std::unordered_map<std::string_view, BuiltinFn>;

/// Adds the builtins that make or read tensors (tensor_builtins.cpp).
void add_tensor_builtins(BuiltinTable& table);

inline const Value& in(const Instr& i, const Value* frame, std::size_t k) { return frame[i.inputs[k]]; }
inline Value& out(const Instr& i, Value* frame, std::size_t k = 0) { return frame[i.outputs[k]]; }

/// The list in input `k`'s slot, to change in place (where later uses read it).
inline ValueList& mutable_list(const Instr& i, Value* frame, std::size_t k) {
  Value& v = frame[i.inputs[k]];
  if (!v.is_list()) throw_invalid_argument(i.where, "{} expects a list, not {}", i.name, v.type_name());
  return boost::variant2::get<ValueList>(v.value);
}

/// The dict in input `k`'s slot, to change in place.
inline ValueDict& mutable_dict(const Instr& i, Value* frame, std::size_t k) {
  Value& v = frame[i.inputs[k]];
  if (!v.is_dict()) throw_invalid_argument(i.where, "{} expects a dict, not {}", i.name, v.type_name());
  return boost::variant2::get<ValueDict>(v.value);
}

/// The registry's `call` (defaults filled in by the schema) with positional arguments.
inline Value call_op(std::string_view name, std::initializer_list<Value> args, std::source_location where) {
  return call(name, ValueList(args), {}, where);
}

/// A 0-dim tensor as the number it holds (TorchScript's `item()`); other values unchanged.
/// Reading a symbolic tensor throws TraceError at `i.where`.
inline Value as_number(const Instr& i, const Value& v) {
  if (!v.is_tensor()) return v;
  const Tensor& t = v.to_tensor();
  if (t.dtype() == DType::float32) return static_cast<double>(t.item<float>(i.where));
  if (t.dtype() == DType::bool_) return t.item<bool>(i.where);
  return t.item<std::int64_t>(i.where);
}

}  // namespace symtrace::torchscript::detail

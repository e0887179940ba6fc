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

/// Input `k`; a ref as what it shares (Note [Lists and dicts are references]).
inline const Value& in(const Instr& i, const Value* frame, std::size_t k) { return frame[i.inputs[k]].deref(); }
/// Input `k` as it is, a ref kept: what a builtin passes on (the changed list as its result).
inline const Value& raw(const Instr& i, const Value* frame, std::size_t k) { return frame[i.inputs[k]]; }
inline Value& out(const Instr& i, Value* frame, std::size_t k = 0) { return frame[i.outputs[k]]; }

/// The value in `slot`, to store in a container: a plain list or dict becomes a ref there
/// first, so the container and the slot share it (Note [Lists and dicts are references]).
inline const Value& stored(Value* frame, Slot slot) {
  Value& v = frame[slot];
  if (v.is_list() || v.is_dict()) v = share(std::move(v));
  return v;
}
/// Input `k`, to store in a container (stored).
inline const Value& stored(const Instr& i, Value* frame, std::size_t k) { return stored(frame, i.inputs[k]); }

/// The list or dict in input `k`'s slot, to change in place: one that is plain becomes a ref
/// there first, so that later copies share what changes (Note [Lists and dicts are
/// references]). Throws std::invalid_argument naming `i` when the slot holds another kind.
inline Value& mutable_container(const Instr& i, Value* frame, std::size_t k, Value::Kind kind) {
  Value& v = frame[i.inputs[k]];
  if (v.kind() == kind) v = share(std::move(v));
  if (v.is_ref()) {
    Value& target = *boost::variant2::get<ValueRef>(v.value);
    if (target.kind() == kind) return target;
  }
  throw_invalid_argument(i.where, "{} expects a {}, not {}", i.name, kind == Value::Kind::list ? "list" : "dict",
                         v.type_name());
}

/// The list in input `k`'s slot, to change in place (mutable_container).
inline ValueList& mutable_list(const Instr& i, Value* frame, std::size_t k) {
  return boost::variant2::get<ValueList>(mutable_container(i, frame, k, Value::Kind::list).value);
}

/// The dict in input `k`'s slot, to change in place (mutable_container).
inline ValueDict& mutable_dict(const Instr& i, Value* frame, std::size_t k) {
  return boost::variant2::get<ValueDict>(mutable_container(i, frame, k, Value::Kind::dict).value);
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

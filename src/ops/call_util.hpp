#pragma once
// Private: what the typed API (free functions and Tensor methods) uses to box its arguments
// and go through the one dispatch point.

#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/registry.hpp"

#include <array>
#include <utility>

/// The OpDef called `name`, looked up once per call site.
#define SYMTRACE_OP(name)                                                               \
  ([]() -> const ::symtrace::OpDef& {                                                   \
    static const ::symtrace::OpDef& def = ::symtrace::OpRegistry::instance().get(name); \
    return def;                                                                         \
  }())

namespace symtrace::detail {

/// The call style of the typed API's free functions (`fn`) and Tensor methods (`method`).
inline constexpr CallStyle fn = CallStyle::function;
inline constexpr CallStyle method = CallStyle::method;

inline Value operand_value(const Operand& o) {
  if (o.is_sym_int()) [[unlikely]]
    return Value(SymInt::symbolic(o.tensor, o.where));
  if (o.is_sym_float()) [[unlikely]]
    return Value(SymFloat::symbolic(o.tensor, o.where));
  return o.is_tensor() ? Value(o.tensor) : Value(o.scalar);
}

/// An optional tensor argument: None when `t` is undefined.
inline Value optional_tensor_value(const Tensor& t) { return t.defined() ? Value(t) : Value(); }

inline Tensor take_tensor(Value&& v) {
  if (Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) return std::move(*t);
  SYMTRACE_ASSERT(false, "an op returned something other than a Tensor");
  return {};
}

/// Dispatches `op` with `args` and returns its tensor result.
template <class... A>
Tensor invoke(const OpDef& op, std::source_location where, CallStyle style, A&&... args) {
  const std::array<Value, sizeof...(A)> values{Value(std::forward<A>(args))...};
  return take_tensor(dispatch(op, values, where, style));
}

/// Dispatches `op` with `args` and returns its tensor-list result.
template <class... A>
TensorList invoke_list(const OpDef& op, std::source_location where, CallStyle style, A&&... args) {
  const std::array<Value, sizeof...(A)> values{Value(std::forward<A>(args))...};
  return dispatch(op, values, where, style).to_tensor_list();
}

}  // namespace symtrace::detail

// SymFloat: the parts that need no op dispatch (the operators, which record nodes for proxies,
// are defined by the ops layer in src/ops/sym_float_ops.cpp).
#include "symtrace/core/sym_float.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

namespace symtrace {

SymFloat SymFloat::symbolic(Tensor proxy, Where where, Dim numerator, std::int64_t denominator) noexcept {
  SymFloat s;
  s.proxy_ = std::move(proxy);
  s.where_ = where;
  s.numerator_ = numerator;
  s.denominator_ = denominator;
  return s;
}

double SymFloat::value(Where where) const {
  if (is_known()) [[likely]]
    return value_;
  throw_trace_error(where,
                    "a float computed from sizes unknown at trace time{} was converted to a C++ double: C++ code "
                    "that depends on the value of a size cannot be traced; give the trace example shapes (known "
                    "dims), keep the value symbolic (SymFloat arithmetic, sym_int(), sym_floor()), make the "
                    "module a leaf (Tracer::register_leaf) or use where() or cond()",
                    detail::proxy_origin(where_, where));
}

std::string to_string(const SymFloat& f) {
  if (f.is_known()) return fmt::format("{}", *f.maybe());
  return fmt::format("SymFloat(%{})", f.proxy().symbolic_ref().node);
}

}  // namespace symtrace

auto fmt::formatter<symtrace::SymFloat>::format(const symtrace::SymFloat& f, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(f), ctx);
}

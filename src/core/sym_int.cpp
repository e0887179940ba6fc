// SymInt, SymBool and SymIntList: the parts that need no op dispatch (the arithmetic operators,
// which record nodes for proxies, are defined by the ops layer in src/ops/sym_int_ops.cpp).
#include "symtrace/core/sym_int.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

namespace symtrace {

SymInt SymInt::symbolic(Tensor proxy, Where where, Dim dim) noexcept {
  SymInt s;
  s.proxy_ = std::move(proxy);
  s.where_ = where;
  s.dim_ = dim;
  return s;
}

std::int64_t SymInt::value(Where where) const {
  if (is_known()) [[likely]]
    return value_;
  throw_trace_error(where,
                    "a size unknown at trace time{} was converted to a C++ integer: C++ code that depends on "
                    "the value of a size cannot be traced; give the trace example shapes (known dims), keep the "
                    "size symbolic (SymInt arithmetic, reshape({{n, ...}})), make the module a leaf "
                    "(Tracer::register_leaf) or use where() or cond()",
                    detail::proxy_origin(where_, where));
}

SymBool SymBool::symbolic(Tensor proxy, Where where) noexcept {
  SymBool s(false);
  s.proxy_ = std::move(proxy);
  s.where_ = where;
  return s;
}

bool SymBool::value(Where where) const {
  if (is_known()) [[likely]]
    return value_;
  throw_trace_error(where,
                    "a comparison of sizes unknown at trace time{} was converted to bool: control flow that "
                    "depends on the value of a size cannot be traced; give the trace example shapes (known "
                    "dims), make the module a leaf (Tracer::register_leaf) or use where() or cond()",
                    detail::proxy_origin(where_, where));
}

bool SymIntList::is_known() const noexcept {
  for (const SymInt& s : sizes_)
    if (!s.is_known()) return false;
  return true;
}

IntList SymIntList::to_int_list() const {
  IntList out;
  out.reserve(sizes_.size());
  for (const SymInt& s : sizes_) out.push_back(s.value(s.where()));
  return out;
}

std::string to_string(const SymInt& s) {
  if (s.is_known()) return std::to_string(*s.maybe());
  return fmt::format("SymInt(%{})", s.proxy().symbolic_ref().node);
}

std::string to_string(const SymBool& s) {
  if (s.is_known()) return *s.maybe() ? "True" : "False";
  return fmt::format("SymBool(%{})", s.proxy().symbolic_ref().node);
}

}  // namespace symtrace

auto fmt::formatter<symtrace::SymInt>::format(const symtrace::SymInt& s, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(s), ctx);
}

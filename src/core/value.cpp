#include "symtrace/core/value.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace symtrace {

namespace {
[[noreturn]] void wrong_kind(const Value& v, std::string_view expected) {
  throw std::invalid_argument(fmt::format("expected a value of type {}, got {} ({})", expected,
                                          v.type_name(), to_string(v)));
}
}  // namespace

Value::Value(const Scalar& s) {
  if (s.is_bool()) value = s.to_bool();
  else if (s.is_integral()) value = s.to_int();
  else value = s.to_double();
}

Value::Value(const TensorList& l) : value(ValueList(l.begin(), l.end())) {}
Value::Value(const IntList& l) : value(ValueList(l.begin(), l.end())) {}
Value::Value(const std::vector<double>& l) : value(ValueList(l.begin(), l.end())) {}
Value::Value(const SymInt& s) {
  if (s.is_known()) value = *s.maybe();
  else value = s;
}
Value::Value(const SymFloat& s) {
  if (s.is_known()) value = *s.maybe();
  else value = s;
}
Value::Value(const SymIntList& l) : value(ValueList(l.begin(), l.end())) {}

bool Value::to_bool() const {
  if (const auto* b = boost::variant2::get_if<bool>(&value)) return *b;
  wrong_kind(*this, "bool");
}

std::int64_t Value::to_int() const {
  if (const auto* i = boost::variant2::get_if<std::int64_t>(&value)) return *i;
  if (const auto* b = boost::variant2::get_if<bool>(&value)) return *b ? 1 : 0;
  if (const auto* s = boost::variant2::get_if<SymInt>(&value)) return s->value(s->where());
  wrong_kind(*this, "int");
}

SymInt Value::to_sym_int() const {
  if (const auto* s = boost::variant2::get_if<SymInt>(&value)) return *s;
  return to_int();
}

double Value::to_double() const {
  if (const auto* d = boost::variant2::get_if<double>(&value)) return *d;
  if (const auto* i = boost::variant2::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* f = boost::variant2::get_if<SymFloat>(&value)) return f->value(f->where());
  if (const auto* s = boost::variant2::get_if<SymInt>(&value)) return static_cast<double>(s->value(s->where()));
  wrong_kind(*this, "float");
}

SymFloat Value::to_sym_float() const {
  if (const auto* f = boost::variant2::get_if<SymFloat>(&value)) return *f;
  return to_double();
}

Scalar Value::to_scalar() const {
  if (const auto* d = boost::variant2::get_if<double>(&value)) return *d;
  if (const auto* i = boost::variant2::get_if<std::int64_t>(&value)) return *i;
  if (const auto* b = boost::variant2::get_if<bool>(&value)) return *b;
  wrong_kind(*this, "Scalar");
}

const std::string& Value::to_string_ref() const {
  if (const auto* s = boost::variant2::get_if<std::string>(&value)) return *s;
  wrong_kind(*this, "str");
}

DType Value::to_dtype() const {
  if (const auto* d = boost::variant2::get_if<DType>(&value)) return *d;
  wrong_kind(*this, "dtype");
}

const Tensor& Value::to_tensor() const {
  if (const auto* t = boost::variant2::get_if<Tensor>(&value)) return *t;
  wrong_kind(*this, "Tensor");
}

const ValueList& Value::to_list() const {
  if (const auto* l = boost::variant2::get_if<ValueList>(&value)) return *l;
  if (const auto* r = boost::variant2::get_if<ValueRef>(&value)) return (*r)->to_list();
  wrong_kind(*this, "list");
}

const ValueDict& Value::to_dict() const {
  if (const auto* d = boost::variant2::get_if<ValueDict>(&value)) return *d;
  if (const auto* r = boost::variant2::get_if<ValueRef>(&value)) return (*r)->to_dict();
  wrong_kind(*this, "dict");
}

namespace {
bool same_key(const Value& a, const Value& b) noexcept {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::none: return true;
    case Value::Kind::boolean: return boost::variant2::get<bool>(a.value) == boost::variant2::get<bool>(b.value);
    case Value::Kind::integer:
      return boost::variant2::get<std::int64_t>(a.value) == boost::variant2::get<std::int64_t>(b.value);
    case Value::Kind::floating: return boost::variant2::get<double>(a.value) == boost::variant2::get<double>(b.value);
    case Value::Kind::string:
      return boost::variant2::get<std::string>(a.value) == boost::variant2::get<std::string>(b.value);
    case Value::Kind::dtype: return boost::variant2::get<DType>(a.value) == boost::variant2::get<DType>(b.value);
    case Value::Kind::tensor:  // Python hashes tensors by identity
      return boost::variant2::get<Tensor>(a.value).impl_ptr() == boost::variant2::get<Tensor>(b.value).impl_ptr();
    default: return false;  // lists, dicts and sizes are no keys
  }
}
}  // namespace

const Value* ValueDict::find(const Value& key) const noexcept {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (same_key(keys[i], key)) return &values[i];
  return nullptr;
}

void ValueDict::insert_or_assign(Value key, Value value) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (same_key(keys[i], key)) {
      values[i] = std::move(value);
      return;
    }
  }
  keys.reserve(keys.size() + 1);
  values.reserve(values.size() + 1);
  keys.push_back(std::move(key));
  values.push_back(std::move(value));
}

IntList Value::to_int_list() const {
  IntList out;
  for (const Value& v : to_list()) out.push_back(v.to_int());
  return out;
}

std::vector<double> Value::to_double_list() const {
  std::vector<double> out;
  for (const Value& v : to_list()) out.push_back(v.to_double());
  return out;
}

TensorList Value::to_tensor_list() const {
  TensorList out;
  for (const Value& v : to_list()) out.push_back(v.to_tensor());
  return out;
}

std::string_view Value::type_name() const noexcept {
  switch (kind()) {
    case Kind::none: return "None";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::dtype: return "dtype";
    case Kind::tensor: return "Tensor";
    case Kind::list: return "list";
    case Kind::symint: return "SymInt";
    case Kind::symfloat: return "SymFloat";
    case Kind::dict: return "dict";
    case Kind::ref: return deref().type_name();
    case Kind::opaque: return boost::variant2::get<OpaqueObject>(value).type_name;
  }
  return "?";
}

std::string to_string(const Value& value) {
  struct Printer {
    std::string operator()(Value::None) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return format_double(d); }
    std::string operator()(const std::string& s) const { return fmt::format("'{}'", s); }
    std::string operator()(DType d) const { return std::string(name(d)); }
    std::string operator()(const Tensor& t) const {
      if (t.defined() && t.is_concrete() && t.shape().numel().value_or(0) > 16)
        return fmt::format("tensor(dtype={}, shape={})", t.dtype(), t.shape());
      return to_string(t);
    }
    std::string operator()(const SymInt& s) const { return to_string(s); }
    std::string operator()(const SymFloat& s) const { return to_string(s); }
    std::string operator()(const ValueList& l) const {
      std::string out = "[";
      for (std::size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + to_string(l[i]);
      return out + "]";
    }
    std::string operator()(const ValueDict& d) const {
      std::string out = "{";
      for (std::size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + to_string(d.keys[i]) + ": " + to_string(d.values[i]);
      return out + "}";
    }
    std::string operator()(const ValueRef& r) const { return to_string(*r); }
    std::string operator()(const OpaqueObject& o) const { return fmt::format("<{} object>", o.type_name); }
  };
  return boost::variant2::visit(Printer{}, value.value);
}

}  // namespace symtrace

auto fmt::formatter<symtrace::Value>::format(const symtrace::Value& v, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(v), ctx);
}

// TorchScript builtins on symtrace Values. Lists and tuples are ValueLists, dicts ValueDicts;
// a TorchScript list or dict is a reference, held as a ref (Note [Lists and dicts are
// references], program.hpp): the builtins that make one make a ref, those that change one
// change what the ref shares, and a value they pass on is read `raw`, one they store in a
// container `stored`: a ref kept, or made.
#include "torchscript/builtins.hpp"

#include "torchscript/builtin_util.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/sym_int.hpp"
#include "symtrace/nn/attention.hpp"
#include "symtrace/nn/rnn.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

namespace symtrace::torchscript::detail {

namespace {

std::size_t list_index(const Instr& i, std::size_t size, const Value& index) {
  std::int64_t k = index.is_symint() ? index.to_sym_int().value(i.where) : index.to_int();
  if (k < 0) k += static_cast<std::int64_t>(size);
  if (k < 0 || k >= static_cast<std::int64_t>(size))
    throw_invalid_argument(i.where, "list index {} out of range (the list has {} elements)", index, size);
  return static_cast<std::size_t>(k);
}

// ---- containers ---------------------------------------------------------------------------

ValueList gather(const Instr& i, Value* frame) {
  ValueList l;
  l.reserve(i.inputs.size());
  for (Slot s : i.inputs) l.push_back(stored(frame, s));
  return l;
}
void tuple_construct(const Instr& i, Value* frame) { out(i, frame) = gather(i, frame); }
void list_construct(const Instr& i, Value* frame) { out(i, frame) = share(gather(i, frame)); }

void unpack(const Instr& i, Value* frame) {
  const ValueList& l = in(i, frame, 0).to_list();
  if (l.size() != i.outputs.size())
    throw_invalid_argument(i.where, "cannot unpack {} values into {}", l.size(), i.outputs.size());
  ValueList copy = l;  // an output slot may be the input's
  for (std::size_t k = 0; k < copy.size(); ++k) out(i, frame, k) = std::move(copy[k]);
}

void getitem(const Instr& i, Value* frame) {
  const Value& container = in(i, frame, 0);
  if (container.is_tensor() && in(i, frame, 1).is_string()) {
    throw_trace_error(i.where,
                      "a dict was indexed with '{}', but the value is a tensor: the result of a module that could not "
                      "be traced (a leaf of unknown result) stands in as one tensor; make that module traceable, or "
                      "give its type a shape function (register_leaf with a LeafMetaFn)",
                      in(i, frame, 1).to_string_ref());
  }
  if (container.is_tensor()) {  // tensor[i]: select along dim 0
    out(i, frame) = call_op("select", {container, 0, in(i, frame, 1)}, i.where);
    return;
  }
  if (container.is_dict()) {
    const Value* v = container.to_dict().find(in(i, frame, 1));
    if (v == nullptr) throw_invalid_argument(i.where, "KeyError: the dict has no key {}", in(i, frame, 1));
    Value copy = *v;
    out(i, frame) = std::move(copy);
    return;
  }
  const ValueList& l = container.to_list();
  Value v = l[list_index(i, l.size(), in(i, frame, 1))];
  out(i, frame) = std::move(v);
}

void len(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  if (v.is_tensor()) out(i, frame) = Value(v.to_tensor().size(0, i.where));
  else if (v.is_string()) out(i, frame) = static_cast<std::int64_t>(v.to_string_ref().size());
  else if (v.is_dict()) out(i, frame) = static_cast<std::int64_t>(v.to_dict().size());
  else out(i, frame) = static_cast<std::int64_t>(v.to_list().size());
}

// The changed list or dict as the result, when the node has one: the same ref.
void result_is_input(const Instr& i, Value* frame) {
  if (i.outputs.empty()) return;
  Value self = raw(i, frame, 0);
  out(i, frame) = std::move(self);
}

void append(const Instr& i, Value* frame) {
  Value item = stored(i, frame, 1);
  mutable_list(i, frame, 0).push_back(std::move(item));
  result_is_input(i, frame);
}

void set_item(const Instr& i, Value* frame) {
  Value item = stored(i, frame, 2);
  if (in(i, frame, 0).is_dict()) {
    Value key = in(i, frame, 1);
    mutable_dict(i, frame, 0).insert_or_assign(std::move(key), std::move(item));
  } else {
    ValueList& l = mutable_list(i, frame, 0);
    l[list_index(i, l.size(), in(i, frame, 1))] = std::move(item);
  }
  result_is_input(i, frame);
}

// list.insert(index, item): Python's rule (an index past either end inserts at that end).
void list_insert(const Instr& i, Value* frame) {
  Value item = stored(i, frame, 2);
  ValueList& l = mutable_list(i, frame, 0);
  const auto n = static_cast<std::int64_t>(l.size());
  std::int64_t k = in(i, frame, 1).to_int();
  if (k < 0) k += n;
  k = std::clamp<std::int64_t>(k, 0, n);
  l.insert(l.begin() + k, std::move(item));
}

// list * n and n * list: the list repeated (empty for n <= 0).
template <std::size_t ListAt>
void list_repeat(const Instr& i, Value* frame) {
  const ValueList& l = in(i, frame, ListAt).to_list();
  const std::int64_t n = in(i, frame, 1 - ListAt).to_int();
  ValueList r;
  for (std::int64_t k = 0; k < n; ++k) r.insert(r.end(), l.begin(), l.end());
  out(i, frame) = share(std::move(r));
}

// list.extend(other)
void list_extend(const Instr& i, Value* frame) {
  ValueList other = in(i, frame, 1).to_list();  // a copy: `l.extend(l)` reads what it changes
  ValueList& l = mutable_list(i, frame, 0);
  l.insert(l.end(), std::make_move_iterator(other.begin()), std::make_move_iterator(other.end()));
}

// list.pop(index=-1), dict.pop(key[, default]): the element removed.
void pop(const Instr& i, Value* frame) {
  if (in(i, frame, 0).is_dict()) {
    ValueDict& d = mutable_dict(i, frame, 0);
    if (const Value* found = d.find(in(i, frame, 1))) {
      const std::ptrdiff_t k = found - d.values.data();
      Value v = std::move(d.values[static_cast<std::size_t>(k)]);
      d.keys.erase(d.keys.begin() + k);
      d.values.erase(d.values.begin() + k);
      out(i, frame) = std::move(v);
      return;
    }
    if (i.inputs.size() < 3) throw_invalid_argument(i.where, "KeyError: the dict has no key {}", in(i, frame, 1));
    Value dflt = raw(i, frame, 2);
    out(i, frame) = std::move(dflt);
    return;
  }
  ValueList& l = mutable_list(i, frame, 0);
  if (l.empty()) throw_invalid_argument(i.where, "pop from an empty list");
  const std::size_t k = list_index(i, l.size(), i.inputs.size() > 1 ? in(i, frame, 1) : Value(-1));
  Value v = std::move(l[k]);
  l.erase(l.begin() + static_cast<std::ptrdiff_t>(k));
  out(i, frame) = std::move(v);
}

// list.remove(value): the first element equal to it (as `in` compares).
void list_remove(const Instr& i, Value* frame) {
  const std::string needle = to_string(in(i, frame, 1));
  ValueList& l = mutable_list(i, frame, 0);
  auto it = std::find_if(l.begin(), l.end(), [&](const Value& v) { return to_string(v) == needle; });
  if (it == l.end()) throw_invalid_argument(i.where, "list.remove(x): x not in list");
  l.erase(it);
}

// list.clear(), dict.clear()
void clear(const Instr& i, Value* frame) {
  if (in(i, frame, 0).is_dict()) mutable_dict(i, frame, 0) = ValueDict();
  else mutable_list(i, frame, 0).clear();
}

void list_copy(const Instr& i, Value* frame) { out(i, frame) = share(in(i, frame, 0).to_list()); }

void list_add(const Instr& i, Value* frame) {
  ValueList l = in(i, frame, 0).to_list();
  const ValueList& r = in(i, frame, 1).to_list();
  l.insert(l.end(), r.begin(), r.end());
  out(i, frame) = share(std::move(l));
}

// list += other: extends the list itself (every alias sees it), which is the result.
void list_iadd(const Instr& i, Value* frame) {
  list_extend(i, frame);
  out(i, frame) = raw(i, frame, 0);
}

void list_slice(const Instr& i, Value* frame) {
  const ValueList& l = in(i, frame, 0).to_list();
  const auto n = static_cast<std::int64_t>(l.size());
  auto clampi = [&](const Value& v, std::int64_t dflt) {
    if (v.is_none()) return dflt;
    std::int64_t k = v.to_int();
    if (k < 0) k += n;
    return std::clamp<std::int64_t>(k, 0, n);
  };
  const std::int64_t step = i.inputs.size() > 3 && !in(i, frame, 3).is_none() ? in(i, frame, 3).to_int() : 1;
  if (step == 0) throw_invalid_argument(i.where, "slice step cannot be zero");
  ValueList r;
  if (step > 0) {
    for (std::int64_t k = clampi(in(i, frame, 1), 0); k < clampi(in(i, frame, 2), n); k += step)
      r.push_back(l[static_cast<std::size_t>(k)]);
  } else {
    // Python's bounds for a negative step: from the end by default, down to before the start.
    auto bound = [&](const Value& v, std::int64_t dflt) {
      if (v.is_none()) return dflt;
      std::int64_t k = v.to_int();
      if (k < 0) k += n;
      return std::clamp<std::int64_t>(k, -1, n - 1);
    };
    for (std::int64_t k = bound(in(i, frame, 1), n - 1); k > bound(in(i, frame, 2), -1); k += step)
      r.push_back(l[static_cast<std::size_t>(k)]);
  }
  out(i, frame) = share(std::move(r));
}

void tuple_index(const Instr& i, Value* frame) { getitem(i, frame); }

// dict() and dict(other): a new dict (a copy); prim::DictConstruct(k0, v0, k1, v1, ...).
// dict(), dict(other) and dict(list of (key, value) pairs)
void dict_new(const Instr& i, Value* frame) {
  if (i.inputs.empty() || in(i, frame, 0).is_dict()) {
    out(i, frame) = share(i.inputs.empty() ? ValueDict() : in(i, frame, 0).to_dict());
    return;
  }
  ValueDict d;
  for (const Value& pair : in(i, frame, 0).to_list()) {
    const ValueList& kv = pair.to_list();
    if (kv.size() != 2) throw_invalid_argument(i.where, "dict() takes (key, value) pairs, got {} values", kv.size());
    d.insert_or_assign(kv[0], kv[1]);
  }
  out(i, frame) = share(std::move(d));
}
void dict_construct(const Instr& i, Value* frame) {
  ValueDict d;
  for (std::size_t k = 0; k + 1 < i.inputs.size(); k += 2) d.insert_or_assign(in(i, frame, k), stored(i, frame, k + 1));
  out(i, frame) = share(std::move(d));
}
void dict_keys(const Instr& i, Value* frame) { out(i, frame) = share(in(i, frame, 0).to_dict().keys); }
void dict_values(const Instr& i, Value* frame) { out(i, frame) = share(in(i, frame, 0).to_dict().values); }
void dict_items(const Instr& i, Value* frame) {  // a list of (key, value) tuples
  const ValueDict& d = in(i, frame, 0).to_dict();
  ValueList items;
  items.reserve(d.size());
  for (std::size_t k = 0; k < d.size(); ++k) items.emplace_back(ValueList{d.keys[k], d.values[k]});
  out(i, frame) = share(std::move(items));
}
void dict_update(const Instr& i, Value* frame) {
  const ValueDict other = in(i, frame, 1).to_dict();  // a copy: `d.update(d)` reads what it writes
  ValueDict& d = mutable_dict(i, frame, 0);
  for (std::size_t k = 0; k < other.size(); ++k) d.insert_or_assign(other.keys[k], other.values[k]);
}
// dict.get(key, default=None)
void dict_get(const Instr& i, Value* frame) {
  const Value* v = in(i, frame, 0).to_dict().find(in(i, frame, 1));
  Value r = v != nullptr ? *v : i.inputs.size() > 2 ? raw(i, frame, 2)
                                                    : Value();
  out(i, frame) = std::move(r);
}

void contains(const Instr& i, Value* frame) {
  if (in(i, frame, 0).is_dict()) {
    out(i, frame) = in(i, frame, 0).to_dict().find(in(i, frame, 1)) != nullptr;
    return;
  }
  const std::string needle = to_string(in(i, frame, 1));
  const ValueList& l = in(i, frame, 0).to_list();
  out(i, frame) = std::any_of(l.begin(), l.end(), [&](const Value& v) { return to_string(v) == needle; });
}

// ---- numbers --------------------------------------------------------------------------------

enum class Arith {
  add,
  sub,
  mul,
  floordiv,
  mod,
  truediv
};

// A bool as Python computes with it: an int.
Value numeric(const Value& v) { return v.is_bool() ? Value(static_cast<std::int64_t>(v.to_bool())) : v; }

[[noreturn]] void overflow(const Instr& i, std::int64_t x, std::int64_t y, const char* op) {
  throw_invalid_argument(i.where, "integer overflow: {} {} {} does not fit in 64 bits", x, op, y);
}

bool is_float(const Value& v) { return v.is_double(); }
// A proxy number: a size, or a float computed from sizes, unknown at trace time.
bool is_proxy(const Value& v) noexcept { return v.is_symint() || v.is_symfloat(); }

template <Arith A>
Value arith_values(const Instr& i, const Value& a_in, const Value& b_in) {
  const Value a = numeric(a_in), b = numeric(b_in);
  if (is_proxy(a) || is_proxy(b)) [[unlikely]] {
    static constexpr std::array<const char*, 6> names = {"operator.add", "operator.sub", "operator.mul",
                                                         "operator.floordiv", "operator.mod", "operator.truediv"};
    return call_op(names[static_cast<int>(A)], {a, b}, i.where);
  }
  if (A == Arith::truediv || is_float(a) || is_float(b)) {
    const double x = a.to_double(), y = b.to_double();
    if ((A == Arith::truediv || A == Arith::floordiv || A == Arith::mod) && y == 0.0)
      throw_invalid_argument(i.where, "float division or modulo by zero");
    double r = 0;
    switch (A) {
      case Arith::add: r = x + y; break;
      case Arith::sub: r = x - y; break;
      case Arith::mul: r = x * y; break;
      case Arith::truediv: r = x / y; break;
      case Arith::floordiv: r = std::floor(x / y); break;
      case Arith::mod: r = x - std::floor(x / y) * y; break;
    }
    return r;
  }
  const std::int64_t x = a.to_int(), y = b.to_int();
  std::int64_t r = 0;
  switch (A) {
    case Arith::add:
      if (__builtin_add_overflow(x, y, &r)) overflow(i, x, y, "+");
      break;
    case Arith::sub:
      if (__builtin_sub_overflow(x, y, &r)) overflow(i, x, y, "-");
      break;
    case Arith::mul:
      if (__builtin_mul_overflow(x, y, &r)) overflow(i, x, y, "*");
      break;
    case Arith::floordiv:
    case Arith::mod: {
      if (y == 0) throw_invalid_argument(i.where, "integer division or modulo by zero");
      if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow(i, x, y, "//");
      std::int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      r = A == Arith::floordiv ? q : x - q * y;
      break;
    }
    case Arith::truediv: break;
  }
  return r;
}

template <Arith A>
void arith(const Instr& i, Value* frame) {
  out(i, frame) = arith_values<A>(i, in(i, frame, 0), in(i, frame, 1));
}

enum class Cmp {
  eq,
  ne,
  lt,
  le,
  gt,
  ge
};

template <Cmp C>
void compare(const Instr& i, Value* frame) {
  const Value a = numeric(in(i, frame, 0));
  const Value b = numeric(in(i, frame, 1));
  if (is_proxy(a) || is_proxy(b)) {
    static constexpr std::array<const char*, 6> names = {"operator.eq", "operator.ne", "operator.lt",
                                                         "operator.le", "operator.gt", "operator.ge"};
    out(i, frame) = call_op(names[static_cast<int>(C)], {a, b}, i.where);
    return;
  }
  if (!a.is_number() || !b.is_number()) {  // strings, None, lists: equality only
    const bool same = a.kind() == b.kind() && to_string(a) == to_string(b);
    if (C != Cmp::eq && C != Cmp::ne)
      throw_invalid_argument(i.where, "cannot order {} and {}", a.type_name(), b.type_name());
    out(i, frame) = C == Cmp::eq ? same : !same;
    return;
  }
  const double x = a.to_double(), y = b.to_double();
  bool r = false;
  switch (C) {
    case Cmp::eq: r = x == y; break;
    case Cmp::ne: r = x != y; break;
    case Cmp::lt: r = x < y; break;
    case Cmp::le: r = x <= y; break;
    case Cmp::gt: r = x > y; break;
    case Cmp::ge: r = x >= y; break;
  }
  out(i, frame) = r;
}

void neg(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  if (a.is_symint()) out(i, frame) = call_op("operator.sub", {0, a}, i.where);
  else if (a.is_symfloat()) out(i, frame) = call_op("operator.neg", {a}, i.where);
  else if (a.is_double()) out(i, frame) = -a.to_double();
  else out(i, frame) = -a.to_int();
}

bool truth(const Instr& i, const Value& v) {
  if (v.is_symint()) return SymBool::symbolic(v.to_sym_int().proxy(), i.where).value(i.where);
  if (v.is_symfloat()) return v.to_sym_float().value(i.where) != 0.0;  // throws: unknown at trace time
  if (v.is_tensor()) return v.to_tensor().to_bool(i.where);
  if (v.is_none()) return false;
  if (v.is_int()) return v.to_int() != 0;
  if (v.is_double()) return v.to_double() != 0.0;
  if (v.is_string()) return !v.to_string_ref().empty();
  if (v.is_list()) return !v.to_list().empty();
  return v.to_bool();
}

void all_of(const Instr& i, Value* frame) {
  const ValueList& l = in(i, frame, 0).to_list();
  out(i, frame) = std::all_of(l.begin(), l.end(), [&](const Value& v) { return truth(i, v); });
}
void any_of(const Instr& i, Value* frame) {
  const ValueList& l = in(i, frame, 0).to_list();
  out(i, frame) = std::any_of(l.begin(), l.end(), [&](const Value& v) { return truth(i, v); });
}

void not_(const Instr& i, Value* frame) { out(i, frame) = !truth(i, in(i, frame, 0)); }
void and_(const Instr& i, Value* frame) { out(i, frame) = truth(i, in(i, frame, 0)) && truth(i, in(i, frame, 1)); }
void or_(const Instr& i, Value* frame) { out(i, frame) = truth(i, in(i, frame, 0)) || truth(i, in(i, frame, 1)); }

void is_(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  const Value& b = in(i, frame, 1);
  out(i, frame) = (a.is_none() && b.is_none()) || (a.is_bool() && b.is_bool() && a.to_bool() == b.to_bool());
}
void isnot(const Instr& i, Value* frame) {
  is_(i, frame);
  out(i, frame) = !out(i, frame).to_bool();
}

// Tensor to number (`bool(t)`, `int(t)`), or a number passed through (a traced model's
// NumToTensor -> Int round trip of a size).
void to_bool(const Instr& i, Value* frame) { out(i, frame) = truth(i, in(i, frame, 0)); }
void to_int(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  if (v.is_tensor()) out(i, frame) = v.to_tensor().item<std::int64_t>(i.where);
  else if (v.is_double()) out(i, frame) = static_cast<std::int64_t>(v.to_double());
  else if (v.is_symfloat()) out(i, frame) = call_op("sym_int", {v}, i.where);
  else if (v.is_bool()) out(i, frame) = static_cast<std::int64_t>(v.to_bool());
  else out(i, frame) = v;
}
void to_float(const Instr& i, Value* frame) {
  const Value v = numeric(in(i, frame, 0));
  if (v.is_tensor()) out(i, frame) = static_cast<double>(v.to_tensor().item<float>(i.where));
  else if (v.is_symint()) out(i, frame) = call_op("sym_float", {v}, i.where);
  else if (v.is_symfloat()) out(i, frame) = v;
  else out(i, frame) = v.to_double();
}
void identity(const Instr& i, Value* frame) {
  Value v = raw(i, frame, 0);  // a ref kept (`unchecked_cast` of an optional list)
  out(i, frame) = std::move(v);
}
void none(const Instr& i, Value* frame) {
  for (std::size_t k = 0; k < i.outputs.size(); ++k) out(i, frame, k) = Value();
}
void always_false(const Instr& i, Value* frame) { out(i, frame) = false; }
void always_true(const Instr& i, Value* frame) { out(i, frame) = true; }
void nothing(const Instr&, Value*) {}

void float_floor(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  if (v.is_symfloat()) out(i, frame) = call_op("math.floor", {v}, i.where);
  else if (v.is_symint()) out(i, frame) = v;
  else out(i, frame) = v.is_double() ? static_cast<std::int64_t>(std::floor(v.to_double())) : v.to_int();
}
void float_ceil(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  if (v.is_symfloat()) out(i, frame) = call_op("math.ceil", {v}, i.where);
  else if (v.is_symint()) out(i, frame) = v;
  else out(i, frame) = v.is_double() ? static_cast<std::int64_t>(std::ceil(v.to_double())) : v.to_int();
}

void range_length(const Instr& i, Value* frame) {
  const std::int64_t lo = in(i, frame, 0).to_sym_int().value(i.where);
  const std::int64_t hi = in(i, frame, 1).to_sym_int().value(i.where);
  const std::int64_t step = in(i, frame, 2).to_int();
  if (step == 0) throw_invalid_argument(i.where, "range() step must not be zero");
  std::int64_t n = 0;
  if (step > 0 && lo < hi) n = (hi - lo + step - 1) / step;
  else if (step < 0 && lo > hi) n = (lo - hi - step - 1) / (-step);
  out(i, frame) = n;
}
void derive_index(const Instr& i, Value* frame) {
  out(i, frame) = in(i, frame, 1).to_int() + in(i, frame, 0).to_int() * in(i, frame, 2).to_int();
}

void min_max(const Instr& i, Value* frame, bool is_max) {
  ValueList items;
  if (i.inputs.size() == 1) items = in(i, frame, 0).to_list();
  else items = {in(i, frame, 0), in(i, frame, 1)};
  for (Value& v : items) v = numeric(v);
  if (items.empty()) throw_invalid_argument(i.where, "{}() of an empty list", is_max ? "max" : "min");
  if (std::any_of(items.begin(), items.end(), [](const Value& v) { return v.is_symint(); })) {
    // A size known only when run (`min(k, n)` with n from nms): the trace records sym_min.
    SymInt best = items[0].to_sym_int();
    for (std::size_t k = 1; k < items.size(); ++k)
      best = is_max ? sym_max({best, i.where}, {items[k].to_sym_int(), i.where})
                    : sym_min({best, i.where}, {items[k].to_sym_int(), i.where});
    out(i, frame) = Value(best);
    return;
  }
  Value best = items[0];
  for (std::size_t k = 1; k < items.size(); ++k) {
    const double a = items[k].is_symint() ? static_cast<double>(items[k].to_sym_int().value(i.where)) : items[k].to_double();
    const double b = best.is_symint() ? static_cast<double>(best.to_sym_int().value(i.where)) : best.to_double();
    if (is_max ? a > b : a < b) best = items[k];
  }
  out(i, frame) = best;
}
void min_(const Instr& i, Value* frame) { min_max(i, frame, false); }
void max_(const Instr& i, Value* frame) { min_max(i, frame, true); }

// ---- tensors as values -----------------------------------------------------------------------

void dim(const Instr& i, Value* frame) { out(i, frame) = in(i, frame, 0).to_tensor().dim(i.where); }

void size_int(const Instr& i, Value* frame) {
  out(i, frame) = Value(in(i, frame, 0).to_tensor().size(in(i, frame, 1).to_int(), i.where));
}

void sizes(const Instr& i, Value* frame) { out(i, frame) = Value(in(i, frame, 0).to_tensor().sizes(i.where)); }

void dtype(const Instr& i, Value* frame) {
  out(i, frame) = dtype_to_scalar_type(in(i, frame, 0).to_tensor().dtype());
}
void device(const Instr& i, Value* frame) { out(i, frame) = std::string("cpu"); }

// str.format with `{}` fields, as TorchScript's aten::format.
void format(const Instr& i, Value* frame) {
  const std::string& f = in(i, frame, 0).to_string_ref();
  std::string r;
  std::size_t arg = 1;
  for (std::size_t k = 0; k < f.size(); ++k) {
    if (f[k] == '{' && k + 1 < f.size() && f[k + 1] == '}') {
      if (arg < i.inputs.size()) {
        const Value& v = in(i, frame, arg++);
        r += v.is_string() ? v.to_string_ref() : to_string(v);
      }
      ++k;
    } else {
      r += f[k];
    }
  }
  out(i, frame) = std::move(r);
}

void str(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  out(i, frame) = v.is_string() ? v.to_string_ref() : to_string(v);
}

// str.find(substr, start=0, end=-1): the index of substr, or -1.
void str_find(const Instr& i, Value* frame) {
  const std::string& text = in(i, frame, 0).to_string_ref();
  const std::string& needle = in(i, frame, 1).to_string_ref();
  const auto n = static_cast<std::int64_t>(text.size());
  std::int64_t start = i.inputs.size() > 2 ? in(i, frame, 2).to_int() : 0;
  std::int64_t end = i.inputs.size() > 3 ? in(i, frame, 3).to_int() : -1;
  if (start < 0) start = std::max<std::int64_t>(0, start + n);
  end = end < 0 ? n + end + 1 : std::min(end, n);  // TorchScript's end=-1 means the end
  const std::string_view window =
      start <= end ? std::string_view(text).substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start))
                   : std::string_view();
  const std::size_t at = start <= end ? window.find(needle) : std::string_view::npos;
  out(i, frame) = at == std::string_view::npos ? std::int64_t{-1} : static_cast<std::int64_t>(at) + start;
}

void str_startswith(const Instr& i, Value* frame) {
  out(i, frame) = std::string_view(in(i, frame, 0).to_string_ref()).starts_with(in(i, frame, 1).to_string_ref());
}
void str_endswith(const Instr& i, Value* frame) {
  out(i, frame) = std::string_view(in(i, frame, 0).to_string_ref()).ends_with(in(i, frame, 1).to_string_ref());
}

void assert_(const Instr& i, Value* frame) {
  if (!truth(i, in(i, frame, 0)))
    throw_invalid_argument(i.where, "the model's assertion failed: {}",
                           i.inputs.size() > 1 && in(i, frame, 1).is_string() ? in(i, frame, 1).to_string_ref() : "");
}

// ---- aten ops whose arguments need translating ----------------------------------------------

// aten::_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
//                    groups, benchmark, deterministic, cudnn_enabled, allow_tf32)
// symtrace's conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's rank; any other is
// LibTorch's (OpUnsupported: the instruction's fallback).
void convolution(const Instr& i, Value* frame) {
  const Value& weight = in(i, frame, 1);
  const std::int64_t dims = weight.is_tensor() ? weight.to_tensor().dim(i.where) - 2 : 0;
  if (dims < 1 || dims > 3)
    throw_op_unsupported("_convolution", i.where, "symtrace has convolutions over 1, 2 or 3 dims; this weight has {}",
                         weight.is_tensor() ? fmt::format("{} dims", dims + 2) : std::string(weight.type_name()));
  if (in(i, frame, 6).to_bool()) {
    out(i, frame) = call_op(fmt::format("conv_transpose{}d", dims),
                            {in(i, frame, 0), weight, in(i, frame, 2), in(i, frame, 3), in(i, frame, 4), in(i, frame, 7),
                             in(i, frame, 8), in(i, frame, 5)},
                            i.where);
    return;
  }
  out(i, frame) = call_op(fmt::format("conv{}d", dims),
                          {in(i, frame, 0), weight, in(i, frame, 2), in(i, frame, 3), in(i, frame, 4), in(i, frame, 5),
                           in(i, frame, 8)},
                          i.where);
}

Value hardtanh_value(const Instr& i, const Value* frame) {
  return call_op("clamp", {in(i, frame, 0), in(i, frame, 1), in(i, frame, 2)}, i.where);
}
void hardtanh(const Instr& i, Value* frame) { out(i, frame) = hardtanh_value(i, frame); }
void hardtanh_(const Instr& i, Value* frame) {
  out(i, frame) = call_op("copy_", {in(i, frame, 0), hardtanh_value(i, frame)}, i.where);
}

void transpose_2d(const Instr& i, Value* frame) {  // aten::t
  out(i, frame) = call_op("transpose", {in(i, frame, 0), 0, 1}, i.where);
}

// aten::addmm(self, mat1, mat2, beta=1, alpha=1): what a traced nn.Linear was before aten::linear.
void addmm(const Instr& i, Value* frame) {
  if (in(i, frame, 3).to_double() != 1.0 || in(i, frame, 4).to_double() != 1.0)
    throw_op_error("addmm", i.where, "only beta=1 and alpha=1 are supported");
  Value product = call_op("matmul", {in(i, frame, 1), in(i, frame, 2)}, i.where);
  out(i, frame) = call_op("add", {std::move(product), in(i, frame, 0)}, i.where);
}

// aten::to with a device or another tensor's options: a no-op on symtrace's CPU tensors, or a
// dtype change.
// aten::to.other(self, other, ...) takes other's dtype; to.device(self, device, dtype, ...) and
// to.prim_Device(self, device?, dtype?, ...) the dtype they name (when not None).
void to_other(const Instr& i, Value* frame) {
  const Value& x = in(i, frame, 0);
  const Value& second = in(i, frame, 1);
  if (second.is_tensor()) {
    out(i, frame) = call_op("to", {x, second.to_tensor().dtype()}, i.where);
    return;
  }
  if (i.inputs.size() > 2 && in(i, frame, 2).is_int()) {
    out(i, frame) = call_op("to", {x, scalar_type_to_dtype(in(i, frame, 2).to_int())}, i.where);
    return;
  }
  out(i, frame) = x;
}

// A traced model's size arithmetic: `x.size(0) // 2` is recorded as aten::floor_divide of
// `prim::NumToTensor(size)` (a number here) and a 0-dim tensor constant. When one operand is a
// number and the other a number or a 0-dim concrete tensor, the tensor overloads of the
// arithmetic ops compute on numbers; otherwise they are the registry's tensor ops.
bool number_or_scalar_tensor(const Value& v) {
  if (v.is_number() || v.is_symint()) return true;
  // The 0-dim int64 tensor constants a traced graph computes sizes with; a float tensor (a
  // 0-dim parameter) stays a tensor, as in PyTorch.
  return v.is_tensor() && v.to_tensor().is_concrete() && v.to_tensor().dim() == 0 &&
         v.to_tensor().dtype() == DType::int64;
}

template <Arith A>
void tensor_arith(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  const Value& b = in(i, frame, 1);
  const bool has_alpha = i.inputs.size() > 2;
  if ((a.is_number() || a.is_symint() || b.is_number() || b.is_symint()) && number_or_scalar_tensor(a) &&
      number_or_scalar_tensor(b) && (!has_alpha || in(i, frame, 2).to_double() == 1.0)) {
    out(i, frame) = arith_values<A>(i, as_number(i, a), as_number(i, b));
    return;
  }
  static constexpr std::array<const char*, 6> names = {"add", "sub", "mul", "floor_divide", "remainder", "div"};
  static const OpDef* const op = OpRegistry::instance().find(names[static_cast<int>(A)]);
  if (op == nullptr) throw_op_error(names[static_cast<int>(A)], i.where, "symtrace has no op aten::{} on tensors",
                                    names[static_cast<int>(A)]);
  const Value args[2] = {a, has_alpha && !(in(i, frame, 2).is_number() && in(i, frame, 2).to_double() == 1.0)
                                ? call_op("mul", {b, in(i, frame, 2)}, i.where)
                                : b};
  out(i, frame) = dispatch(*op, args, i.where);
}

// aten::rsub(self, other, alpha=1): other - alpha * self.
void rsub(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  const Value& b = in(i, frame, 1);
  if (i.inputs.size() > 2 && in(i, frame, 2).to_double() != 1.0)
    throw_op_error("rsub", i.where, "only alpha=1 is supported");
  if (number_or_scalar_tensor(a) && number_or_scalar_tensor(b) && !(a.is_tensor() && b.is_tensor())) {
    out(i, frame) = arith_values<Arith::sub>(i, as_number(i, b), as_number(i, a));
    return;
  }
  out(i, frame) = call_op("sub", {b, a}, i.where);
}

// aten::div.Tensor_mode / div.Scalar_mode(self, other, *, rounding_mode): without a mode, '/';
// "floor" is '//'; "trunc" rounds toward zero. On numbers (a traced `embed_dim // num_heads`,
// sizes as 0-dim tensors) the result is a number; on tensors, floor_divide ("floor") only.
void div_mode(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  const Value& b = in(i, frame, 1);
  const Value& mode = in(i, frame, 2);
  if (mode.is_none()) return tensor_arith<Arith::truediv>(i, frame);
  const std::string& m = mode.to_string_ref();
  if (m != "trunc" && m != "floor")
    throw_op_error("div", i.where, "rounding_mode must be 'trunc', 'floor' or None, got '{}'", m);
  if ((a.is_number() || a.is_symint() || b.is_number() || b.is_symint()) && number_or_scalar_tensor(a) &&
      number_or_scalar_tensor(b)) {
    const Value x = numeric(as_number(i, a)), y = numeric(as_number(i, b));
    const bool same_sign = !(x.is_int() && y.is_int()) || ((x.to_int() < 0) == (y.to_int() < 0));
    if (m == "floor" || same_sign || x.is_symint() || y.is_symint()) {
      if (m == "trunc" && (x.is_double() || y.is_double())) {
        out(i, frame) = std::trunc(arith_values<Arith::truediv>(i, x, y).to_double());
        return;
      }
      // For operands of one sign, truncation is floor division.
      out(i, frame) = arith_values<Arith::floordiv>(i, x, y);
      return;
    }
    if (y.to_int() == 0) throw_invalid_argument(i.where, "integer division by zero");
    out(i, frame) = x.to_int() / y.to_int();  // C++ division truncates
    return;
  }
  if (m == "floor") {
    out(i, frame) = call_op("floor_divide", {a, b}, i.where);
    return;
  }
  throw_op_unsupported("div", i.where, "aten::div with rounding_mode='trunc' on tensors is not supported by symtrace");
}

// aten::baddbmm(self, batch1, batch2, beta=1, alpha=1): beta * self + alpha * batch1 @ batch2
// (what a traced attention with a mask records).
void baddbmm(const Instr& i, Value* frame) {
  const double beta = i.inputs.size() > 3 ? as_number(i, in(i, frame, 3)).to_double() : 1.0;
  const double alpha = i.inputs.size() > 4 ? as_number(i, in(i, frame, 4)).to_double() : 1.0;
  Value product = call_op("matmul", {in(i, frame, 1), in(i, frame, 2)}, i.where);
  if (alpha != 1.0) product = call_op("mul", {std::move(product), alpha}, i.where);
  if (beta == 0.0) {  // PyTorch ignores self then, NaN and inf included
    out(i, frame) = std::move(product);
    return;
  }
  Value self = beta == 1.0 ? in(i, frame, 0) : call_op("mul", {in(i, frame, 0), beta}, i.where);
  out(i, frame) = call_op("add", {std::move(self), std::move(product)}, i.where);
}

// pow on numbers (a traced `head_dim ** -0.5`), else the registry's pow.
void pow_(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  const Value& b = in(i, frame, 1);
  if ((a.is_number() || b.is_number()) && number_or_scalar_tensor(a) && number_or_scalar_tensor(b)) {
    const Value x = numeric(as_number(i, a)), y = numeric(as_number(i, b));
    const double r = std::pow(x.to_double(), y.to_double());
    if (x.is_int() && y.is_int() && y.to_int() >= 0) out(i, frame) = static_cast<std::int64_t>(r);
    else out(i, frame) = r;
    return;
  }
  out(i, frame) = call_op("pow", {a, b}, i.where);
}

void sum_list(const Instr& i, Value* frame) {
  const ValueList& l = in(i, frame, 0).to_list();
  Value total = std::int64_t{0};
  for (const Value& v : l) total = arith_values<Arith::add>(i, total, v);
  out(i, frame) = std::move(total);
}

// aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight,
// qkv_bias, proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True,
// mask_type=None) -> (Tensor, Tensor): the fused attention eager PyTorch takes when it can
// (what a traced nn.MultiheadAttention records), batch first, computed as nn::MultiheadAttention
// computes it.
void native_multi_head_attention(const Instr& i, Value* frame) {
  const std::int64_t e = in(i, frame, 3).to_int();
  const std::int64_t heads = in(i, frame, 4).to_int();
  if (heads <= 0 || e % heads != 0)
    throw_op_error("_native_multi_head_attention", i.where, "embed_dim {} is not divisible by num_heads {}", e, heads);
  auto tensor = [&](std::size_t k) { return in(i, frame, k).is_none() ? Tensor() : in(i, frame, k).to_tensor(); };
  const nn::AttentionWeights w{heads, tensor(5), tensor(6), tensor(7), tensor(8)};
  const Value& mask = in(i, frame, 9);
  const bool need_weights = i.inputs.size() <= 10 || in(i, frame, 10).to_bool();
  const bool average = i.inputs.size() <= 11 || in(i, frame, 11).to_bool();
  // mask_type 1 is a key padding mask [N, S]; otherwise the mask is an attention mask.
  const bool padding = i.inputs.size() > 12 && !in(i, frame, 12).is_none() && in(i, frame, 12).to_int() == 1;
  std::optional<Tensor> attn_mask, key_padding_mask;
  if (!mask.is_none()) {
    // The fused kernel reads any mask as bool: nonzero is masked.
    const Tensor& m = mask.to_tensor();
    (padding ? key_padding_mask : attn_mask) = m.dtype() == DType::bool_ ? m : m.ne(0, i.where);
  }
  auto [output, weights] =
      nn::multi_head_attention(in(i, frame, 0).to_tensor(), in(i, frame, 1).to_tensor(), in(i, frame, 2).to_tensor(), w,
                               key_padding_mask, need_weights, attn_mask, average, /*batch_first=*/true, i.where);
  out(i, frame, 0) = std::move(output);
  if (i.outputs.size() > 1) out(i, frame, 1) = weights ? Value(std::move(*weights)) : Value();
}

// aten::new_zeros / new_ones / new_full(self, size, [fill,] dtype=None, ...): a tensor of
// `size` in self's dtype (or the one given). The size may hold proxy SymInts.
template <int Fill>
void new_filled(const Instr& i, Value* frame) {
  const Tensor& self = in(i, frame, 0).to_tensor();
  const std::size_t dtype_at = Fill == 2 ? 3 : 2;
  const Value& given = i.inputs.size() > dtype_at ? in(i, frame, dtype_at) : Value();
  const DType dtype = given.is_none() ? self.dtype() : scalar_type_to_dtype(given.to_int());
  const Value value = Fill == 2 ? in(i, frame, 2) : Value(static_cast<double>(Fill));
  out(i, frame) = call_op("new_full", {self, in(i, frame, 1), value, dtype}, i.where);
}

// aten::tensor(number, dtype=None, device=None, requires_grad=False): a 0-dim tensor.
void tensor_of_number(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  const Value& given = i.inputs.size() > 1 ? in(i, frame, 1) : Value();
  DType dtype = v.is_double() ? DType::float32 : v.is_bool() ? DType::bool_
                                                             : DType::int64;
  if (!given.is_none()) dtype = scalar_type_to_dtype(given.to_int());
  out(i, frame) = call_op("full", {Value(IntList{}), v, dtype}, i.where);
}

// aten::fill_.Tensor(self, value): fill_ with a 0-dim tensor's value.
void fill_tensor(const Instr& i, Value* frame) {
  out(i, frame) = call_op("fill_", {in(i, frame, 0), as_number(i, in(i, frame, 1))}, i.where);
}

// aten::masked_fill(self, mask, value): where(mask, value, self).
void masked_fill(const Instr& i, Value* frame) {
  const Tensor& self = in(i, frame, 0).to_tensor();
  Value filled = call_op("where", {in(i, frame, 1), as_number(i, in(i, frame, 2)), self}, i.where);
  if (filled.to_tensor().dtype() != self.dtype()) filled = call_op("to", {std::move(filled), self.dtype()}, i.where);
  out(i, frame) = std::move(filled);
}

// aten::lstm.input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first) -> (output, h_n, c_n): what nn.LSTM's forward calls (`_VF.lstm`), as nn::lstm.
void lstm(const Instr& i, Value* frame) {
  const ValueList& hx = in(i, frame, 1).to_list();
  if (hx.size() != 2) throw_op_error("lstm", i.where, "expects (h_0, c_0), got {} tensors", hx.size());
  TensorList params;
  for (const Value& p : in(i, frame, 2).to_list()) params.push_back(p.to_tensor());
  auto [output, h, c] = nn::lstm(in(i, frame, 0).to_tensor(), hx[0].to_tensor(), hx[1].to_tensor(), params,
                                 in(i, frame, 3).to_bool(), in(i, frame, 4).to_int(), in(i, frame, 5).to_double(),
                                 in(i, frame, 6).to_bool(), in(i, frame, 7).to_bool(), in(i, frame, 8).to_bool(), i.where);
  out(i, frame, 0) = std::move(output);
  out(i, frame, 1) = std::move(h);
  out(i, frame, 2) = std::move(c);
}

// aten::gru.input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first) -> (output, h_n), and rnn_tanh.input and rnn_relu.input the same: what nn.GRU's
// and nn.RNN's forwards call (`_VF.gru`, `_VF.rnn_tanh`, `_VF.rnn_relu`), as nn::gru and nn::rnn.
enum class Recurrence {
  gru,
  rnn_tanh,
  rnn_relu
};

template <Recurrence R>
void recurrence(const Instr& i, Value* frame) {
  TensorList params;
  for (const Value& p : in(i, frame, 2).to_list()) params.push_back(p.to_tensor());
  const Tensor& input = in(i, frame, 0).to_tensor();
  const Tensor& hx = in(i, frame, 1).to_tensor();
  const bool biases = in(i, frame, 3).to_bool(), train = in(i, frame, 6).to_bool();
  const bool bidirectional = in(i, frame, 7).to_bool(), batch_first = in(i, frame, 8).to_bool();
  const std::int64_t layers = in(i, frame, 4).to_int();
  const double dropout = in(i, frame, 5).to_double();
  auto [output, h] = R == Recurrence::gru
                         ? nn::gru(input, hx, params, biases, layers, dropout, train, bidirectional, batch_first, i.where)
                         : nn::rnn(input, hx, params, biases, layers, dropout, train, bidirectional, batch_first,
                                   R == Recurrence::rnn_relu, i.where);
  out(i, frame, 0) = std::move(output);
  out(i, frame, 1) = std::move(h);
}

// Math on numbers (`math.sqrt(d)` in scripted code): the tensor overloads are the registry's.
template <double (*F)(double)>
void math(const Instr& i, Value* frame) {
  out(i, frame) = F(in(i, frame, 0).to_double());
}
double sqrt_(double x) { return std::sqrt(x); }
double exp_(double x) { return std::exp(x); }
double log_(double x) { return std::log(x); }

// aten::max(Tensor self) / aten::min(Tensor self): the largest (smallest) element.
void tensor_max(const Instr& i, Value* frame) {
  out(i, frame) = call_op("amax", {in(i, frame, 0), Value(IntList{}), false}, i.where);
}
void tensor_min(const Instr& i, Value* frame) {
  Value negated = call_op("neg", {in(i, frame, 0)}, i.where);
  Value m = call_op("amax", {std::move(negated), Value(IntList{}), false}, i.where);
  out(i, frame) = call_op("neg", {std::move(m)}, i.where);
}

using Table = BuiltinTable;

const Table& table() {
  static const Table t = [] {
    Table t = {
        {"prim::ListConstruct", list_construct},
        {"prim::TupleConstruct", tuple_construct},
        {"prim::ListUnpack", unpack},
        {"prim::TupleUnpack", unpack},
        {"prim::TupleIndex", tuple_index},
        {"aten::__getitem__", getitem},
        {"aten::len", len},
        {"aten::append", append},
        {"aten::_set_item", set_item},
        {"aten::list", list_copy},
        {"aten::add.t", list_add},
        {"aten::add_.t", list_iadd},
        {"aten::slice.t", list_slice},
        {"aten::__contains__", contains},
        {"aten::dict", dict_new},
        {"aten::copy.Dict_str", dict_new},
        {"aten::copy.Dict_int", dict_new},
        {"prim::DictConstruct", dict_construct},
        {"aten::keys", dict_keys},
        {"aten::values", dict_values},
        {"aten::items", dict_items},
        {"aten::update", dict_update},
        {"aten::get", dict_get},
        {"aten::add.int", arith<Arith::add>},
        {"aten::add.float", arith<Arith::add>},
        {"aten::add.int_float", arith<Arith::add>},
        {"aten::add.float_int", arith<Arith::add>},
        {"aten::add", arith<Arith::add>},
        {"aten::sub.int", arith<Arith::sub>},
        {"aten::sub.float", arith<Arith::sub>},
        {"aten::sub", arith<Arith::sub>},
        {"aten::mul.int", arith<Arith::mul>},
        {"aten::mul.float", arith<Arith::mul>},
        {"aten::mul.int_float", arith<Arith::mul>},
        {"aten::mul.float_int", arith<Arith::mul>},
        {"aten::mul", arith<Arith::mul>},
        {"aten::floordiv.int", arith<Arith::floordiv>},
        {"aten::floordiv.float", arith<Arith::floordiv>},
        {"aten::floordiv", arith<Arith::floordiv>},
        {"aten::remainder.int", arith<Arith::mod>},
        {"aten::remainder.float", arith<Arith::mod>},
        {"aten::remainder", arith<Arith::mod>},
        {"aten::div.int", arith<Arith::truediv>},
        {"aten::div.float", arith<Arith::truediv>},
        {"aten::div", arith<Arith::truediv>},
        {"aten::neg.int", neg},
        {"aten::neg.float", neg},
        {"aten::neg.Scalar", neg},
        {"aten::eq.int", compare<Cmp::eq>},
        {"aten::eq.float", compare<Cmp::eq>},
        {"aten::eq.str", compare<Cmp::eq>},
        {"aten::eq.bool", compare<Cmp::eq>},
        {"aten::eq", compare<Cmp::eq>},
        {"aten::ne.int", compare<Cmp::ne>},
        {"aten::ne.float", compare<Cmp::ne>},
        {"aten::ne.str", compare<Cmp::ne>},
        {"aten::ne.bool", compare<Cmp::ne>},
        {"aten::ne", compare<Cmp::ne>},
        {"aten::lt.int", compare<Cmp::lt>},
        {"aten::lt.float", compare<Cmp::lt>},
        {"aten::lt", compare<Cmp::lt>},
        {"aten::le.int", compare<Cmp::le>},
        {"aten::le.float", compare<Cmp::le>},
        {"aten::le", compare<Cmp::le>},
        {"aten::gt.int", compare<Cmp::gt>},
        {"aten::gt.float", compare<Cmp::gt>},
        {"aten::gt", compare<Cmp::gt>},
        {"aten::ge.int", compare<Cmp::ge>},
        {"aten::ge.float", compare<Cmp::ge>},
        {"aten::ge", compare<Cmp::ge>},
        {"aten::__not__", not_},
        {"aten::all.bool", all_of},
        {"aten::all.int", all_of},
        {"aten::all.float", all_of},
        {"aten::any.bool", any_of},
        {"aten::any.int", any_of},
        {"aten::any.float", any_of},
        {"aten::any.str", any_of},
        {"aten::__and__.bool", and_},
        {"aten::__or__.bool", or_},
        {"aten::__is__", is_},
        {"aten::__isnot__", isnot},
        {"aten::Bool.Tensor", to_bool},
        {"aten::Bool.int", to_bool},
        {"aten::Bool.float", to_bool},
        {"aten::Int.Tensor", to_int},
        {"aten::Int.float", to_int},
        {"aten::Int.bool", to_int},
        {"aten::Int.Scalar", to_int},
        {"aten::ScalarImplicit", identity},
        {"aten::Float.Tensor", to_float},
        {"aten::Float.int", to_float},
        {"aten::Float.Scalar", to_float},
        {"aten::Float.bool", to_float},
        {"aten::floor.float", float_floor},
        {"aten::ceil.float", float_ceil},
        {"prim::NumToTensor", identity},
        {"prim::unchecked_cast", identity},
        {"prim::Uninitialized", none},
        {"aten::__range_length", range_length},
        {"aten::__derive_index", derive_index},
        {"prim::min.int", min_},
        {"prim::min.self_int", min_},
        {"prim::min", min_},
        {"prim::max.int", max_},
        {"prim::max.self_int", max_},
        {"prim::max", max_},
        {"aten::dim", dim},
        {"aten::size", sizes},
        {"aten::size.int", size_int},
        {"prim::dtype", dtype},
        {"prim::device", device},
        {"aten::device", identity},  // torch.device("cpu"): a device is its name
        {"prim::is_cuda", always_false},
        // Gradients "on" and every tensor "requiring" them: torch.nn's layers then take their
        // composite paths (MultiheadAttention's and TransformerEncoderLayer's fused kernels are
        // for inference without grad), which are made of ops symtrace has.
        {"aten::is_grad_enabled", always_true},
        {"prim::requires_grad", always_true},
        {"aten::is_autocast_enabled", always_false},
        {"aten::is_autocast_cpu_enabled", always_false},
        {"aten::is_scripting", always_true},
        {"aten::format", format},
        {"aten::str", str},
        {"aten::find", str_find},
        {"aten::startswith", str_startswith},
        {"aten::endswith", str_endswith},
        {"aten::warn", nothing},
        {"aten::_assert", assert_},
        {"aten::_convolution", convolution},
        {"aten::hardtanh", hardtanh},
        {"aten::hardtanh_", hardtanh_},
        {"aten::t", transpose_2d},
        {"aten::addmm", addmm},
        {"aten::to.device", to_other},
        {"aten::to.other", to_other},
        {"aten::to.prim_Device", to_other},
        {"aten::detach", identity},
        {"aten::floor_divide", tensor_arith<Arith::floordiv>},
        {"aten::floor_divide.Scalar", tensor_arith<Arith::floordiv>},
        {"aten::add.Tensor", tensor_arith<Arith::add>},
        {"aten::add.Scalar", tensor_arith<Arith::add>},
        {"aten::sub.Tensor", tensor_arith<Arith::sub>},
        {"aten::sub.Scalar", tensor_arith<Arith::sub>},
        {"aten::mul.Tensor", tensor_arith<Arith::mul>},
        {"aten::mul.Scalar", tensor_arith<Arith::mul>},
        {"aten::div.Tensor", tensor_arith<Arith::truediv>},
        {"aten::div.Scalar", tensor_arith<Arith::truediv>},
        {"aten::remainder.Tensor", tensor_arith<Arith::mod>},
        {"aten::remainder.Scalar", tensor_arith<Arith::mod>},
        {"aten::sqrt.int", math<sqrt_>},
        {"aten::sqrt.float", math<sqrt_>},
        {"aten::sqrt.Scalar", math<sqrt_>},
        {"aten::exp.int", math<exp_>},
        {"aten::exp.float", math<exp_>},
        {"aten::log.int", math<log_>},
        {"aten::log.float", math<log_>},
        {"aten::rsub", rsub},
        {"aten::baddbmm", baddbmm},
        {"aten::div.Tensor_mode", div_mode},
        {"aten::div.Scalar_mode", div_mode},
        {"aten::rsub.Scalar", rsub},
        {"aten::rsub.Tensor", rsub},
        {"aten::copy.t", list_copy},
        {"aten::lstm.input", lstm},
        {"aten::gru.input", recurrence<Recurrence::gru>},
        {"aten::rnn_tanh.input", recurrence<Recurrence::rnn_tanh>},
        {"aten::rnn_relu.input", recurrence<Recurrence::rnn_relu>},
        {"aten::masked_fill.Scalar", masked_fill},
        {"aten::masked_fill.Tensor", masked_fill},
        {"aten::tensor.int", tensor_of_number},
        {"aten::tensor.float", tensor_of_number},
        {"aten::tensor.bool", tensor_of_number},
        {"aten::fill_.Tensor", fill_tensor},
        {"aten::new_zeros", new_filled<0>},
        {"aten::new_ones", new_filled<1>},
        {"aten::new_full", new_filled<2>},
        {"aten::sum.int", sum_list},
        {"aten::sum.float", sum_list},
        {"aten::pow.Tensor_Scalar", pow_},
        {"aten::pow.Tensor_Tensor", pow_},
        {"aten::pow.Scalar", pow_},
        {"aten::pow.int", pow_},
        {"aten::pow.float", pow_},
        {"aten::pow.int_float", pow_},
        {"aten::pow.float_int", pow_},
        {"aten::_native_multi_head_attention", native_multi_head_attention},
        {"aten::max", tensor_max},
        {"aten::min", tensor_min},
        {"prim::is_nested", always_false},
        {"aten::IntImplicit", to_int},
        {"aten::insert", list_insert},
        {"aten::extend", list_extend},
        {"aten::pop", pop},
        {"aten::remove", list_remove},
        {"aten::clear", clear},
        {"aten::mul.left_t", list_repeat<0>},
        {"aten::mul.right_", list_repeat<1>},
    };
    add_tensor_builtins(t);
    return t;
  }();
  return t;
}

}  // namespace

BuiltinFn find_builtin(std::string_view kind, std::string_view overload, bool tensor_arguments) noexcept {
  const Table& t = table();
  if (!overload.empty()) {
    std::string key = fmt::format("{}.{}", kind, overload);
    if (auto it = t.find(key); it != t.end()) return it->second;
  } else if (auto it = t.find(kind); it != t.end()) {
    return it->second;  // the overload listed by kind
  }
  // The builtins listed by kind alone take numbers, lists and strings; an overload that takes
  // tensors (`aten::add.Tensor`, `aten::max.dim`) is the registry's, unless listed itself.
  static constexpr std::string_view on_tensors[] = {"aten::len", "aten::__getitem__",
                                                    "aten::max", "aten::min", "aten::dim", "aten::size",
                                                    "aten::Bool", "aten::Int", "aten::Float", "aten::format",
                                                    "aten::detach", "prim::NumToTensor", "prim::dtype",
                                                    "prim::device", "prim::is_cuda", "prim::is_nested", "prim::is_quantized",
                                                    "prim::requires_grad"};
  if (tensor_arguments && std::find(std::begin(on_tensors), std::end(on_tensors), kind) == std::end(on_tensors))
    return nullptr;
  if ((kind == "aten::max" || kind == "aten::min") && !overload.empty()) return nullptr;
  auto it = t.find(kind);
  return it == t.end() ? nullptr : it->second;
}

std::string_view registry_name(std::string_view name) noexcept {
  static const std::unordered_map<std::string_view, std::string_view> renames = {
      {"bmm", "matmul"},
      {"feature_dropout", "dropout"},
      {"alpha_dropout", "dropout"},
      {"true_divide", "div"},
      {"multiply", "mul"},
      {"subtract", "sub"},
      {"divide", "div"},
      {"clip", "clamp"},
      {"concat", "cat"},
      {"__and__", "bitwise_and"},
      {"__or__", "bitwise_or"},
  };
  auto it = renames.find(name);
  return it == renames.end() ? name : it->second;
}

bool is_ignorable_argument(std::string_view name) noexcept {
  // embedding's padding_idx, scale_grad_by_freq and sparse change only its gradient.
  static constexpr std::array<std::string_view, 14> names = {
      "cudnn_enabled", "cudnn_enable", "memory_format", "non_blocking", "copy", "implicit", "layout",
      "device", "pin_memory", "benchmark", "deterministic", "padding_idx", "scale_grad_by_freq", "sparse"};
  return name == "allow_tf32" || std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace symtrace::torchscript::detail

// Arithmetic on numbers (docs/design.md, decisions 2 and 13): the ops a trace records when an
// operand is a proxy SymInt or SymFloat, named as fx names them (`operator.add`, ...,
// `operator.truediv`, `sym_float`, `sym_int`, `math.floor`, `math.ceil`), and the SymFloat
// operators of the public API.
//
// Each op computes as Python does: an int result from int operands (`//` and `%` floor), a
// float when an operand is a float or the op is `/`. The meta functions keep what is known of
// a result's value: an int's expression over named dims, and a float's as a fraction
// `numerator / 2^k` (Note [Exact float sizes]).
#include "symtrace/core/sym_float.hpp"

#include "symtrace/core/error.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace symtrace {

namespace {

// Note [Exact float sizes]: a float computed from sizes is known as `num / den`, `num` an
// expression over named dims and `den` a power of two up to 2^20 (`H * 0.5` is H/2, `H * 0.75`
// is 3*H/4). While the numerator's value stays below 2^53 (a size below 2^22 times any
// constant dyadic_fraction admits), every such value is a double the run computes without
// rounding, so floor(num / den) is exactly what its `math.floor` gives: `(3*H)//4`. A constant that is no short binary fraction (0.3), a
// division by anything but a power of two, or a denominator past 2^20 makes the value
// anonymous: the node still computes it when the graph runs.
constexpr std::int64_t max_denominator = std::int64_t{1} << 20;

struct Fraction {
  SymExpr num;
  std::int64_t den = 1;
};

bool is_float_number(const Value& v) noexcept { return v.is_double() || v.is_symfloat(); }

// What is known of a number: an int's value or expression (den 1), a float's fraction.
std::optional<Fraction> fraction_of(const Value& v) {
  if (v.is_symint()) {
    if (const std::optional<SymExpr> e = v.to_sym_int().dim().expr()) return Fraction{*e, 1};
    return std::nullopt;
  }
  if (v.is_symfloat()) {
    const SymFloat f = v.to_sym_float();
    if (const std::optional<SymExpr> e = f.numerator().expr()) return Fraction{*e, f.denominator()};
    return std::nullopt;
  }
  if (v.is_double()) {
    if (const auto p = detail::dyadic_fraction(v.to_double())) return Fraction{p->first, p->second};
    return std::nullopt;
  }
  return Fraction{v.to_int(), 1};
}

OutputMeta number_result(DType kind, Dim value, std::int64_t den = 1) {
  OutputMeta m = OutputMeta::number(kind);
  m.number_value = value;
  m.number_denominator = den;
  return m;
}

// A float meta from a fraction, in lowest terms (so equal values print and compare alike).
OutputMeta float_result(std::optional<Fraction> f) {
  if (!f || f->den > max_denominator) return number_result(DType::float32, Dim());
  while (f->den > 1) {
    const std::optional<SymExpr> half = divide_exactly(f->num, 2);
    if (!half) break;
    f->num = *half;
    f->den /= 2;
  }
  return number_result(DType::float32, Dim(f->num), f->den);
}

OutputMeta int_result(std::optional<SymExpr> e) { return number_result(DType::int64, e ? Dim(*e) : Dim()); }

// floor(f), ceil(f) and trunc(f) of a fraction, when its sign decides trunc.
std::optional<SymExpr> fraction_floor(const Fraction& f) { return f.den == 1 ? f.num : floordiv(f.num, f.den); }
std::optional<SymExpr> fraction_ceil(const Fraction& f) { return f.den == 1 ? f.num : floordiv(f.num + (f.den - 1), f.den); }
std::optional<SymExpr> fraction_trunc(const Fraction& f) {
  const SymRange r = f.num.bounds();
  if (r.lo >= 0) return fraction_floor(f);
  if (r.hi <= 0) return fraction_ceil(f);
  return std::nullopt;
}

// `a op b` of fractions: sums over the larger denominator, products of both; a quotient only
// by a constant power of two.
enum class NumArith : std::uint8_t {
  add,
  sub,
  mul,
  floordiv,
  mod,
  truediv
};

std::optional<Fraction> combine(NumArith op, const Fraction& a, const Fraction& b) {
  switch (op) {
    case NumArith::add:
    case NumArith::sub: {
      const std::int64_t den = std::max(a.den, b.den);
      const SymExpr x = a.num * (den / a.den), y = b.num * (den / b.den);
      return Fraction{op == NumArith::add ? x + y : x - y, den};
    }
    case NumArith::mul: return Fraction{a.num * b.num, a.den * b.den};
    case NumArith::truediv: {
      const std::optional<std::int64_t> c = b.num.constant_value();
      if (!c || *c == 0 || *c == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
      const std::int64_t magnitude = *c < 0 ? -*c : *c;
      if ((magnitude & (magnitude - 1)) != 0 || magnitude > max_denominator) return std::nullopt;
      return Fraction{(*c < 0 ? -a.num : a.num) * b.den, a.den * magnitude};
    }
    case NumArith::floordiv:
    case NumArith::mod: return std::nullopt;
  }
  return std::nullopt;
}

template <NumArith A>
OutputMeta arith_meta(const OpCall& call) {
  const Value& a = call.arg(0);
  const Value& b = call.arg(1);
  const bool zero = (b.is_int() && b.to_int() == 0) || (b.is_double() && b.to_double() == 0.0) ||
                    (b.is_bool() && !b.to_bool());
  if ((A == NumArith::floordiv || A == NumArith::mod || A == NumArith::truediv) && zero) {
    if (A == NumArith::truediv || is_float_number(a) || is_float_number(b)) call.fail("float division or modulo by zero");
    call.fail("integer division or modulo by zero");
  }
  const std::optional<Fraction> x = fraction_of(a), y = fraction_of(b);
  if (A != NumArith::truediv && !is_float_number(a) && !is_float_number(b)) {  // int op int: an int
    if (!x || !y) return int_result(std::nullopt);
    switch (A) {
      case NumArith::add: return int_result(x->num + y->num);
      case NumArith::sub: return int_result(x->num - y->num);
      case NumArith::mul: return int_result(x->num * y->num);
      default: {  // by a positive constant, an expression; by anything else, anonymous
        const std::optional<std::int64_t> k = y->num.constant_value();
        if (!k || *k <= 0) return int_result(std::nullopt);
        return int_result(A == NumArith::mod ? mod(x->num, *k) : floordiv(x->num, *k));
      }
    }
  }
  if (!x || !y) return float_result(std::nullopt);
  return float_result(combine(A, *x, *y));
}

// ---- Kernels: Python's arithmetic on concrete numbers ---------------------------------------

[[noreturn]] void number_overflow(const OpCall& call, std::int64_t x, std::int64_t y, const char* op) {
  call.fail("integer number_overflow: {} {} {} does not fit in 64 bits", x, op, y);
}

std::int64_t int_of(const Value& v) { return v.is_bool() ? static_cast<std::int64_t>(v.to_bool()) : v.to_int(); }
double double_of(const Value& v) { return v.is_double() ? v.to_double() : static_cast<double>(int_of(v)); }

template <NumArith A>
Value arith_kernel(const OpCall& call, const OutputMeta& meta) {
  if (meta.outputs.at(0).dtype == DType::float32) {
    const double x = double_of(call.arg(0)), y = double_of(call.arg(1));
    switch (A) {
      case NumArith::add: return x + y;
      case NumArith::sub: return x - y;
      case NumArith::mul: return x * y;
      case NumArith::truediv: return x / y;  // y != 0: the meta function checked
      case NumArith::floordiv: return std::floor(x / y);
      case NumArith::mod: return x - std::floor(x / y) * y;
    }
  }
  const std::int64_t x = int_of(call.arg(0)), y = int_of(call.arg(1));
  std::int64_t r = 0;
  switch (A) {
    case NumArith::add:
      if (__builtin_add_overflow(x, y, &r)) number_overflow(call, x, y, "+");
      return r;
    case NumArith::sub:
      if (__builtin_sub_overflow(x, y, &r)) number_overflow(call, x, y, "-");
      return r;
    case NumArith::mul:
      if (__builtin_mul_overflow(x, y, &r)) number_overflow(call, x, y, "*");
      return r;
    case NumArith::floordiv:
    case NumArith::mod: {
      if (x == std::numeric_limits<std::int64_t>::min() && y == -1) number_overflow(call, x, y, "//");
      std::int64_t q = x / y;
      if (x % y != 0 && ((x < 0) != (y < 0))) --q;
      return A == NumArith::floordiv ? q : x - q * y;
    }
    case NumArith::truediv: break;
  }
  return r;
}

// ---- Comparisons ----------------------------------------------------------------------------

// A comparison that the ranges of the named dims decide is a known bool (it holds for every
// input the graph accepts: the interpreter checks the ranges); else a proxy.
template <SymRel R>
OutputMeta compare_meta(const OpCall& call) {
  const std::optional<Fraction> x = fraction_of(call.arg(0)), y = fraction_of(call.arg(1));
  if (x && y) {  // x.num/x.den R y.num/y.den, both denominators positive
    if (const std::optional<bool> decided = SymFact{x->num * y->den, R, y->num * x->den}.decide())
      return number_result(DType::bool_, Dim(*decided ? 1 : 0));
  }
  return OutputMeta::number(DType::bool_);
}

template <SymRel R, class T>
bool relation_holds(T x, T y) noexcept {
  switch (R) {
    case SymRel::eq: return x == y;
    case SymRel::ne: return x != y;
    case SymRel::lt: return x < y;
    case SymRel::le: return x <= y;
    case SymRel::gt: return x > y;
    case SymRel::ge: return x >= y;
  }
  return false;
}

template <SymRel R>
Value compare_kernel(const OpCall& call, const OutputMeta&) {
  const Value& a = call.arg(0);
  const Value& b = call.arg(1);
  if (is_float_number(a) || is_float_number(b)) return relation_holds<R>(double_of(a), double_of(b));
  return relation_holds<R>(int_of(a), int_of(b));
}

// ---- Conversions: sym_float, sym_int, math.floor, math.ceil, operator.neg ---------------------

OutputMeta sym_float_meta(const OpCall& call) { return float_result(fraction_of(call.arg(0))); }
Value sym_float_kernel(const OpCall& call, const OutputMeta&) { return double_of(call.arg(0)); }

enum class Rounding : std::uint8_t {
  trunc,
  floor,
  ceil
};

template <Rounding R>
OutputMeta round_meta(const OpCall& call) {
  const std::optional<Fraction> f = fraction_of(call.arg(0));
  if (!f) return int_result(std::nullopt);
  return int_result(R == Rounding::floor ? fraction_floor(*f) : R == Rounding::ceil ? fraction_ceil(*f)
                                                                                    : fraction_trunc(*f));
}
template <Rounding R>
Value round_kernel(const OpCall& call, const OutputMeta&) {
  if (!call.arg(0).is_double()) return int_of(call.arg(0));
  const double x = call.real(0);
  const double r = R == Rounding::floor ? std::floor(x) : R == Rounding::ceil ? std::ceil(x)
                                                                              : std::trunc(x);
  if (!(r >= -0x1p63 && r < 0x1p63)) call.fail("cannot convert {} to an integer", x);
  return static_cast<std::int64_t>(r);
}

OutputMeta neg_meta(const OpCall& call) {
  const std::optional<Fraction> f = fraction_of(call.arg(0));
  if (is_float_number(call.arg(0))) return float_result(f ? std::optional(Fraction{-f->num, f->den}) : std::nullopt);
  return int_result(f ? std::optional(-f->num) : std::nullopt);
}
Value neg_kernel(const OpCall& call, const OutputMeta&) {
  if (call.arg(0).is_double()) return -call.real(0);
  const std::int64_t x = int_of(call.arg(0));
  if (x == std::numeric_limits<std::int64_t>::min()) call.fail("integer number_overflow: -({}) does not fit in 64 bits", x);
  return -x;
}

// ---- Dispatch of the public operators --------------------------------------------------------

Value float_operand_value(const SymFloatOperand& o) { return o.real ? Value(*o.real) : Value(o.integer); }

SymFloat as_sym_float(Value v) {
  if (v.is_symfloat()) return v.to_sym_float();
  return v.to_double();  // a value the meta function knew
}
SymInt as_sym_int(const Value& v) { return v.to_sym_int(); }

bool is_known_operand(const SymFloatOperand& o) noexcept { return o.real ? o.real->is_known() : o.integer.is_known(); }
double known_value(const SymFloatOperand& o) {
  return o.real ? *o.real->maybe() : static_cast<double>(*o.integer.maybe());
}

const OpDef& arith_op(detail::SymFloatOp op) {
  switch (op) {
    case detail::SymFloatOp::add: return SYMTRACE_OP("operator.add");
    case detail::SymFloatOp::sub: return SYMTRACE_OP("operator.sub");
    case detail::SymFloatOp::mul: return SYMTRACE_OP("operator.mul");
    case detail::SymFloatOp::truediv: return SYMTRACE_OP("operator.truediv");
    case detail::SymFloatOp::eq: return SYMTRACE_OP("operator.eq");
    case detail::SymFloatOp::ne: return SYMTRACE_OP("operator.ne");
    case detail::SymFloatOp::lt: return SYMTRACE_OP("operator.lt");
    case detail::SymFloatOp::le: return SYMTRACE_OP("operator.le");
    case detail::SymFloatOp::gt: return SYMTRACE_OP("operator.gt");
    case detail::SymFloatOp::ge: return SYMTRACE_OP("operator.ge");
  }
  SYMTRACE_ASSERT(false, "unknown SymFloat operator");
  return SYMTRACE_OP("operator.add");
}

Value record_float(const OpDef& op, const SymFloatOperand& a, const SymFloatOperand& b) {
  const std::array<Value, 2> args{float_operand_value(a), float_operand_value(b)};
  return dispatch(op, args, b.where, CallStyle::function);
}

template <class Result>
Result convert_number(const OpDef& op, const Value& operand, std::source_location where) {
  const std::array<Value, 1> args{operand};
  const Value r = dispatch(op, args, where, CallStyle::function);
  if constexpr (std::is_same_v<Result, SymFloat>) return as_sym_float(r);
  else return as_sym_int(r);
}

}  // namespace

SymFloat detail::sym_float_arithmetic(SymFloatOp op, const SymFloatOperand& a, const SymFloatOperand& b) {
  if (is_known_operand(a) && is_known_operand(b)) [[likely]] {
    const double x = known_value(a), y = known_value(b);
    switch (op) {
      case SymFloatOp::add: return x + y;
      case SymFloatOp::sub: return x - y;
      case SymFloatOp::mul: return x * y;
      case SymFloatOp::truediv:
        if (y == 0.0) throw_invalid_argument(b.where, "SymFloat division: float division by zero");
        return x / y;
      default: break;
    }
  }
  return as_sym_float(record_float(arith_op(op), a, b));
}

SymBool detail::sym_float_comparison(SymFloatOp op, const SymFloatOperand& a, const SymFloatOperand& b) {
  if (is_known_operand(a) && is_known_operand(b)) [[likely]] {
    const double x = known_value(a), y = known_value(b);
    switch (op) {
      case SymFloatOp::eq: return x == y;
      case SymFloatOp::ne: return x != y;
      case SymFloatOp::lt: return x < y;
      case SymFloatOp::le: return x <= y;
      case SymFloatOp::gt: return x > y;
      case SymFloatOp::ge: return x >= y;
      default: break;
    }
  }
  const Value r = record_float(arith_op(op), a, b);
  if (r.is_bool()) return r.to_bool();
  return SymBool::symbolic(r.to_sym_int().proxy(), b.where);
}

SymFloat sym_float(const SymIntOperand& n) {
  if (n.value.is_known()) [[likely]]
    return static_cast<double>(*n.value.maybe());
  return convert_number<SymFloat>(SYMTRACE_OP("sym_float"), Value(n.value), n.where);
}

SymInt sym_int(const SymFloatOperand& f) {
  if (!f.real) return f.integer;
  if (f.real->is_known()) [[likely]]
    return std::int64_t(std::trunc(*f.real->maybe()));
  return convert_number<SymInt>(SYMTRACE_OP("sym_int"), Value(*f.real), f.where);
}

SymInt sym_floor(const SymFloatOperand& f) {
  if (!f.real) return f.integer;
  if (f.real->is_known()) [[likely]]
    return std::int64_t(std::floor(*f.real->maybe()));
  return convert_number<SymInt>(SYMTRACE_OP("math.floor"), Value(*f.real), f.where);
}

SymInt sym_ceil(const SymFloatOperand& f) {
  if (!f.real) return f.integer;
  if (f.real->is_known()) [[likely]]
    return std::int64_t(std::ceil(*f.real->maybe()));
  return convert_number<SymInt>(SYMTRACE_OP("math.ceil"), Value(*f.real), f.where);
}

Operand::Operand(const SymFloat& s, std::source_location where) : where(where) {
  if (s.is_known()) {
    scalar = *s.maybe();
  } else {
    tensor = s.proxy();
    from_sym_float = true;
  }
}

void detail::register_number_ops(OpRegistry& r) {
  r.add("operator.add(number a, number b) -> number", arith_meta<NumArith::add>, arith_kernel<NumArith::add>);
  r.add("operator.sub(number a, number b) -> number", arith_meta<NumArith::sub>, arith_kernel<NumArith::sub>);
  r.add("operator.mul(number a, number b) -> number", arith_meta<NumArith::mul>, arith_kernel<NumArith::mul>);
  r.add("operator.floordiv(number a, number b) -> number", arith_meta<NumArith::floordiv>, arith_kernel<NumArith::floordiv>);
  r.add("operator.mod(number a, number b) -> number", arith_meta<NumArith::mod>, arith_kernel<NumArith::mod>);
  r.add("operator.truediv(number a, number b) -> float", arith_meta<NumArith::truediv>, arith_kernel<NumArith::truediv>);
  r.add("operator.neg(number a) -> number", neg_meta, neg_kernel);
  r.add("operator.eq(number a, number b) -> bool", compare_meta<SymRel::eq>, compare_kernel<SymRel::eq>);
  r.add("operator.ne(number a, number b) -> bool", compare_meta<SymRel::ne>, compare_kernel<SymRel::ne>);
  r.add("operator.lt(number a, number b) -> bool", compare_meta<SymRel::lt>, compare_kernel<SymRel::lt>);
  r.add("operator.le(number a, number b) -> bool", compare_meta<SymRel::le>, compare_kernel<SymRel::le>);
  r.add("operator.gt(number a, number b) -> bool", compare_meta<SymRel::gt>, compare_kernel<SymRel::gt>);
  r.add("operator.ge(number a, number b) -> bool", compare_meta<SymRel::ge>, compare_kernel<SymRel::ge>);
  r.add("sym_float(number a) -> float", sym_float_meta, sym_float_kernel);
  r.add("sym_int(number a) -> int", round_meta<Rounding::trunc>, round_kernel<Rounding::trunc>);
  r.add("math.floor(number a) -> int", round_meta<Rounding::floor>, round_kernel<Rounding::floor>);
  r.add("math.ceil(number a) -> int", round_meta<Rounding::ceil>, round_kernel<Rounding::ceil>);
}

}  // namespace symtrace

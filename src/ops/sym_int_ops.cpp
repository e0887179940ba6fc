// Size arithmetic (docs/design.md, decision 2): Tensor::size/sizes/numel, the SymInt operators, and the
// ops a trace records for proxies: fx's `size` and `numel` methods, its `operator.add`, ...
// functions, `zeros`/`ones`/`full` with a shape holding a proxy, and the creation ops whose
// sizes may be proxies (`arange` to a size, `empty`, `new_empty`, `zeros_like`, `full_like`).
//
// Known sizes never reach the dispatcher: `x.size(0)` of a known dim and `n * 2` of known
// operands are plain integer code, so tracing with example shapes records no size nodes.
#include "symtrace/core/sym_int.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/ops/creation.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace symtrace {

namespace {

[[noreturn]] void overflow(const char* what) {
  throw std::overflow_error(fmt::format("SymInt {} overflows 64 bits", what));
}

// Python's `//` and `%`: the quotient rounds toward negative infinity, the remainder has the
// divisor's sign. `b` is nonzero; INT64_MIN / -1 overflows.
std::int64_t floor_div_int(std::int64_t a, std::int64_t b) {
  if (b == -1 && a == std::numeric_limits<std::int64_t>::min()) overflow("division");
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t floor_mod(std::int64_t a, std::int64_t b) noexcept {
  if (b == -1) return 0;  // INT64_MIN % -1 traps on x86
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// ---- Ops ---------------------------------------------------------------------------------

// What is known of an int argument: its value, or a proxy's expression (nullopt when anonymous).
std::optional<SymExpr> int_expr(const Value& v) {
  if (v.is_symint()) return v.to_sym_int().dim().expr();
  return SymExpr(v.to_int());
}

OutputMeta number_meta(Dim value) {
  OutputMeta m = OutputMeta::number(DType::int64);
  m.number_value = value;
  return m;
}

OutputMeta size_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const std::int64_t d = detail::wrap_dim(call, call.integer(1), x.dim(), x.shape());
  return number_meta(x.shape().is_rank_known() ? x.shape()[static_cast<std::size_t>(d)] : Dim());
}
Value size_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& x = call.tensor(0);
  const std::int64_t d = detail::wrap_dim(call, call.integer(1), x.dim(), x.shape());
  return x.shape()[static_cast<std::size_t>(d)].value();
}

OutputMeta numel_meta(const OpCall& call) { return number_meta(call.tensor(0).shape().numel_dim()); }
Value numel_kernel(const OpCall& call, const OutputMeta&) { return *call.tensor(0).shape().numel(); }

// sym_min, sym_max: the expression of the result when both operands have one.
OutputMeta min_max_meta(const OpCall& call) {
  const std::optional<SymExpr> a = int_expr(call.arg(0)), b = int_expr(call.arg(1));
  if (!a || !b) return number_meta(Dim());
  return number_meta(call.op.name() == "sym_min" ? min(*a, *b) : max(*a, *b));
}

template <class F>
KernelFn int_kernel() {
  return [](const OpCall& call, const OutputMeta&) -> Value { return F{}(call.integer(0), call.integer(1)); };
}
struct Add {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const {
    std::int64_t r;
    if (__builtin_add_overflow(a, b, &r)) overflow("addition");
    return r;
  }
};
struct Sub {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const {
    std::int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) overflow("subtraction");
    return r;
  }
};
struct Mul {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const {
    std::int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) overflow("multiplication");
    return r;
  }
};
struct FloorDiv {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return floor_div_int(a, b); }
};
struct FloorMod {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const noexcept { return floor_mod(a, b); }
};
struct Min {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const noexcept { return std::min(a, b); }
};
struct Max {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const noexcept { return std::max(a, b); }
};
struct Eq {
  bool operator()(std::int64_t a, std::int64_t b) const noexcept { return a == b; }
};
struct Ne {
  bool operator()(std::int64_t a, std::int64_t b) const noexcept { return a != b; }
};
struct Lt {
  bool operator()(std::int64_t a, std::int64_t b) const noexcept { return a < b; }
};
struct Le {
  bool operator()(std::int64_t a, std::int64_t b) const noexcept { return a <= b; }
};
struct Gt {
  bool operator()(std::int64_t a, std::int64_t b) const noexcept { return a > b; }
};
struct Ge {
  bool operator()(std::int64_t a, std::int64_t b) const noexcept { return a >= b; }
};

// zeros / ones / full with sizes that may be proxies (argument `index`): a proxy's size is what
// is known of it (`zeros({x.size(0) * 2})` of a named N is `[2*N]`).
Shape factory_shape(const OpCall& call, std::size_t index = 0) {
  const std::vector<OpCall::SizeArg> sizes = call.size_args(index);
  Shape shape;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].value == OpCall::unknown_size) {
      shape.push_back(sizes[i].dim);
    } else if (sizes[i].value < 0) {
      call.fail("size {} at dim {} of shape {} is negative", sizes[i].value, i,
                detail::size_list_text(call.size_list(index)));
    } else {
      shape.push_back(sizes[i].value);
    }
  }
  return shape;
}
// zeros / ones / full(size, [fill_value,] dtype=None): without a dtype, float32, or for full
// the fill value's kind (int64 for an int, bool for a bool), as torch.full infers it.
OutputMeta filled_meta(const OpCall& call) {
  const Value& given = call.args.back();
  DType dtype = DType::float32;
  if (!given.is_none()) dtype = call.dtype(call.args.size() - 1);
  else if (call.op.name() == "full" && call.arg(1).is_bool()) dtype = DType::bool_;
  else if (call.op.name() == "full" && (call.arg(1).is_int() || call.arg(1).is_symint())) dtype = DType::int64;
  return OutputMeta::single(dtype, factory_shape(call));
}
Value filled_kernel(const OpCall& call, const OutputMeta& meta) {
  const Scalar value = call.op.name() == "full" ? call.scalar(1) : Scalar(call.op.name() == "ones" ? 1 : 0);
  return full(meta.outputs[0].shape.sizes(), value, meta.outputs[0].dtype, call.where);
}

// ---- Creation ops: arange, empty, zeros_like, full_like, new_empty --------------------------

// arange(start, end, step, dtype). A bound is a number or a proxy SymInt (the schema's
// Tensor|Scalar admits proxies; a tensor is refused here).
DType arange_dtype(const OpCall& call) {
  bool integral = true;
  for (std::size_t i = 0; i < 3; ++i) {
    const Value& v = call.arg(i);
    if (v.is_tensor())
      call.fail("argument '{}' must be a number or a size, got a tensor of shape {}; pass a number (a one-element "
                "tensor's value is .item<T>())",
                call.op.schema.args[i].name, v.to_tensor().shape());
    integral = integral && !v.is_double();
  }
  const DType dtype = call.arg(3).is_none() ? (integral ? DType::int64 : DType::float32) : call.dtype(3);
  if (dtype == DType::bool_) call.fail("cannot make a bool range; ask for int64 or float32 and compare");
  return dtype;
}

// PyTorch's length rule: ceil((end - start) / step), with the bounds first converted to the
// result's type (int64, or double for float32), after the same checks.
std::int64_t arange_length(const OpCall& call, DType dtype, const Scalar& start, const Scalar& end,
                           const Scalar& step) {
  double size = 0;
  if (dtype == DType::int64) {
    const std::int64_t a = start.to_int(), b = end.to_int(), s = step.to_int();
    if (s == 0) call.fail("step must be nonzero (start={} end={} step={} as int64)", a, b, s);
    if (s > 0 ? b < a : b > a)
      call.fail("the step {} goes away from end: start={} end={}; use a step of the other sign", s, a, b);
    std::int64_t span = 0;
    if (__builtin_sub_overflow(b, a, &span)) call.fail("end - start overflows int64 (start={} end={})", a, b);
    size = std::ceil(static_cast<double>(span) / static_cast<double>(s));
  } else {
    const double a = start.to_double(), b = end.to_double(), s = step.to_double();
    if (!(s > 0 || s < 0)) call.fail("step must be nonzero, got {}", s);
    if (!std::isfinite(a) || !std::isfinite(b)) call.fail("the bounds must be finite, got start={} end={}", a, b);
    if (s > 0 ? b < a : b > a)
      call.fail("the step {} goes away from end: start={} end={}; use a step of the other sign", s, a, b);
    size = std::ceil((b - a) / s);
  }
  if (!(size < static_cast<double>(std::numeric_limits<std::int64_t>::max())))  // 2^63: not an int64
    call.fail("start={} end={} step={} would make {:g} elements, too many for a tensor", start, end, step, size);
  return static_cast<std::int64_t>(size);
}

OutputMeta arange_meta(const OpCall& call) {
  const DType dtype = arange_dtype(call);
  // A bound the run gives (a proxy SymInt): a length only the run knows.
  if (call.arg(0).is_symint() || call.arg(1).is_symint() || call.arg(2).is_symint()) {
    if (!call.arg(2).is_symint() && call.scalar(2).to_double() == 0) call.fail("step must be nonzero");
    return OutputMeta::single(dtype, Shape{Dim::unknown()});
  }
  return OutputMeta::single(dtype, Shape{arange_length(call, dtype, call.scalar(0), call.scalar(1), call.scalar(2))});
}

Value arange_kernel(const OpCall& call, const OutputMeta& meta) {
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const std::int64_t n = *out.shape().numel();
  const Scalar start = call.scalar(0), step = call.scalar(2);
  if (meta.outputs[0].dtype == DType::int64) {
    auto* p = out.data_ptr<std::int64_t>();
    const std::int64_t a = start.to_int(), s = step.to_int();
    for (std::int64_t i = 0; i < n; ++i) p[i] = a + s * i;
  } else {  // start + step * i in double, then rounded once, as PyTorch's CPU kernel
    auto* p = out.data_ptr<float>();
    const double a = start.to_double(), s = step.to_double();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(a + s * static_cast<double>(i));
  }
  return out;
}

OutputMeta empty_meta(const OpCall& call) {
  return OutputMeta::single(call.arg(1).is_none() ? DType::float32 : call.dtype(1), factory_shape(call));
}
// new_empty(self, size, dtype) and zeros_like / full_like(self, [value,] dtype): self's dtype
// unless one is given.
OutputMeta new_empty_meta(const OpCall& call) {
  return OutputMeta::single(call.arg(2).is_none() ? call.tensor(0).dtype() : call.dtype(2), factory_shape(call, 1));
}
OutputMeta like_meta(const OpCall& call) {
  const Value& dtype = call.args.back();
  const Tensor& self = call.tensor(0);
  return OutputMeta::single(dtype.is_none() ? self.dtype() : dtype.to_dtype(), self.shape());
}
// empty and new_empty are zero-filled: their contents are unspecified in PyTorch, and zeros
// keep runs deterministic.
Value zero_filled_kernel(const OpCall& call, const OutputMeta& meta) {
  return full(meta.outputs[0].shape.sizes(), 0, meta.outputs[0].dtype, call.where);
}
Value full_like_kernel(const OpCall& call, const OutputMeta& meta) {
  return full(meta.outputs[0].shape.sizes(), call.scalar(1), meta.outputs[0].dtype, call.where);
}
// new_full(self, size, fill_value, dtype): recorded when self is symbolic, as fx records
// `x.new_full(...)`, so that what is written into it in place stays in the graph.
OutputMeta new_full_meta(const OpCall& call) {
  return OutputMeta::single(call.arg(3).is_none() ? call.tensor(0).dtype() : call.dtype(3), factory_shape(call, 1));
}
Value new_full_kernel(const OpCall& call, const OutputMeta& meta) {
  return full(meta.outputs[0].shape.sizes(), call.scalar(2), meta.outputs[0].dtype, call.where);
}

// ---- Dispatch of the symbolic path ----------------------------------------------------------

/// Records `op` on operands at least one of which is a proxy: the result's proxy, with what is
/// known of its value, or the number itself when the meta function knows it (`n - n`).
Value record(const OpDef& op, const SymIntOperand& a, const SymIntOperand& b) {
  const std::array<Value, 2> args{Value(a.value), Value(b.value)};
  return dispatch(op, args, b.where, CallStyle::function);
}

template <class F>
SymInt arithmetic(const OpDef& op, const SymIntOperand& a, const SymIntOperand& b) {
  if (a.value.is_known() && b.value.is_known()) [[likely]]
    return F{}(*a.value.maybe(), *b.value.maybe());
  const SymInt r = record(op, a, b).to_sym_int();
  if (r.is_known()) return r;
  return SymInt::symbolic(r.proxy(), b.where, r.dim());
}

template <class F>
SymInt division(const OpDef& op, const SymIntOperand& a, const SymIntOperand& b, const char* what) {
  if (b.value.maybe() == 0) throw_invalid_argument(b.where, "SymInt {}: integer division or modulo by zero", what);
  return arithmetic<F>(op, a, b);
}

// A comparison that the ranges of the named dims decide is a plain bool: it holds for every
// input the graph accepts (the interpreter checks the ranges).
template <class F>
SymBool comparison(const OpDef& op, const SymIntOperand& a, const SymIntOperand& b, SymRel rel) {
  if (a.value.is_known() && b.value.is_known()) [[likely]]
    return F{}(*a.value.maybe(), *b.value.maybe());
  const std::optional<SymExpr> x = a.value.dim().expr(), y = b.value.dim().expr();
  if (x && y) {
    if (const std::optional<bool> decided = SymFact{*x, rel, *y}.decide()) return *decided;
  }
  const Value r = record(op, a, b);
  if (r.is_bool()) return r.to_bool();
  return SymBool::symbolic(r.to_sym_int().proxy(), b.where);
}

}  // namespace

void detail::register_sym_int_ops(OpRegistry& r) {
  r.add("size(Tensor self, int dim) -> int", size_meta, size_kernel);
  r.add("numel(Tensor self) -> int", numel_meta, numel_kernel);
  r.add("sym_min(int a, int b) -> int", min_max_meta, int_kernel<Min>());
  r.add("sym_max(int a, int b) -> int", min_max_meta, int_kernel<Max>());
  r.add("zeros(int[] size, ScalarType? dtype=None) -> Tensor", filled_meta, filled_kernel);
  r.add("ones(int[] size, ScalarType? dtype=None) -> Tensor", filled_meta, filled_kernel);
  r.add("full(int[] size, Scalar fill_value, ScalarType? dtype=None) -> Tensor", filled_meta, filled_kernel);
  r.add("arange(Tensor|Scalar start, Tensor|Scalar end, Tensor|Scalar step=1, ScalarType? dtype=None) -> Tensor",
        arange_meta, arange_kernel);
  r.add("empty(int[] size, ScalarType? dtype=None) -> Tensor", empty_meta, zero_filled_kernel);
  r.add("new_empty(Tensor self, int[] size, ScalarType? dtype=None) -> Tensor", new_empty_meta, zero_filled_kernel);
  r.add("new_full(Tensor self, int[] size, Scalar fill_value, ScalarType? dtype=None) -> Tensor", new_full_meta,
        new_full_kernel);
  r.add("zeros_like(Tensor self, ScalarType? dtype=None) -> Tensor", like_meta, zero_filled_kernel);
  r.add("full_like(Tensor self, Scalar fill_value, ScalarType? dtype=None) -> Tensor", like_meta, full_like_kernel);
}

// ---- Tensor's size queries ----------------------------------------------------------------

SymInt Tensor::size(std::int64_t d, Where where) const {
  if (!shape().is_rank_known()) [[unlikely]] {  // the trace records it; the run gives the size
    const std::array<Value, 2> args{Value(*this), Value(d)};
    return dispatch(SYMTRACE_OP("size"), args, where, CallStyle::method).to_sym_int();
  }
  const std::int64_t rank = dim(where);
  if (d < -rank || d >= rank)
    throw_invalid_argument(where, "size(): dimension {} is out of range for a tensor of shape {} (expected -{} to {})",
                           d, shape(), rank, rank - 1);
  const Dim size = shape()[static_cast<std::size_t>(d < 0 ? d + rank : d)];
  if (size.is_known()) [[likely]]
    return size.raw();
  const std::array<Value, 2> args{Value(*this), Value(d)};
  Value result = dispatch(SYMTRACE_OP("size"), args, where, CallStyle::method);
  return result.to_sym_int();
}

SymIntList Tensor::sizes(Where where) const {
  std::vector<SymInt> out;
  out.reserve(shape().rank());
  if (!shape().is_rank_known()) [[unlikely]]
    unknown_rank(where, "sizes()");
  for (std::int64_t i = 0; i < dim(); ++i) out.push_back(size(i, where));
  return out;
}

SymInt Tensor::numel(Where where) const {
  if (const std::optional<std::int64_t> n = shape().numel()) [[likely]]
    return *n;
  const std::array<Value, 1> args{Value(*this)};
  return dispatch(SYMTRACE_OP("numel"), args, where, CallStyle::method).to_sym_int();
}

// ---- SymInt operators -------------------------------------------------------------------------

SymInt operator+(const SymIntOperand& a, const SymIntOperand& b) { return arithmetic<Add>(SYMTRACE_OP("operator.add"), a, b); }
SymInt operator-(const SymIntOperand& a, const SymIntOperand& b) { return arithmetic<Sub>(SYMTRACE_OP("operator.sub"), a, b); }
SymInt operator*(const SymIntOperand& a, const SymIntOperand& b) { return arithmetic<Mul>(SYMTRACE_OP("operator.mul"), a, b); }
SymInt operator/(const SymIntOperand& a, const SymIntOperand& b) {
  return division<FloorDiv>(SYMTRACE_OP("operator.floordiv"), a, b, "division");
}
SymInt operator%(const SymIntOperand& a, const SymIntOperand& b) {
  return division<FloorMod>(SYMTRACE_OP("operator.mod"), a, b, "modulo");
}
SymInt sym_min(const SymIntOperand& a, const SymIntOperand& b) { return arithmetic<Min>(SYMTRACE_OP("sym_min"), a, b); }
SymInt sym_max(const SymIntOperand& a, const SymIntOperand& b) { return arithmetic<Max>(SYMTRACE_OP("sym_max"), a, b); }
SymBool operator==(const SymIntOperand& a, const SymIntOperand& b) { return comparison<Eq>(SYMTRACE_OP("operator.eq"), a, b, SymRel::eq); }
SymBool operator!=(const SymIntOperand& a, const SymIntOperand& b) { return comparison<Ne>(SYMTRACE_OP("operator.ne"), a, b, SymRel::ne); }
SymBool operator<(const SymIntOperand& a, const SymIntOperand& b) { return comparison<Lt>(SYMTRACE_OP("operator.lt"), a, b, SymRel::lt); }
SymBool operator<=(const SymIntOperand& a, const SymIntOperand& b) { return comparison<Le>(SYMTRACE_OP("operator.le"), a, b, SymRel::le); }
SymBool operator>(const SymIntOperand& a, const SymIntOperand& b) { return comparison<Gt>(SYMTRACE_OP("operator.gt"), a, b, SymRel::gt); }
SymBool operator>=(const SymIntOperand& a, const SymIntOperand& b) { return comparison<Ge>(SYMTRACE_OP("operator.ge"), a, b, SymRel::ge); }

Operand::Operand(const SymInt& s, std::source_location where) : where(where) {
  if (s.is_known()) {
    scalar = *s.maybe();
  } else {
    tensor = s.proxy();
    from_sym_int = true;
  }
}

// ---- Factories with proxy sizes -------------------------------------------------------------

Tensor detail::symbolic_full(std::string_view name, const SymIntList& shape, Scalar value, DType dtype, Where where) {
  if (name == "full") {
    const std::array<Value, 3> args{Value(shape), Value(value), Value(dtype)};
    return detail::take_tensor(dispatch(SYMTRACE_OP("full"), args, where, CallStyle::function));
  }
  const std::array<Value, 2> args{Value(shape), Value(dtype)};
  const OpDef& op = name == "ones" ? SYMTRACE_OP("ones") : SYMTRACE_OP("zeros");
  return detail::take_tensor(dispatch(op, args, where, CallStyle::function));
}

// ---- Creation ops ----------------------------------------------------------------------------

Tensor detail::arange_op(Value start, Value end, Value step, std::optional<DType> dtype, Where where) {
  const std::array<Value, 4> args{std::move(start), std::move(end), std::move(step), Value(dtype)};
  return detail::take_tensor(dispatch(SYMTRACE_OP("arange"), args, where, CallStyle::function));
}
Tensor empty(const SymIntList& size, std::optional<DType> dtype, Where where) {
  return detail::invoke(SYMTRACE_OP("empty"), where, CallStyle::function, size, dtype);
}
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype, Where where) {
  return detail::invoke(SYMTRACE_OP("zeros_like"), where, CallStyle::function, x, dtype);
}
Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype, Where where) {
  return detail::invoke(SYMTRACE_OP("full_like"), where, CallStyle::function, x, value, dtype);
}
Tensor new_empty(const Tensor& x, const SymIntList& size, std::optional<DType> dtype, Where where) {
  return detail::invoke(SYMTRACE_OP("new_empty"), where, CallStyle::method, x, size, dtype);
}

}  // namespace symtrace

// Pointwise ops: one meta function per shape rule (binary with broadcasting, unary,
// ternary where) and kernels built from `map_unary` / `map_binary` with a functor per op.
// See Note [Meta before kernel]: meta functions do all checking, kernels only compute.

#include "symtrace/ops/pointwise.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace symtrace {

namespace {

using detail::map_binary;
using detail::map_unary;
using detail::operand_tensor;

// ---- Binary arithmetic -------------------------------------------------------------------

enum class Rule {
  arithmetic,
  division,
  comparison
};

template <Rule R>
DType binary_dtype(const OpCall& call) {
  const DType dt = detail::result_type(call.arg(0), call.arg(1));
  if constexpr (R == Rule::comparison) return DType::bool_;
  else if constexpr (R == Rule::division) return DType::float32;
  else return dt;
}

template <Rule R>
OutputMeta binary_meta(const OpCall& call) {
  const Value& a = call.arg(0);
  const Value& b = call.arg(1);
  if (!a.is_tensor() && !b.is_tensor()) call.fail("needs at least one tensor operand, got {} and {}", a, b);
  const TensorMeta ma = detail::operand_meta(a);
  const TensorMeta mb = detail::operand_meta(b);
  const DType compute = detail::result_type(a, b);
  if (call.op.name() == "sub" && compute == DType::bool_)
    call.fail("subtracting bool tensors is not supported (shapes {} and {}); use ne() or convert with .to(int64)",
              ma.shape, mb.shape);
  if ((call.op.name() == "floor_divide" || call.op.name() == "remainder") && compute == DType::bool_)
    call.fail("is not implemented for bool tensors (shapes {} and {}); convert with .to(int64)", ma.shape, mb.shape);
  if (call.op.name() == "pow" && compute == DType::int64 && b.is_number() && b.to_scalar().to_int() < 0)
    call.fail("integers cannot be raised to the negative power {} (base shape {}); convert to float32 first",
              b.to_scalar().to_int(), ma.shape);
  return OutputMeta::single(binary_dtype<R>(call), detail::broadcast_shapes(call, ma.shape, mb.shape));
}

// int64 arithmetic wraps around on overflow, as in PyTorch (computed in uint64: no UB).
constexpr std::int64_t wrap(std::uint64_t v) noexcept { return static_cast<std::int64_t>(v); }
constexpr std::uint64_t bits(std::int64_t v) noexcept { return static_cast<std::uint64_t>(v); }

struct AddFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (std::is_same_v<T, std::int64_t>) return wrap(bits(a) + bits(b));
    else return a + b;
  }
};
struct SubFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, std::int64_t>) return wrap(bits(a) - bits(b));
    else return static_cast<T>(a - b);
  }
};
struct MulFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (std::is_same_v<T, std::int64_t>) return wrap(bits(a) * bits(b));
    else return a * b;
  }
};
struct DivFn {
  template <class T> T operator()(T a, T b) const { return a / b; }
};
struct PowFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>) {
      return std::pow(a, b);
    } else if constexpr (std::is_same_v<T, bool>) {
      return a || !b;
    } else {  // exact integer power by squaring (b >= 0 checked by the meta function for scalars)
      if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
      std::uint64_t result = 1, base = bits(a);  // wraps on overflow, as in PyTorch
      for (;;) {
        if (b & 1) result *= base;
        b >>= 1;
        if (b == 0) return wrap(result);
        base *= base;
      }
    }
  }
};
// Bitwise on int64, logical on bool (the meta function refuses floating operands).
// Python's `//` and `%` (PyTorch's floor_divide and remainder): the quotient rounds toward
// negative infinity and the remainder takes the divisor's sign. Floats follow PyTorch's
// div_floor (fmod first, so the quotient is exact where it can be); an integer division by
// zero throws, as in PyTorch.
struct FloorDivFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!b) throw std::invalid_argument("ZeroDivisionError: integer division by zero");
      return a;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      if (b == 0) throw std::invalid_argument("ZeroDivisionError: integer division by zero");
      if (b == -1) return wrap(bits(0) - bits(a));  // INT64_MIN // -1 wraps, as in PyTorch
      const T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
      if (b == 0) return a / b;
      const T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
      if (div == 0) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += 1;
      return floordiv;
    }
  }
};
struct RemainderFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!b) throw std::invalid_argument("ZeroDivisionError: integer modulo by zero");
      return false;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      if (b == 0) throw std::invalid_argument("ZeroDivisionError: integer modulo by zero");
      if (b == -1) return 0;
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      T mod = std::fmod(a, b);
      if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
      return mod;
    }
  }
};
struct BitwiseAndFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return a & b;
  }
};
struct BitwiseOrFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return a | b;
  }
};
struct EqFn {
  template <class T> bool operator()(T a, T b) const { return a == b; }
};
struct NeFn {
  template <class T> bool operator()(T a, T b) const { return a != b; }
};
struct LtFn {
  template <class T> bool operator()(T a, T b) const { return a < b; }
};
struct LeFn {
  template <class T> bool operator()(T a, T b) const { return a <= b; }
};
struct GtFn {
  template <class T> bool operator()(T a, T b) const { return a > b; }
};
struct GeFn {
  template <class T> bool operator()(T a, T b) const { return a >= b; }
};

template <Rule R, class Fn>
Value binary_kernel(const OpCall& call, const OutputMeta& meta) {
  const DType compute = R == Rule::division ? DType::float32 : detail::result_type(call.arg(0), call.arg(1));
  const Tensor a = operand_tensor(call.arg(0), compute);
  const Tensor b = operand_tensor(call.arg(1), compute);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  visit_dtype(compute, [&]<class T>() {
    if constexpr (R == Rule::comparison) map_binary<bool, T>(out, a, b, Fn{});
    else map_binary<T, T>(out, a, b, Fn{});
  });
  return out;
}

// bitwise_and / bitwise_or: PyTorch's result type, which must be bool or an integer type.
std::string operand_text(const Value& v) {
  if (v.is_tensor()) return fmt::format("{} of shape {}", v.to_tensor().dtype(), v.to_tensor().shape());
  if (v.is_symint()) return "a size (int64)";
  if (v.is_symfloat()) return "a float computed from sizes";
  return fmt::format("the number {}", v);
}

OutputMeta bitwise_meta(const OpCall& call) {
  const Value& a = call.arg(0);
  const Value& b = call.arg(1);
  if (is_floating(detail::result_type(a, b)))
    call.fail("is defined for bool and int64 operands only, got {} and {}; compare first (x > 0) or convert "
              "with .to(int64)",
              operand_text(a), operand_text(b));
  return binary_meta<Rule::arithmetic>(call);
}

template <class Fn>
Value bitwise_kernel(const OpCall& call, const OutputMeta& meta) {
  const DType dt = meta.outputs[0].dtype;
  const Tensor a = operand_tensor(call.arg(0), dt);
  const Tensor b = operand_tensor(call.arg(1), dt);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  visit_dtype(dt, [&]<class T>() {
    if constexpr (!std::is_floating_point_v<T>) map_binary<T, T>(out, a, b, Fn{});  // float: refused by the meta
  });
  return out;
}

// ---- In-place binary ---------------------------------------------------------------------

OutputMeta inplace_binary_meta(const OpCall& call) {
  const Tensor& self = call.tensor(0);
  const TensorMeta other = detail::operand_meta(call.arg(1));
  const Shape out = detail::broadcast_shapes(call, self.shape(), other.shape);
  if (!detail::fits(out, self.shape()))
    call.fail("the result of shape {} (from {} and {}) does not fit the in-place target of shape {}", out,
              self.shape(), other.shape, self.shape());
  const DType dt = detail::result_type(call.arg(0), call.arg(1));
  if (promote_types(dt, self.dtype()) != self.dtype())
    call.fail("the result type {} cannot be stored in the in-place target of type {} (shape {})", dt,
              self.dtype(), self.shape());
  return OutputMeta::single(self.dtype(), self.shape());
}

template <class Fn>
Value inplace_binary_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& self = call.tensor(0);
  detail::check_writable(call, self);
  const Tensor other = operand_tensor(call.arg(1), self.dtype());
  const Tensor b = other.shares_storage_with(self) ? detail::clone(other) : other;  // x.add_(view of x)
  visit_dtype(self.dtype(), [&]<class T>() { map_binary<T, T>(self, self, b, Fn{}); });
  return self;
}

// ---- Unary -------------------------------------------------------------------------------

enum class Domain {
  any_numeric,
  floating
};  // floating: integer inputs compute in float32

template <Domain D>
OutputMeta unary_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (D != Domain::floating && x.dtype() == DType::bool_)  // float functions take bool as 0/1, as PyTorch
    call.fail("is not defined for bool tensors (shape {}); convert with .to(float32) first", x.shape());
  const DType out = D == Domain::floating ? DType::float32 : x.dtype();
  return OutputMeta::single(out, x.shape());
}

struct NegFn {
  template <class T> T operator()(T v) const {
    if constexpr (std::is_same_v<T, std::int64_t>) return wrap(0 - bits(v));
    else return -v;
  }
};
struct AbsFn {
  template <class T> T operator()(T v) const { return v < 0 ? NegFn{}(v) : v; }
};
struct ReluFn {
  template <class T> T operator()(T v) const { return v > 0 ? v : T(0); }
};
struct Relu6Fn {
  template <class T> T operator()(T v) const { return v < 0 ? T(0) : (v > 6 ? T(6) : v); }
};
// floor, ceil, round: an integer is already whole, so it passes through (as in PyTorch).
template <float (*F)(float)>
struct WholeFn {
  template <class T> T operator()(T v) const {
    if constexpr (std::is_floating_point_v<T>) return F(v);
    else return v;
  }
};
float floor_of(float v) { return std::floor(v); }
float ceil_of(float v) { return std::ceil(v); }
// torch.round rounds half to even (2.5 -> 2, -0.5 -> -0): nearbyint in the default rounding
// mode, round-to-nearest-even, as PyTorch's kernel does.
float round_of(float v) { return std::nearbyint(v); }
struct ExpFn {
  float operator()(float v) const { return std::exp(v); }
};
struct LogFn {
  float operator()(float v) const { return std::log(v); }
};
struct SqrtFn {
  float operator()(float v) const { return std::sqrt(v); }
};
struct Log2Fn {
  float operator()(float v) const { return std::log2(v); }
};
struct ReciprocalFn {
  float operator()(float v) const { return 1.0f / v; }
};
struct AtanFn {
  float operator()(float v) const { return std::atan(v); }
};
struct RsqrtFn {
  float operator()(float v) const { return 1.0f / std::sqrt(v); }
};
struct SigmoidFn {
  float operator()(float v) const { return 1.0f / (1.0f + std::exp(-v)); }
};
struct TanhFn {
  float operator()(float v) const { return std::tanh(v); }
};
struct SiluFn {
  float operator()(float v) const { return v / (1.0f + std::exp(-v)); }
};
// As PyTorch's kernels: min(max(x + 3, 0), 6) / 6, and x times that.
struct HardsigmoidFn {
  float operator()(float v) const { return std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }
};
struct HardswishFn {
  float operator()(float v) const { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }
};

template <Domain D, class Fn>
Value unary_kernel(const OpCall& call, const OutputMeta& meta) {
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  if constexpr (D == Domain::floating) {
    const Tensor x = detail::cast(call.tensor(0), DType::float32);
    map_unary<float, float>(out, x, Fn{});
  } else {
    const Tensor& x = call.tensor(0);
    visit_dtype(x.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, bool>) map_unary<T, T>(out, x, Fn{});  // bool: refused by the meta function
    });
  }
  return out;
}

OutputMeta gelu_meta(const OpCall& call) {
  const std::string& mode = call.string(1);
  if (mode != "none" && mode != "tanh") call.fail("approximate must be 'none' or 'tanh', got '{}'", mode);
  return unary_meta<Domain::floating>(call);
}

Value gelu_kernel(const OpCall& call, const OutputMeta& meta) {
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const Tensor x = detail::cast(call.tensor(0), DType::float32);
  if (call.string(1) == "tanh") {
    map_unary<float, float>(out, x, [](float v) {
      constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
    });
  } else {
    map_unary<float, float>(out, x, [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); });
  }
  return out;
}

OutputMeta clamp_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const auto lo = call.optional_scalar(1);
  const auto hi = call.optional_scalar(2);
  if (!lo && !hi) call.fail("needs at least one of min and max (tensor of shape {})", x.shape());
  if (x.dtype() == DType::bool_) call.fail("is not defined for bool tensors (shape {})", x.shape());
  DType dt = x.dtype();
  if ((lo && lo->is_floating()) || (hi && hi->is_floating())) dt = promote_types(dt, DType::float32);
  return OutputMeta::single(dt, x.shape());
}

Value clamp_kernel(const OpCall& call, const OutputMeta& meta) {
  const DType dt = meta.outputs[0].dtype;
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const Tensor x = detail::cast(call.tensor(0), dt);
  const auto lo = call.optional_scalar(1);
  const auto hi = call.optional_scalar(2);
  visit_dtype(dt, [&]<class T>() {
    constexpr bool inf = std::numeric_limits<T>::has_infinity;  // keep infinities on an open side
    const T l = lo ? lo->to<T>() : inf ? -std::numeric_limits<T>::infinity()
                                       : std::numeric_limits<T>::lowest();
    const T h = hi ? hi->to<T>() : inf ? std::numeric_limits<T>::infinity()
                                       : std::numeric_limits<T>::max();
    map_unary<T, T>(out, x, [l, h](T v) { return std::min(std::max(v, l), h); });  // max wins when min > max, as in PyTorch
  });
  return out;
}

// ---- where, to, in-place unary -----------------------------------------------------------

OutputMeta where_meta(const OpCall& call) {
  const Tensor& cond = call.tensor(0);
  if (cond.dtype() != DType::bool_)
    call.fail("condition must be a bool tensor, got {} of shape {}; compare first, e.g. x > 0", cond.dtype(),
              cond.shape());
  const TensorMeta a = detail::operand_meta(call.arg(1));
  const TensorMeta b = detail::operand_meta(call.arg(2));
  Shape shape = detail::broadcast_shapes(call, cond.shape(), detail::broadcast_shapes(call, a.shape, b.shape));
  return OutputMeta::single(detail::result_type(call.arg(1), call.arg(2)), std::move(shape));
}

Value where_kernel(const OpCall& call, const OutputMeta& meta) {
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const DType dt = meta.outputs[0].dtype;
  const Tensor& cond = call.tensor(0);
  const Tensor a = operand_tensor(call.arg(1), dt);
  const Tensor b = operand_tensor(call.arg(2), dt);
  // out = a where cond, else b: first copy b, then overwrite with a where cond holds.
  const IntList sizes = out.shape().sizes();
  const auto sc = detail::broadcast_strides(cond, sizes);
  const auto sa = detail::broadcast_strides(a, sizes);
  const auto sb = detail::broadcast_strides(b, sizes);
  const auto so = out.strides();
  visit_dtype(dt, [&]<class T>() {
    T* po = detail::base_ptr<T>(out);
    const bool* pc = detail::base_ptr<bool>(cond);
    const T* pa = detail::base_ptr<T>(a);
    const T* pb = detail::base_ptr<T>(b);
    detail::for_each_run<4>(sizes,
                            {detail::as_span(so), detail::as_span(sc),
                             detail::as_span(sa), detail::as_span(sb)},
                            {out.storage_offset(), cond.storage_offset(), a.storage_offset(), b.storage_offset()},
                            [&](auto off, std::int64_t n, auto in) {
                              for (std::int64_t i = 0; i < n; ++i)
                                po[off[0] + i * in[0]] =
                                    pc[off[1] + i * in[1]] ? pa[off[2] + i * in[2]] : pb[off[3] + i * in[3]];
                            });
  });
  return out;
}

OutputMeta to_meta(const OpCall& call) { return OutputMeta::single(call.dtype(1), call.tensor(0).shape()); }
Value to_kernel(const OpCall& call, const OutputMeta&) { return detail::cast(call.tensor(0), call.dtype(1)); }

OutputMeta same_as_self_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  if (call.op.name() == "relu_" && x.dtype() == DType::bool_)
    call.fail("is not defined for bool tensors (shape {})", x.shape());
  return OutputMeta::single(x.dtype(), x.shape());
}

Value relu_inplace_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& x = call.tensor(0);
  detail::check_writable(call, x);
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) map_unary<T, T>(x, x, ReluFn{});
  });
  return x;
}

Value fill_inplace_kernel(const OpCall& call, const OutputMeta&) {
  const Tensor& x = call.tensor(0);
  detail::check_writable(call, x);
  const Scalar v = call.scalar(1);
  const IntList sizes = x.shape().sizes();
  visit_dtype(x.dtype(), [&]<class T>() {  // write-only: the old contents may be uninitialised
    T* base = detail::base_ptr<T>(x);
    const T value = v.to<T>();
    detail::for_each_run<1>(sizes, {detail::as_span(x.strides())}, {x.storage_offset()},
                            [&](auto off, std::int64_t n, auto inner) {
                              for (std::int64_t i = 0; i < n; ++i) base[off[0] + i * inner[0]] = value;
                            });
  });
  return x;
}

OutputMeta copy_meta(const OpCall& call) {
  const Tensor& self = call.tensor(0);
  const Tensor& src = call.tensor(1);
  const Shape out = detail::broadcast_shapes(call, self.shape(), src.shape());
  if (!detail::fits(out, self.shape()))
    call.fail("source of shape {} cannot be broadcast to the destination of shape {}", src.shape(), self.shape());
  return OutputMeta::single(self.dtype(), self.shape());
}

Value copy_inplace_kernel(const OpCall& call, const OutputMeta&) {
  detail::check_writable(call, call.tensor(0));
  detail::copy_into(call.tensor(0), call.tensor(1));
  return call.tensor(0);
}

}  // namespace

void detail::register_pointwise_ops(OpRegistry& r) {
  constexpr OpFlags ew = OpFlags::elementwise;
  constexpr OpFlags ip = OpFlags::elementwise | OpFlags::inplace;
  r.add("add(Tensor|Scalar self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::arithmetic>, binary_kernel<Rule::arithmetic, AddFn>, ew);
  r.add("sub(Tensor|Scalar self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::arithmetic>, binary_kernel<Rule::arithmetic, SubFn>, ew);
  r.add("mul(Tensor|Scalar self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::arithmetic>, binary_kernel<Rule::arithmetic, MulFn>, ew);
  r.add("div(Tensor|Scalar self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::division>, binary_kernel<Rule::division, DivFn>, ew);
  r.add("floor_divide(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::arithmetic>, binary_kernel<Rule::arithmetic, FloorDivFn>, ew);
  r.add("remainder(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::arithmetic>, binary_kernel<Rule::arithmetic, RemainderFn>, ew);
  r.add("pow(Tensor|Scalar self, Tensor|Scalar exponent) -> Tensor", binary_meta<Rule::arithmetic>, binary_kernel<Rule::arithmetic, PowFn>, ew);
  r.add("eq(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::comparison>, binary_kernel<Rule::comparison, EqFn>, ew);
  r.add("ne(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::comparison>, binary_kernel<Rule::comparison, NeFn>, ew);
  r.add("lt(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::comparison>, binary_kernel<Rule::comparison, LtFn>, ew);
  r.add("le(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::comparison>, binary_kernel<Rule::comparison, LeFn>, ew);
  r.add("gt(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::comparison>, binary_kernel<Rule::comparison, GtFn>, ew);
  r.add("ge(Tensor self, Tensor|Scalar other) -> Tensor", binary_meta<Rule::comparison>, binary_kernel<Rule::comparison, GeFn>, ew);
  r.add("bitwise_and(Tensor self, Tensor|Scalar other) -> Tensor", bitwise_meta, bitwise_kernel<BitwiseAndFn>, ew);
  r.add("bitwise_or(Tensor self, Tensor|Scalar other) -> Tensor", bitwise_meta, bitwise_kernel<BitwiseOrFn>, ew);
  r.add("neg(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, NegFn>, ew);
  r.add("abs(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, AbsFn>, ew);
  r.add("relu(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, ReluFn>, ew);
  r.add("relu6(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, Relu6Fn>, ew);
  r.add("floor(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, WholeFn<floor_of>>, ew);
  r.add("ceil(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, WholeFn<ceil_of>>, ew);
  r.add("round(Tensor self) -> Tensor", unary_meta<Domain::any_numeric>, unary_kernel<Domain::any_numeric, WholeFn<round_of>>, ew);
  r.add("exp(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, ExpFn>, ew);
  r.add("log(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, LogFn>, ew);
  r.add("log2(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, Log2Fn>, ew);
  r.add("reciprocal(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, ReciprocalFn>, ew);
  r.add("atan(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, AtanFn>, ew);
  r.add("sqrt(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, SqrtFn>, ew);
  r.add("rsqrt(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, RsqrtFn>, ew);
  r.add("sigmoid(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, SigmoidFn>, ew);
  r.add("tanh(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, TanhFn>, ew);
  r.add("silu(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, SiluFn>, ew);
  r.add("hardsigmoid(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, HardsigmoidFn>, ew);
  r.add("hardswish(Tensor self) -> Tensor", unary_meta<Domain::floating>, unary_kernel<Domain::floating, HardswishFn>, ew);
  r.add("gelu(Tensor self, str approximate='none') -> Tensor", gelu_meta, gelu_kernel, ew);
  r.add("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", clamp_meta, clamp_kernel, ew);
  r.add("where(Tensor condition, Tensor|Scalar self, Tensor|Scalar other) -> Tensor", where_meta, where_kernel, ew);
  r.add("to(Tensor self, ScalarType dtype) -> Tensor", to_meta, to_kernel, ew);
  r.add("add_(Tensor self, Tensor|Scalar other) -> Tensor", inplace_binary_meta, inplace_binary_kernel<AddFn>, ip);
  r.add("mul_(Tensor self, Tensor|Scalar other) -> Tensor", inplace_binary_meta, inplace_binary_kernel<MulFn>, ip);
  r.add("relu_(Tensor self) -> Tensor", same_as_self_meta, relu_inplace_kernel, ip);
  r.add("fill_(Tensor self, Scalar value) -> Tensor", same_as_self_meta, fill_inplace_kernel, ip);
  r.add("copy_(Tensor self, Tensor src) -> Tensor", copy_meta, copy_inplace_kernel, ip);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::operand_value;
using detail::fn;

Tensor add(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("add"), w, fn, a, operand_value(b)); }
Tensor add(const Scalar& a, const Tensor& b, Where w) { return invoke(SYMTRACE_OP("add"), w, fn, a, b); }
Tensor sub(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("sub"), w, fn, a, operand_value(b)); }
Tensor sub(const Scalar& a, const Tensor& b, Where w) { return invoke(SYMTRACE_OP("sub"), w, fn, a, b); }
Tensor mul(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("mul"), w, fn, a, operand_value(b)); }
Tensor mul(const Scalar& a, const Tensor& b, Where w) { return invoke(SYMTRACE_OP("mul"), w, fn, a, b); }
Tensor div(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("div"), w, fn, a, operand_value(b)); }
Tensor div(const Scalar& a, const Tensor& b, Where w) { return invoke(SYMTRACE_OP("div"), w, fn, a, b); }
Tensor pow(const Tensor& a, const Operand& e, Where w) { return invoke(SYMTRACE_OP("pow"), w, fn, a, operand_value(e)); }
Tensor pow(const Scalar& a, const Tensor& e, Where w) { return invoke(SYMTRACE_OP("pow"), w, fn, a, e); }
Tensor eq(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("eq"), w, fn, a, operand_value(b)); }
Tensor ne(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("ne"), w, fn, a, operand_value(b)); }
Tensor lt(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("lt"), w, fn, a, operand_value(b)); }
Tensor le(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("le"), w, fn, a, operand_value(b)); }
Tensor gt(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("gt"), w, fn, a, operand_value(b)); }
Tensor ge(const Tensor& a, const Operand& b, Where w) { return invoke(SYMTRACE_OP("ge"), w, fn, a, operand_value(b)); }
Tensor bitwise_and(const Tensor& a, const Operand& b, Where w) {
  return invoke(SYMTRACE_OP("bitwise_and"), w, fn, a, operand_value(b));
}
Tensor bitwise_or(const Tensor& a, const Operand& b, Where w) {
  return invoke(SYMTRACE_OP("bitwise_or"), w, fn, a, operand_value(b));
}
Tensor neg(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("neg"), w, fn, x); }
Tensor abs(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("abs"), w, fn, x); }
Tensor exp(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("exp"), w, fn, x); }
Tensor log(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("log"), w, fn, x); }
Tensor floor(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("floor"), w, fn, x); }
Tensor ceil(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("ceil"), w, fn, x); }
Tensor round(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("round"), w, fn, x); }
Tensor log2(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("log2"), w, fn, x); }
Tensor reciprocal(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("reciprocal"), w, fn, x); }
Tensor atan(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("atan"), w, fn, x); }
Tensor sqrt(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("sqrt"), w, fn, x); }
Tensor rsqrt(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("rsqrt"), w, fn, x); }
Tensor relu(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("relu"), w, fn, x); }
Tensor relu6(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("relu6"), w, fn, x); }
Tensor silu(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("silu"), w, fn, x); }
Tensor hardsigmoid(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("hardsigmoid"), w, fn, x); }
Tensor hardswish(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("hardswish"), w, fn, x); }
Tensor gelu(const Tensor& x, std::string_view approximate, Where w) {
  return invoke(SYMTRACE_OP("gelu"), w, fn, x, std::string(approximate));
}
Tensor sigmoid(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("sigmoid"), w, fn, x); }
Tensor tanh(const Tensor& x, Where w) { return invoke(SYMTRACE_OP("tanh"), w, fn, x); }
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max, Where w) {
  return invoke(SYMTRACE_OP("clamp"), w, fn, x, min, max);
}
Tensor where(const Tensor& condition, const Operand& a, const Operand& b, Where w) {
  return invoke(SYMTRACE_OP("where"), w, fn, condition, operand_value(a), operand_value(b));
}
Tensor to(const Tensor& x, DType dtype, Where w) { return invoke(SYMTRACE_OP("to"), w, fn, x, dtype); }

}  // namespace symtrace

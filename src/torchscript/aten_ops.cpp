// LibTorch's operators as symtrace ops (aten_ops.hpp; docs/design.md, decision 14).
//
// Eagerly, the kernel hands LibTorch the symtrace tensors' own memory (at::from_blob over
// their storage, strides and offset, the symtrace tensor kept alive by the deleter: no copy),
// runs the operator, and takes its results back as symtrace tensors over LibTorch's memory
// (again no copy, but for dtypes symtrace converts: float64 to float32, int32 to int64). An
// operator that writes to an argument (`aten::add_.Tensor`, an `out=` form) writes into the
// symtrace tensor itself, and returns it.
//
// Under a trace, the meta function runs the operator on LibTorch's meta tensors (sizes and
// dtype, no data) made at the traced sizes, or, where LibTorch has no meta kernel for it, on
// zero tensors of those sizes. Note [Sizes by probing]: a size that is an expression over
// named dims (`N`, `H//2`) or anonymous (`?`) has no number, so it is given one: each named
// dim a probe value, anonymous dims one shared probe, every expression its value under the
// probes. The operator runs twice, with two sets of probes; an output size equal in both runs
// is that size, one that equals the same input size expression in both runs is that
// expression (the dim survives), and any other is anonymous. Rank and dtype are always known.
#include "torchscript/aten_ops.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/ops/callable.hpp"
#include "symtrace/ops/registry.hpp"

#include "torchscript/compile.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace symtrace::torchscript::detail {

namespace {

namespace jit = torch::jit;

/// What the kernel and the meta function need of one operator.
struct AtenOp {
  c10::FunctionSchema schema;
  mutable jit::Operation operation;  // called by const reference (its call is not const)
  /// For each result: the argument it is (an operator that writes to an argument and returns
  /// it, `Tensor(a!)`), or -1.
  std::vector<int> returns_argument;
  /// LibTorch tags its result's sizes as decided by the data (`nonzero`, `unique_dim`).
  bool data_dependent_sizes = false;
};

// ---- Values to LibTorch and back -----------------------------------------------------------

/// A concrete symtrace tensor as a LibTorch tensor over the same memory.
at::Tensor aten_view_of(const Tensor& t) {
  const Shape& shape = t.shape();
  std::vector<std::int64_t> sizes;
  sizes.reserve(shape.rank());
  for (const Dim& d : shape) sizes.push_back(d.value());
  const auto options = at::TensorOptions().dtype(scalar_type(t.dtype()));
  const symtrace::detail::Strides& strides = t.strides();
  std::vector<std::int64_t> steps(strides.begin(), strides.end());
  if (is_quantized(t.dtype())) {
    // A quantized tensor is LibTorch's (Note [Dtypes symtrace holds], src/ops/dispatch.cpp):
    // its scale and zero point are the owner's; the symtrace tensor is a view of it.
    const at::Tensor* owner = t.storage_owner<at::Tensor>();
    if (owner == nullptr) {
      if (t.numel() == 0) return at::_empty_affine_quantized(sizes, options, 1.0, 0);
      throw std::invalid_argument(fmt::format("a {} tensor symtrace did not get from LibTorch has no scale or zero point",
                                              t.dtype()));
    }
    if (t.storage_offset() == 0 && owner->sizes() == c10::IntArrayRef(sizes) && owner->strides() == c10::IntArrayRef(steps))
      return *owner;
    return owner->as_strided(sizes, steps, owner->storage_offset() + t.storage_offset());
  }
  if (t.numel() == 0) return at::empty(sizes, options);
  // The deleter holds the symtrace tensor, and with it the memory, for as long as LibTorch
  // holds the tensor (or a view of it that an operator returned).
  return at::from_blob(
      t.data_ptr(), sizes, steps, [keep = t](void*) {}, options);
}

/// How tensors are made for LibTorch: shared (an eager call), or at probe sizes (Note [Sizes
/// by probing]) as meta tensors or, for an operator without a meta kernel, filled with `fill`
/// (a traced tensor; a concrete one is copied with its data).
struct Probe {
  enum class Kind : std::uint8_t {
    share,
    meta,
    filled
  } kind = Kind::share;
  const SymBindings* bindings = nullptr;
  std::int64_t anonymous = 0;                 // the value of every anonymous dim
  std::int64_t fill = 0;                      // a value for every element, or `varied`
  static constexpr std::int64_t varied = -1;  // 3, 4, 5, 3, 4, 5, ... in memory order

  std::int64_t size(const Dim& d) const {
    if (d.is_known()) return d.value();
    if (d.is_anonymous()) return anonymous;
    return d.expr()->evaluate(*bindings);
  }
};

at::Tensor make_tensor(const Tensor& t, const Probe& probe) {
  if (probe.kind == Probe::Kind::share) return aten_view_of(t);
  std::vector<std::int64_t> sizes;
  for (const Dim& d : t.shape()) sizes.push_back(probe.size(d));
  auto options = at::TensorOptions().dtype(scalar_type(t.dtype()));
  // A quantized tensor has no meta form: the meta probe fails, and the fills below run.
  if (probe.kind == Probe::Kind::meta) return at::empty(sizes, options.device(at::kMeta));
  // A copy: the operator may write to it.
  if (!t.is_symbolic()) return aten_view_of(t).clone();
  const at::ScalarType filled_type = is_quantized(t.dtype()) ? at::kFloat : options.dtype().toScalarType();
  at::Tensor filled =
      probe.fill == Probe::varied
          ? (at::arange(c10::multiply_integers(sizes), at::TensorOptions().dtype(at::kLong)).remainder(3) + 3)
                .to(filled_type)
                .reshape(sizes)
          : at::full(sizes, probe.fill, options.dtype(filled_type));
  // A traced quantized tensor's scale and zero point are unknown; 1 and 0 keep the fills' values.
  if (is_quantized(t.dtype())) return at::quantize_per_tensor(filled, 1.0, 0, options.dtype().toScalarType());
  return filled;
}

std::int64_t integer(const Value& v, const Probe& probe) {
  if (v.is_symint()) {
    const Dim d = v.to_sym_int().dim();
    if (d.is_known()) return d.value();
    if (probe.kind == Probe::Kind::share) return v.to_int();  // throws: a proxy in an eager call
    return probe.size(d);
  }
  if (v.is_bool()) return v.to_bool() ? 1 : 0;
  return v.to_int();
}

// A float computed from sizes: its value at the probe's sizes when it is a fraction of them.
double real(const Value& v, const Probe& probe) {
  if (!v.is_symfloat()) return v.to_double();
  const SymFloat f = v.to_sym_float();
  if (probe.kind == Probe::Kind::share) return f.value(f.where());  // throws: a proxy in an eager call
  return static_cast<double>(probe.size(f.numerator())) / static_cast<double>(f.denominator());
}

c10::IValue number(const Value& v, const Probe& probe) {
  if (v.is_bool()) return v.to_bool();
  if (v.is_double() || v.is_symfloat()) return real(v, probe);
  if (v.is_int() || v.is_symint()) return integer(v, probe);
  if (v.is_tensor()) {  // a 0-dim tensor where a number goes
    const at::Tensor t = make_tensor(v.to_tensor(), probe);
    if (probe.kind == Probe::Kind::meta) return 0;
    return t.item();
  }
  throw std::invalid_argument(fmt::format("expected a number, not {}", v.type_name()));
}

c10::IValue to_ivalue(const Value& v, const c10::TypePtr& declared, const Probe& probe);

c10::IValue list_to_ivalue(const Value& v, const c10::ListTypePtr& type, const Probe& probe) {
  const ValueList& items = v.to_list();
  const c10::TypePtr& elem = type->getElementType();
  switch (elem->kind()) {
    case c10::TypeKind::TensorType: {
      c10::List<at::Tensor> out;
      for (const Value& e : items) out.push_back(make_tensor(e.to_tensor(), probe));
      return out;
    }
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: {
      c10::List<std::int64_t> out;
      for (const Value& e : items) out.push_back(integer(e, probe));
      return out;
    }
    case c10::TypeKind::FloatType: {
      c10::List<double> out;
      for (const Value& e : items) out.push_back(e.to_double());
      return out;
    }
    case c10::TypeKind::BoolType: {
      c10::List<bool> out;
      for (const Value& e : items) out.push_back(e.to_bool());
      return out;
    }
    case c10::TypeKind::OptionalType:
      if (elem->cast<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::TensorType) {
        c10::List<c10::optional<at::Tensor>> out;
        for (const Value& e : items) {
          if (e.is_none()) out.push_back(c10::nullopt);
          else out.push_back(make_tensor(e.to_tensor(), probe));
        }
        return out;
      }
      break;
    default: break;
  }
  c10::impl::GenericList out(elem);
  for (const Value& e : items) out.push_back(to_ivalue(e, elem, probe));
  return out;
}

c10::IValue to_ivalue(const Value& v, const c10::TypePtr& declared, const Probe& probe) {
  if (v.is_none()) return {};
  if (v.is_opaque()) {  // LibTorch's own object, as it came (to_value)
    if (const c10::IValue* object = boost::variant2::get<OpaqueObject>(v.value).get<c10::IValue>()) return *object;
    throw std::invalid_argument(fmt::format("a {} object cannot be passed to LibTorch", v.type_name()));
  }
  c10::TypePtr type = declared;
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      if (v.is_tensor()) return make_tensor(v.to_tensor(), probe);
      return at::scalar_tensor(number(v, probe).toScalar());
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
      if (v.is_dtype()) return static_cast<std::int64_t>(scalar_type(v.to_dtype()));
      return integer(v, probe);
    case c10::TypeKind::FloatType: return v.is_tensor() ? number(v, probe).toDouble() : v.to_double();
    case c10::TypeKind::BoolType: return v.is_tensor() ? number(v, probe).toBool() : v.to_bool();
    case c10::TypeKind::NumberType: return number(v, probe);
    case c10::TypeKind::StringType: return v.to_string_ref();
    case c10::TypeKind::DeviceObjType: return c10::Device(v.to_string_ref());
    case c10::TypeKind::ListType: return list_to_ivalue(v, type->expect<c10::ListType>(), probe);
    default: break;
  }
  // What the declared type does not settle: by the value's own kind.
  switch (v.kind()) {
    case Value::Kind::boolean: return v.to_bool();
    case Value::Kind::integer:
    case Value::Kind::symint: return integer(v, probe);
    case Value::Kind::floating:
    case Value::Kind::symfloat: return real(v, probe);
    case Value::Kind::string: return v.to_string_ref();
    case Value::Kind::dtype: return static_cast<std::int64_t>(scalar_type(v.to_dtype()));
    case Value::Kind::tensor: return make_tensor(v.to_tensor(), probe);
    default: break;
  }
  throw std::invalid_argument(fmt::format("a {} cannot be passed as {}", v.type_name(), declared->repr_str()));
}

/// A result of LibTorch's as a Value: tensors over LibTorch's memory.
Value from_ivalue(const c10::IValue& v, std::string_view what) {
  if (v.isTensor()) {
    at::Tensor t = v.toTensor();
    if (!t.defined()) return Value(Tensor());
    const std::optional<DType> dtype = symtrace_dtype(t.scalar_type());
    if (!dtype)
      throw std::invalid_argument(fmt::format("{} has dtype {}, which symtrace cannot hold", what,
                                              c10::toString(t.scalar_type())));
    return Value(to_symtrace(t, what));
  }
  if (v.isTensorList() || v.isList() || v.isTuple()) {
    ValueList out;
    if (v.isTuple())
      for (const c10::IValue& e : v.toTupleRef().elements()) out.push_back(from_ivalue(e, what));
    else
      for (const c10::IValue& e : v.toListRef()) out.push_back(from_ivalue(e, what));
    return Value(std::move(out));
  }
  if (auto value = to_value(v, what)) return std::move(*value);
  throw std::invalid_argument(fmt::format("{} is a {}, which symtrace cannot hold", what, v.tagKind()));
}

// ---- The kernel ----------------------------------------------------------------------------

[[noreturn]] void fail_in_libtorch(const OpCall& call, const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  call.fail("LibTorch: {}", first_line(c10_error ? c10_error->what_without_backtrace() : e.what()));
}

std::string result_name(std::size_t i, std::size_t n) {
  return n == 1 ? std::string("its result") : fmt::format("its result {}", i);
}

Value run_eager(const AtenOp& op, const OpCall& call) {
  const auto& args = op.schema.arguments();
  jit::Stack stack;
  stack.reserve(args.size());
  const Probe share;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) stack.push_back(to_ivalue(call.arg(i), args[i].type(), share));
  } catch (const OpError&) {
    throw;
  } catch (const std::exception& e) {
    call.fail("{}", e.what());
  }
  try {
    c10::InferenceMode guard;
    op.operation(stack);
  } catch (const std::exception& e) {
    fail_in_libtorch(call, e);
  }
  auto result = [&](std::size_t i) -> Value {
    if (op.returns_argument[i] >= 0) return call.arg(static_cast<std::size_t>(op.returns_argument[i]));
    try {
      return from_ivalue(stack[i], result_name(i, stack.size()));
    } catch (const std::invalid_argument& e) {
      call.fail("{}", e.what());
    }
  };
  if (stack.size() == 1) return result(0);
  ValueList out;
  out.reserve(stack.size());
  for (std::size_t i = 0; i < stack.size(); ++i) out.push_back(result(i));
  return Value(std::move(out));
}

// ---- The meta function ---------------------------------------------------------------------

/// The sizes and dtypes of the operator's tensor results for one set of probes; a size the
/// data decides is `data_dependent`.
struct ProbeResult {
  static constexpr std::int64_t data_dependent = -1;
  std::vector<std::vector<std::int64_t>> sizes;
  std::vector<DType> dtypes;
};

// The sizes and dtypes of the results of `stack`, the operator's outputs.
ProbeResult results_of(const OpCall& call, const jit::Stack& stack) {
  ProbeResult out;
  auto add = [&](const at::Tensor& t, std::size_t i) {
    const std::optional<DType> dtype = symtrace_dtype(t.scalar_type());
    if (!dtype)
      call.fail("{} has dtype {}, which symtrace cannot hold", result_name(i, stack.size()), c10::toString(t.scalar_type()));
    out.sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    out.dtypes.push_back(*dtype);
  };
  for (std::size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].isTensor()) add(stack[i].toTensor(), i);
    else if (stack[i].isTensorList())
      for (const at::Tensor& t : stack[i].toTensorVector()) add(t, i);
    else call.fail("{} is a {}, where symtrace traces tensors only", result_name(i, stack.size()), stack[i].tagKind());
  }
  return out;
}

// Note [Sizes the data decides]: an operator without a meta kernel runs on data, and its
// result's sizes may depend on that data (`_pack_padded_sequence`'s on the lengths,
// `bincount`'s on the largest value), which a trace does not have. So it runs on traced tensors
// filled with zeros, with 3, 4, 5, 3, 4, ... (distinct values, as `unique` counts, none a fill
// below), with ones and with twos, until two fills succeed (zeros are refused by some: lengths
// must be positive; varied ones by others: lengths must be sorted); a size that differs between them
// is decided by the data and is anonymous, as a data-dependent count is, and so is every size
// when only one fill runs, or when LibTorch tags the operator's sizes as the data's
// (`dynamic_output_shape`). A size equal under two fills is taken as the operator's.
ProbeResult run_probe(const AtenOp& op, const OpCall& call, Probe probe) {
  const auto& args = op.schema.arguments();
  auto run = [&](Probe::Kind kind, std::int64_t fill) {
    probe.kind = kind;
    probe.fill = fill;
    jit::Stack stack;
    for (std::size_t i = 0; i < args.size(); ++i) stack.push_back(to_ivalue(call.arg(i), args[i].type(), probe));
    c10::InferenceMode guard;
    op.operation(stack);
    return stack;
  };
  // Every size anonymous: the data decides them.
  auto all_data_dependent = [](ProbeResult r) {
    for (auto& sizes : r.sizes) std::fill(sizes.begin(), sizes.end(), ProbeResult::data_dependent);
    return r;
  };
  try {
    ProbeResult r = results_of(call, run(Probe::Kind::meta, 0));
    return op.data_dependent_sizes ? all_data_dependent(std::move(r)) : r;
  } catch (const OpError&) {
    throw;  // a result symtrace cannot hold
  } catch (const std::exception&) {
    // No meta kernel (or one that reads data): the operator on data (Note [Sizes the data decides]).
  }
  std::vector<ProbeResult> runs;
  std::optional<std::string> first_error;
  for (const std::int64_t fill : {std::int64_t{0}, Probe::varied, std::int64_t{1}, std::int64_t{2}}) {
    if (runs.size() == 2) break;
    try {
      runs.push_back(results_of(call, run(Probe::Kind::filled, fill)));
    } catch (const OpError&) {
      throw;
    } catch (const std::exception& e) {
      if (!first_error) first_error = e.what();
    }
  }
  if (runs.empty()) fail_in_libtorch(call, std::runtime_error(*first_error));
  if (runs.size() == 1 || op.data_dependent_sizes) return all_data_dependent(std::move(runs[0]));
  ProbeResult out = std::move(runs[0]);
  const ProbeResult& other = runs[1];
  if (other.sizes.size() != out.sizes.size()) call.fail("the number of its results depends on its inputs' data");
  for (std::size_t i = 0; i < out.sizes.size(); ++i) {
    if (other.sizes[i].size() != out.sizes[i].size()) call.fail("the rank of its result {} depends on its inputs' data", i);
    for (std::size_t d = 0; d < out.sizes[i].size(); ++d)
      if (other.sizes[i][d] != out.sizes[i][d]) out.sizes[i][d] = ProbeResult::data_dependent;
  }
  return out;
}

/// The named dims the arguments' sizes are expressions over, and the expressions themselves
/// (the candidates an output size may be).
struct Symbols {
  std::vector<std::pair<std::string, SymRange>> dims;
  std::vector<Dim> expressions;
  bool anonymous = false;

  void add(const Dim& d) {
    if (d.is_known()) return;
    if (d.is_anonymous()) {
      anonymous = true;
      return;
    }
    if (std::find(expressions.begin(), expressions.end(), d) != expressions.end()) return;
    expressions.push_back(d);
    for (auto& s : d.expr()->symbol_ranges())
      if (std::find(dims.begin(), dims.end(), s) == dims.end()) dims.push_back(std::move(s));
  }
  void add(const Value& v) {
    if (v.is_tensor() && v.to_tensor().defined()) {
      for (const Dim& d : v.to_tensor().shape()) add(d);
    } else if (v.is_symint()) {
      add(v.to_sym_int().dim());
    } else if (v.is_symfloat()) {
      add(v.to_sym_float().numerator());
    } else if (v.is_list()) {
      for (const Value& e : v.to_list()) add(e);
    }
  }
};

/// Probe values for set `k` (0 or 1): primes far from the sizes models use as constants, kept
/// in each dim's range.
SymBindings probes(const Symbols& symbols, int k) {
  static constexpr std::int64_t first[] = {23, 29, 31, 37, 41, 43, 47};
  static constexpr std::int64_t second[] = {53, 59, 61, 67, 71, 73, 79};
  SymBindings out;
  for (std::size_t i = 0; i < symbols.dims.size(); ++i) {
    const auto& [name, range] = symbols.dims[i];
    const std::int64_t step = static_cast<std::int64_t>(i / std::size(first)) * 60;
    std::int64_t v = (k == 0 ? first : second)[i % std::size(first)] + step;
    v = std::clamp(v, range.lo, range.hi);
    if (k == 1 && range.lo < range.hi) {
      const std::int64_t v0 = std::clamp(first[i % std::size(first)] + step, range.lo, range.hi);
      if (v == v0) v = v0 == range.hi ? v0 - 1 : v0 + 1;
    }
    out.emplace_back(name, v);
  }
  return out;
}

OutputMeta run_meta(const AtenOp& op, const OpCall& call) {
  Symbols symbols;
  for (const Value& v : call.args) symbols.add(v);
  const bool probing = !symbols.dims.empty() || symbols.anonymous;
  const SymBindings b0 = probes(symbols, 0);
  const ProbeResult r0 = run_probe(op, call, Probe{Probe::Kind::meta, &b0, 19});
  ProbeResult r1;
  SymBindings b1;
  if (probing) {
    b1 = probes(symbols, 1);
    r1 = run_probe(op, call, Probe{Probe::Kind::meta, &b1, 97});
    if (r1.sizes.size() != r0.sizes.size()) call.fail("LibTorch gives it a different number of results at other sizes");
  }
  // Each candidate expression's value under both sets of probes.
  std::vector<std::pair<std::int64_t, std::int64_t>> values;
  for (const Dim& e : symbols.expressions) values.emplace_back(e.expr()->evaluate(b0), e.expr()->evaluate(b1));
  OutputMeta meta;
  meta.is_list = r0.sizes.size() != 1 || op.schema.returns()[0].type()->kind() == c10::TypeKind::ListType;
  for (std::size_t i = 0; i < r0.sizes.size(); ++i) {
    const auto& s0 = r0.sizes[i];
    Shape shape = Shape::unknown(s0.size());
    for (std::size_t d = 0; d < s0.size(); ++d) {
      if (!probing) {
        if (s0[d] != ProbeResult::data_dependent) shape[d] = Dim(s0[d]);
        continue;
      }
      const auto& s1 = r1.sizes[i];
      if (s1.size() != s0.size()) call.fail("LibTorch gives its result {} a different rank at other sizes", i);
      if (s0[d] == ProbeResult::data_dependent || s1[d] == ProbeResult::data_dependent) continue;  // anonymous
      if (s0[d] == s1[d]) {
        shape[d] = Dim(s0[d]);
        continue;
      }
      for (std::size_t c = 0; c < values.size(); ++c)
        if (values[c] == std::pair(s0[d], s1[d])) {
          shape[d] = symbols.expressions[c];
          break;
        }
    }
    meta.outputs.push_back(TensorMeta{r0.dtypes[i], std::move(shape)});
  }
  return meta;
}

// ---- Making the op -------------------------------------------------------------------------

std::string full_name(const c10::OperatorName& name) {
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

/// The schema symtrace checks a call against: each argument's nearest symtrace type (`Any`
/// where it has none), and the defaults LibTorch declares.
OpSchema symtrace_schema(const c10::FunctionSchema& schema) {
  OpSchema out;
  out.name = full_name(schema.operator_name());
  for (const c10::Argument& a : schema.arguments()) {
    ArgSpec spec;
    spec.name = a.name();
    spec.kwarg_only = a.kwarg_only();
    c10::TypePtr type = a.type();
    if (auto opt = type->cast<c10::OptionalType>()) {
      spec.is_optional = true;
      type = opt->getElementType();
    }
    if (auto list = type->cast<c10::ListType>()) {
      spec.is_list = true;
      type = list->getElementType();
      if (auto opt = type->cast<c10::OptionalType>()) {
        spec.items_optional = true;
        type = opt->getElementType();
      }
    }
    switch (type->kind()) {
      case c10::TypeKind::TensorType: spec.type = ArgType::Tensor; break;
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType: spec.type = ArgType::int_; break;
      case c10::TypeKind::FloatType: spec.type = ArgType::float_; break;
      case c10::TypeKind::BoolType: spec.type = ArgType::bool_; break;
      case c10::TypeKind::NumberType: spec.type = ArgType::Scalar; break;
      case c10::TypeKind::StringType: spec.type = ArgType::str; break;
      case c10::TypeKind::ScalarTypeType: spec.type = ArgType::ScalarType; break;
      default:
        // A device, a layout, a memory format, a generator...: passed on as given.
        spec.type = ArgType::Any;
        spec.is_list = spec.items_optional = false;
        spec.is_optional = true;
        break;
    }
    if (a.default_value()) {
      if (spec.type == ArgType::ScalarType && a.default_value()->isInt())
        spec.default_value = Value(scalar_type_to_dtype(a.default_value()->toInt()));
      else if (auto v = to_value(*a.default_value(), a.name())) spec.default_value = std::move(*v);
    }
    out.args.push_back(std::move(spec));
  }
  const auto& returns = schema.returns();
  auto is_tensor = [](const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; };
  bool tensors = !returns.empty();
  for (const c10::Argument& r : returns) tensors = tensors && is_tensor(r.type());
  if (returns.size() == 1 && is_tensor(returns[0].type())) {
    out.returns = ReturnType::Tensor;
  } else if (tensors || (returns.size() == 1 && returns[0].type()->kind() == c10::TypeKind::ListType &&
                         is_tensor(returns[0].type()->expect<c10::ListType>()->getElementType()))) {
    out.returns = ReturnType::TensorList;
  } else {
    throw std::invalid_argument(fmt::format("{} returns {}, where symtrace calls LibTorch's operators that return "
                                            "tensors",
                                            out.name, returns.empty() ? std::string("nothing") : fmt::format("{}", fmt::streamed(schema))));
  }
  return out;
}

/// Operators PyTorch's JIT knows to draw random numbers without a Generator argument.
bool is_random(const c10::FunctionSchema& schema) {
  for (const c10::Argument& a : schema.arguments())
    if (a.type()->kind() == c10::TypeKind::GeneratorType ||
        (a.type()->cast<c10::OptionalType>() &&
         a.type()->cast<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType))
      return true;
  static constexpr std::string_view random_names[] = {
      "aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout",
      "aten::rand_like", "aten::randn_like", "aten::randint_like", "aten::rand",
      "aten::randn", "aten::randint", "aten::randperm", "aten::bernoulli",
      "aten::multinomial", "aten::normal", "aten::poisson", "aten::rrelu",
      "aten::rrelu_with_noise"};
  return std::find(std::begin(random_names), std::end(random_names), schema.name()) != std::end(random_names);
}

const OpDef& make_op(const std::shared_ptr<jit::Operator>& jit_op) {
  const c10::FunctionSchema& schema = jit_op->schema();
  // Note [The executor runs ops only] (executor.cpp): a model file does not open files.
  for (const c10::Argument& a : schema.arguments())
    if ((a.name() == "filename" || a.name() == "path" || a.name() == "file") &&
        a.type()->kind() == c10::TypeKind::StringType)
      throw std::invalid_argument(fmt::format("{} names a file (argument '{}'), and symtrace does not let a model "
                                              "file read or write files",
                                              full_name(schema.operator_name()), a.name()));
  auto op = std::make_shared<AtenOp>(AtenOp{schema, jit_op->getOperation(), {}, false});
  for (const at::Tag tag : jit_op->getTags())
    if (tag == at::Tag::dynamic_output_shape || tag == at::Tag::data_dependent_output) op->data_dependent_sizes = true;
  OpSchema mine = symtrace_schema(schema);
  const auto& args = schema.arguments();
  bool writes_first = false, writes_other = false, views_first = false;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (const c10::AliasInfo* alias = args[i].alias_info(); alias && alias->isWrite()) (i == 0 ? writes_first : writes_other) = true;
  for (const c10::Argument& r : schema.returns()) {
    int which = -1;
    if (const c10::AliasInfo* alias = r.alias_info())
      for (std::size_t i = 0; i < args.size(); ++i) {
        const c10::AliasInfo* a = args[i].alias_info();
        if (a && a->beforeSets() == alias->beforeSets()) {
          if (alias->isWrite()) which = static_cast<int>(i);
          else if (i == 0) views_first = true;
        }
      }
    op->returns_argument.push_back(which);
  }
  OpFlags flags = OpFlags::external;
  if (writes_first && op->returns_argument[0] == 0) flags = flags | OpFlags::inplace;
  else if (writes_first || writes_other) flags = flags | OpFlags::mutates_arguments;
  if (views_first) flags = flags | OpFlags::view;
  if (is_random(schema)) flags = flags | OpFlags::random;
  OpDef def{std::move(mine), nullptr, nullptr, flags, nullptr};
  return register_op(
      std::move(def), [op](const OpCall& call) { return run_eager(*op, call); },
      [op](const OpCall& call) { return run_meta(*op, call); });
}

/// The ops made so far, by full name. (Not the registry's `find`: it would ask the resolver,
/// which asks this.)
struct Made {
  std::mutex mutex;
  std::map<std::string, const OpDef*, std::less<>> ops;
  std::map<std::string, std::string, std::less<>> refused;  ///< why not, for those that cannot be made
};

Made& made() {
  static Made m;
  return m;
}

const OpDef& find_or_make(const c10::OperatorName& name) {
  const std::string full = full_name(name);
  Made& m = made();
  std::lock_guard lock(m.mutex);
  if (auto it = m.ops.find(full); it != m.ops.end()) return *it->second;
  if (auto it = m.refused.find(full); it != m.refused.end()) throw std::invalid_argument(it->second);
  try {
    std::shared_ptr<jit::Operator> jit_op = jit::findOperatorFor(name);
    if (!jit_op) throw std::invalid_argument(fmt::format("LibTorch has no operator {}", full));
    const OpDef& op = make_op(jit_op);
    m.ops.emplace(full, &op);
    return op;
  } catch (const std::invalid_argument& e) {
    m.refused.emplace(full, e.what());  // asked again at every node of its kind: said once
    throw;
  }
}

// LibTorch's operators resolve by name in every program linked with symtrace.
const bool resolver_set = (OpRegistry::set_resolver(&resolve_aten_op), true);

}  // namespace

const OpDef& aten_op(const c10::FunctionSchema& schema) {
  (void)resolver_set;
  return find_or_make(schema.operator_name());
}

const OpDef* resolve_aten_op(std::string_view name) noexcept {
  const std::size_t ns = name.find("::");
  if (ns == std::string_view::npos || ns == 0) return nullptr;
  const std::size_t dot = name.find('.', ns);
  c10::OperatorName op{std::string(name.substr(0, dot)),
                       dot == std::string_view::npos ? std::string() : std::string(name.substr(dot + 1))};
  try {
    return &find_or_make(op);
  } catch (...) {
    return nullptr;  // an operator LibTorch lacks, or one symtrace cannot call: not an op
  }
}

Value run_class_method(jit::Function& method, std::string_view name, const ValueList& args, std::source_location where) {
  for (const Value& a : args) {
    if (a.is_tensor() && a.to_tensor().is_symbolic()) {
      throw_trace_error(where,
                        "'{}' is a method of a class registered with LibTorch, whose code symtrace runs but cannot "
                        "record: make the module that calls it a leaf (Tracer::register_leaf)",
                        name);
    }
  }
  const c10::FunctionSchema& schema = method.getSchema();
  if (schema.arguments().size() != args.size())
    throw_op_error(name, where, "takes {} arguments with the object, and {} were given", schema.arguments().size(),
                   args.size());
  jit::Stack stack;
  stack.reserve(args.size());
  const Probe share;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) stack.push_back(to_ivalue(args[i], schema.arguments()[i].type(), share));
  } catch (const std::exception& e) {
    throw_op_error(name, where, "{}", e.what());
  }
  try {
    c10::InferenceMode guard;
    method.run(stack);
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    throw_op_error(name, where, "LibTorch: {}", first_line(c10_error ? c10_error->what_without_backtrace() : e.what()));
  }
  try {
    return stack.empty() ? Value() : from_ivalue(stack.back(), "its result");
  } catch (const std::invalid_argument& e) {
    throw_op_error(name, where, "{}", e.what());
  }
}

}  // namespace symtrace::torchscript::detail

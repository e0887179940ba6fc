#include "symtrace/ops/dispatch.hpp"

#include "symtrace/core/thread_context.hpp"
#include "symtrace/ops/record_function.hpp"
#include "symtrace/ops/registry.hpp"

#include <fmt/format.h>

namespace symtrace {

namespace {

/// True when a concrete argument (or list element) is a tensor `interposer` intercepts.
bool reads_intercepted_tensor(std::span<const Value> args, const Interposer& interposer) {
  for (const Value& v : args) {
    if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
      if (interposer.intercepts(*t)) return true;
    } else if (const ValueList* list = boost::variant2::get_if<ValueList>(&v.value)) {
      if (reads_intercepted_tensor(*list, interposer)) return true;
    }
  }
  return false;
}

void check_arguments(const OpDef& op, std::span<const Value> args, std::source_location where) {
  const auto& specs = op.schema.args;
  if (args.size() != specs.size())
    throw_op_error(op.name(), where, "takes {} arguments ({}), got {}", specs.size(), op.schema, args.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (OpSchema::accepts(specs[i], args[i])) [[likely]]
      continue;
    const Value& v = args[i];
    if (v.is_tensor() && !v.to_tensor().defined())
      throw_op_error(op.name(), where, "argument '{}' is an undefined Tensor (default-constructed)",
                     specs[i].name);
    throw_op_error(op.name(), where, "argument '{}' must be {}, got {} ({})", specs[i].name,
                   type_string(specs[i]), v.type_name(), v);
  }
}

// Note [Dtypes symtrace holds]: a TorchScript model may make complex and quantized tensors
// (torch.stft, quantize_per_tensor). symtrace holds them, as values, in traces (a node's dtype)
// and in the graphs it writes, but its own kernels and meta functions compute with float32,
// int64 and bool only. So an op of its own refuses any other dtype with OpUnsupported, before
// its meta function or kernel sees it, and the TorchScript executor runs LibTorch's op in its
// place (an external op, which takes every dtype LibTorch does).
[[gnu::noinline]] [[noreturn]] void refuse_held_dtype(const OpDef& op, DType dtype, std::source_location where) {
  throw_op_unsupported(op.name(), where, "symtrace's op computes with float32, int64 and bool tensors, not {}", dtype);
}

/// True, with `held` set, when `v` is (or a list holds) a tensor of a dtype symtrace does not
/// compute with, or names such a dtype (`to(complex64)`).
bool holds_held_dtype(const Value& v, DType& held) noexcept {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    const detail::TensorImpl* impl = t->impl_ptr().get();  // inline: this runs per argument
    if (impl != nullptr && !is_computed(impl->meta.dtype)) [[unlikely]] {
      held = impl->meta.dtype;
      return true;
    }
  } else if (const DType* d = boost::variant2::get_if<DType>(&v.value)) {
    if (!is_computed(*d)) [[unlikely]] {
      held = *d;
      return true;
    }
  } else if (const ValueList* list = boost::variant2::get_if<ValueList>(&v.value)) {
    for (const Value& e : *list)
      if (holds_held_dtype(e, held)) return true;
  }
  return false;
}

// Note [Data-dependent sizes]: an op whose output size depends on its inputs' values (nms,
// nonzero, index with a bool mask, topk with a proxy k) gives an unknown dim even when its
// inputs are concrete. Its kernel
// allocates what the data asks for; what the meta function knows (dtype, rank, the other
// dims) must still hold.
bool promised(const TensorMeta& expected, const TensorMeta& got) noexcept {
  if (expected == got) return true;
  if (expected.dtype != got.dtype || !expected.shape.is_rank_known() || expected.shape.is_fully_known() ||
      expected.shape.rank() != got.shape.rank())
    return false;
  for (std::size_t d = 0; d < expected.shape.rank(); ++d)
    if (expected.shape[d].is_known() && expected.shape[d] != got.shape[d]) return false;
  return true;
}

// Note [Meta before kernel] holds as a checked invariant: every kernel output must match the
// metadata its meta function promised (see Note [Data-dependent sizes]).
void check_outputs(const OpCall& call, const OutputMeta& meta, const Value& result) {
  if (meta.is_number) {
    const DType kind = meta.outputs.at(0).dtype;
    SYMTRACE_ASSERT(kind == DType::bool_ ? result.is_bool() : kind == DType::float32 ? result.is_double()
                                                                                     : result.is_int(),
                    "kernel returned something other than the number its meta function promised");
    return;
  }
  // A callable is user code: a disagreement with its meta function is the user's to fix.
  if (call.op.callable) [[unlikely]] {
    auto check_callable = [&](const TensorMeta& expected, const Value& v) {
      const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      if (t == nullptr || !t->defined())
        call.fail("the callable returned {} where its schema says Tensor", v.type_name());
      if (t->meta() != expected)
        call.fail("the callable returned {} but its meta function said {}; make the meta function describe "
                  "what the function returns",
                  t->meta(), expected);
    };
    if (!meta.is_list) return check_callable(meta.outputs.at(0), result);
    const ValueList* list = boost::variant2::get_if<ValueList>(&result.value);
    if (list == nullptr || list->size() != meta.outputs.size())
      call.fail("the callable returned {} but its meta function said a list of {} tensors",
                list ? fmt::format("a list of {}", list->size()) : std::string(result.type_name()),
                meta.outputs.size());
    for (std::size_t i = 0; i < list->size(); ++i) check_callable(meta.outputs[i], (*list)[i]);
    return;
  }
  auto check = [&](const TensorMeta& expected, const Value& v) {
    const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
    SYMTRACE_ASSERT(t && t->defined(), "kernel returned something other than a tensor");
    if (!promised(expected, t->meta()))
      throw InternalError(fmt::format("{}:{}: internal error: kernel of {}() returned {} but its meta "
                                      "function promised {}; please report this",
                                      call.where.file_name(), call.where.line(), call.op.name(),
                                      t->meta(), expected));
  };
  if (!meta.is_list) {
    check(meta.outputs.at(0), result);
    return;
  }
  const ValueList* list = boost::variant2::get_if<ValueList>(&result.value);
  SYMTRACE_ASSERT(list && list->size() == meta.outputs.size(), "kernel returned a list of the wrong length");
  for (std::size_t i = 0; i < list->size(); ++i) check(meta.outputs[i], (*list)[i]);
}

/// Refuses, before the kernel allocates it, a result larger than any tensor can be here.
void check_result_sizes(const OpCall& call, const OutputMeta& meta) {
  if (call.op.has(OpFlags::view)) return;  // shares its argument's storage
  for (std::size_t i = 0; i < meta.outputs.size(); ++i) {
    const std::optional<std::uint64_t> bytes = detail::data_bytes(meta.outputs[i]);
    if (!bytes || *bytes > max_tensor_bytes()) [[unlikely]] {
      const Shape& shape = meta.outputs[i].shape;
      if (!bytes && shape.is_rank_known() && !shape.is_fully_known()) continue;  // Note [Data-dependent sizes]
      throw_op_error(call.op.name(), call.where, "its result{} {} needs {}", meta.outputs.size() == 1 ? "" : fmt::format(" {}", i),
                     meta.outputs[i], bytes ? detail::too_large(*bytes) : std::string("more bytes than 64 bits count; give it smaller inputs"));
    }
  }
}

/// An external op's eager call (OpFlags::external): its kernel checks its arguments and makes
/// its result itself. Out of line, so the common path below stays as small as it was.
[[gnu::noinline]] Value run_external(const OpCall& call) { return call.op.kernel(call, OutputMeta{}); }

Value run_kernel(const OpCall& call) {
  if (call.op.has(OpFlags::external)) [[unlikely]]
    return run_external(call);
  const OutputMeta meta = call.op.meta(call);
  check_result_sizes(call, meta);
  Value result = call.op.kernel(call, meta);
  check_outputs(call, meta, result);
  return result;
}

/// An eager op call with observers registered: a `function` event around the kernel.
[[gnu::noinline]] Value run_observed(const OpCall& call) {
  RecordFunctionRun run(call);
  Value result = run_kernel(call);
  if (run.wants_outputs()) {
    run.end(std::span<const Value>(&result, 1));
  } else {
    run.end();
  }
  return result;
}

}  // namespace

bool contains_symbolic(const Value& value) noexcept {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&value.value)) return t->is_symbolic();
  if (value.is_symint() || value.is_symfloat()) return true;
  if (const ValueList* l = boost::variant2::get_if<ValueList>(&value.value))
    for (const Value& v : *l)
      if (contains_symbolic(v)) return true;
  if (const ValueDict* d = boost::variant2::get_if<ValueDict>(&value.value))
    for (const Value& v : d->values)
      if (contains_symbolic(v)) return true;
  return false;
}

bool holds_tensor(const Value& value) noexcept {
  if (value.is_tensor()) return true;
  if (const ValueList* l = boost::variant2::get_if<ValueList>(&value.value))
    for (const Value& v : *l)
      if (holds_tensor(v)) return true;
  if (const ValueDict* d = boost::variant2::get_if<ValueDict>(&value.value))
    for (const Value& v : d->values)
      if (holds_tensor(v)) return true;
  return false;
}

bool holds_dict(const Value& value) noexcept {
  if (value.is_dict()) return true;
  if (const ValueList* l = boost::variant2::get_if<ValueList>(&value.value))
    for (const Value& v : *l)
      if (holds_dict(v)) return true;
  return false;
}

Value dispatch(const OpDef& op, std::span<const Value> args, std::source_location where, CallStyle style) {
  check_arguments(op, args, where);
  const OpCall call{op, args, where, style};
  bool symbolic = false;
  bool refused = false;
  DType held{};
  for (const Value& v : args) {
    if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {  // the common case, inline
      if (const detail::TensorImpl* impl = t->impl_ptr().get()) {
        symbolic = symbolic || impl->ref.trace != 0;
        if (!is_computed(impl->meta.dtype)) [[unlikely]] {
          refused = true;
          held = impl->meta.dtype;
        }
      }
      continue;
    }
    symbolic = symbolic || contains_symbolic(v);
    refused = refused || holds_held_dtype(v, held);
  }
  if (refused && !op.has(OpFlags::external)) [[unlikely]]
    refuse_held_dtype(op, held, where);  // Note [Dtypes symtrace holds]
  Interposer* interposer = current_interposer();
  if (symbolic) {
    if (interposer != nullptr) return interposer->call_op(call);
    throw_trace_error(where,
                      "{}() got a symbolic tensor but no trace is active on this thread: a symbolic tensor "
                      "belongs to its trace and cannot be used after the trace ended or on another thread",
                      op.name());
  }
  if (interposer != nullptr && interposer->sees_concrete_calls()) [[unlikely]] {
    // An op on parameters only (`cls_token.expand(...)`) is part of the model: record it.
    if (reads_intercepted_tensor(args, *interposer)) return interposer->call_op(call);
  }
  if (has_callbacks()) [[unlikely]]
    return run_observed(call);  // Note [Observers off]
  return run_kernel(call);
}

ValueList bind_arguments(const OpDef& op, ValueList args, KeywordValues kwargs, std::source_location where) {
  const auto& specs = op.schema.args;
  std::size_t positional = 0;
  while (positional < specs.size() && !specs[positional].kwarg_only) ++positional;
  if (args.size() > positional)
    throw_op_error(op.name(), where, "takes at most {} positional arguments ({}), got {}", positional,
                   op.schema, args.size());
  std::vector<bool> given(specs.size(), false);
  for (std::size_t i = 0; i < args.size(); ++i) given[i] = true;
  args.resize(specs.size());
  for (auto& [key, value] : kwargs) {
    const auto index = op.schema.find_arg(key);
    if (!index) throw_op_error(op.name(), where, "got an unexpected keyword argument '{}' ({})", key, op.schema);
    if (given[*index]) throw_op_error(op.name(), where, "got argument '{}' twice", key);
    args[*index] = std::move(value);
    given[*index] = true;
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (given[i]) continue;
    if (!specs[i].default_value)
      throw_op_error(op.name(), where, "missing argument '{}' ({})", specs[i].name, op.schema);
    args[i] = *specs[i].default_value;
  }
  return args;
}

Value call(std::string_view name, ValueList args, KeywordValues kwargs, std::source_location where) {
  const OpDef& op = OpRegistry::instance().get(name, where);
  const ValueList bound = bind_arguments(op, std::move(args), std::move(kwargs), where);
  return dispatch(op, bound, where);
}

OutputMeta infer_meta(const OpDef& op, std::span<const Value> args, std::source_location where) {
  check_arguments(op, args, where);
  return op.meta(OpCall{op, args, where, CallStyle::function});
}

}  // namespace symtrace

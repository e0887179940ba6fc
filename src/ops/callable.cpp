// Callables: user functions registered at run time as ops whose meta function and kernel
// forward to the user's std::functions (see ops/callable.hpp). Being ops, they get schema
// binding and type checks, the dispatcher's eager/symbolic split, the tracer's recording and
// the Interpreter's lookup by name for free.
#include "symtrace/ops/callable.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/ops/registry.hpp"

#include <utility>

namespace symtrace {

namespace detail {
struct CallableFns {
  CallableFn fn;
  CallableMetaFn meta;
};
}  // namespace detail

namespace {

OutputMeta callable_meta(const OpCall& call) { return call.op.callable->meta(call); }

Value callable_kernel(const OpCall& call, const OutputMeta&) { return call.op.callable->fn(call); }

}  // namespace

Value Callable::operator()(ValueList args, KeywordValues kwargs, std::source_location where) const {
  const ValueList bound = bind_arguments(*op_, std::move(args), std::move(kwargs), where);
  return dispatch(*op_, bound, where, CallStyle::function);
}

CallableMetaFn Callable::same_as_argument(std::size_t index) {
  return [index](const OpCall& call) {
    if (index >= call.args.size() || !call.arg(index).is_tensor())
      call.fail("its meta function same_as_argument({}) needs a tensor argument {}", index, index);
    const Tensor& t = call.tensor(index);
    return OutputMeta::single(t.dtype(), t.shape());
  };
}

Callable register_callable(std::string_view schema, CallableFn fn, CallableMetaFn meta, OpFlags flags,
                           std::source_location where) {
  OpSchema parsed = [&] {
    try {
      return parse_schema(schema);
    } catch (const std::invalid_argument& e) {
      throw_invalid_argument(where, "register_callable(): {}", e.what());
    }
  }();
  if (!fn || !meta)
    throw_invalid_argument(where, "register_callable('{}'): give both the function and its meta function (the "
                                  "output dtype and shape a trace records)",
                           parsed.name);
  if (parsed.returns_number())
    throw_invalid_argument(where, "register_callable('{}'): a callable returns Tensor or Tensor[], not a number",
                           parsed.name);
  OpDef def{std::move(parsed), &callable_meta, &callable_kernel, flags,
            std::make_shared<const detail::CallableFns>(detail::CallableFns{std::move(fn), std::move(meta)})};
  return Callable(OpRegistry::instance().add_runtime(std::move(def), where));
}

const OpDef& register_op(OpDef def, CallableFn fn, CallableMetaFn meta, std::source_location where) {
  if (!fn || !meta)
    throw_invalid_argument(where, "register_op('{}'): give both the function and its meta function", def.name());
  def.meta = &callable_meta;
  def.kernel = &callable_kernel;
  def.callable = std::make_shared<const detail::CallableFns>(detail::CallableFns{std::move(fn), std::move(meta)});
  return OpRegistry::instance().add_runtime(std::move(def), where);
}

}  // namespace symtrace

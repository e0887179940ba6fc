// Tracer: records ops, module calls and parameter reads of a forward run on symbolic tensors.
// Its inputs (input_spec.cpp), its results' metadata (result_meta.cpp), what it records for
// tensors of unknown rank (unknown_rank.cpp) and conds (cond_recording.cpp) have files of their
// own.
//
// Note [A refused call leaves the graph unchanged]: an op or leaf call whose arguments
// cannot be recorded (a symbolic tensor of another trace, an undefined tensor) throws before
// any node is made for it: arguments are checked in a first pass, and only then turned into
// nodes (get_attr nodes for parameters and constants).
#include "symtrace/trace/tracer.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/stack_guard.hpp"
#include "symtrace/core/value_name.hpp"
#include "symtrace/graph/input_path.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/trace/tracing_state.hpp"
#include "symtrace/trace/detail/result_meta.hpp"
#include "symtrace/trace/detail/tracing_scopes.hpp"
#include "symtrace/trace/detail/value_argument.hpp"
#include "input_matching.hpp"
#include "recordable.hpp"
#include "unknown_rank.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace symtrace {

void detail::check_tensor(const TracingState& state, const Tensor& t, std::source_location where) {
  if (!t.defined()) throw_invalid_argument(where, "an undefined Tensor (default-constructed) cannot be traced");
  if (t.is_symbolic() && !state.accepts(t.symbolic_ref())) {
    throw_trace_error(where,
                      "a symbolic tensor of another trace was used: it belongs to a trace that ended, an "
                      "enclosing trace, another thread's trace, a leaf module's run for its output "
                      "shapes, or the code around a cond() branch; use only tensors made by this forward "
                      "and the calls it makes (a cond() branch gets its tensors through operands)");
  }
}

void detail::check_recordable(const TracingState& state, const Value& value, std::source_location where) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&value.value)) {
    check_tensor(state, *t, where);
  } else if (const SymInt* s = boost::variant2::get_if<SymInt>(&value.value)) {
    check_tensor(state, s->proxy(), where);
  } else if (const SymFloat* f = boost::variant2::get_if<SymFloat>(&value.value)) {
    check_tensor(state, f->proxy(), where);
  } else if (const ValueList* list = boost::variant2::get_if<ValueList>(&value.value)) {
    for (const Value& v : *list) check_recordable(state, v, where);
  } else if (const ValueDict* dict = boost::variant2::get_if<ValueDict>(&value.value)) {
    check_dict_keys(*dict, where);
    for (const Value& v : dict->values) check_recordable(state, v, where);
  } else if (value.is_opaque() && !state.meta_only()) [[unlikely]] {
    // A side run records nothing: there another library's op may take the object.
    throw_opaque_not_recordable(value.type_name(), where);
  }
}

Tracer::~Tracer() = default;

// throw_not_tracing is in a frame of its own: state() is inlined on the per-level path.
[[gnu::noinline, gnu::cold]] void Tracer::throw_not_tracing() {
  throw InternalError("internal error: a Tracer hook was called while it is not tracing");
}

TracingState* Tracer::state_behind_interposers() const noexcept {
  // Note [The active trace] in tracing_state.cpp: the innermost trace of the thread, if it is ours.
  TracingState* innermost = TracingState::current();
  return innermost != nullptr && &innermost->tracer() == this ? innermost : nullptr;
}

Value Tracer::call_op(const OpCall& call) { return record_op(call); }

bool Tracer::intercepts(const Tensor& tensor) const {
  const TracingState* state = innermost_state();
  return state != nullptr && tensor.is_concrete() && state->tensor_path_of(tensor.impl_ptr().get()) != nullptr;
}

void Tracer::assume(const SymFact& fact, std::source_location where) {
  const TracingState* state = innermost_state();
  if (state == nullptr) return Interposer::assume(fact, where);
  state->graph().add_size_guard(fact, where);
}

bool Tracer::locate(detail::TraceLocation& location) const {
  const TracingState* state = innermost_state();
  if (state == nullptr) return Interposer::locate(location);
  location.path = std::string(state->frame().path);
  location.type = state->frame().module->type_name();
  location.user_site = state->user_site();
  return true;
}

Graph Tracer::trace(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                    std::source_location where) {
  if (is_tracing()) {
    throw_invalid_argument(where, "this Tracer is already running a trace; use another Tracer for a trace inside a trace");
  }
  return trace_graph(root, inputs, concrete_args, where);
}

Graph Tracer::trace_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                          std::source_location where) {
  return record_graph(root, inputs, concrete_args, where);
}

Graph Tracer::record_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                           std::source_location where) {
  const detail::GivenInputs given_inputs = detail::match_inputs(root, inputs, concrete_args, where);
  const std::vector<std::string>& names = given_inputs.names;
  const std::size_t given = given_inputs.count;
  auto concrete_value = [&](std::string_view name) { return detail::concrete_arg(concrete_args, name); };

  Graph graph;
  {
    TracingState state(*this, graph, root, module_index(root), where);
    detail::TraceScope scope(state);
    // The placeholders first, then what reads them (a list input's getitems), as in fx.
    std::vector<Node*> placeholders;
    placeholders.reserve(given);
    for (std::size_t i = 0; i < given; ++i) placeholders.push_back(&create_node(OpKind::placeholder, names[i], {}, {}, where));
    // What forward gets for a spec read from `node`: a proxy for a tensor or an int; for a list
    // or dict, one `getitem` node per traced part (in pre-order) and its constants as they are,
    // each a guard named by its path in the input ("images.image_sizes", "xs[1]").
    const auto input_value = [&](const auto& self, Node& node, const InputSpec& spec, const std::string& path) -> Value {
      if (spec.is_int) return wrap_result(node, OutputMeta::number(DType::int64), where);
      if (spec.is_tensor()) return proxy(node, TensorMeta{spec.dtype, spec.shape});
      const auto part = [&](std::size_t i, const Argument& at, std::string part_path) -> Value {
        const InputSpec& e = spec.elements[i];
        if (e.is_constant) {
          graph.add_guard(std::move(part_path), create_arg(e.value, where));
          return e.value;
        }
        Node& item = create_node(OpKind::call_function, "getitem", {node, at}, {}, where);
        return self(self, item, e, part_path);
      };
      if (spec.is_list) {
        ValueList items;
        items.reserve(spec.elements.size());
        for (std::size_t i = 0; i < spec.elements.size(); ++i)
          items.push_back(part(i, Argument(static_cast<std::int64_t>(i)), append_index(path, i)));
        return items;
      }
      ValueDict items;
      items.keys.reserve(spec.elements.size());
      items.values.reserve(spec.elements.size());
      for (std::size_t i = 0; i < spec.elements.size(); ++i) {
        items.keys.emplace_back(spec.keys[i]);
        items.values.push_back(part(i, Argument(spec.keys[i]), append_key(path, spec.keys[i])));
      }
      return items;
    };
    ValueList args;
    args.reserve(given);
    std::size_t next_spec = 0;
    for (std::size_t i = 0; i < given; ++i) {
      Node& placeholder = *placeholders[i];
      if (const Value* value = concrete_value(names[i])) {
        graph.add_guard(names[i], create_arg(*value, where));
        args.push_back(*value);
      } else {
        const InputSpec& spec = inputs[next_spec++];
        if (spec.is_constant) {
          // A constant input (None for an optional one): as a concrete arg, a guard.
          graph.add_guard(names[i], create_arg(spec.value, where));
          args.push_back(spec.value);
          continue;
        }
        if (spec.is_list || spec.is_dict) placeholder.set_meta(meta_keys::structure, input_structure(spec));
        args.push_back(input_value(input_value, placeholder, spec, names[i]));
      }
    }
    Value result = trace_root(root, args, where);
    detail::check_recordable(state, result, where);
    graph.output(create_arg(result, where), where);
  }
  return graph;
}

Graph Tracer::record_leaf_graph(Module& root, const std::vector<InputSpec>* inputs, const OutputMeta* result,
                                std::source_location where) {
  const std::vector<std::string> names = root.input_names();
  if (inputs != nullptr && inputs->size() > names.size()) {
    throw_invalid_argument(where, "{}.forward takes {} inputs ({}), got {} input specs", root.type_name(), names.size(),
                           fmt::join(names, ", "), inputs->size());
  }
  Graph graph;
  {
    TracingState state(*this, graph, root, nullptr, where);
    detail::TraceScope scope(state);
    const std::size_t count = inputs != nullptr ? inputs->size() : names.size();
    Arguments args;
    args.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      Node& placeholder = create_node(OpKind::placeholder, names[i], {}, {}, where);
      if (inputs != nullptr && (*inputs)[i].is_tensor())
        placeholder.set_tensor_meta(TensorMeta{(*inputs)[i].dtype, (*inputs)[i].shape});
      args.emplace_back(placeholder);
    }
    Node& call = create_node(OpKind::call_module, "", std::move(args), {}, where);
    if (result == nullptr) {
      graph.output(Argument(call), where);
    } else {
      graph.output(create_arg(wrap_result(call, *result, where), where), where);
    }
  }
  return graph;
}

std::shared_ptr<const ModuleIndex> Tracer::module_index(const Module&) const { return nullptr; }

Value Tracer::trace_root(Module& root, const ValueList& args, std::source_location) {
  return root.forward_values(args);
}

const Tracer::LeafMetaFn* Tracer::leaf_meta_fn(const Module& module) const {
  if (leaves_.empty()) return nullptr;  // hashing a type hashes its name: skip it when nothing is registered
  auto it = leaves_.find(typeid(module));
  return it != leaves_.end() && it->second ? &it->second : nullptr;
}

bool Tracer::is_leaf_module(const Module& module, std::string_view) const {
  return module.is_leaf_by_default() || is_registered_leaf(module);
}

namespace {

/// A path of many components with its middle left out, "a.b.c.<9,994 more>.y.z": a message
/// about a module 10,000 deep would otherwise hold 10,000 names.
std::string abbreviated_path(std::string_view path) {
  constexpr std::size_t head = 3, tail = 2;
  const auto components = static_cast<std::size_t>(std::count(path.begin(), path.end(), '.')) + 1;
  if (path.empty() || components <= head + tail + 1) return std::string(path);
  std::size_t first_end = 0;
  for (std::size_t i = 0; i < head; ++i) first_end = path.find('.', first_end) + 1;
  std::size_t last_begin = path.size();
  for (std::size_t i = 0; i < tail; ++i) last_begin = path.rfind('.', last_begin - 1);
  return fmt::format("{}<{} more>{}", path.substr(0, first_end), components - head - tail, path.substr(last_begin));
}

/// Note [Stack guard]: a call of `callee` the thread's stack cannot hold.
[[noreturn, gnu::noinline, gnu::cold]] void throw_stack_depth_error(const TracingState& state, const Module& callee,
                                                                    std::source_location where) {
  // The depth in the model: the caller's path has a component per module below the root.
  const TracingState::Frame& frame = state.frame();
  const std::size_t depth =
      frame.path.empty() ? 1 : static_cast<std::size_t>(std::count(frame.path.begin(), frame.path.end(), '.')) + 2;
  const std::string in = frame.path.empty() ? fmt::format("the root module ({})", frame.module->type_name())
                                            : fmt::format("'{}' ({})", abbreviated_path(frame.path), frame.module->type_name());
  throw StackDepthError(fmt::format("{}:{}: a call of {} nested {} modules deep in {}: {}", where.file_name(), where.line(),
                                    callee.type_name(), depth + 1, in, detail::stack_depth_advice()),
                        depth);
}

/// A call of a module the trace cannot name; cold, in a frame of its own (Note [Small frames
/// per level] in src/robust/robust_tracer.cpp).
[[noreturn, gnu::noinline, gnu::cold]] void throw_not_a_submodule(const Module& module, std::source_location where) {
  throw_trace_error(where,
                    "a {} that is not a submodule of the traced model was called: the graph could not name "
                    "it; register it with register_module so it has a path",
                    module.type_name());
}

}  // namespace

Value Tracer::call_module(Module& module, const ValueList& args, std::source_location where) {
  TracingState& st = state();
  if (detail::stack_may_be_low() && detail::stack_exhausted()) [[unlikely]]
    throw_stack_depth_error(st, module, where);
  const std::string* path = st.path_of(module);
  if (path == nullptr) throw_not_a_submodule(module, where);
  if (is_leaf_module(module, *path)) return record_leaf(module, *path, args, where);
  detail::FrameScope frame(st, module, *path, where);
  return module.forward_values(args);
}

namespace {

/// The output metadata of a leaf's result, checked before any node is made (see Note [A
/// refused call leaves the graph unchanged]).
OutputMeta meta_of_result(const Value& result, const std::string& path, const Module& module,
                          std::source_location where) {
  OutputMeta meta;
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&result.value)) {
    meta.outputs.push_back(t->meta());
    return meta;
  }
  if (const ValueList* list = boost::variant2::get_if<ValueList>(&result.value)) {
    meta.is_list = true;
    for (const Value& v : *list) {
      const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      if (t == nullptr || !t->defined()) break;
      meta.outputs.push_back(t->meta());
    }
    if (meta.outputs.size() == list->size()) return meta;
    // Nested lists and None (`(out, (h_n, c_n))`, `(out, None)`): getitems of getitems.
    meta.outputs.clear();
    if (detail::flatten_result(result, meta)) return meta;
  }
  if (result.is_dict() || result.is_none()) {  // getitems by key; or None, as a traced Identity whose output
    meta.is_list = true;                       // nobody used returns
    if (detail::flatten_result(result, meta)) return meta;
  }
  throw_trace_error(where,
                    "the leaf '{}' ({}) returned {}: only tensors, None, and lists and str-keyed dicts of them can flow out of a "
                    "call_module node; trace into the module instead of making it a leaf",
                    path, module.type_name(), result.type_name());
}

}  // namespace

Value Tracer::record_leaf(Module& module, const std::string& path, const ValueList& args, std::source_location where) {
  TracingState& st = state();
  for (const Value& a : args) detail::check_recordable(st, a, where);
  const OutputMeta meta = [&] {
    const detail::PathHold hold(st);  // `path` stays valid whatever the metadata function calls
    return leaf_result_meta(module, path, args, where);
  }();
  if (st.meta_only()) return meta_result(meta, where);  // a leaf inside another leaf's side run
  Arguments node_args;
  node_args.reserve(args.size());
  for (const Value& a : args) node_args.push_back(create_arg(a, where));
  return create_proxy(OpKind::call_module, path, std::move(node_args), {}, meta, where);
}

std::optional<TensorMeta> Tracer::layer_result_meta(const Module& module, const ValueList& args) {
  if (!module.is_builtin_layer()) return std::nullopt;
  return module.layer_output_meta(args);
}

OutputMeta Tracer::leaf_result_meta(Module& module, const std::string& path, const ValueList& args,
                                    std::source_location where) {
  // Note [Unknown in, unknown out]; a LeafMetaFn would read dims that do not exist.
  if (detail::has_unknown_rank(args)) return unknown_result(module, args, path, where);
  if (const LeafMetaFn* registered = leaf_meta_fn(module)) return (*registered)(module, args);
  if (std::optional<TensorMeta> meta = layer_result_meta(module, args)) return OutputMeta::single(std::move(*meta));
  // Run the forward in a side run of its own: ops compute metadata and record nothing, and
  // tensors it leaves behind cannot be used later.
  TracingState& st = state();
  Value result;
  try {
    detail::SideRun side(st);
    detail::FrameScope frame(st, module, path, where);
    result = module.forward_values(args);
  } catch (const TraceError& e) {
    // Located where the leaf's own code failed (its caller's line is in the message's frame).
    const std::source_location at = e.where().line() != 0 ? e.where() : where;
    try {
      throw_trace_error(at,
                        "the output shapes of the leaf '{}' ({}) cannot be found by running its forward "
                        "symbolically: give register_leaf a LeafMetaFn for {}; the run failed with: {}",
                        path, module.type_name(), module.type_name(), e.what());
    } catch (const TraceError& made) {
      throw LeafForwardError(made.what(), made.where(), made.module_path());
    }
  }
  return meta_of_result(result, path, module, where);
}

Value Tracer::create_proxy(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                           const OutputMeta& meta, std::source_location where) {
  Node& node = create_node(op, target, std::move(args), std::move(kwargs), where);
  return wrap_result(node, meta, where);
}

Node& Tracer::create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                          std::source_location where) {
  TracingState& st = state();
  // The model's variable name for an op's value (record_op), else fx's name after the target.
  const std::string_view name =
      op == OpKind::call_function || op == OpKind::call_method ? std::exchange(pending_name_, {}) : std::string_view();
  Node& node = st.graph().create_node(op, target, std::move(args), std::move(kwargs), name, where);
  if (!st.frame().path.empty()) node.set_scope(st.frame_scope());  // O(1) once the frame's scope is known
  return node;
}

Argument Tracer::create_arg(const Value& value, std::source_location where) {
  // What a symbolic trace makes of tensors (detail::to_argument does the rest): a symbolic one
  // is its node, a concrete one a get_attr node; list and dict items come here again (the hook).
  struct Maker {
    Tracer& tracer;
    TracingState& st;
    std::source_location where;
    Argument tensor(const Tensor& t) const {
      detail::check_tensor(st, t, where);  // no Value copy on the per-argument path
      if (t.is_symbolic()) return Argument(NodeId(t.symbolic_ref().node));
      if (const std::string* path = st.tensor_path_of(t.impl_ptr().get())) return tracer.getattr(*path, t, where);
      // Any other concrete tensor (made in forward, or held without registration) is kept by
      // the graph as a constant, as fx keeps `_tensor_constant0`.
      Node& node = tracer.create_node(OpKind::get_attr, st.graph().add_constant(t), {}, {}, where);
      node.set_tensor_meta(t.meta());
      return Argument(node);
    }
    Argument sym_int(const SymInt& s) const {
      detail::check_tensor(st, s.proxy(), where);
      return Argument(NodeId(s.proxy().symbolic_ref().node));
    }
    Argument sym_float(const SymFloat& s) const {
      detail::check_tensor(st, s.proxy(), where);
      return Argument(NodeId(s.proxy().symbolic_ref().node));
    }
    Argument item(const Value& v) const { return tracer.create_arg(v, where); }
    Argument dict(KeywordArguments items) const {
      return Argument(tracer.create_node(OpKind::call_function, "dict", {}, std::move(items), where));
    }
  };
  Maker maker{*this, state(), where};
  return detail::to_argument(value, where, maker);
}

Argument Tracer::getattr(std::string_view qualified_name, const Tensor& tensor, std::source_location where) {
  Node& node = create_node(OpKind::get_attr, qualified_name, {}, {}, where);
  node.set_tensor_meta(tensor.meta());
  return Argument(node);
}

namespace {

// Note [In-place writes into untraced tensors]: an in-place op whose target is a concrete
// tensor the module does not own (made in forward from known sizes, `torch.zeros(4)`), with a
// traced value written into it, cannot be recorded: the graph would keep the tensor as a
// constant, and every later read of it (a use of the variable, not of the op's result) would
// read that constant. A TraceError says so, before anything is recorded.
void check_inplace_target(const TracingState& st, const OpCall& call) {
  const Tensor* target = call.args.empty() ? nullptr : boost::variant2::get_if<Tensor>(&call.args[0].value);
  if (target == nullptr || !target->defined() || target->is_symbolic()) return;
  if (st.tensor_path_of(target->impl_ptr().get()) != nullptr) return;  // a parameter or buffer: a get_attr
  throw_trace_error(call.where,
                    "{}() writes a traced value into a tensor the trace does not follow (made in forward from "
                    "known sizes, such as zeros({{4}})): later reads of it would see a constant; make it from a "
                    "traced tensor (x.new_zeros(...), zeros_like(x)) or compute out of place",
                    call.op.name());
}

}  // namespace

Value Tracer::record_op(const OpCall& call) {
  TracingState& st = state();
  // The name is this call's: taken now, so that no other node (nor an op its meta function
  // runs) takes it.
  const std::string_view name = std::exchange(detail::t_value_name, {});
  for (const Value& a : call.args) detail::check_recordable(st, a, call.where);
  // In a side run nothing is recorded, so nothing can read a stale constant.
  if (call.op.has(OpFlags::inplace) && !st.meta_only()) [[unlikely]]
    check_inplace_target(st, call);
  OutputMeta meta = detail::has_unknown_rank(call.args) && !call.op.has(OpFlags::unknown_rank)
                        ? detail::unknown_rank_meta(call)
                        : call.op.meta(call);
  // A number the meta function knows (`numel()` of a tensor of known sizes, a TorchScript
  // `aten::size` of a known dim) is that number, as `Tensor::size` gives it: not a node.
  if (meta.is_number && meta.number_value.is_known()) [[unlikely]] {
    const std::int64_t v = meta.number_value.value();
    switch (meta.outputs.at(0).dtype) {
      case DType::bool_: return v != 0;
      case DType::float32: return static_cast<double>(v) / static_cast<double>(meta.number_denominator);  // exact
      default: return v;
    }
  }
  if (st.meta_only()) return meta_result(meta, call.where);
  Arguments args;
  args.reserve(call.args.size());
  KeywordArguments kwargs;
  const auto& specs = call.op.schema.args;
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    // Keyword-only arguments (after `*` in the schema) are kwargs, as the op must be called.
    if (specs[i].kwarg_only) [[unlikely]]
      kwargs.emplace_back(specs[i].name, create_arg(call.args[i], call.where));
    else
      args.push_back(create_arg(call.args[i], call.where));
  }
  OpKind kind = call.style == CallStyle::method ? OpKind::call_method : OpKind::call_function;
  const detail::SaveAndRestore<std::string_view> for_this_node(pending_name_, name);  // and for no later node
  return create_proxy(kind, call.op.name(), std::move(args), std::move(kwargs), meta, call.where);
}

void Tracer::register_leaf(std::type_index type, LeafMetaFn meta) { leaves_.insert_or_assign(type, std::move(meta)); }
void Tracer::unregister_leaf(std::type_index type) { leaves_.erase(type); }
bool Tracer::is_registered_leaf(std::type_index type) const { return leaves_.contains(type); }
bool Tracer::is_registered_leaf(const Module& module) const {
  return !leaves_.empty() && leaves_.contains(typeid(module));
}

Graph symbolic_trace(Module& module, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                     std::source_location where) {
  Tracer tracer;
  return tracer.trace(module, inputs, concrete_args, where);
}

}  // namespace symtrace

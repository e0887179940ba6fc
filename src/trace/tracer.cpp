// Tracer: records ops, module calls and parameter reads of a forward run on symbolic tensors.
//
// Note [A refused call leaves the graph unchanged]: an op or leaf call whose arguments
// cannot be recorded (a symbolic tensor of another trace, an undefined tensor) throws before
// any node is made for it: arguments are checked in a first pass, and only then turned into
// nodes (get_attr nodes for parameters and constants).
#include "symtrace/trace/tracer.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/stack_guard.hpp"
#include "symtrace/graph/input_path.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/trace/tracing_state.hpp"
#include "symtrace/trace/detail/result_meta.hpp"
#include "symtrace/trace/detail/tracing_scopes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>

namespace symtrace {

namespace {

/// True when an argument is (or a list holds) a tensor of unknown rank.
bool has_unknown_rank(std::span<const Value> args) noexcept {
  for (const Value& v : args) {
    if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
      if (t->defined() && !t->impl_ptr()->meta.shape.is_rank_known()) return true;
    } else if (const ValueList* list = boost::variant2::get_if<ValueList>(&v.value)) {
      if (has_unknown_rank(*list)) return true;
    }
  }
  return false;
}

/// Checks that tensor `t` can become a node argument in `state`.
void check_tensor(const TracingState& state, const Tensor& t, std::source_location where) {
  if (!t.defined()) throw_invalid_argument(where, "an undefined Tensor (default-constructed) cannot be traced");
  if (t.is_symbolic() && !state.accepts(t.symbolic_ref())) {
    throw_trace_error(where,
                      "a symbolic tensor of another trace was used: it belongs to a trace that ended, an "
                      "enclosing trace, another thread's trace, a leaf module's run for its output "
                      "shapes, or the code around a cond() branch; use only tensors made by this forward "
                      "and the calls it makes (a cond() branch gets its tensors through operands)");
  }
}

/// Checks that `value` can become a node argument in `state` without making anything (see
/// Note [A refused call leaves the graph unchanged]).
void check_recordable(const TracingState& state, const Value& value, std::source_location where) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&value.value)) {
    check_tensor(state, *t, where);
  } else if (const SymInt* s = boost::variant2::get_if<SymInt>(&value.value)) {
    check_tensor(state, s->proxy(), where);
  } else if (const ValueList* list = boost::variant2::get_if<ValueList>(&value.value)) {
    for (const Value& v : *list) check_recordable(state, v, where);
  } else if (const ValueDict* dict = boost::variant2::get_if<ValueDict>(&value.value)) {
    for (const Value& k : dict->keys) {
      if (!k.is_string())
        throw_trace_error(where, "a dict whose keys are {} values cannot be recorded in a graph: only dicts with "
                                 "str keys can (they become `dict` nodes)",
                          k.type_name());
    }
    for (const Value& v : dict->values) check_recordable(state, v, where);
  }
}

}  // namespace

InputSpec::InputSpec(const Tensor& example) : dtype(example.dtype()), shape(example.shape()) {}

InputSpec InputSpec::list(std::vector<InputSpec> elements) {
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].is_int)
      throw std::invalid_argument(fmt::format("InputSpec::list: element {} is a symbolic int, which a list input cannot "
                                              "hold; give it as a constant (InputSpec::constant)",
                                              i));
  }
  InputSpec spec(Shape{});
  spec.is_list = true;
  spec.elements = std::move(elements);
  return spec;
}

InputSpec InputSpec::dict(std::vector<std::pair<std::string, InputSpec>> items) {
  InputSpec spec(Shape{});
  spec.is_dict = true;
  spec.keys.reserve(items.size());
  spec.elements.reserve(items.size());
  for (auto& [key, element] : items) {
    if (std::find(spec.keys.begin(), spec.keys.end(), key) != spec.keys.end())
      throw std::invalid_argument(fmt::format("InputSpec::dict: key '{}' is given twice; give each key once", key));
    if (element.is_int)
      throw std::invalid_argument(fmt::format("InputSpec::dict: the value of '{}' is a symbolic int, which a dict input "
                                              "cannot hold; give it as a constant (InputSpec::constant)",
                                              key));
    spec.keys.push_back(std::move(key));
    spec.elements.push_back(std::move(element));
  }
  return spec;
}

InputSpec InputSpec::constant(Value value) {
  if (holds_tensor(value) || contains_symbolic(value))
    throw std::invalid_argument(fmt::format("InputSpec::constant: {} holds a tensor or a symbolic value; a constant "
                                            "is a value forward gets as it is (give tensors their own specs)",
                                            value));
  if (holds_dict(value))
    throw std::invalid_argument(fmt::format("InputSpec::constant: {} holds a dict; describe a dict with "
                                            "InputSpec::dict (its values may be constants)",
                                            value));
  InputSpec spec(Shape{});
  spec.is_constant = true;
  spec.value = std::move(value);
  return spec;
}

namespace {
// The spec of a part of a structured input: a tensor's, a list's or dict's that holds tensors or
// dicts, else a constant; nullopt when it cannot be described.
std::optional<InputSpec> part_spec(const Value& v) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    if (!t->defined()) return std::nullopt;
    return InputSpec(*t);
  }
  if (v.is_list() && (holds_tensor(v) || holds_dict(v))) {
    std::vector<InputSpec> elements;
    elements.reserve(v.to_list().size());
    for (const Value& e : v.to_list()) {
      std::optional<InputSpec> spec = part_spec(e);
      if (!spec) return std::nullopt;
      elements.push_back(std::move(*spec));
    }
    return InputSpec::list(std::move(elements));
  }
  if (v.is_dict()) {
    const ValueDict& d = v.to_dict();
    std::vector<std::pair<std::string, InputSpec>> items;
    items.reserve(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (!d.keys[i].is_string()) return std::nullopt;
      std::optional<InputSpec> spec = part_spec(d.values[i]);
      if (!spec) return std::nullopt;
      items.emplace_back(d.keys[i].to_string_ref(), std::move(*spec));
    }
    return InputSpec::dict(std::move(items));
  }
  if (contains_symbolic(v)) return std::nullopt;
  return InputSpec::constant(v);
}
}  // namespace

std::optional<InputSpec> InputSpec::of(const Value& value) {
  if (!holds_tensor(value)) return std::nullopt;  // a value: concrete_args, not a spec
  return part_spec(value);
}

Argument input_structure(const InputSpec& spec) {
  if (spec.is_constant) return Argument(std::string("const"));
  if (spec.is_list || spec.is_dict) {
    ArgumentList parts{Argument(std::string(spec.is_list ? "list" : "dict"))};
    parts.reserve(spec.elements.size() + 1);
    for (std::size_t i = 0; i < spec.elements.size(); ++i) {
      if (spec.is_list) parts.push_back(input_structure(spec.elements[i]));
      else parts.emplace_back(ArgumentList{Argument(spec.keys[i]), input_structure(spec.elements[i])});
    }
    return Argument(std::move(parts));
  }
  if (spec.is_int) return Argument(std::string("int"));
  ArgumentList sizes;
  if (spec.shape.is_rank_known()) {
    for (Dim d : spec.shape) sizes.push_back(d.is_known() ? Argument(d.raw()) : Argument());
  }
  return Argument(ArgumentList{Argument(std::string("tensor")), Argument(spec.dtype),
                               spec.shape.is_rank_known() ? Argument(std::move(sizes)) : Argument()});
}

namespace {
// The named dims of `spec`'s shapes, with their ranges.
void collect_dims(const InputSpec& spec, std::vector<std::pair<std::string, SymRange>>& out) {
  for (const InputSpec& e : spec.elements) collect_dims(e, out);
  if (!spec.shape.is_rank_known()) return;
  for (Dim d : spec.shape)
    if (d.is_symbolic())
      for (auto& r : d.expr()->symbol_ranges()) out.push_back(std::move(r));
}

// A name is one dim: `N` in 1..8 in one input and `N` in 1.. in another would print alike and
// be two dims.
void check_dim_names(const std::vector<InputSpec>& inputs, std::source_location where) {
  std::vector<std::pair<std::string, SymRange>> dims;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::size_t before = dims.size();
    collect_dims(inputs[i], dims);
    // The interpreter binds named dims from tensor inputs; the parts of a list or dict are
    // checked by their structure, which holds sizes only.
    if ((inputs[i].is_list || inputs[i].is_dict) && dims.size() != before)
      throw_invalid_argument(where, "input {} ({}) is a list or dict whose tensors have named dims, which only a "
                                    "tensor input may have; give its sizes as numbers or ? (Dim::unknown())",
                             i, to_string(inputs[i]));
  }
  std::sort(dims.begin(), dims.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < dims.size(); ++i) {
    if (dims[i].first == dims[i - 1].first && dims[i].second != dims[i - 1].second)
      throw_invalid_argument(where, "the inputs name two dims '{}', with the ranges {} and {}; give a name one range",
                             dims[i].first, to_string(dims[i - 1].second), to_string(dims[i].second));
  }
}
}  // namespace

std::string to_string(const InputSpec& spec) {
  if (spec.is_int) return "int";
  if (spec.is_constant) return to_string(spec.value);
  if (spec.is_list) {
    std::string out = "[";
    for (std::size_t i = 0; i < spec.elements.size(); ++i) out += (i ? ", " : "") + to_string(spec.elements[i]);
    return out + "]";
  }
  if (spec.is_dict) {
    std::string out = "{";
    for (std::size_t i = 0; i < spec.elements.size(); ++i)
      out += fmt::format("{}'{}': {}", i ? ", " : "", spec.keys[i], to_string(spec.elements[i]));
    return out + "}";
  }
  return fmt::format("{}{}", spec.dtype, spec.shape);
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

Value Tracer::call_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                        const TensorList& operands, std::source_location where) {
  return record_cond(pred, then_fn, else_fn, operands, where);
}

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
  const ForwardSignature* signature = root.forward_signature();
  if (signature == nullptr) {
    throw_invalid_argument(where, "{} cannot be traced as a whole: it has no forward (trace its elements instead)",
                           root.type_name());
  }
  check_dim_names(inputs, where);
  std::vector<std::string> names = root.input_names();
  for (std::size_t i = 0; i < concrete_args.size(); ++i) {
    const auto& [name, value] = concrete_args[i];
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw_invalid_argument(where, "concrete_args names '{}', which is not an input of {}.forward (its inputs are {})",
                             name, root.type_name(), fmt::join(names, ", "));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (concrete_args[j].first == name) throw_invalid_argument(where, "concrete_args gives '{}' twice; give it once", name);
    }
    if (contains_symbolic(value) || value.is_tensor() ||
        (value.is_list() && std::any_of(value.to_list().begin(), value.to_list().end(),
                                        [](const Value& v) { return v.is_tensor(); })) ||
        (value.is_dict() && std::any_of(value.to_dict().values.begin(), value.to_dict().values.end(),
                                        [](const Value& v) { return v.is_tensor(); }))) {
      throw_invalid_argument(where, "concrete_args '{}' is a tensor: pass tensors as inputs (InputSpec) instead", name);
    }
  }
  auto concrete_value = [&](std::string_view name) -> const Value* {
    for (const auto& [n, v] : concrete_args) {
      if (n == name) return &v;
    }
    return nullptr;
  };
  // Which declared inputs are given: concrete ones, then specs in order; trailing optional
  // inputs may be left out.
  std::size_t given = 0;
  std::size_t specs = 0;
  while (given < names.size() && (concrete_value(names[given]) != nullptr || specs < inputs.size())) {
    if (concrete_value(names[given]) == nullptr) {
      const ForwardParameter& parameter = signature->parameters[given];
      const bool takes_int = parameter.type == ParamType::sym_int || parameter.type == ParamType::any;
      const bool takes_tensor = parameter.type == ParamType::tensor || parameter.type == ParamType::any;
      const bool takes_list = parameter.type == ParamType::tensor_list || parameter.type == ParamType::any;
      if (inputs[specs].is_list && parameter.type == ParamType::tensor_list) {
        for (std::size_t e = 0; e < inputs[specs].elements.size(); ++e) {
          if (!inputs[specs].elements[e].is_tensor())
            throw_invalid_argument(where, "{}.forward's input '{}' is List[Tensor], but element {} of its spec is {}: give "
                                          "a list of tensor specs",
                                   root.type_name(), names[given], e, to_string(inputs[specs].elements[e]));
        }
      }
      if (inputs[specs].is_list && !takes_list) {
        throw_invalid_argument(where, "{}.forward's input '{}' is {}, not a list of tensors: give it an InputSpec of a "
                                      "tensor, not InputSpec::list",
                               root.type_name(), names[given], parameter.type_name);
      }
      if (inputs[specs].is_dict && parameter.type != ParamType::any) {
        throw_invalid_argument(where, "{}.forward's input '{}' is {}, not a dict or an object: give it an InputSpec of "
                                      "its type, not InputSpec::dict",
                               root.type_name(), names[given], parameter.type_name);
      }
      if (inputs[specs].is_constant) {
        throw_invalid_argument(where, "{}.forward's input '{}' is given as the constant {}: give it in concrete_args "
                                      "(a constant is a part of a list or dict input)",
                               root.type_name(), names[given], inputs[specs].value);
      }
      if (inputs[specs].is_int && !takes_int) {
        throw_invalid_argument(where,
                               "{}.forward's input '{}' is {}, not a SymInt: a symbolic integer (InputSpec::symbolic_int()) "
                               "needs a SymInt parameter; give it a value in concrete_args",
                               root.type_name(), names[given], parameter.type_name);
      }
      if (inputs[specs].is_tensor() && !takes_tensor) {
        throw_invalid_argument(where,
                               "{}.forward's input '{}' is {}, not a Tensor: give it a value in concrete_args{}",
                               root.type_name(), names[given], parameter.type_name,
                               parameter.type == ParamType::sym_int ? " or an InputSpec::symbolic_int()" : "");
      }
      ++specs;
    }
    ++given;
  }
  if (given < signature->num_required && signature->parameters[given].type != ParamType::tensor &&
      signature->parameters[given].type != ParamType::any && signature->parameters[given].type != ParamType::sym_int) {
    throw_invalid_argument(where, "{}.forward's input '{}' is {}, not a Tensor: give it a value in concrete_args",
                           root.type_name(), names[given], signature->parameters[given].type_name);
  }
  if (given < signature->num_required || specs < inputs.size()) {
    throw_invalid_argument(where,
                           "{}.forward takes {} inputs ({}), got {} input specs and {} concrete_args; give one "
                           "InputSpec or example tensor per input not in concrete_args",
                           root.type_name(),
                           signature->num_required == names.size()
                               ? fmt::format("{}", names.size())
                               : fmt::format("{} to {}", signature->num_required, names.size()),
                           fmt::join(names, ", "), inputs.size(), concrete_args.size());
  }

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
        if (spec.is_list || spec.is_dict) placeholder.set_meta(meta_keys::structure, input_structure(spec));
        args.push_back(input_value(input_value, placeholder, spec, names[i]));
      }
    }
    Value result = trace_root(root, args, where);
    check_recordable(state, result, where);
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

bool Tracer::any_unknown_rank(const ValueList& args) noexcept { return has_unknown_rank(args); }

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
  if (detail::stack_may_be_low() && detail::stack_exhausted()) [[unlikely]] throw_stack_depth_error(st, module, where);
  const std::string* path = st.path_of(module);
  if (path == nullptr) throw_not_a_submodule(module, where);
  if (is_leaf_module(module, *path)) return record_leaf(module, *path, args, where);
  detail::FrameScope frame(st, module, *path, where);
  return module.forward_values(args);
}

bool detail::flatten_result(const Value& v, OutputMeta& meta) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    if (!t->defined()) return false;
    meta.outputs.push_back(t->meta());
    meta.nesting.push_back(0);
    return true;
  }
  if (v.is_none()) {
    meta.nesting.push_back(-1);
    return true;
  }
  if (const ValueDict* dict = boost::variant2::get_if<ValueDict>(&v.value)) {
    meta.nesting.push_back(-3);
    meta.nesting.push_back(static_cast<std::int32_t>(dict->size()));
    for (std::size_t k = 0; k < dict->size(); ++k) {
      if (!dict->keys[k].is_string()) return false;
      meta.keys.push_back(dict->keys[k].to_string_ref());
      if (!flatten_result(dict->values[k], meta)) return false;
    }
    return true;
  }
  const ValueList* list = boost::variant2::get_if<ValueList>(&v.value);
  if (list == nullptr) return false;
  meta.nesting.push_back(list->empty() ? -2 : static_cast<std::int32_t>(list->size()));
  for (const Value& item : *list)
    if (!flatten_result(item, meta)) return false;
  return true;
}

namespace {

/// The Value a nested result's metadata describes, from the list or dict at
/// `meta.nesting[pos]` (`list`: the node of that container in a traced call, nullptr in a side
/// run). `item(list, key)` gives the node of an item (a getitem; `key` an int64 index or a str
/// key) and `tensor(item, m)` the tensor it stands for. `key` counts the dict keys used.
template <class List, class MakeTensor, class Item>
Value unflatten_result(const OutputMeta& meta, std::size_t& pos, std::size_t& next, std::size_t& key, List list,
                       const MakeTensor& tensor, const Item& item) {
  const std::int32_t code = meta.nesting.at(pos++);
  const bool dict = code == -3;
  const std::size_t n = dict ? static_cast<std::size_t>(meta.nesting.at(pos++)) : code > 0 ? static_cast<std::size_t>(code) : 0;
  ValueList items;
  ValueDict entries;
  items.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string* name = dict ? &meta.keys.at(key++) : nullptr;
    const Argument at = name ? Argument(*name) : Argument(static_cast<std::int64_t>(i));
    const std::int32_t c = meta.nesting.at(pos);
    Value v;
    if (c == -1) {
      ++pos;
    } else if (c == 0) {
      ++pos;
      v = tensor(item(list, at), meta.outputs.at(next++));
    } else {
      v = unflatten_result(meta, pos, next, key, item(list, at), tensor, item);
    }
    if (dict) entries.insert_or_assign(Value(*name), std::move(v));
    else items.push_back(std::move(v));
  }
  if (dict) return entries;
  return items;
}

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
  if (result.is_dict()) {  // getitems by key
    meta.is_list = true;
    if (detail::flatten_result(result, meta)) return meta;
  }
  throw_trace_error(where,
                    "the leaf '{}' ({}) returned {}: only tensors, None, and lists and str-keyed dicts of them can flow out of a "
                    "call_module node; trace into the module instead of making it a leaf",
                    path, module.type_name(), result.type_name());
}

}  // namespace

std::optional<OutputMeta> Tracer::unknown_result(const Module& module, DType dtype) {
  const ForwardSignature* signature = module.forward_signature();
  const ParamType result = signature ? signature->result : ParamType::tensor;
  if (result == ParamType::tensor || result == ParamType::any) {
    return OutputMeta::single(dtype, Shape::unknown_rank());
  }
  if (result == ParamType::tuple) {
    OutputMeta meta;
    meta.is_list = true;
    for (std::size_t i = 0; i < signature->result_arity; ++i) meta.outputs.push_back(TensorMeta{dtype, Shape::unknown_rank()});
    return meta;
  }
  return std::nullopt;
}

OutputMeta Tracer::unknown_result(const Module& module, const ValueList& args, const std::string& path,
                                  std::source_location where) {
  DType dtype = DType::float32;
  for (const Value& a : args) {
    if (a.is_tensor()) {
      dtype = a.to_tensor().dtype();
      break;
    }
  }
  if (std::optional<OutputMeta> meta = unknown_result(module, dtype)) return std::move(*meta);
  const ForwardSignature* signature = module.forward_signature();
  throw_trace_error(where,
                    "the module '{}' ({}) cannot stand in its caller's graph as a leaf of unknown shape: it "
                    "returns {}, whose length is unknown; give its type a LeafMetaFn (register_leaf)",
                    path, module.type_name(), signature ? signature->result_type_name : "?");
}


Value Tracer::record_leaf(Module& module, const std::string& path, const ValueList& args, std::source_location where) {
  TracingState& st = state();
  for (const Value& a : args) check_recordable(st, a, where);
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
  if (has_unknown_rank(args)) return unknown_result(module, args, path, where);
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
    throw_trace_error(where,
                      "the output shapes of the leaf '{}' ({}) cannot be found by running its forward "
                      "symbolically: give register_leaf a LeafMetaFn for {}; the run failed with: {}",
                      path, module.type_name(), module.type_name(), e.what());
  }
  return meta_of_result(result, path, module, where);
}

Value Tracer::meta_result(const OutputMeta& meta, std::source_location where) const {
  // Node 0 is never read: nothing is recorded in a side run, and its tensors die with it.
  const SymbolicRef ref{state().id(), 0};
  if (meta.is_number) return SymInt::symbolic(Tensor::symbolic(meta.outputs.at(0), ref), where, meta.number_value);
  if (!meta.is_list) return Tensor::symbolic(meta.outputs.at(0), ref);
  if (!meta.nesting.empty()) {
    std::size_t pos = 0, next = 0, key = 0;
    return unflatten_result(
        meta, pos, next, key, nullptr, [&](std::nullptr_t, const TensorMeta& m) { return Tensor::symbolic(m, ref); },
        [](std::nullptr_t, const Argument&) { return nullptr; });
  }
  ValueList items;
  items.reserve(meta.outputs.size());
  for (const TensorMeta& m : meta.outputs) items.emplace_back(Tensor::symbolic(m, ref));
  return items;
}

Value Tracer::create_proxy(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                           const OutputMeta& meta, std::source_location where) {
  Node& node = create_node(op, target, std::move(args), std::move(kwargs), where);
  return wrap_result(node, meta, where);
}

Value Tracer::wrap_result(Node& node, const OutputMeta& meta, std::source_location where) {
  // A number (size arithmetic) travels as a proxy SymInt; a comparison's proxy has dtype bool
  // and is made a SymBool by the operator that recorded it.
  if (meta.is_number) {
    const TensorMeta& number = meta.outputs.at(0);
    node.set_meta(meta_keys::type, std::string(number.dtype == DType::bool_ ? "bool" : "int"));
    return SymInt::symbolic(Tensor::symbolic(number, SymbolicRef{state().id(), node.id().value}), where,
                            meta.number_value);
  }
  if (!meta.is_list) return proxy(node, meta.outputs.at(0));
  if (!meta.nesting.empty()) {
    std::size_t pos = 0, next = 0, key = 0;
    return unflatten_result(
        meta, pos, next, key, &node, [&](Node* item, const TensorMeta& m) { return proxy(*item, m); },
        [&](Node* list, const Argument& at) { return &create_node(OpKind::call_function, "getitem", {*list, at}, {}, where); });
  }
  ValueList items;
  items.reserve(meta.outputs.size());
  for (std::size_t i = 0; i < meta.outputs.size(); ++i) {
    Node& item = create_node(OpKind::call_function, "getitem", {node, static_cast<std::int64_t>(i)}, {}, where);
    items.emplace_back(proxy(item, meta.outputs[i]));
  }
  return items;
}

Node& Tracer::create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                          std::source_location where) {
  TracingState& st = state();
  Node& node = st.graph().create_node(op, target, std::move(args), std::move(kwargs), {}, where);
  if (!st.frame().path.empty()) node.set_scope(st.frame_scope());  // O(1) once the frame's scope is known
  return node;
}

Argument Tracer::create_arg(const Value& value, std::source_location where) {
  TracingState& st = state();
  return boost::variant2::visit(
      overloaded{
          [](Value::None) { return Argument(); },
          [](bool b) { return Argument(b); },
          [](std::int64_t i) { return Argument(i); },
          [](double d) { return Argument(d); },
          [](const std::string& s) { return Argument(s); },
          [](DType d) { return Argument(d); },
          [&](const Tensor& t) -> Argument {
            check_tensor(st, t, where);  // no Value copy on the per-argument path
            if (t.is_symbolic()) return Argument(NodeId(t.symbolic_ref().node));
            if (const std::string* path = st.tensor_path_of(t.impl_ptr().get())) return getattr(*path, t, where);
            // Any other concrete tensor (made in forward, or held without registration) is
            // kept by the graph as a constant, as fx keeps `_tensor_constant0`.
            Node& node = create_node(OpKind::get_attr, st.graph().add_constant(t), {}, {}, where);
            node.set_tensor_meta(t.meta());
            return Argument(node);
          },
          [&](const SymInt& s) -> Argument {
            check_tensor(st, s.proxy(), where);
            return Argument(NodeId(s.proxy().symbolic_ref().node));
          },
          [&](const ValueList& list) {
            ArgumentList items;
            items.reserve(list.size());
            for (const Value& v : list) items.push_back(create_arg(v, where));
            return Argument(std::move(items));
          },
          [&](const ValueDict& dict) {
            // As `dict(out=x, aux=y)` in Python: keys become keyword names (str keys only,
            // which check_recordable has checked), in insertion order.
            KeywordArguments items;
            items.reserve(dict.size());
            for (std::size_t i = 0; i < dict.size(); ++i)
              items.emplace_back(dict.keys[i].to_string_ref(), create_arg(dict.values[i], where));
            return Argument(create_node(OpKind::call_function, "dict", {}, std::move(items), where));
          },
      },
      value.value);
}

Argument Tracer::getattr(std::string_view qualified_name, const Tensor& tensor, std::source_location where) {
  Node& node = create_node(OpKind::get_attr, qualified_name, {}, {}, where);
  node.set_tensor_meta(tensor.meta());
  return Argument(node);
}

namespace {

/// `v` with every tensor of unknown rank (also in a list) replaced by a stand-in of rank `rank`
/// whose dims are unknown, of a trace id never given out (it is never recorded).
Value with_rank(const Value& v, std::size_t rank) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    if (!t->defined() || t->shape().is_rank_known()) return v;
    return Tensor::symbolic(TensorMeta{t->dtype(), Shape::unknown(rank)}, SymbolicRef{~std::uint64_t{0}, 0});
  }
  if (const ValueList* list = boost::variant2::get_if<ValueList>(&v.value)) {
    ValueList items;
    items.reserve(list->size());
    for (const Value& item : *list) items.push_back(with_rank(item, rank));
    return items;
  }
  return v;
}

/// The op's meta function on `call` with its tensors of unknown rank given rank `rank`, or
/// nullopt when it refuses them.
std::optional<OutputMeta> meta_at_rank(const OpCall& call, std::size_t rank) {
  ValueList args;
  args.reserve(call.args.size());
  for (const Value& a : call.args) args.push_back(with_rank(a, rank));
  try {
    return call.op.meta(OpCall{call.op, args, call.where, call.style});
  } catch (const std::invalid_argument&) {  // OpError: not an argument of that rank
    return std::nullopt;
  } catch (const TraceError&) {
    return std::nullopt;
  }
}

/// Note [Unknown in, unknown out]: an op given a tensor of unknown rank (the output of a module
/// that could not be traced) cannot run its meta function on it. Its result's dtype is what the
/// meta function gives when that tensor has rank 1 (a comparison gives bool), or the lowest
/// rank from 2 to 4 it accepts (nms's boxes [N, 4] give int64 indices), else the dtype
/// the op names or that of its first tensor argument. Its shape has an unknown rank too, except
/// where it does not depend on the rank: a full reduction (`x.sum()`) is 0-dim whatever the
/// rank, which the meta function shows by giving the same shape at ranks 1 and 2.
OutputMeta unknown_rank_meta(const OpCall& call) {
  const OpSchema& schema = call.op.schema;
  if (schema.returns_number()) return OutputMeta::number(schema.returns == ReturnType::bool_ ? DType::bool_ : DType::int64);
  if (schema.returns_list()) {
    // As many outputs at ranks 1 and 2 (topk's two): that many, of those dtypes.
    std::optional<OutputMeta> one = meta_at_rank(call, 1);
    std::optional<OutputMeta> two = meta_at_rank(call, 2);
    if (one && two && one->outputs.size() == two->outputs.size()) {
      OutputMeta meta;
      meta.is_list = true;
      for (const TensorMeta& m : one->outputs) meta.outputs.push_back(TensorMeta{m.dtype, Shape::unknown_rank()});
      return meta;
    }
    throw_trace_error(call.where,
                      "{}(): the number of its outputs depends on the shape of a tensor whose shape is unknown (the "
                      "output of a module that could not be traced); give that module's type a shape function "
                      "(register_leaf with a LeafMetaFn)", call.op.name());
  }
  if (std::optional<OutputMeta> one = meta_at_rank(call, 1); one && one->outputs.size() == 1) {
    if (call.op.has(OpFlags::reduction)) {
      std::optional<OutputMeta> two = meta_at_rank(call, 2);
      if (two && two->outputs.size() == 1 && two->outputs[0] == one->outputs[0] && one->outputs[0].shape.is_fully_known()) {
        return std::move(*one);
      }
    }
    return OutputMeta::single(one->outputs[0].dtype, Shape::unknown_rank());
  }
  for (std::size_t rank = 2; rank <= 4; ++rank) {  // an op that needs more dims (nms: boxes [N, 4])
    if (std::optional<OutputMeta> m = meta_at_rank(call, rank); m && m->outputs.size() == 1)
      return OutputMeta::single(m->outputs[0].dtype, Shape::unknown_rank());
  }
  std::optional<DType> dtype;
  for (const Value& v : call.args) {
    if (v.is_dtype()) return OutputMeta::single(v.to_dtype(), Shape::unknown_rank());
    if (dtype) continue;
    if (v.is_tensor()) dtype = v.to_tensor().dtype();
    else if (v.is_list() && !v.to_list().empty() && v.to_list().front().is_tensor()) dtype = v.to_list().front().to_tensor().dtype();
  }
  return OutputMeta::single(dtype.value_or(DType::float32), Shape::unknown_rank());
}

}  // namespace

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
  for (const Value& a : call.args) check_recordable(st, a, call.where);
  // In a side run nothing is recorded, so nothing can read a stale constant.
  if (call.op.has(OpFlags::inplace) && !st.meta_only()) [[unlikely]] check_inplace_target(st, call);
  OutputMeta meta = has_unknown_rank(call.args) && !call.op.has(OpFlags::unknown_rank) ? unknown_rank_meta(call)
                                                                                      : call.op.meta(call);
  if (st.meta_only()) return meta_result(meta, call.where);
  Arguments args;
  args.reserve(call.args.size());
  for (const Value& a : call.args) args.push_back(create_arg(a, call.where));
  OpKind kind = call.style == CallStyle::method ? OpKind::call_method : OpKind::call_function;
  return create_proxy(kind, call.op.name(), std::move(args), {}, meta, call.where);
}

namespace {

/// The tensors a cond branch returned, as metadata; `single` tells a lone tensor from a list.
OutputMeta branch_meta(const Value& result, bool& single, const char* branch, std::source_location where) {
  OutputMeta meta;
  meta.is_list = true;
  single = result.is_tensor();
  if (single) {
    meta.outputs.push_back(result.to_tensor().meta());
    return meta;
  }
  if (const ValueList* list = boost::variant2::get_if<ValueList>(&result.value)) {
    for (const Value& v : *list) {
      const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      if (t == nullptr || !t->defined()) break;
      meta.outputs.push_back(t->meta());
    }
    if (meta.outputs.size() == list->size()) return meta;
  }
  throw_trace_error(where, "cond(): {} returned {}: a branch returns a Tensor or a list of tensors", branch,
                    to_string(result));
}

std::string describe(const OutputMeta& meta, bool single) {
  if (single) return to_string(meta.outputs.at(0));
  std::string out = "[";
  for (std::size_t i = 0; i < meta.outputs.size(); ++i) out += (i ? ", " : "") + to_string(meta.outputs[i]);
  return out + "]";
}

}  // namespace

Value Tracer::record_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                          const TensorList& operands, std::source_location where) {
  TracingState& st = state();
  check_tensor(st, pred, where);
  for (const Tensor& t : operands) check_tensor(st, t, where);

  // Each branch is traced into a graph of its own, on placeholders standing for the operands.
  auto trace_branch = [&](const CondBranch& fn, const char* which, Graph& sub, bool& single) {
    detail::SubgraphRun run(st, sub);
    TensorList args;
    args.reserve(operands.size());
    for (std::size_t i = 0; i < operands.size(); ++i) {
      Node& placeholder = create_node(OpKind::placeholder, fmt::format("operand{}", i), {}, {}, where);
      args.push_back(proxy(placeholder, operands[i].meta()));
    }
    const Value result = fn(args);
    OutputMeta meta = branch_meta(result, single, which, where);
    check_recordable(st, result, where);
    Argument out = create_arg(result, where);
    if (single) out = Argument(ArgumentList{std::move(out)});
    sub.output(std::move(out), where);
    return meta;
  };
  Graph then_graph, else_graph;
  bool then_single = false, else_single = false;
  OutputMeta then_meta, else_meta;
  if (st.meta_only()) {
    // In a leaf's side run only the metadata matters: run both branches, record nothing.
    then_meta = branch_meta(then_fn(operands), then_single, "then_fn", where);
    else_meta = branch_meta(else_fn(operands), else_single, "else_fn", where);
  } else {
    then_meta = trace_branch(then_fn, "then_fn", then_graph, then_single);
    else_meta = trace_branch(else_fn, "else_fn", else_graph, else_single);
  }

  // The result: what both branches agree on; sizes that differ are unknown.
  bool agree = then_single == else_single && then_meta.outputs.size() == else_meta.outputs.size();
  OutputMeta meta;
  meta.is_list = true;
  for (std::size_t i = 0; agree && i < then_meta.outputs.size(); ++i) {
    const TensorMeta& a = then_meta.outputs[i];
    const TensorMeta& b = else_meta.outputs[i];
    agree = a.dtype == b.dtype && (a.shape.rank() == b.shape.rank() || !a.shape.is_rank_known() ||
                                   !b.shape.is_rank_known());
    if (agree && (!a.shape.is_rank_known() || !b.shape.is_rank_known())) {
      meta.outputs.push_back(TensorMeta{a.dtype, Shape::unknown_rank()});
      continue;
    }
    TensorMeta merged = a;
    for (std::size_t d = 0; agree && d < a.shape.rank(); ++d) {
      if (a.shape[d] != b.shape[d]) merged.shape[d] = Dim::unknown();
    }
    meta.outputs.push_back(std::move(merged));
  }
  if (!agree) {
    throw_trace_error(where,
                      "cond(): the branches return different things: then_fn returns {}, else_fn returns {}; both "
                      "must return the same number of tensors with the same dtypes and ranks",
                      describe(then_meta, then_single), describe(else_meta, else_single));
  }
  if (st.meta_only()) {
    Value results = meta_result(meta, where);
    return then_single ? results.to_list().at(0) : results;
  }

  Graph& graph = st.graph();
  Graph::Checkpoint checkpoint = graph.checkpoint();  // nothing stays if recording fails midway
  const std::string then_name = graph.add_subgraph("true_graph", std::move(then_graph));
  const std::string else_name = graph.add_subgraph("false_graph", std::move(else_graph));
  Node& then_node = create_node(OpKind::get_attr, then_name, {}, {}, where);
  Node& else_node = create_node(OpKind::get_attr, else_name, {}, {}, where);
  ArgumentList operand_args;
  operand_args.reserve(operands.size());
  for (const Tensor& t : operands) operand_args.push_back(create_arg(t, where));
  Node& node = create_node(OpKind::call_function, cond_target,
                           {create_arg(pred, where), Argument(then_node), Argument(else_node),
                            Argument(std::move(operand_args))},
                           {}, where);
  Value results = wrap_result(node, meta, where);
  checkpoint.commit();
  if (then_single) return results.to_list().at(0);
  return results;
}

Tensor Tracer::proxy(Node& node, const TensorMeta& meta) const {
  node.set_tensor_meta(meta);
  return Tensor::symbolic(meta, SymbolicRef{state().id(), node.id().value});
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

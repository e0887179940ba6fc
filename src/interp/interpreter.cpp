// Interpreter: one pass over the node order with an environment indexed by node id.
#include "symtrace/interp/interpreter.hpp"

#include "symtrace/graph/dim_bindings.hpp"
#include "symtrace/graph/input_path.hpp"
#include "symtrace/graph/printer.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/registry.hpp"
#include "symtrace/trace/cond.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>
#include <vector>

namespace symtrace {

namespace {

/// `value` as a node argument, for comparing with a guard; nullopt for tensors.
std::optional<Argument> as_argument(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::none: return Argument();
    case Value::Kind::boolean: return Argument(value.to_bool());
    case Value::Kind::integer: return Argument(value.to_int());
    case Value::Kind::floating: return Argument(value.to_double());
    case Value::Kind::string: return Argument(value.to_string_ref());
    case Value::Kind::dtype: return Argument(value.to_dtype());
    case Value::Kind::tensor:
    case Value::Kind::symint:
    case Value::Kind::symfloat:
    case Value::Kind::dict:
    case Value::Kind::opaque: return std::nullopt;
    case Value::Kind::ref: return as_argument(value.deref());
    case Value::Kind::list: {
      ArgumentList items;
      for (const Value& v : value.to_list()) {
        std::optional<Argument> item = as_argument(v);
        if (!item) return std::nullopt;
        items.push_back(std::move(*item));
      }
      return Argument(std::move(items));
    }
  }
  return std::nullopt;
}

/// The part of `input` at `path` (graph/input_path.hpp), or nullptr when it has none.
const Value* part_at(const Value& input, std::string_view path) {
  const Value* v = &input;
  while (!path.empty()) {
    const std::optional<InputPathStep> step = next_input_path_step(path);
    if (!step) return nullptr;
    if (step->is_key) {
      if (!v->is_dict()) return nullptr;
      v = v->to_dict().find(Value(step->key));
      if (v == nullptr) return nullptr;
    } else {
      if (!v->is_list() || step->index >= v->to_list().size()) return nullptr;
      v = &v->to_list()[step->index];
    }
  }
  return v;
}

/// Whether `input` is a tensor of `traced`'s dtype and rank (when known) and known sizes.
bool fits(const TensorMeta& traced, const Value& input) {
  const Tensor* t = boost::variant2::get_if<Tensor>(&input.value);
  bool ok = t != nullptr && t->defined() && t->dtype() == traced.dtype &&
            (!traced.shape.is_rank_known() || t->shape().rank() == traced.shape.rank());
  for (std::size_t d = 0; ok && traced.shape.is_rank_known() && d < traced.shape.rank(); ++d) {
    const Dim given = t->shape()[d];
    ok = !traced.shape[d].is_known() || !given.is_known() || traced.shape[d] == given;
  }
  return ok;
}

/// Checks `v`, the part of input `target` at `path`, against its traced `structure`
/// (meta_keys::structure): list lengths, dict keys, each traced tensor's dtype and known sizes.
void check_structure(const Argument& structure, const Value& v, const std::string& path, std::string_view target,
                     std::source_location where) {
  const auto refuse = [&](const std::string& traced) {
    throw_invalid_argument(where, "input '{}' was traced with {} at {}, got {}; trace again with an input of this "
                                  "structure",
                           target, traced, path, v);
  };
  const ArgumentList* parts = structure.get_if<ArgumentList>();
  if (parts == nullptr || parts->empty()) return;  // a constant: its guard checks it
  const std::string* kind = (*parts)[0].get_if<std::string>();
  if (kind == nullptr) return;
  if (*kind == "tensor" && parts->size() == 3 && (*parts)[1].get_if<DType>() != nullptr) {
    TensorMeta traced{*(*parts)[1].get_if<DType>(), Shape::unknown_rank()};
    if (const ArgumentList* sizes = (*parts)[2].get_if<ArgumentList>()) {
      traced.shape = Shape{};
      for (const Argument& d : *sizes) traced.shape.push_back(d.get_if<std::int64_t>() ? Dim(*d.get_if<std::int64_t>()) : Dim());
    }
    if (!fits(traced, v)) {
      refuse(traced.shape.is_rank_known() ? fmt::format("a {} tensor of shape {}", name(traced.dtype), traced.shape)
                                          : fmt::format("a {} tensor", name(traced.dtype)));
    }
  } else if (*kind == "list") {
    if (!v.is_list() || v.to_list().size() != parts->size() - 1) refuse(fmt::format("a list of {}", parts->size() - 1));
    for (std::size_t i = 1; i < parts->size(); ++i)
      check_structure((*parts)[i], v.to_list()[i - 1], append_index(path, i - 1), target, where);
  } else if (*kind == "dict") {
    std::vector<std::string> keys;
    for (std::size_t i = 1; i < parts->size(); ++i) {
      const ArgumentList* item = (*parts)[i].get_if<ArgumentList>();
      if (item != nullptr && item->size() == 2 && (*item)[0].get_if<std::string>() != nullptr)
        keys.push_back(*(*item)[0].get_if<std::string>());
    }
    bool fits = v.is_dict() && v.to_dict().size() == keys.size();
    for (std::size_t i = 0; fits && i < keys.size(); ++i) fits = v.to_dict().find(Value(keys[i])) != nullptr;
    if (!fits) refuse(fmt::format("a dict of keys {}", fmt::join(keys, ", ")));
    for (std::size_t i = 1; i < parts->size(); ++i) {
      const ArgumentList& item = *(*parts)[i].get_if<ArgumentList>();
      const std::string& key = *item[0].get_if<std::string>();
      check_structure(item[1], *v.to_dict().find(Value(key)), append_key(path, key), target, where);
    }
  }
}

/// Checks `input` against what the trace assumed for placeholder `node`: its guard value
/// (concrete_args), the values of its constant parts (a list or dict input's constants, guards
/// named by their path: `images.image_sizes`), or its dtype and known dims.
void check_input(const Graph& graph, const Node& node, const Value& input, std::source_location where) {
  const std::string_view target = node.target();
  if (const Argument* structure = node.meta(meta_keys::structure))
    check_structure(*structure, input, std::string(target), target, where);
  for (const Graph::Guard& guard : graph.guards()) {
    const std::string_view name = guard.input;
    if (name.size() <= target.size() || !name.starts_with(target) || (name[target.size()] != '.' && name[target.size()] != '['))
      continue;
    const Value* part = part_at(input, name.substr(target.size()));
    std::optional<Argument> given = part != nullptr ? as_argument(*part) : std::nullopt;
    if (!given || *given != guard.value) {
      throw_invalid_argument(where,
                             "input '{}' was traced with {} = {}, got {}; trace again with this input (its constant "
                             "parts are specialised)",
                             target, name, guard.value, part != nullptr ? to_string(*part) : std::string("no such part"));
    }
  }
  for (const Graph::Guard& guard : graph.guards()) {
    if (guard.input != node.target()) continue;
    std::optional<Argument> given = as_argument(input);
    if (!given || *given != guard.value) {
      throw_invalid_argument(where,
                             "input '{}' was specialised on {} when the graph was traced (concrete_args), got {}; "
                             "trace again with this value, or without specialising it",
                             node.target(), guard.value, input);
    }
    return;
  }
  const TensorMeta* meta = node.tensor_meta();
  if (meta == nullptr) return;
  if (!fits(*meta, input)) {
    const Tensor* t = boost::variant2::get_if<Tensor>(&input.value);
    throw_invalid_argument(where,
                           "input '{}' was traced as {}, got {}; trace with this shape, or with unknown dims "
                           "(Dim::unknown()) where sizes vary",
                           node.target(), *meta, t != nullptr && t->defined() ? fmt::format("{}", t->meta()) : fmt::format("{}", input));
  }
}

}  // namespace

Value Interpreter::value_of(const Argument& a) const {
  return boost::variant2::visit(
      overloaded{
          [](boost::variant2::monostate) { return Value(); },
          [](bool b) { return Value(b); },
          [](std::int64_t i) { return Value(i); },
          [](double d) { return Value(d); },
          [](const detail::Boxed<std::string>& s) { return Value(s.get()); },
          [](DType d) { return Value(d); },
          [&](NodeId id) {
            if (id.value >= values_.size() || current_ == nullptr)
              throw std::invalid_argument(fmt::format("node %{} has no value here: values exist while the graph runs",
                                                      graph_.node(id).name()));
            return values_[id.value];
          },
          [&](const detail::Boxed<ArgumentList>& list) {
            ValueList items;
            items.reserve(list.get().size());
            for (const Argument& item : list.get()) items.push_back(value_of(item));
            return Value(std::move(items));
          },
      },
      a.value);
}

std::source_location Interpreter::node_location() const noexcept {
  return current_ != nullptr ? current_->where() : std::source_location{};
}

Value Interpreter::run_node(const Node& node) {
  ValueList args;
  args.reserve(node.args().size());
  for (const Argument& a : node.args()) args.push_back(value_of(a));
  KeywordValues kwargs;
  for (const auto& [key, a] : node.kwargs()) kwargs.emplace_back(key, value_of(a));
  switch (node.op()) {
    case OpKind::placeholder: return placeholder(node.target(), std::move(args), std::move(kwargs));
    case OpKind::get_attr: return get_attr(node.target(), std::move(args), std::move(kwargs));
    case OpKind::call_function: return call_function(node.target(), std::move(args), std::move(kwargs));
    case OpKind::call_method: return call_method(node.target(), std::move(args), std::move(kwargs));
    case OpKind::call_module: return call_module(node.target(), std::move(args), std::move(kwargs));
    case OpKind::output: return output(node.target(), std::move(args), std::move(kwargs));
  }
  throw InternalError("internal error: a node with an unknown op kind");
}

Value Interpreter::placeholder(std::string_view target, ValueList, KeywordValues) {
  if (inputs_ == nullptr || next_input_ >= inputs_->size())
    throw std::invalid_argument(fmt::format("placeholder {}: the run has no input left for it", target));
  return (*inputs_)[next_input_++];
}

Value Interpreter::get_attr(std::string_view target, ValueList, KeywordValues) {
  if (const Tensor* constant = graph_.find_constant(target)) return *constant;
  if (graph_.find_subgraph(target) != nullptr) return std::string(target);  // read by cond
  return module_.get_tensor(target, node_location());
}

Value Interpreter::call_function(std::string_view target, ValueList args, KeywordValues kwargs) {
  if (target == "getitem" && args.size() == 2 && args[0].is_dict()) {
    const Value* v = args[0].to_dict().find(args[1]);
    if (v == nullptr) throw std::out_of_range(fmt::format("getitem: the dict has no key {}", args[1]));
    return *v;
  }
  if (target == "dict") {  // dict(key=value, ...): a dict with str keys, in order
    if (!args.empty()) throw std::invalid_argument("dict takes keyword arguments only");
    ValueDict d;
    for (auto& [key, value] : kwargs) d.insert_or_assign(std::string(key), std::move(value));
    return d;
  }
  if (target == "getitem") {
    if (args.size() != 2 || !args[0].is_list() || !args[1].is_int()) {
      throw std::invalid_argument("getitem takes a list and an index, or a dict and a key");
    }
    const ValueList& list = args[0].to_list();
    const std::int64_t i = args[1].to_int();
    if (i < 0 || static_cast<std::size_t>(i) >= list.size()) {
      throw std::out_of_range(fmt::format("getitem: index {} is out of range for a list of {}", i, list.size()));
    }
    return list[static_cast<std::size_t>(i)];
  }
  if (target == cond_target) {  // runs the subgraph the predicate picks on the operands
    if (args.size() != 4 || !args[0].is_tensor() || !args[1].is_string() || !args[2].is_string() ||
        !args[3].is_list()) {
      throw std::invalid_argument("cond takes a predicate, two subgraphs and a list of operands");
    }
    const std::string& name = args[0].to_tensor().to_bool() ? args[1].to_string_ref() : args[2].to_string_ref();
    const Graph* branch = graph_.find_subgraph(name);
    if (branch == nullptr) throw std::invalid_argument(fmt::format("cond: the graph has no subgraph '{}'", name));
    return Interpreter(module_, *branch).run(args[3].to_list(), node_location());
  }
  return call(target, std::move(args), std::move(kwargs), node_location());
}

Value Interpreter::call_method(std::string_view target, ValueList args, KeywordValues kwargs) {
  // A list's getitem and cond are no Tensor methods; a graph that names them so (an imported
  // one) means the functions.
  if (target == "getitem" || target == "dict" || target == cond_target) return call_function(target, std::move(args), std::move(kwargs));
  const std::source_location where = node_location();
  const OpDef& op = OpRegistry::instance().get(target, where);
  const ValueList bound = bind_arguments(op, std::move(args), std::move(kwargs), where);
  return dispatch(op, bound, where, CallStyle::method);
}

Value Interpreter::call_module(std::string_view target, ValueList args, KeywordValues kwargs) {
  const std::source_location where = node_location();
  if (!kwargs.empty())
    throw std::invalid_argument(fmt::format("call_module {}: modules take positional arguments only", target));
  return module_.get_submodule(target, where).call(args, where);
}

Value Interpreter::output(std::string_view, ValueList args, KeywordValues) {
  if (args.size() != 1) throw std::invalid_argument("the output node takes one argument");
  return args[0];
}

Value Interpreter::run(const ValueList& inputs, std::source_location where) {
  if (inputs_ != nullptr)
    throw std::logic_error("Interpreter::run: this interpreter is already running; use another one for a nested run");
  std::size_t placeholders = 0;
  std::uint32_t bound = 0;
  for (const Node& node : graph_.nodes()) {
    if (node.op() == OpKind::placeholder) ++placeholders;
    bound = std::max(bound, node.id().value + 1);
  }
  if (inputs.size() != placeholders) {
    throw_invalid_argument(where, "the graph takes {} inputs, got {}; pass one value per placeholder", placeholders,
                           inputs.size());
  }
  std::size_t index = 0;
  bool named_dims = !graph_.size_guards().empty();
  for (const Node& node : graph_.nodes()) {
    if (node.op() != OpKind::placeholder) continue;
    check_input(graph_, node, inputs[index++], where);
    if (const TensorMeta* meta = node.tensor_meta(); meta != nullptr && !named_dims)
      named_dims = std::any_of(meta->shape.begin(), meta->shape.end(), [](Dim d) { return d.is_symbolic(); });
  }
  if (named_dims) {  // docs/design.md, decision 13: the named dims' ranges and the graph's size guards
    std::vector<std::optional<Shape>> shapes;
    for (const Value& v : inputs) {
      const Tensor* t = boost::variant2::get_if<Tensor>(&v.value);
      shapes.push_back(t != nullptr && t->defined() ? std::optional<Shape>(t->shape()) : std::nullopt);
    }
    check_size_guards(graph_, bind_input_dims(graph_, shapes, where), where);
  }
  // The value of a node is dropped after its last use, so peak memory follows the graph's
  // live values. A value nobody uses goes right after it is made.
  std::vector<std::size_t> last_use(bound, 0);
  std::size_t position = 0;
  for (const Node& node : graph_.nodes()) {
    last_use[node.id().value] = position;
    for (const Node* input : node.input_nodes()) last_use[input->id().value] = position;
    ++position;
  }
  // The run's state, reset however the run ends (a hook may throw; cond runs a nested
  // interpreter of its own).
  values_.assign(bound, Value());
  inputs_ = &inputs;
  next_input_ = 0;
  struct Reset {
    Interpreter& self;
    ~Reset() {
      self.values_.clear();
      self.inputs_ = nullptr;
      self.current_ = nullptr;
    }
  } reset{*this};
  position = 0;
  for (const Node& node : graph_.nodes()) {
    current_ = &node;
    Value result;
    try {
      result = run_node(node);
    } catch (const TraceError&) {
      throw;  // tracing through a graph: the error already names the user's line and module
    } catch (const std::exception& e) {
      std::throw_with_nested(
          InterpreterError(fmt::format("{}\nWhile executing {}", e.what(), to_string(node)), node.name()));
    }
    if (node.op() == OpKind::output) return result;
    if (last_use[node.id().value] != position) values_[node.id().value] = std::move(result);
    for (const Node* input : node.input_nodes()) {
      if (last_use[input->id().value] == position) values_[input->id().value] = Value();
    }
    ++position;
  }
  throw_invalid_argument(where, "the graph has no output node; add one with Graph::output");
}

}  // namespace symtrace

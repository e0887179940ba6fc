// Interpreter: one pass over the node order with an environment indexed by node id.
#include "symtrace/interp/interpreter.hpp"

#include "symtrace/graph/printer.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/trace/cond.hpp"

#include <fmt/format.h>

#include <exception>
#include <optional>
#include <vector>

namespace symtrace {

namespace {

struct Environment {
  std::vector<Value> values;  // by node id
  std::vector<std::size_t> last_use;  // by node id: the position of its last user

  Value lookup(NodeId id) const { return values[id.value]; }

  Value to_value(const Argument& a) const {
    return boost::variant2::visit(
        overloaded{
            [](boost::variant2::monostate) { return Value(); },
            [](bool b) { return Value(b); },
            [](std::int64_t i) { return Value(i); },
            [](double d) { return Value(d); },
            [](const detail::Boxed<std::string>& s) { return Value(s.get()); },
            [](DType d) { return Value(d); },
            [&](NodeId id) { return lookup(id); },
            [&](const detail::Boxed<ArgumentList>& list) {
              ValueList items;
              items.reserve(list.get().size());
              for (const Argument& item : list.get()) items.push_back(to_value(item));
              return Value(std::move(items));
            },
        },
        a.value);
  }
};

/// A cond node: runs the subgraph its predicate picks on the operands.
Value run_cond(Module& module, const Graph& graph, const ValueList& args) {
  if (args.size() != 4 || !args[0].is_tensor() || !args[1].is_string() || !args[2].is_string() || !args[3].is_list()) {
    throw std::invalid_argument("cond takes a predicate, two subgraphs and a list of operands");
  }
  const std::string& name = args[0].to_tensor().to_bool() ? args[1].to_string_ref() : args[2].to_string_ref();
  const Graph* branch = graph.find_subgraph(name);
  if (branch == nullptr) throw std::invalid_argument(fmt::format("cond: the graph has no subgraph '{}'", name));
  return Interpreter(module, *branch).run(args[3].to_list());
}

Value run_node(Module& module, const Graph& graph, const Node& node, const Environment& env,
               const ValueList& inputs, std::size_t& next_input) {
  ValueList args;
  args.reserve(node.args().size());
  for (const Argument& a : node.args()) args.push_back(env.to_value(a));
  KeywordValues kwargs;
  for (const auto& [key, a] : node.kwargs()) kwargs.emplace_back(key, env.to_value(a));
  switch (node.op()) {
    case OpKind::placeholder:
      return inputs[next_input++];
    case OpKind::get_attr:
      if (const Tensor* constant = graph.find_constant(node.target())) return *constant;
      if (graph.find_subgraph(node.target()) != nullptr) return std::string(node.target());  // read by cond
      return module.get_tensor(node.target());
    case OpKind::call_function:
    case OpKind::call_method:
      if (node.target() == "getitem") {
        if (args.size() != 2 || !args[0].is_list() || !args[1].is_int()) {
          throw std::invalid_argument("getitem takes a list and an index");
        }
        const ValueList& list = args[0].to_list();
        std::int64_t i = args[1].to_int();
        if (i < 0 || static_cast<std::size_t>(i) >= list.size()) {
          throw std::out_of_range(fmt::format("getitem: index {} is out of range for a list of {}", i, list.size()));
        }
        return list[static_cast<std::size_t>(i)];
      }
      if (node.target() == cond_target) return run_cond(module, graph, args);
      return call(node.target(), std::move(args), std::move(kwargs), node.where());
    case OpKind::call_module:
      return module.get_submodule(node.target()).call(args, node.where());
    case OpKind::output:
      return args.at(0);
  }
  throw InternalError("internal error: a node with an unknown op kind");
}

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
    case Value::Kind::symint: return std::nullopt;
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

/// Checks `input` against what the trace assumed for placeholder `node`: its guard value
/// (concrete_args), or its dtype and known dims.
void check_input(const Graph& graph, const Node& node, const Value& input, std::source_location where) {
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
  const Tensor* t = boost::variant2::get_if<Tensor>(&input.value);
  bool fits = t != nullptr && t->defined() && t->dtype() == meta->dtype &&
              (!meta->shape.is_rank_known() || t->shape().rank() == meta->shape.rank());
  for (std::size_t d = 0; fits && meta->shape.is_rank_known() && d < meta->shape.rank(); ++d) {
    Dim traced = meta->shape[d];
    Dim given = t->shape()[d];
    fits = !traced.is_known() || !given.is_known() || traced == given;
  }
  if (!fits) {
    throw_invalid_argument(where,
                           "input '{}' was traced as {}, got {}; trace with this shape, or with unknown dims "
                           "(Dim::unknown()) where sizes vary",
                           node.target(), *meta, t != nullptr && t->defined() ? fmt::format("{}", t->meta()) : fmt::format("{}", input));
  }
}

}  // namespace

Value Interpreter::run(const ValueList& inputs, std::source_location where) {
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
  for (const Node& node : graph_.nodes()) {
    if (node.op() == OpKind::placeholder) check_input(graph_, node, inputs[index++], where);
  }
  Environment env;
  env.values.resize(bound);
  env.last_use.assign(bound, 0);
  std::size_t position = 0;
  for (const Node& node : graph_.nodes()) {
    env.last_use[node.id().value] = position;  // a value nobody uses goes right after it is made
    for (const Node* input : node.input_nodes()) env.last_use[input->id().value] = position;
    ++position;
  }
  std::size_t next_input = 0;
  position = 0;
  for (const Node& node : graph_.nodes()) {
    Value result;
    try {
      result = run_node(module_, graph_, node, env, inputs, next_input);
    } catch (const TraceError&) {
      throw;  // tracing through a graph: the error already names the user's line and module
    } catch (const std::exception& e) {
      std::throw_with_nested(
          InterpreterError(fmt::format("{}\nWhile executing {}", e.what(), to_string(node)), node.name()));
    }
    if (node.op() == OpKind::output) return result;
    if (env.last_use[node.id().value] != position) env.values[node.id().value] = std::move(result);
    for (const Node* input : node.input_nodes()) {
      if (env.last_use[input->id().value] == position) env.values[input->id().value] = Value();
    }
    ++position;
  }
  throw_invalid_argument(where, "the graph has no output node; add one with Graph::output");
}

}  // namespace symtrace

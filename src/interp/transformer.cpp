// Transformer: the Interpreter run under a Tracer whose root is the run itself. The tracer
// makes the placeholders (from the graph's own placeholders), records what every hook does
// with the symbolic values, and writes the output; the interpreter's hooks stay the ones a
// subclass overrides.
#include "symtrace/interp/transformer.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/trace/cond.hpp"
#include "symtrace/trace/tracer.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace symtrace {

namespace {

/// Records the transformer's run: its root is the run, and every module the graph calls is a
/// leaf again.
class TransformTracer final : public Tracer {
 public:
  explicit TransformTracer(Transformer& transformer) : transformer_(transformer) {}

  bool is_leaf_module(const Module&, std::string_view) const override { return true; }

  // New nodes take the module scope of the node being run (placeholders are made before the
  // run, the output after it), and a leaf keeps the failure its node records.
  Node& create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                    std::source_location where) override {
    Node& node = Tracer::create_node(op, target, std::move(args), std::move(kwargs), where);
    if (const Node* source = transformer_.current_node()) {
      node.set_scope(source->scope());
      if (op == OpKind::call_module && source->op() == OpKind::call_module && source->target() == target) {
        if (const Argument* failure = source->meta(meta_keys::failure)) node.set_meta(meta_keys::failure, *failure);
      }
    }
    return node;
  }

 protected:
  Value trace_root(Module&, const ValueList& args, std::source_location where) override {
    return transformer_.run(args, where);
  }

  // The result of a leaf is what the graph recorded for it when the leaf is called on what
  // the graph called it on: a module that reads tensor data, or one that failed to trace,
  // cannot run on symbolic tensors. Otherwise, as a trace finds it; a failed module whose
  // result nothing tells gets the unknown result a robust trace gives it.
  OutputMeta leaf_result_meta(Module& module, const std::string& path, const ValueList& args,
                              std::source_location where) override {
    const Node* source = transformer_.current_node();
    const bool same_call = source != nullptr && source->op() == OpKind::call_module && source->target() == path;
    if (same_call && source->tensor_meta() != nullptr && same_argument_meta(*source, args))
      return OutputMeta::single(TensorMeta(*source->tensor_meta()));
    if (same_call && source->meta(meta_keys::failure) != nullptr) {
      try {
        return Tracer::leaf_result_meta(module, path, args, where);
      } catch (const TraceError&) {
        return unknown_result(module, args, path, where);
      }
    }
    return Tracer::leaf_result_meta(module, path, args, where);
  }

 private:
  static bool same_argument_meta(const Node& source, const ValueList& args) {
    if (source.args().size() != args.size()) return false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args[i].is_tensor()) continue;
      const Node* input = source.arg_node(i);
      if (input == nullptr || input->tensor_meta() == nullptr || !(*input->tensor_meta() == args[i].to_tensor().meta()))
        return false;
    }
    return true;
  }

  Transformer& transformer_;
};

}  // namespace

Graph Transformer::transform(std::source_location where) {
  // One input spec per placeholder the graph has, or its concrete value when the graph was
  // specialised on it.
  std::vector<InputSpec> specs;
  ConcreteArgs concrete;
  for (const Node& node : graph().nodes()) {
    if (node.op() != OpKind::placeholder) continue;
    const Graph::Guard* guard = nullptr;
    for (const Graph::Guard& g : graph().guards()) {
      if (g.input == node.target()) guard = &g;
    }
    if (node.meta(meta_keys::structure) != nullptr) {
      throw_invalid_argument(where,
                             "placeholder %{} is a list or dict input, which the Transformer cannot make again; "
                             "transform a graph whose inputs are tensors and numbers",
                             node.name());
    }
    if (guard != nullptr) {
      concrete.emplace_back(std::string(node.target()), value_of(guard->value));
    } else if (const TensorMeta* meta = node.tensor_meta()) {
      specs.emplace_back(meta->shape, meta->dtype);
    } else if (const Argument* type = node.meta(meta_keys::type); type != nullptr && *type == Argument("int")) {
      specs.push_back(InputSpec::symbolic_int());
    } else {
      throw_invalid_argument(where,
                             "placeholder %{} has no dtype or shape, so the Transformer cannot make its input; "
                             "give it tensor metadata (Node::set_tensor_meta)",
                             node.name());
    }
  }
  TransformTracer tracer(*this);
  return tracer.trace(module(), specs, concrete, where);
}

Value Transformer::call_function(std::string_view target, ValueList args, KeywordValues kwargs) {
  const bool symbolic_cond = target == cond_target && args.size() == 4 && args[0].is_tensor() &&
                             args[0].to_tensor().is_symbolic() && args[1].is_string() && args[2].is_string() &&
                             args[3].is_list();
  if (!symbolic_cond) return Interpreter::call_function(target, std::move(args), std::move(kwargs));
  const auto branch = [&](const Value& name) -> CondBranch {
    const Graph* g = graph().find_subgraph(name.to_string_ref());
    if (g == nullptr)
      throw std::invalid_argument(fmt::format("cond: the graph has no subgraph '{}'", name.to_string_ref()));
    return [this, g](const TensorList& operands) {
      return Interpreter(module(), *g).run(ValueList(operands.begin(), operands.end()), node_location());
    };
  };
  TensorList operands;
  for (const Value& v : args[3].to_list()) {
    if (!v.is_tensor()) throw std::invalid_argument("cond: its operands must be tensors");
    operands.push_back(v.to_tensor());
  }
  return cond(args[0].to_tensor(), branch(args[1]), branch(args[2]), operands, node_location());
}

}  // namespace symtrace

// ONNX export: each node of a (pure) graph becomes ONNX operators of opset 17.
//
// The exporter walks the graph once, in order. Every node's result gets an ONNX value name
// (its node name, made unique; parameters and buffers keep their qualified names as
// initializers); a node maps through one of two tables, by module type for `call_module`
// leaves and by op name for `call_function` / `call_method`. A mapping that needs something
// the graph does not give (an op ONNX lacks, a size only known at run time, batch norm in
// training mode) throws `std::invalid_argument` naming the node, its source and its module,
// and the model is abandoned: only a whole model is ever returned or written.
//
// Note [Inference export]: the model is exported for inference, as torch.onnx does by default:
// dropout is the identity and batch norm uses its running statistics.
#include "symtrace/export/onnx.hpp"

#include "export/onnx_exporter.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/passes/remove_inplace.hpp"

#include <fmt/format.h>
#include <onnx/checker.h>

#include <stdexcept>

namespace symtrace {

namespace detail::onnx_export {

// ---- the walk ---------------------------------------------------------------------------

std::string Exporter::run(const OnnxOptions& options) {
  onnx::ModelProto& model = builder_.model();
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name(options.producer_name);
  model.set_producer_version(SYMTRACE_VERSION);
  onnx::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(onnx_opset_version);
  builder_.graph().set_name(options.graph_name);
  // Initializers keep their qualified names: take them all first, so no node name takes one.
  for (const auto& [name, tensor] : root_.named_parameters()) builder_.reserve(name);
  for (const auto& [name, tensor] : root_.named_buffers()) builder_.reserve(name);
  // Each node's result is named as the node: take those names next, so that the extra values a
  // mapping makes (`gelu_erf`, `add_a`) never take a node's name. get_attr nodes are named by
  // their target instead, and a node whose name is a parameter's gets a suffixed one.
  for (const Node& node : graph_.nodes()) {
    const std::string name = node.name();
    if (node.op() != OpKind::get_attr && node.op() != OpKind::output && builder_.reserve(name))
      own_names_.emplace(node.id().value, name);
  }
  for (const Node& node : graph_.nodes()) export_node(node);
  if (options.check) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      throw InternalError(fmt::format("{}:{}: export_onnx wrote a model the ONNX checker refuses: {}",
                                      where_.file_name(), where_.line(), e.what()));
    }
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw std::runtime_error(fmt::format("{}:{}: export_onnx: the model could not be serialized (over 2 GiB?)",
                                         where_.file_name(), where_.line()));
  return bytes;
}

void Exporter::export_node(const Node& node) {
  try {
    switch (node.op()) {
      case OpKind::placeholder: placeholder(node); break;
      case OpKind::get_attr: get_attr(node); break;
      case OpKind::call_module: call_module(node); break;
      case OpKind::call_function:
      case OpKind::call_method: call_op(node); break;
      case OpKind::output: output(node); break;
    }
  } catch (const Unmapped& u) {
    fail(node, u);
  }
  // Every value between the inputs and the outputs carries its traced type.
  auto it = values_.find(node.id().value);
  if (node.op() != OpKind::output && node.op() != OpKind::placeholder && it != values_.end() &&
      node.tensor_meta() != nullptr && !initializers_.contains(it->second) && typed_.insert(it->second).second) {
    builder_.value_info(it->second, *node.tensor_meta());
  }
}

void Exporter::fail(const Node& node, const Unmapped& u) const {
  const std::source_location at = node.where().file_name()[0] != '\0' ? node.where() : where_;
  std::string module;
  const std::string path(node.op() == OpKind::call_module ? node.target() : node.scope());
  const std::string named = path.empty() ? std::string("the root module") : fmt::format("'{}'", path);
  try {
    module = fmt::format(" in {} ({})", named, root_.get_submodule(path).type_name());
  } catch (const std::invalid_argument&) {
    module = fmt::format(" in {}", named);
  }
  throw_invalid_argument(at, "cannot export %{} ({}[target={}]) to ONNX{}: {}; {}", node.name(), node.op(),
                         node.target(), module, u.why, u.fix);
}

const std::string& Exporter::result(const Node& node) {
  auto [it, inserted] = values_.try_emplace(node.id().value);
  if (inserted) {
    auto own = own_names_.find(node.id().value);
    it->second = own != own_names_.end() ? own->second : builder_.fresh(node.name());
  }
  return it->second;
}

void Exporter::placeholder(const Node& node) {
  const TensorMeta* meta = node.tensor_meta();
  if (meta == nullptr) {
    if (node.num_users() == 0) return;  // a specialised (concrete) argument the graph does not read
    unmapped("the input has no traced dtype and shape",
             "trace with example inputs or InputSpecs so that every input is a typed tensor");
  }
  builder_.input(result(node), *meta);
  typed_.insert(result(node));
}

std::string Exporter::parameter(const std::string& qualified_name) {
  if (!initializers_.contains(qualified_name)) {
    Tensor t = root_.get_tensor(qualified_name);
    builder_.reserve(qualified_name);
    builder_.initializer(qualified_name, t);
    initializers_.insert(qualified_name);
  }
  return qualified_name;
}

void Exporter::get_attr(const Node& node) {
  const std::string target(node.target());
  if (const Tensor* constant = graph_.find_constant(target)) {
    if (!initializers_.contains(target)) {
      builder_.reserve(target);
      builder_.initializer(target, *constant);
      initializers_.insert(target);
    }
    values_[node.id().value] = target;
    return;
  }
  if (graph_.find_subgraph(target) != nullptr)
    unmapped("a subgraph (a branch of cond) has no ONNX mapping here",
             "trace the model with the branch taken as a concrete value, or use where()");
  try {
    values_[node.id().value] = parameter(target);
  } catch (const std::invalid_argument& e) {
    unmapped(fmt::format("the root module has no tensor '{}' ({})", target, e.what()),
             "pass export_onnx the module the graph was traced from");
  }
}

void Exporter::output(const Node& node) {
  const Argument& result = node.args().at(0);
  std::vector<const Argument*> items;
  if (const ArgumentList* list = result.get_if<ArgumentList>()) {
    for (const Argument& a : *list) items.push_back(&a);
  } else {
    items.push_back(&result);
  }
  std::unordered_set<std::string> outputs;
  for (const Argument* a : items) {
    const NodeId* id = a->get_if<NodeId>();
    if (id == nullptr) unmapped("an output that is not a tensor has no ONNX mapping", "return tensors only");
    const Node& n = graph_.node(*id);
    std::string name = value(*a);
    // A graph output must be produced by a node of the graph, and named once.
    if (n.op() == OpKind::placeholder || initializers_.contains(name) || outputs.contains(name)) {
      const std::string copy = builder_.fresh("output");
      builder_.node("Identity", {name}, {copy});
      name = copy;
    }
    outputs.insert(name);
    builder_.output(name, n.tensor_meta());
  }
  // Values that are graph outputs carry their type there, not in value_info.
  onnx::GraphProto& g = builder_.graph();
  for (int i = g.value_info_size() - 1; i >= 0; --i) {
    if (outputs.contains(g.value_info(i).name())) g.mutable_value_info()->DeleteSubrange(i, 1);
  }
}

// ---- arguments --------------------------------------------------------------------------

const Argument* Exporter::arg(const Node& node, std::size_t index, std::string_view name) {
  if (index < node.args().size()) return &node.args()[index];
  return node.kwarg(name);
}

bool Exporter::given(const Node& node, std::size_t index, std::string_view name) {
  const Argument* a = arg(node, index, name);
  return a != nullptr && !a->is_none();
}

const std::string& Exporter::value(const Argument& a) const {
  const NodeId* id = a.get_if<NodeId>();
  if (id == nullptr) unmapped("a tensor argument is not a node", "pass tensors computed in the graph");
  auto it = values_.find(id->value);
  if (it == values_.end()) {
    if (lists_.contains(id->value)) unmapped("a list of tensors is used as one tensor", "index the list first");
    unmapped(fmt::format("its input %{} has no ONNX value", graph_.node(*id).name()), "export the input first");
  }
  return it->second;
}

const std::string& Exporter::value(const Node& node, std::size_t index, std::string_view name) const {
  const Argument* a = arg(node, index, name);
  if (a == nullptr) unmapped(fmt::format("the argument '{}' is missing", name), "pass it");
  return value(*a);
}

const TensorMeta& Exporter::meta_of(const Argument& a) const {
  const NodeId* id = a.get_if<NodeId>();
  const TensorMeta* meta = id != nullptr ? graph_.node(*id).tensor_meta() : nullptr;
  if (meta == nullptr || !meta->shape.is_rank_known())
    unmapped("the rank of an input is not known",
             "trace with example inputs or InputSpecs of known rank so that every size is known");
  return *meta;
}

const TensorMeta& Exporter::result_meta(const Node& node) {
  if (node.tensor_meta() == nullptr || !node.tensor_meta()->shape.is_rank_known())
    unmapped("its result has no traced shape", "trace with example inputs or InputSpecs of known shape");
  return *node.tensor_meta();
}

std::int64_t Exporter::rank_of(const Argument& a) const { return meta_of(a).shape.ndim(); }

std::string Exporter::operand(const Argument& a, DType dtype, const std::string& base) {
  if (const std::int64_t* i = a.get_if<std::int64_t>()) return builder_.constant_scalar(static_cast<double>(*i), dtype, base);
  if (const double* d = a.get_if<double>()) return builder_.constant_scalar(*d, dtype, base);
  if (const bool* b = a.get_if<bool>()) return builder_.constant_scalar(*b ? 1.0 : 0.0, dtype, base);
  const std::string& name = value(a);
  const TensorMeta* meta = graph_.node(*a.get_if<NodeId>()).tensor_meta();
  if (meta == nullptr || meta->dtype == dtype) return name;
  onnx::NodeProto& cast = builder_.node("Cast", {name}, {builder_.fresh(base)});
  set_attribute(cast, "to", static_cast<std::int64_t>(detail::onnx_elem_type(dtype)));
  return cast.output(0);
}

std::optional<std::int64_t> Exporter::int_arg(const Node& node, std::size_t index, std::string_view name) {
  const Argument* a = arg(node, index, name);
  if (a == nullptr || a->is_none()) return std::nullopt;
  if (const std::int64_t* i = a->get_if<std::int64_t>()) return *i;
  if (a->is_node())
    unmapped(fmt::format("the size argument '{}' is computed in the graph (a size not known when tracing)", name),
             "trace with example inputs or InputSpecs of known shape so that sizes are numbers");
  unmapped(fmt::format("the argument '{}' is not an integer", name), "pass an integer");
}

std::int64_t Exporter::int_arg(const Node& node, std::size_t index, std::string_view name, std::int64_t fallback) {
  return int_arg(node, index, name).value_or(fallback);
}

double Exporter::float_arg(const Node& node, std::size_t index, std::string_view name, double fallback) {
  const Argument* a = arg(node, index, name);
  if (a == nullptr || a->is_none()) return fallback;
  if (const double* d = a->get_if<double>()) return *d;
  if (const std::int64_t* i = a->get_if<std::int64_t>()) return static_cast<double>(*i);
  unmapped(fmt::format("the argument '{}' is not a number", name), "pass a number");
}

bool Exporter::bool_arg(const Node& node, std::size_t index, std::string_view name, bool fallback) {
  const Argument* a = arg(node, index, name);
  if (a == nullptr || a->is_none()) return fallback;
  if (const bool* b = a->get_if<bool>()) return *b;
  unmapped(fmt::format("the argument '{}' is not a constant boolean", name), "pass true or false");
}

Ints Exporter::ints_arg(const Node& node, std::size_t index, std::string_view name, Ints fallback) {
  const Argument* a = arg(node, index, name);
  if (a == nullptr || a->is_none()) return fallback;
  if (const std::int64_t* i = a->get_if<std::int64_t>()) return {*i};
  const ArgumentList* list = a->get_if<ArgumentList>();
  if (list == nullptr) unmapped(fmt::format("the argument '{}' is not a list of integers", name), "pass integers");
  Ints out;
  for (const Argument& item : *list) {
    if (const std::int64_t* i = item.get_if<std::int64_t>()) {
      out.push_back(*i);
    } else if (item.is_node()) {
      unmapped(fmt::format("the sizes '{}' hold a size computed in the graph (not known when tracing)", name),
               "trace with example inputs or InputSpecs of known shape so that sizes are numbers");
    } else {
      unmapped(fmt::format("the argument '{}' is not a list of integers", name), "pass integers");
    }
  }
  return out;
}

}  // namespace detail::onnx_export

bool onnx_export_available() noexcept { return true; }

std::string export_onnx(const Graph& graph, const Module& root, const OnnxOptions& options, std::source_location where) {
  Graph pure = graph;  // Note: remove_inplace rewrites in place; the caller's graph stays as it is
  remove_inplace(pure, where);
  return detail::onnx_export::Exporter(pure, root, where).run(options);
}

}  // namespace symtrace

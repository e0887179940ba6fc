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

#include "export/onnx_builder.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/dropout.hpp"
#include "symtrace/nn/embedding.hpp"
#include "symtrace/nn/layer_norm.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/pooling.hpp"
#include "symtrace/nn/shape_layers.hpp"
#include "symtrace/passes/remove_inplace.hpp"

#include <fmt/format.h>
#include <onnx/checker.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace symtrace {

namespace {

using detail::OnnxBuilder;
using detail::set_attribute;
using Ints = std::vector<std::int64_t>;

/// Thrown inside the exporter for a node it cannot map; `export_node` adds the node's context.
struct Unmapped {
  std::string why;
  std::string fix;
};

[[noreturn]] void unmapped(std::string why, std::string fix) { throw Unmapped{std::move(why), std::move(fix)}; }

std::int64_t normalize_dim(std::int64_t d, std::int64_t rank) { return d < 0 ? d + rank : d; }

class Exporter {
 public:
  Exporter(const Graph& graph, const Module& root, std::source_location where)
      : graph_(graph), root_(root), where_(where) {}

  std::string run(const OnnxOptions& options);

 private:
  void export_node(const Node& node);
  void placeholder(const Node& node);
  void get_attr(const Node& node);
  void call_module(const Node& node);
  void call_op(const Node& node);
  void output(const Node& node);
  [[noreturn]] void fail(const Node& node, const Unmapped& u) const;

  // ---- arguments ----
  /// The argument at `index` (or the keyword `name`), or nullptr when not given.
  static const Argument* arg(const Node& node, std::size_t index, std::string_view name);
  /// The value name of the tensor argument `a`.
  const std::string& value(const Argument& a) const;
  const std::string& value(const Node& node, std::size_t index, std::string_view name) const;
  /// The value name of a tensor-or-number argument; a number becomes a constant of `dtype`,
  /// and a tensor of another dtype is cast to it.
  std::string operand(const Argument& a, DType dtype, const std::string& base);
  static std::optional<std::int64_t> int_arg(const Node& node, std::size_t index, std::string_view name);
  static std::int64_t int_arg(const Node& node, std::size_t index, std::string_view name, std::int64_t fallback);
  static double float_arg(const Node& node, std::size_t index, std::string_view name, double fallback);
  static bool bool_arg(const Node& node, std::size_t index, std::string_view name, bool fallback);
  static Ints ints_arg(const Node& node, std::size_t index, std::string_view name, Ints fallback);
  /// Whether the argument is given and not None.
  static bool given(const Node& node, std::size_t index, std::string_view name);
  /// The input metadata of the node argument `a` (throws Unmapped when unknown).
  const TensorMeta& meta_of(const Argument& a) const;
  static const TensorMeta& result_meta(const Node& node);
  std::int64_t rank_of(const Argument& a) const;

  // ---- mappings shared by modules and ops ----
  void conv(const Node& node, const std::string& x, const std::string& w, const std::string* b, const Ints& stride,
            const Ints& padding, const Ints& dilation, std::int64_t groups);
  void batch_norm(const Node& node, const Argument& input, std::string scale, std::string bias, const std::string& mean,
                  const std::string& var, double eps);
  void layer_norm(const Node& node, const std::string& x, const Ints& normalized_shape, std::string scale,
                  const std::string* bias, double eps);
  void linear(const Node& node, const Argument& input, const std::string& w, const std::string* b);
  void pool(const Node& node, std::string_view op_type, const std::string& x, const Ints& kernel, Ints stride,
            const Ints& padding, const Ints* dilation, bool ceil_mode, std::optional<bool> count_include_pad);
  void adaptive_avg_pool(const Node& node, const Argument& input, const Ints& output_size);
  void gelu(const Node& node, const std::string& x, std::string_view approximate);
  void flatten(const Node& node, const Argument& input, std::int64_t start, std::int64_t end);
  void unary(const Node& node, std::string_view op_type, const std::string& x);
  void upsample_nearest(const Node& node, const std::string& x, const std::optional<std::vector<double>>& scale);
  void clip(const Node& node, const std::string& x, std::optional<double> lo, std::optional<double> hi);

  /// The initializer for the tensor `qualified_name` of the root module (written once).
  std::string parameter(const std::string& qualified_name);
  /// The value name the node's result gets (reserved on first call).
  const std::string& result(const Node& node);
  std::string tmp(const Node& node) { return builder_.fresh(result_name_base(node)); }
  static std::string result_name_base(const Node& node) { return node.name(); }

  const Graph& graph_;
  const Module& root_;
  std::source_location where_;
  OnnxBuilder builder_;
  std::unordered_map<std::uint32_t, std::string> values_;                 // node id -> value name
  std::unordered_map<std::uint32_t, std::vector<std::string>> lists_;     // node id -> list items
  std::unordered_set<std::string> initializers_;
  std::unordered_set<std::string> typed_;                                 // names with a type
};

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
  if (inserted) it->second = builder_.fresh(result_name_base(node));
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

// ---- shared mappings --------------------------------------------------------------------

Ints pair(const Ints& v, std::int64_t fallback) {
  if (v.empty()) return {fallback, fallback};
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

void Exporter::unary(const Node& node, std::string_view op_type, const std::string& x) {
  builder_.node(op_type, {x}, {result(node)});
}

void Exporter::clip(const Node& node, const std::string& x, std::optional<double> lo, std::optional<double> hi) {
  const DType dtype = result_meta(node).dtype;
  const std::string min = lo ? builder_.constant_scalar(*lo, dtype, node.name() + "_min") : std::string();
  const std::string max = hi ? builder_.constant_scalar(*hi, dtype, node.name() + "_max") : std::string();
  builder_.node("Clip", {x, min, max}, {result(node)});
}

void Exporter::conv(const Node& node, const std::string& x, const std::string& w, const std::string* b,
                    const Ints& stride, const Ints& padding, const Ints& dilation, std::int64_t groups) {
  std::vector<std::string> inputs{x, w};
  if (b != nullptr) inputs.push_back(*b);
  onnx::NodeProto& n = builder_.node("Conv", inputs, {result(node)});
  const Ints p = pair(padding, 0);
  set_attribute(n, "strides", pair(stride, 1));
  set_attribute(n, "pads", Ints{p[0], p[1], p[0], p[1]});
  set_attribute(n, "dilations", pair(dilation, 1));
  set_attribute(n, "group", groups);
}

void Exporter::batch_norm(const Node& node, const Argument& input, std::string scale, std::string bias,
                          const std::string& mean, const std::string& var, double eps) {
  const TensorMeta& in = meta_of(input);
  if (in.shape.rank() < 2 || !in.shape[1].is_known())
    unmapped("the channel count of the input is not known", "trace with example inputs of known shape");
  const std::int64_t channels = in.shape[1].value();
  if (scale.empty()) scale = builder_.constant_tensor(ones({channels}), node.name() + "_scale");
  if (bias.empty()) bias = builder_.constant_tensor(zeros({channels}), node.name() + "_bias");
  onnx::NodeProto& n = builder_.node("BatchNormalization", {value(input), scale, bias, mean, var}, {result(node)});
  set_attribute(n, "epsilon", eps);
}

void Exporter::layer_norm(const Node& node, const std::string& x, const Ints& normalized_shape, std::string scale,
                          const std::string* bias, double eps) {
  if (scale.empty()) scale = builder_.constant_tensor(ones(normalized_shape), node.name() + "_scale");
  std::vector<std::string> inputs{x, scale};
  if (bias != nullptr) inputs.push_back(*bias);
  onnx::NodeProto& n = builder_.node("LayerNormalization", inputs, {result(node)});
  set_attribute(n, "axis", -static_cast<std::int64_t>(normalized_shape.size()));
  set_attribute(n, "epsilon", eps);
}

void Exporter::linear(const Node& node, const Argument& input, const std::string& w, const std::string* b) {
  const std::string& x = value(input);
  if (rank_of(input) == 2) {
    std::vector<std::string> inputs{x, w};
    if (b != nullptr) inputs.push_back(*b);
    onnx::NodeProto& n = builder_.node("Gemm", inputs, {result(node)});
    set_attribute(n, "transB", std::int64_t{1});
    return;
  }
  onnx::NodeProto& t = builder_.node("Transpose", {w}, {builder_.fresh(w + "_t")});
  set_attribute(t, "perm", Ints{1, 0});
  const std::string wt = t.output(0);
  if (b == nullptr) {
    builder_.node("MatMul", {x, wt}, {result(node)});
    return;
  }
  const std::string product = builder_.node1("MatMul", {x, wt}, node.name() + "_matmul");
  builder_.node("Add", {product, *b}, {result(node)});
}

void Exporter::pool(const Node& node, std::string_view op_type, const std::string& x, const Ints& kernel, Ints stride,
                    const Ints& padding, const Ints* dilation, bool ceil_mode, std::optional<bool> count_include_pad) {
  const Ints k = pair(kernel, 1);
  if (stride.empty()) stride = k;
  const Ints p = pair(padding, 0);
  onnx::NodeProto& n = builder_.node(op_type, {x}, {result(node)});
  set_attribute(n, "kernel_shape", k);
  set_attribute(n, "strides", pair(stride, 1));
  set_attribute(n, "pads", Ints{p[0], p[1], p[0], p[1]});
  if (dilation != nullptr) set_attribute(n, "dilations", pair(*dilation, 1));
  set_attribute(n, "ceil_mode", std::int64_t{ceil_mode ? 1 : 0});
  if (count_include_pad) set_attribute(n, "count_include_pad", std::int64_t{*count_include_pad ? 1 : 0});
}

void Exporter::adaptive_avg_pool(const Node& node, const Argument& input, const Ints& output_size) {
  const Ints out = pair(output_size, 1);
  if (out[0] == 1 && out[1] == 1) {
    builder_.node("GlobalAveragePool", {value(input)}, {result(node)});
    return;
  }
  const TensorMeta& in = meta_of(input);
  const Dim h = in.shape[in.shape.rank() - 2], w = in.shape[in.shape.rank() - 1];
  if (!h.is_known() || !w.is_known() || h.value() % out[0] != 0 || w.value() % out[1] != 0)
    unmapped(fmt::format("adaptive average pooling to {}x{} of an input of {} is not a fixed pooling window",
                         out[0], out[1], to_string(in.shape)),
             "pool to 1x1, or to an output size that divides the input size");
  const Ints kernel{h.value() / out[0], w.value() / out[1]};
  pool(node, "AveragePool", value(input), kernel, kernel, {0}, nullptr, false, std::nullopt);
}

void Exporter::gelu(const Node& node, const std::string& x, std::string_view approximate) {
  // ONNX has Gelu only from opset 20: written out as symtrace's kernel computes it.
  const DType f = DType::float32;
  const std::string base = node.name();
  std::string inner;
  if (approximate == "tanh") {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    const std::string x3 = builder_.node1("Mul", {builder_.node1("Mul", {x, x}, base + "_sq"), x}, base + "_cube");
    const std::string cubic = builder_.node1("Mul", {x3, builder_.constant_scalar(0.044715, f, base + "_c")}, base + "_cubic");
    const std::string sum = builder_.node1("Add", {x, cubic}, base + "_sum");
    const std::string scaled =
        builder_.node1("Mul", {sum, builder_.constant_scalar(std::sqrt(2.0 / std::acos(-1.0)), f, base + "_k")}, base + "_scaled");
    inner = builder_.node1("Tanh", {scaled}, base + "_tanh");
  } else if (approximate == "none") {  // 0.5 x (1 + erf(x / sqrt(2)))
    const std::string scaled =
        builder_.node1("Mul", {x, builder_.constant_scalar(1.0 / std::sqrt(2.0), f, base + "_k")}, base + "_scaled");
    inner = builder_.node1("Erf", {scaled}, base + "_erf");
  } else {
    unmapped(fmt::format("gelu approximate='{}' is not known", approximate), "use 'none' or 'tanh'");
  }
  const std::string one_plus = builder_.node1("Add", {inner, builder_.constant_scalar(1.0, f, base + "_one")}, base + "_1p");
  const std::string half_x = builder_.node1("Mul", {x, builder_.constant_scalar(0.5, f, base + "_half")}, base + "_halfx");
  builder_.node("Mul", {half_x, one_plus}, {result(node)});
}

void Exporter::flatten(const Node& node, const Argument& input, std::int64_t start, std::int64_t end) {
  const std::int64_t rank = rank_of(input);
  if (rank == 0) {
    builder_.node("Reshape", {value(input), builder_.constant_ints({1}, node.name() + "_shape")}, {result(node)});
    return;
  }
  start = normalize_dim(start, rank);
  end = normalize_dim(end, rank);
  // Reshape's 0 keeps a size and -1 takes the rest: [0]*start, -1, [0]*(rank-1-end).
  Ints shape(static_cast<std::size_t>(start), 0);
  shape.push_back(-1);
  shape.resize(shape.size() + static_cast<std::size_t>(rank - 1 - end), 0);
  builder_.node("Reshape", {value(input), builder_.constant_ints(shape, node.name() + "_shape")}, {result(node)});
}

void Exporter::upsample_nearest(const Node& node, const std::string& x,
                                const std::optional<std::vector<double>>& scale) {
  // Nearest neighbour as symtrace's kernel (and PyTorch's legacy 'nearest') picks it:
  // source = floor(destination / scale).
  std::vector<std::string> inputs{x, ""};
  if (scale) {
    const double sh = scale->empty() ? 1.0 : scale->front(), sw = scale->empty() ? 1.0 : scale->back();
    inputs.push_back(builder_.constant_tensor(tensor(std::vector<float>{1.0f, 1.0f, static_cast<float>(sh),
                                                                        static_cast<float>(sw)}, {4}),
                                              node.name() + "_scales"));
  } else {
    const Shape& out = result_meta(node).shape;
    if (!out.is_fully_known()) unmapped("the upsampled size is not known", "trace with known shapes");
    inputs.push_back("");
    inputs.push_back(builder_.constant_ints(out.sizes(), node.name() + "_sizes"));
  }
  onnx::NodeProto& n = builder_.node("Resize", inputs, {result(node)});
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("nearest");
  a = n.add_attribute();
  a->set_name("coordinate_transformation_mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("asymmetric");
  a = n.add_attribute();
  a->set_name("nearest_mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("floor");
}

// ---- call_module leaves -----------------------------------------------------------------

void Exporter::call_module(const Node& node) {
  const std::string path(node.target());
  const Module& m = root_.get_submodule(path);
  if (const Argument* failure = node.meta(meta_keys::failure)) {
    const std::string* reason = failure->get_if<std::string>();
    unmapped(fmt::format("the module could not be traced ({}), so the graph holds it as an opaque call",
                         reason != nullptr ? *reason : "no reason recorded"),
             "export a graph in which it is traced through");
  }
  if (node.args().size() != 1 || !node.kwargs().empty())
    unmapped("a module called with more than one argument has no ONNX mapping", "call it with one tensor");
  const Argument& input = node.args()[0];
  const std::string& x = value(input);
  auto param = [&](const Tensor& t, std::string_view name) {
    return t.defined() ? parameter(path.empty() ? std::string(name) : path + "." + std::string(name)) : std::string();
  };
  if (const auto* conv2d = dynamic_cast<const nn::Conv2dImpl*>(&m)) {
    const std::string bias = param(conv2d->bias, "bias");
    const nn::Conv2dOptions& o = conv2d->options;
    conv(node, x, param(conv2d->weight, "weight"), bias.empty() ? nullptr : &bias, {o.stride.h, o.stride.w},
         {o.padding.h, o.padding.w}, {o.dilation.h, o.dilation.w}, o.groups);
  } else if (const auto* bn = dynamic_cast<const nn::BatchNorm2dImpl*>(&m)) {
    if (bn->is_training() || !bn->running_mean.defined())
      unmapped("batch norm in training mode (or without running statistics) normalises by batch statistics",
               "call eval() on the model before tracing and keep track_running_stats");
    batch_norm(node, input, param(bn->weight, "weight"), param(bn->bias, "bias"), param(bn->running_mean, "running_mean"),
               param(bn->running_var, "running_var"), bn->options.eps);
  } else if (const auto* lin = dynamic_cast<const nn::LinearImpl*>(&m)) {
    const std::string bias = param(lin->bias, "bias");
    linear(node, input, param(lin->weight, "weight"), bias.empty() ? nullptr : &bias);
  } else if (const auto* ln = dynamic_cast<const nn::LayerNormImpl*>(&m)) {
    const std::string bias = param(ln->bias, "bias");
    layer_norm(node, x, ln->normalized_shape, param(ln->weight, "weight"), bias.empty() ? nullptr : &bias,
               ln->options.eps);
  } else if (dynamic_cast<const nn::ReLUImpl*>(&m) != nullptr) {
    unary(node, "Relu", x);
  } else if (dynamic_cast<const nn::ReLU6Impl*>(&m) != nullptr) {
    clip(node, x, 0.0, 6.0);
  } else if (const auto* g = dynamic_cast<const nn::GELUImpl*>(&m)) {
    gelu(node, x, g->options.approximate);
  } else if (dynamic_cast<const nn::SiLUImpl*>(&m) != nullptr) {
    builder_.node("Mul", {x, builder_.node1("Sigmoid", {x}, node.name() + "_sigmoid")}, {result(node)});
  } else if (dynamic_cast<const nn::SigmoidImpl*>(&m) != nullptr) {
    unary(node, "Sigmoid", x);
  } else if (dynamic_cast<const nn::TanhImpl*>(&m) != nullptr) {
    unary(node, "Tanh", x);
  } else if (dynamic_cast<const nn::DropoutImpl*>(&m) != nullptr || dynamic_cast<const nn::IdentityImpl*>(&m) != nullptr) {
    unary(node, "Identity", x);  // Note [Inference export]
  } else if (const auto* mp = dynamic_cast<const nn::MaxPool2dImpl*>(&m)) {
    const Ints dilation{mp->options.dilation.h, mp->options.dilation.w};
    pool(node, "MaxPool", x, {mp->kernel_size.h, mp->kernel_size.w}, {mp->stride.h, mp->stride.w},
         {mp->options.padding.h, mp->options.padding.w}, &dilation, mp->options.ceil_mode, std::nullopt);
  } else if (const auto* ap = dynamic_cast<const nn::AvgPool2dImpl*>(&m)) {
    pool(node, "AveragePool", x, {ap->kernel_size.h, ap->kernel_size.w}, {ap->stride.h, ap->stride.w},
         {ap->options.padding.h, ap->options.padding.w}, nullptr, ap->options.ceil_mode, ap->options.count_include_pad);
  } else if (const auto* aap = dynamic_cast<const nn::AdaptiveAvgPool2dImpl*>(&m)) {
    adaptive_avg_pool(node, input, {aap->output_size.h, aap->output_size.w});
  } else if (const auto* fl = dynamic_cast<const nn::FlattenImpl*>(&m)) {
    flatten(node, input, fl->options.start_dim, fl->options.end_dim);
  } else if (const auto* up = dynamic_cast<const nn::UpsampleImpl*>(&m)) {
    upsample_nearest(node, x, up->options.size ? std::nullopt : up->options.scale_factor);
  } else if (const auto* emb = dynamic_cast<const nn::EmbeddingImpl*>(&m)) {
    builder_.node("Gather", {param(emb->weight, "weight"), x}, {result(node)});
  } else {
    unmapped(fmt::format("the module type {} has no ONNX mapping", m.type_name()),
             "trace through it (make it a non-leaf module) so that its ops are exported, or write it with "
             "mapped layers and ops");
  }
}

// ---- call_function / call_method --------------------------------------------------------

/// The ONNX operator of an op that maps one to one.
std::optional<std::string_view> simple_op(std::string_view op) {
  static const std::unordered_map<std::string_view, std::string_view> table{
      {"relu", "Relu"},       {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"},     {"exp", "Exp"},
      {"log", "Log"},         {"sqrt", "Sqrt"},       {"neg", "Neg"},       {"abs", "Abs"},
      {"contiguous", "Identity"},
  };
  auto it = table.find(op);
  return it == table.end() ? std::nullopt : std::optional(it->second);
}

DType promoted(DType a, DType b) {
  if (a == DType::float32 || b == DType::float32) return DType::float32;
  if (a == DType::int64 || b == DType::int64) return DType::int64;
  return DType::bool_;
}

void Exporter::call_op(const Node& node) {
  const std::string_view op = node.target();
  const std::string base = node.name();
  if (op == "getitem") {
    const Argument* list = arg(node, 0, "self");
    const NodeId* id = list != nullptr ? list->get_if<NodeId>() : nullptr;
    auto it = id != nullptr ? lists_.find(id->value) : lists_.end();
    const std::optional<std::int64_t> index = int_arg(node, 1, "index");
    if (it == lists_.end() || !index) unmapped("getitem of something other than a list result", "index list results");
    const auto n = static_cast<std::int64_t>(it->second.size());
    const std::int64_t i = normalize_dim(*index, n);
    if (i < 0 || i >= n) unmapped(fmt::format("index {} is out of range for {} items", *index, n), "fix the index");
    values_[node.id().value] = it->second[static_cast<std::size_t>(i)];
    return;
  }
  if (node.meta(meta_keys::type) != nullptr)
    unmapped(fmt::format("the size arithmetic '{}' is computed in the graph (a size not known when tracing)", op),
             "trace with example inputs or InputSpecs of known shape so that sizes are numbers");
  if (const auto simple = simple_op(op)) {
    builder_.node(*simple, {value(node, 0, "self")}, {result(node)});
    return;
  }
  auto binary = [&](std::string_view onnx_op) {
    const Argument* a = arg(node, 0, "self");
    const Argument* b = arg(node, 1, "other");
    if (a == nullptr || b == nullptr) unmapped("an operand is missing", "pass two operands");
    const DType dtype = result_meta(node).dtype;
    builder_.node(onnx_op, {operand(*a, dtype, base + "_a"), operand(*b, dtype, base + "_b")}, {result(node)});
  };
  auto compare = [&](std::string_view onnx_op, bool negate) {
    const Argument* a = arg(node, 0, "self");
    const Argument* b = arg(node, 1, "other");
    if (a == nullptr || b == nullptr) unmapped("an operand is missing", "pass two operands");
    DType dtype = meta_of(*a).dtype;
    if (b->is_node()) dtype = promoted(dtype, meta_of(*b).dtype);
    else if (b->get_if<double>() != nullptr) dtype = promoted(dtype, DType::float32);
    const std::vector<std::string> inputs{operand(*a, dtype, base + "_a"), operand(*b, dtype, base + "_b")};
    if (!negate) {
      builder_.node(onnx_op, inputs, {result(node)});
    } else {
      builder_.node("Not", {builder_.node1(onnx_op, inputs, base + "_eq")}, {result(node)});
    }
  };
  if (op == "add" || op == "add_") return binary("Add");
  if (op == "sub") return binary("Sub");
  if (op == "mul" || op == "mul_") return binary("Mul");
  if (op == "div") return binary("Div");
  if (op == "pow") return binary("Pow");
  if (op == "eq") return compare("Equal", false);
  if (op == "ne") return compare("Equal", true);
  if (op == "lt") return compare("Less", false);
  if (op == "le") return compare("LessOrEqual", false);
  if (op == "gt") return compare("Greater", false);
  if (op == "ge") return compare("GreaterOrEqual", false);

  const Argument* self = arg(node, 0, "self");
  if (op == "relu_") return unary(node, "Relu", value(node, 0, "self"));
  if (op == "relu6") return clip(node, value(node, 0, "self"), 0.0, 6.0);
  if (op == "clamp") {
    const Argument* lo = arg(node, 1, "min");
    const Argument* hi = arg(node, 2, "max");
    auto number = [](const Argument* a) -> std::optional<double> {
      if (a == nullptr || a->is_none()) return std::nullopt;
      if (const double* d = a->get_if<double>()) return *d;
      if (const std::int64_t* i = a->get_if<std::int64_t>()) return static_cast<double>(*i);
      unmapped("a clamp bound is not a number", "pass numbers");
    };
    return clip(node, value(node, 0, "self"), number(lo), number(hi));
  }
  if (op == "silu") {
    const std::string& x = value(node, 0, "self");
    builder_.node("Mul", {x, builder_.node1("Sigmoid", {x}, base + "_sigmoid")}, {result(node)});
    return;
  }
  if (op == "rsqrt") {
    builder_.node("Reciprocal", {builder_.node1("Sqrt", {value(node, 0, "self")}, base + "_sqrt")}, {result(node)});
    return;
  }
  if (op == "gelu") {
    const Argument* a = arg(node, 1, "approximate");
    const std::string* mode = a != nullptr ? a->get_if<std::string>() : nullptr;
    return gelu(node, value(node, 0, "self"), mode != nullptr ? *mode : "none");
  }
  if (op == "matmul") {
    builder_.node("MatMul", {value(node, 0, "self"), value(node, 1, "other")}, {result(node)});
    return;
  }
  if (op == "dropout") return unary(node, "Identity", value(node, 0, "input"));  // Note [Inference export]
  if (op == "softmax" || op == "log_softmax") {
    onnx::NodeProto& n = builder_.node(op == "softmax" ? "Softmax" : "LogSoftmax", {value(node, 0, "self")}, {result(node)});
    set_attribute(n, "axis", int_arg(node, 1, "dim", -1));
    return;
  }
  if (op == "to") {
    const Argument* a = arg(node, 1, "dtype");
    const DType* dtype = a != nullptr ? a->get_if<DType>() : nullptr;
    if (dtype == nullptr) unmapped("the target dtype is not a constant", "pass a dtype");
    onnx::NodeProto& n = builder_.node("Cast", {value(node, 0, "self")}, {result(node)});
    set_attribute(n, "to", static_cast<std::int64_t>(detail::onnx_elem_type(*dtype)));
    return;
  }
  if (op == "where") {
    const DType dtype = result_meta(node).dtype;
    const Argument* a = arg(node, 1, "self");
    const Argument* b = arg(node, 2, "other");
    if (a == nullptr || b == nullptr) unmapped("an operand is missing", "pass three operands");
    builder_.node("Where", {value(node, 0, "condition"), operand(*a, dtype, base + "_a"), operand(*b, dtype, base + "_b")},
                  {result(node)});
    return;
  }
  if (op == "linear") {
    const std::string* b = given(node, 2, "bias") ? &value(node, 2, "bias") : nullptr;
    return linear(node, *arg(node, 0, "input"), value(node, 1, "weight"), b);
  }
  if (op == "conv2d") {
    const std::string* b = given(node, 2, "bias") ? &value(node, 2, "bias") : nullptr;
    return conv(node, value(node, 0, "input"), value(node, 1, "weight"), b, ints_arg(node, 3, "stride", {1, 1}),
                ints_arg(node, 4, "padding", {0, 0}), ints_arg(node, 5, "dilation", {1, 1}), int_arg(node, 6, "groups", 1));
  }
  if (op == "batch_norm") {
    if (bool_arg(node, 5, "training", true) || !given(node, 3, "running_mean") || !given(node, 4, "running_var"))
      unmapped("batch norm in training mode (or without running statistics) normalises by batch statistics",
               "call eval() on the model before tracing and pass the running statistics");
    return batch_norm(node, *arg(node, 0, "input"), given(node, 1, "weight") ? value(node, 1, "weight") : std::string(),
                      given(node, 2, "bias") ? value(node, 2, "bias") : std::string(), value(node, 3, "running_mean"),
                      value(node, 4, "running_var"), float_arg(node, 7, "eps", 1e-5));
  }
  if (op == "layer_norm") {
    const std::string* b = given(node, 3, "bias") ? &value(node, 3, "bias") : nullptr;
    return layer_norm(node, value(node, 0, "input"), ints_arg(node, 1, "normalized_shape", {}),
                      given(node, 2, "weight") ? value(node, 2, "weight") : std::string(), b,
                      float_arg(node, 4, "eps", 1e-5));
  }
  if (op == "max_pool2d") {
    const Ints dilation = ints_arg(node, 4, "dilation", {1, 1});
    return pool(node, "MaxPool", value(node, 0, "self"), ints_arg(node, 1, "kernel_size", {}),
                ints_arg(node, 2, "stride", {}), ints_arg(node, 3, "padding", {0, 0}), &dilation,
                bool_arg(node, 5, "ceil_mode", false), std::nullopt);
  }
  if (op == "avg_pool2d") {
    return pool(node, "AveragePool", value(node, 0, "self"), ints_arg(node, 1, "kernel_size", {}),
                ints_arg(node, 2, "stride", {}), ints_arg(node, 3, "padding", {0, 0}), nullptr,
                bool_arg(node, 4, "ceil_mode", false), bool_arg(node, 5, "count_include_pad", true));
  }
  if (op == "upsample_nearest2d") {
    const Argument* scales = arg(node, 2, "scale_factors");
    std::optional<std::vector<double>> scale;
    if (scales != nullptr && !scales->is_none()) {
      const ArgumentList* list = scales->get_if<ArgumentList>();
      if (list == nullptr) unmapped("the scale factors are not a list of numbers", "pass numbers");
      scale.emplace();
      for (const Argument& f : *list) {
        if (const double* d = f.get_if<double>()) scale->push_back(*d);
        else if (const std::int64_t* i = f.get_if<std::int64_t>()) scale->push_back(static_cast<double>(*i));
        else unmapped("a scale factor is not a number", "pass numbers");
      }
    }
    return upsample_nearest(node, value(*self), scale);
  }
  if (op == "adaptive_avg_pool2d") return adaptive_avg_pool(node, *self, ints_arg(node, 1, "output_size", {}));
  if (op == "mean" || op == "sum" || op == "amax") {
    const Ints dims = ints_arg(node, 1, "dim", {});
    const bool keepdim = bool_arg(node, 2, "keepdim", false);
    std::vector<std::string> inputs{value(node, 0, "self")};
    if (op == "sum" && !dims.empty()) inputs.push_back(builder_.constant_ints(dims, base + "_axes"));  // ReduceSum takes axes as an input since opset 13
    onnx::NodeProto& n = builder_.node(op == "mean" ? "ReduceMean" : op == "sum" ? "ReduceSum" : "ReduceMax", inputs,
                                       {result(node)});
    if (op != "sum" && !dims.empty()) set_attribute(n, "axes", dims);
    set_attribute(n, "keepdims", std::int64_t{keepdim ? 1 : 0});
    return;
  }
  if (op == "argmax") {
    const std::optional<std::int64_t> dim = int_arg(node, 1, "dim");
    if (!dim) unmapped("argmax over all elements has no direct ONNX mapping", "give argmax a dim");
    onnx::NodeProto& n = builder_.node("ArgMax", {value(node, 0, "self")}, {result(node)});
    set_attribute(n, "axis", *dim);
    set_attribute(n, "keepdims", std::int64_t{bool_arg(node, 2, "keepdim", false) ? 1 : 0});
    return;
  }
  if (op == "reshape" || op == "view") {
    Ints shape = ints_arg(node, 1, op == "reshape" ? "shape" : "size", {});
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      // A 0 in ONNX's Reshape keeps the input size; write the traced sizes instead.
      const Shape& out = result_meta(node).shape;
      if (!out.is_fully_known()) unmapped("reshape to a shape holding 0 with unknown sizes", "trace with known shapes");
      shape = out.sizes();
    }
    builder_.node("Reshape", {value(node, 0, "self"), builder_.constant_ints(shape, base + "_shape")}, {result(node)});
    return;
  }
  if (op == "flatten") return flatten(node, *self, int_arg(node, 1, "start_dim", 0), int_arg(node, 2, "end_dim", -1));
  if (op == "transpose" || op == "permute") {
    const std::int64_t rank = rank_of(*self);
    Ints perm;
    if (op == "permute") {
      for (std::int64_t d : ints_arg(node, 1, "dims", {})) perm.push_back(normalize_dim(d, rank));
    } else {
      for (std::int64_t d = 0; d < rank; ++d) perm.push_back(d);
      const std::int64_t a = normalize_dim(int_arg(node, 1, "dim0", 0), rank);
      const std::int64_t b = normalize_dim(int_arg(node, 2, "dim1", 0), rank);
      if (a < 0 || b < 0 || a >= rank || b >= rank) unmapped("a transposed dim is out of range", "fix the dims");
      std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
    }
    onnx::NodeProto& n = builder_.node("Transpose", {value(*self)}, {result(node)});
    set_attribute(n, "perm", perm);
    return;
  }
  if (op == "expand") {
    Ints sizes = ints_arg(node, 1, "size", {});
    for (std::int64_t& s : sizes) s = s == -1 ? 1 : s;  // Expand broadcasts: 1 keeps the input's size, as -1 does
    builder_.node("Expand", {value(*self), builder_.constant_ints(sizes, base + "_shape")}, {result(node)});
    return;
  }
  if (op == "cat" || op == "stack") {
    const Argument* tensors = arg(node, 0, "tensors");
    const ArgumentList* list = tensors != nullptr ? tensors->get_if<ArgumentList>() : nullptr;
    if (list == nullptr) unmapped("the tensors to join are not a list", "pass a list of tensors");
    const std::int64_t dim = int_arg(node, 1, "dim", 0);
    std::vector<std::string> inputs;
    for (const Argument& t : *list) {
      if (op == "cat") {
        inputs.push_back(value(t));
      } else {
        const std::int64_t d = normalize_dim(dim, rank_of(t) + 1);
        inputs.push_back(builder_.node1("Unsqueeze", {value(t), builder_.constant_ints({d}, base + "_axes")}, base + "_item"));
      }
    }
    const std::int64_t rank = result_meta(node).shape.ndim();
    onnx::NodeProto& n = builder_.node("Concat", inputs, {result(node)});
    set_attribute(n, "axis", normalize_dim(dim, rank));
    return;
  }
  if (op == "select") {
    const std::string index = builder_.constant_ints({int_arg(node, 2, "index", 0)}, base + "_index", true);
    onnx::NodeProto& n = builder_.node("Gather", {value(*self), index}, {result(node)});
    set_attribute(n, "axis", int_arg(node, 1, "dim", 0));
    return;
  }
  if (op == "index_select") {
    onnx::NodeProto& n = builder_.node("Gather", {value(*self), value(node, 2, "index")}, {result(node)});
    set_attribute(n, "axis", int_arg(node, 1, "dim", 0));
    return;
  }
  if (op == "embedding") {
    builder_.node("Gather", {value(node, 0, "weight"), value(node, 1, "indices")}, {result(node)});
    return;
  }
  if (op == "slice" || op == "narrow") {
    const std::int64_t dim = int_arg(node, 1, "dim", 0);
    std::int64_t start = 0, end = std::numeric_limits<std::int64_t>::max(), step = 1;
    if (op == "slice") {
      start = int_arg(node, 2, "start", 0);
      end = int_arg(node, 3, "end", end);
      step = int_arg(node, 4, "step", 1);
    } else {
      start = int_arg(node, 2, "start", 0);
      end = start + int_arg(node, 3, "length", 0);
    }
    builder_.node("Slice",
                  {value(*self), builder_.constant_ints({start}, base + "_starts"), builder_.constant_ints({end}, base + "_ends"),
                   builder_.constant_ints({dim}, base + "_axes"), builder_.constant_ints({step}, base + "_steps")},
                  {result(node)});
    return;
  }
  if (op == "unsqueeze") {
    builder_.node("Unsqueeze", {value(*self), builder_.constant_ints({int_arg(node, 1, "dim", 0)}, base + "_axes")},
                  {result(node)});
    return;
  }
  if (op == "squeeze") {
    const std::optional<std::int64_t> dim = int_arg(node, 1, "dim");
    if (!dim) return unary(node, "Squeeze", value(*self));
    const TensorMeta& in = meta_of(*self);
    const Dim size = in.shape[static_cast<std::size_t>(normalize_dim(*dim, in.shape.ndim()))];
    if (size.is_known() && size.value() != 1) return unary(node, "Identity", value(*self));  // torch leaves it as it is
    builder_.node("Squeeze", {value(*self), builder_.constant_ints({*dim}, base + "_axes")}, {result(node)});
    return;
  }
  if (op == "chunk" || op == "split" || op == "split_with_sizes" || op == "unbind") {
    const TensorMeta& in = meta_of(*self);
    const std::int64_t dim = normalize_dim(int_arg(node, op == "unbind" ? 1 : 2, "dim", 0), in.shape.ndim());
    const Dim size = in.shape[static_cast<std::size_t>(dim)];
    if (!size.is_known()) unmapped("the size of the split dim is not known", "trace with known shapes");
    Ints sizes;
    if (op == "split_with_sizes") {
      sizes = ints_arg(node, 1, "split_sizes", {});
    } else {
      const std::int64_t n = size.value();
      const std::int64_t step = op == "unbind" ? 1
                                : op == "split" ? int_arg(node, 1, "split_size", 1)
                                                : (n + int_arg(node, 1, "chunks", 1) - 1) / int_arg(node, 1, "chunks", 1);
      if (step <= 0) unmapped("the split size is not positive", "pass a positive size");
      for (std::int64_t at = 0; at < n; at += step) sizes.push_back(std::min(step, n - at));
    }
    std::vector<std::string> outputs;
    for (std::size_t i = 0; i < sizes.size(); ++i) outputs.push_back(builder_.fresh(fmt::format("{}_{}", base, i)));
    onnx::NodeProto& n = builder_.node("Split", {value(*self), builder_.constant_ints(sizes, base + "_sizes")}, outputs);
    set_attribute(n, "axis", dim);
    if (op == "unbind") {
      for (std::string& out : outputs)
        out = builder_.node1("Squeeze", {out, builder_.constant_ints({dim}, base + "_axes")}, out + "_squeezed");
    }
    lists_[node.id().value] = outputs;
    return;
  }
  if (op == "zeros" || op == "ones" || op == "full") {
    const double fill = op == "full" ? float_arg(node, 1, "fill_value", 0.0) : op == "ones" ? 1.0 : 0.0;
    const std::string shape = builder_.constant_ints(ints_arg(node, 0, "size", {}), base + "_shape");
    onnx::NodeProto& n = builder_.node("ConstantOfShape", {shape}, {result(node)});
    onnx::AttributeProto& value_attr = *n.add_attribute();
    value_attr.set_name("value");
    value_attr.set_type(onnx::AttributeProto::TENSOR);
    *value_attr.mutable_t() = detail::onnx_tensor(full({1}, fill, result_meta(node).dtype), "");
    return;
  }
  unmapped(fmt::format("the op '{}' has no ONNX mapping", op),
           "rewrite it with mapped ops (replace_pattern), or keep it inside a module the exporter maps");
}

}  // namespace

bool onnx_export_available() noexcept { return true; }

std::string export_onnx(const Graph& graph, const Module& root, const OnnxOptions& options, std::source_location where) {
  Graph pure = graph;  // Note: remove_inplace rewrites in place; the caller's graph stays as it is
  remove_inplace(pure, where);
  return Exporter(pure, root, where).run(options);
}

}  // namespace symtrace

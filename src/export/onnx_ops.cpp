// ONNX export of call_function and call_method nodes: the registry's ops that have an ONNX
// counterpart, by op name (one table for both, as `x.relu()` and `relu(x)` are one op).
#include "export/onnx_exporter.hpp"
#include "symtrace/core/factories.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace symtrace::detail::onnx_export {

namespace {

// ---- call_function / call_method --------------------------------------------------------

/// The ONNX operator of an op that maps one to one.
std::optional<std::string_view> simple_op(std::string_view op) {
  static const std::unordered_map<std::string_view, std::string_view> table{
      {"relu", "Relu"},
      {"sigmoid", "Sigmoid"},
      {"tanh", "Tanh"},
      {"exp", "Exp"},
      {"log", "Log"},
      {"sqrt", "Sqrt"},
      {"neg", "Neg"},
      {"abs", "Abs"},
      {"contiguous", "Identity"},
      {"hardswish", "HardSwish"},
  };
  auto it = table.find(op);
  return it == table.end() ? std::nullopt : std::optional(it->second);
}

DType promoted(DType a, DType b) {
  if (a == DType::float32 || b == DType::float32) return DType::float32;
  if (a == DType::int64 || b == DType::int64) return DType::int64;
  return DType::bool_;
}

}  // namespace

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
  if (node.meta(meta_keys::type) != nullptr) return size_arithmetic(node);
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
  if (op == "hardsigmoid") return hard_sigmoid(node, value(node, 0, "self"));
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
    onnx::NodeProto& n = builder_.node(op == "mean" ? "ReduceMean" : op == "sum" ? "ReduceSum"
                                                                                 : "ReduceMax",
                                       inputs,
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
    const std::string_view name = op == "reshape" ? "shape" : "size";
    const Argument* sizes = arg(node, 1, name);
    const ArgumentList* items = sizes != nullptr ? sizes->get_if<ArgumentList>() : nullptr;
    const bool has_zero = items != nullptr && std::any_of(items->begin(), items->end(), [](const Argument& a) {
                            const std::int64_t* i = a.get_if<std::int64_t>();
                            return i != nullptr && *i == 0;
                          });
    std::string shape;
    if (has_zero) {
      // A 0 in ONNX's Reshape keeps the input size; write the traced sizes instead.
      const Shape& out = result_meta(node).shape;
      if (!out.is_fully_known()) unmapped("reshape to a shape holding 0 with unknown sizes", "trace with known shapes");
      shape = builder_.constant_ints(out.sizes(), base + "_shape");
    } else {
      shape = sizes_input(node, 1, name, base + "_shape");
    }
    builder_.node("Reshape", {value(node, 0, "self"), shape}, {result(node)});
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
    // Expand broadcasts: 1 keeps the input's size, as -1 does.
    const std::string shape = sizes_input(node, 1, "size", base + "_shape", [](std::int64_t s) { return s == -1 ? std::int64_t{1} : s; });
    builder_.node("Expand", {value(*self), shape}, {result(node)});
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
    // torch leaves a dim that is not 1 as it is (the traced result keeps its rank then).
    if (result_meta(node).shape.rank() == in.shape.rank()) return unary(node, "Identity", value(*self));
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
      const std::int64_t step = op == "unbind"  ? 1
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
    const double fill = op == "full" ? float_arg(node, 1, "fill_value", 0.0) : op == "ones" ? 1.0
                                                                                            : 0.0;
    const std::string shape = sizes_input(node, 0, "size", base + "_shape");
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

// Note [Sizes computed in the graph]: a trace with named dims computes sizes in the graph
// (`x.size(0)`, `n * 2`, `reshape({n, -1})`), as fx does; ONNX computes them at run time on
// 0-d int64 tensors: Shape and Gather for a size; Add, Sub, Mul, Mod (ONNX's integer Mod is
// Python's), Min and Max for the arithmetic; Python's floor division as Div of a - Mod(a, b),
// which divides exactly; and a Concat of the pieces for a sizes argument.
void Exporter::size_arithmetic(const Node& node) {
  const std::string_view op = node.target();
  const std::string base = node.name();
  const auto operand = [&](std::size_t index, std::string_view name) -> std::string {
    const Argument* a = arg(node, index, name);
    if (a == nullptr) unmapped("an operand is missing", "pass two operands");
    if (const std::int64_t* i = a->get_if<std::int64_t>()) return builder_.constant_ints({*i}, fmt::format("{}_{}", base, name), true);
    if (!a->is_node()) unmapped("an operand is not an integer", "pass integers");
    return value(*a);
  };
  if (const Argument* type = node.meta(meta_keys::type); type != nullptr && *type == Argument("float"))
    unmapped(fmt::format("'{}' computes a float from sizes, which the exporter does not map", op),
             "trace with example inputs or InputSpecs of known shape so that sizes are numbers");
  if (op == "size") {
    const Argument* self = arg(node, 0, "self");
    if (self == nullptr) unmapped("the tensor is missing", "pass a tensor");
    const std::int64_t rank = rank_of(*self);
    const std::int64_t d = normalize_dim(int_arg(node, 1, "dim", 0), rank);
    if (d < 0 || d >= rank) unmapped("the dim is out of range", "fix the dim");
    builder_.node("Shape", {value(*self)}, {base + "_shape"});
    onnx::NodeProto& n = builder_.node("Gather", {base + "_shape", builder_.constant_ints({d}, base + "_dim", true)}, {result(node)});
    set_attribute(n, "axis", std::int64_t{0});
    return;
  }
  if (op == "operator.floordiv") {  // Python floors: (a - a mod b) / b divides exactly, ONNX's Mod is Python's
    const std::string a = operand(0, "a"), b = operand(1, "b");
    builder_.node("Mod", {a, b}, {base + "_mod"});
    builder_.node("Sub", {a, base + "_mod"}, {base + "_exact"});
    builder_.node("Div", {base + "_exact", b}, {result(node)});
    return;
  }
  static constexpr std::pair<std::string_view, std::string_view> binary[] = {
      // clang-format off
      {"operator.add", "Add"}, {"operator.sub", "Sub"}, {"operator.mul", "Mul"},
      {"operator.mod", "Mod"}, {"sym_min", "Min"},      {"sym_max", "Max"}};
  // clang-format on
  for (const auto& [name, onnx_op] : binary) {
    if (op != name) continue;
    builder_.node(onnx_op, {operand(0, "a"), operand(1, "b")}, {result(node)});
    return;
  }
  unmapped(fmt::format("the size computation '{}' has no ONNX mapping", op),
           "trace with example inputs or InputSpecs of known shape so that sizes are numbers");
}

std::string Exporter::sizes_input(const Node& node, std::size_t index, std::string_view name, const std::string& base,
                                  std::int64_t (*known)(std::int64_t)) {
  const Argument* a = arg(node, index, name);
  const ArgumentList* items = a != nullptr ? a->get_if<ArgumentList>() : nullptr;
  const bool computed = items != nullptr && std::any_of(items->begin(), items->end(), [](const Argument& i) { return i.is_node(); });
  if (!computed) {
    Ints sizes = ints_arg(node, index, name, {});
    if (known != nullptr)
      for (std::int64_t& s : sizes) s = known(s);
    return builder_.constant_ints(sizes, base);
  }
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < items->size(); ++i) {
    const Argument& item = (*items)[i];
    if (const std::int64_t* v = item.get_if<std::int64_t>()) {
      pieces.push_back(builder_.constant_ints({known != nullptr ? known(*v) : *v}, fmt::format("{}_{}", base, i)));
    } else if (item.is_node()) {
      const std::string piece = fmt::format("{}_{}", base, i);
      builder_.node("Unsqueeze", {value(item), builder_.constant_ints({0}, piece + "_axes")}, {piece});
      pieces.push_back(piece);
    } else {
      unmapped(fmt::format("the argument '{}' is not a list of sizes", name), "pass integers and sizes");
    }
  }
  onnx::NodeProto& n = builder_.node("Concat", pieces, {base});
  set_attribute(n, "axis", std::int64_t{0});
  return base;
}

}  // namespace symtrace::detail::onnx_export

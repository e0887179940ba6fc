// ONNX export of the built-in layers met as call_module leaves, and the mappings layers and
// ops share (convolution, the norms, linear, pooling, GELU, flatten, nearest upsampling).
// Note [Inference export] (onnx.cpp) applies: dropout is the identity, batch norm uses its
// running statistics.
#include "export/onnx_exporter.hpp"
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

#include <fmt/format.h>

#include <cmath>

namespace symtrace::detail::onnx_export {

// ---- shared mappings --------------------------------------------------------------------

namespace {

Ints pair(const Ints& v, std::int64_t fallback) {
  if (v.empty()) return {fallback, fallback};
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

}  // namespace

void Exporter::unary(const Node& node, std::string_view op_type, const std::string& x) {
  builder_.node(op_type, {x}, {result(node)});
}

void Exporter::clip(const Node& node, const std::string& x, std::optional<double> lo, std::optional<double> hi) {
  const DType dtype = result_meta(node).dtype;
  const std::string min = lo ? builder_.constant_scalar(*lo, dtype, node.name() + "_min") : std::string();
  const std::string max = hi ? builder_.constant_scalar(*hi, dtype, node.name() + "_max") : std::string();
  builder_.node("Clip", {x, min, max}, {result(node)});
}

void Exporter::hard_sigmoid(const Node& node, const std::string& x) {
  onnx::NodeProto& n = builder_.node("HardSigmoid", {x}, {result(node)});
  set_attribute(n, "alpha", 1.0 / 6.0);  // beta: ONNX's default, 0.5
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
                                                                        static_cast<float>(sw)},
                                                     {4}),
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
  } else if (dynamic_cast<const nn::HardswishImpl*>(&m) != nullptr) {
    unary(node, "HardSwish", x);  // x * max(0, min(1, x / 6 + 0.5)): PyTorch's
  } else if (dynamic_cast<const nn::HardsigmoidImpl*>(&m) != nullptr) {
    hard_sigmoid(node, x);
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

}  // namespace symtrace::detail::onnx_export

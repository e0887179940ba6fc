// fuse_conv_bn: conv2d then batch_norm in eval mode is one conv2d with folded weights.
#include "symtrace/passes/fuse_conv_bn.hpp"

#include "passes/pass_util.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/module.hpp"

#include <vector>

namespace symtrace {

namespace {

/// The module a call_module node calls, when it is a `T`.
template <class T>
const T* module_of(const Node& node, const Module& root) {
  if (node.op() != OpKind::call_module) return nullptr;
  try {
    return dynamic_cast<const T*>(&root.get_submodule(node.target()));
  } catch (const std::invalid_argument&) {
    return nullptr;  // a path the root does not have (a graph from elsewhere)
  }
}

ArgumentList pair(const nn::Size2& s) { return {Argument(s.h), Argument(s.w)}; }

}  // namespace

std::size_t fuse_conv_bn(Graph& graph, const Module& root) {
  std::vector<Node*> norms;
  for (Node& n : graph.nodes()) norms.push_back(&n);
  std::size_t fused = 0;
  for (Node* bn_node : norms) {
    const auto* bn = module_of<nn::BatchNorm2dImpl>(*bn_node, root);
    if (bn == nullptr || bn->is_training() || !bn->running_mean.defined() || bn_node->args().size() != 1 ||
        !bn_node->kwargs().empty()) {
      continue;
    }
    Node* conv_node = bn_node->arg_node(0);
    const auto* conv = conv_node ? module_of<nn::Conv2dImpl>(*conv_node, root) : nullptr;
    if (conv == nullptr || conv_node->num_users() != 1 || conv_node->args().size() != 1 || !conv_node->kwargs().empty() ||
        !conv_node->args()[0].is_node()) {
      continue;
    }
    // scale = gamma / sqrt(var + eps); W' = W * scale per output channel; b' = (b - mean) * scale + beta.
    Tensor scale = bn->running_var.add(bn->options.eps).rsqrt();
    if (bn->weight.defined()) scale = scale.mul(bn->weight);
    const Tensor weight = conv->weight.mul(scale.reshape({conv->out_channels, 1, 1, 1})).contiguous();
    Tensor bias = conv->bias.defined() ? conv->bias.sub(bn->running_mean) : bn->running_mean.neg();
    bias = bias.mul(scale);
    if (bn->bias.defined()) bias = bias.add(bn->bias);
    const std::string weight_name = graph.add_constant(weight);
    const std::string bias_name = graph.add_constant(bias.contiguous());
    Node* fused_node = nullptr;
    {
      auto at = graph.inserting_before(*bn_node);
      Node& w = graph.create_node(OpKind::get_attr, weight_name, {}, {}, {}, conv_node->where());
      w.set_tensor_meta(TensorMeta{weight.dtype(), weight.shape()});
      Node& b = graph.create_node(OpKind::get_attr, bias_name, {}, {}, {}, conv_node->where());
      b.set_tensor_meta(TensorMeta{bias.dtype(), bias.shape()});
      const nn::Conv2dOptions& o = conv->options;
      fused_node = &graph.create_node(OpKind::call_function, "conv2d",
                                      {conv_node->args()[0], Argument(w), Argument(b), Argument(pair(o.stride)),
                                       Argument(pair(o.padding)), Argument(pair(o.dilation)), Argument(o.groups)},
                                      {}, {}, conv_node->where());
    }
    if (const TensorMeta* meta = bn_node->tensor_meta()) fused_node->set_tensor_meta(*meta);
    fused_node->set_scope(conv_node->scope());
    graph.replace_all_uses_with(*bn_node, *fused_node);
    graph.erase_node(*bn_node);
    graph.erase_node(*conv_node);
    ++fused;
  }
  return fused;
}

}  // namespace symtrace

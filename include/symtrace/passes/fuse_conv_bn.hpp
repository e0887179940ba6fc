#pragma once
/// \file
/// `fuse_conv_bn`: folds each BatchNorm2d that follows a Conv2d into the convolution's weights,
/// as torch.fx's `fuse` example and inference compilers do.

#include "symtrace/graph/graph.hpp"

#include <cstddef>

namespace symtrace {

class Module;

/// Replaces every pair `bn(conv(x))` of call_module nodes, where `conv` is a Conv2d used only
/// by `bn` and `bn` is a BatchNorm2d in eval mode with running statistics, by one
/// `conv2d(x, weight, bias, stride, padding, dilation, groups)` call_function whose weight and
/// bias are graph constants folded from both modules (weight * gamma / sqrt(var + eps), and
/// (bias - mean) * gamma / sqrt(var + eps) + beta). `root` is the module the graph was traced
/// from; it is read, not changed (the folded tensors belong to the graph). Returns the number
/// of pairs fused. The folding uses the modules' values at the time of the call.
std::size_t fuse_conv_bn(Graph& graph, const Module& root);

}  // namespace symtrace

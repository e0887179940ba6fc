#include "symtrace/nn/activation.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/ops/pointwise.hpp"
#include "symtrace/ops/reduction.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

Tensor ReLUImpl::forward(const Tensor& input) { return options.inplace ? input.relu_() : relu(input); }
std::string ReLUImpl::extra_repr() const { return options.inplace ? "inplace=True" : ""; }

Tensor ReLU6Impl::forward(const Tensor& input) {
  return options.inplace ? input.copy_(relu6(input)) : relu6(input);
}
std::string ReLU6Impl::extra_repr() const { return options.inplace ? "inplace=True" : ""; }

Tensor HardswishImpl::forward(const Tensor& input) {
  return options.inplace ? input.copy_(hardswish(input)) : hardswish(input);
}
std::string HardswishImpl::extra_repr() const { return options.inplace ? "inplace=True" : ""; }

Tensor HardsigmoidImpl::forward(const Tensor& input) {
  return options.inplace ? input.copy_(hardsigmoid(input)) : hardsigmoid(input);
}
std::string HardsigmoidImpl::extra_repr() const { return options.inplace ? "inplace=True" : ""; }

GELUImpl::GELUImpl(GELUOptions opts, std::source_location where) : options(std::move(opts)) {
  if (options.approximate != "none" && options.approximate != "tanh")
    throw_invalid_argument(where, "GELU: approximate must be 'none' or 'tanh', got '{}'", options.approximate);
}
Tensor GELUImpl::forward(const Tensor& input) { return gelu(input, options.approximate); }
std::string GELUImpl::extra_repr() const { return fmt::format("approximate='{}'", options.approximate); }

Tensor SiLUImpl::forward(const Tensor& input) { return silu(input); }
Tensor SigmoidImpl::forward(const Tensor& input) { return sigmoid(input); }
Tensor TanhImpl::forward(const Tensor& input) { return tanh(input); }

Tensor SoftmaxImpl::forward(const Tensor& input) {
  if (dim) return softmax(input, *dim);
  const std::int64_t rank = input.dim();
  return softmax(input, rank == 0 || rank == 1 || rank == 3 ? 0 : 1);
}
std::string SoftmaxImpl::extra_repr() const { return dim ? fmt::format("dim={}", *dim) : "dim=None"; }

}  // namespace symtrace::nn

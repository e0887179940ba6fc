#include "symtrace/nn/layer_norm.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace symtrace::nn {

LayerNormImpl::LayerNormImpl(IntList shape, LayerNormOptions opts, std::source_location where)
    : normalized_shape(std::move(shape)), options(opts) {
  if (normalized_shape.empty() ||
      std::any_of(normalized_shape.begin(), normalized_shape.end(), [](std::int64_t d) { return d < 0; }))
    throw_invalid_argument(where, "LayerNorm({}): normalized_shape must be non-empty with sizes >= 0",
                           fmt::join(normalized_shape, ", "));
  if (opts.elementwise_affine) {
    weight = register_parameter("weight", ones(normalized_shape), where);
    if (opts.bias) bias = register_parameter("bias", zeros(normalized_shape), where);
  }
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, normalized_shape, weight, bias, options.eps);
}

std::string LayerNormImpl::extra_repr() const {
  // PyTorch prints the shape as a Python tuple: (768,) or (4, 8).
  const std::string shape = normalized_shape.size() == 1
                                ? fmt::format("({},)", normalized_shape[0])
                                : fmt::format("({})", fmt::join(normalized_shape, ", "));
  return fmt::format("{}, eps={}, elementwise_affine={}", shape, format_double(options.eps),
                     detail::py_bool(options.elementwise_affine));
}

}  // namespace symtrace::nn

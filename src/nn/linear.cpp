#include "symtrace/nn/linear.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/nn/init.hpp"
#include "symtrace/ops/linalg.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

LinearImpl::LinearImpl(std::int64_t in, std::int64_t out, LinearOptions options, std::source_location where)
    : in_features(in), out_features(out) {
  if (in < 0 || out < 0)
    throw_invalid_argument(where, "Linear({}, {}): feature counts must be >= 0", in, out);
  weight = register_parameter("weight", init::fan_in_uniform_(Tensor::empty(Shape{out, in}), in), where);
  if (options.bias)
    bias = register_parameter("bias", init::fan_in_uniform_(Tensor::empty(Shape{out}), in), where);
}

Tensor LinearImpl::forward(const Tensor& input) { return linear(input, weight, bias); }

std::string LinearImpl::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features,
                     detail::py_bool(bias.defined()));
}

}  // namespace symtrace::nn

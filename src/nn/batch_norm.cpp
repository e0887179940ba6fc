#include "symtrace/nn/batch_norm.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

BatchNorm2dImpl::BatchNorm2dImpl(std::int64_t n, BatchNormOptions opts, std::source_location where)
    : num_features(n), options(opts) {
  if (n <= 0) throw_invalid_argument(where, "BatchNorm2d({}): num_features must be positive", n);
  if (opts.affine) {
    weight = register_parameter("weight", ones({n}), where);
    bias = register_parameter("bias", zeros({n}), where);
  }
  if (opts.track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({n}), true, where);
    running_var = register_buffer("running_var", ones({n}), true, where);
    num_batches_tracked = register_buffer("num_batches_tracked", scalar_tensor(0, DType::int64), true, where);
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& input) {
  const auto where = std::source_location::current();
  if (input.defined() && input.dim() != 4)
    throw_invalid_argument(where, "BatchNorm2d: expected a 4-D input [N, C, H, W], got {}", input.meta());
  // As PyTorch: batch statistics when training or when not tracking running ones.
  const bool use_batch_stats = is_training() || !options.track_running_stats;
  Tensor out =
      batch_norm(input, weight, bias, running_mean, running_var, use_batch_stats, options.momentum, options.eps);
  // Counted after the op succeeded (PyTorch counts first), so a refused input leaves every
  // buffer unchanged: the op checks everything before it updates the running statistics.
  // A symbolic input (a trace) records the op and leaves the model's buffers alone.
  if (is_training() && options.track_running_stats && !out.is_symbolic()) num_batches_tracked.add_(1);
  return out;
}

std::string BatchNorm2dImpl::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", num_features,
                     format_double(options.eps), format_double(options.momentum), detail::py_bool(options.affine),
                     detail::py_bool(options.track_running_stats));
}

}  // namespace symtrace::nn

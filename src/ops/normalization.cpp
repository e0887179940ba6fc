// Normalisation ops: batch_norm (per-channel statistics over [N, C, ...]), layer_norm
// (statistics over the trailing `normalized_shape` dims), group_norm (statistics per sample
// over each group of channels) and instance_norm (per sample and channel). The kernels work on a contiguous
// float32 copy of the input laid out as [outer, groups, inner] and accumulate in double, so
// small tensors match hand-computed values closely. See Note [Meta before kernel]: the meta
// functions do all checking, including batch_norm's "more than 1 value per channel" rule.

#include "symtrace/ops/nn_functional.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace symtrace {

namespace {

// Argument positions of batch_norm's schema.
constexpr std::size_t kBnInput = 0, kBnWeight = 1, kBnBias = 2, kRunningMean = 3, kRunningVar = 4, kTraining = 5,
                      kMomentum = 6, kEps = 7;

// ---- batch_norm --------------------------------------------------------------------------

// A per-channel parameter must be float32 of shape [C] (checked only where C and its dim are known).
void check_channel_param(const OpCall& call, const Tensor* param, std::string_view arg, const Shape& input) {
  if (param == nullptr) return;
  detail::require_floating(call, *param, arg);
  const Dim channels = input[1];
  const bool rank_ok = param->dim() == 1;
  const bool size_ok = !rank_ok || !channels.is_known() || !param->shape()[0].is_known() ||
                       param->shape()[0] == channels;
  if (!rank_ok || !size_ok)
    call.fail("argument '{}' of shape {} does not match input of shape {}, which has {} channels (dim 1); "
              "expected shape [{}]",
              arg, param->shape(), input, channels, channels);
}

OutputMeta batch_norm_meta(const OpCall& call) {
  const Tensor& x = call.tensor(kBnInput);
  if (x.dim() < 2)
    call.fail("input must have at least 2 dims [N, C, ...], got shape {}; add a batch dim with unsqueeze(0)",
              x.shape());
  detail::require_floating(call, x, "input");
  const Tensor* mean = call.optional_tensor(kRunningMean);
  const Tensor* var = call.optional_tensor(kRunningVar);
  const bool training = call.boolean(kTraining);
  if (!training && (mean == nullptr || var == nullptr))
    call.fail("running_mean and running_var are required when training is False (input of shape {}); pass "
              "the running statistics, or training=True to normalise with the batch's statistics",
              x.shape());
  if ((mean == nullptr) != (var == nullptr))
    call.fail("running_mean and running_var must be given together, got only {} (input of shape {})",
              mean ? "running_mean" : "running_var", x.shape());
  check_channel_param(call, call.optional_tensor(kBnWeight), "weight", x.shape());
  check_channel_param(call, call.optional_tensor(kBnBias), "bias", x.shape());
  check_channel_param(call, mean, "running_mean", x.shape());
  check_channel_param(call, var, "running_var", x.shape());
  if (training) {
    Dim per_channel = 1;
    for (std::size_t d = 0; d < x.shape().rank(); ++d)
      if (d != 1) per_channel = per_channel * x.shape()[d];
    if (per_channel.is_known() && per_channel.raw() == 1)
      call.fail("Expected more than 1 value per channel when training, got input of shape {}; use a batch of "
                "more than one sample or training=False",
                x.shape());
  }
  return OutputMeta::single(x.dtype(), x.shape());
}

// The elements of an optional 1-D float32 tensor as doubles (empty when absent).
std::vector<double> param_values(const Tensor* t) { return t ? t->to_vector<double>() : std::vector<double>{}; }

Value batch_norm_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(kBnInput));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const IntList sizes = x.shape().sizes();
  const std::int64_t batch = sizes[0];
  const std::int64_t channels = sizes[1];
  std::int64_t inner = 1;
  for (std::size_t d = 2; d < sizes.size(); ++d) inner *= sizes[d];
  const std::int64_t count = batch * inner;  // values per channel
  // An empty input gives an empty output and leaves the running statistics alone (as PyTorch).
  if (count == 0 || channels == 0) return out;

  const bool training = call.boolean(kTraining);
  const double eps = call.real(kEps);
  const std::vector<double> weight = param_values(call.optional_tensor(kBnWeight));
  const std::vector<double> bias = param_values(call.optional_tensor(kBnBias));
  const Tensor* running_mean = call.optional_tensor(kRunningMean);
  const Tensor* running_var = call.optional_tensor(kRunningVar);
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  auto at = [&](std::int64_t n, std::int64_t c) { return (n * channels + c) * inner; };

  std::vector<double> mean(static_cast<std::size_t>(channels));
  std::vector<double> var(static_cast<std::size_t>(channels));  // biased in training
  if (training) {
    for (std::int64_t c = 0; c < channels; ++c) {
      double sum = 0;
      for (std::int64_t n = 0; n < batch; ++n)
        for (std::int64_t i = 0; i < inner; ++i) sum += px[at(n, c) + i];
      const double m = sum / static_cast<double>(count);
      double sq = 0;
      for (std::int64_t n = 0; n < batch; ++n)
        for (std::int64_t i = 0; i < inner; ++i) sq += (px[at(n, c) + i] - m) * (px[at(n, c) + i] - m);
      mean[static_cast<std::size_t>(c)] = m;
      var[static_cast<std::size_t>(c)] = sq / static_cast<double>(count);
    }
  } else {
    mean = param_values(running_mean);
    var = param_values(running_var);
  }

  for (std::int64_t c = 0; c < channels; ++c) {
    const auto k = static_cast<std::size_t>(c);
    const double scale = (weight.empty() ? 1.0 : weight[k]) / std::sqrt(var[k] + eps);
    const double shift = (bias.empty() ? 0.0 : bias[k]) - mean[k] * scale;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t i = 0; i < inner; ++i)
        po[at(n, c) + i] = static_cast<float>(px[at(n, c) + i] * scale + shift);
  }

  // Update the running statistics in place (they may be strided views): PyTorch's rule, with the
  // unbiased batch variance. The meta function guarantees count > 1 here.
  if (training && running_mean != nullptr) {
    const double momentum = call.real(kMomentum);
    const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
    float* rm = running_mean->data_ptr<float>();
    float* rv = running_var->data_ptr<float>();
    const std::int64_t sm = running_mean->strides()[0];
    const std::int64_t sv = running_var->strides()[0];
    for (std::int64_t c = 0; c < channels; ++c) {
      const auto k = static_cast<std::size_t>(c);
      rm[c * sm] = static_cast<float>((1 - momentum) * rm[c * sm] + momentum * mean[k]);
      rv[c * sv] = static_cast<float>((1 - momentum) * rv[c * sv] + momentum * var[k] * unbias);
    }
  }
  return out;
}

// ---- layer_norm --------------------------------------------------------------------------

std::string list_text(const IntList& list) { return fmt::format("[{}]", fmt::join(list, ", ")); }

// weight and bias must have exactly normalized_shape (checked where their dims are known).
void check_affine_param(const OpCall& call, const Tensor* param, std::string_view arg, const IntList& normalized) {
  if (param == nullptr) return;
  detail::require_floating(call, *param, arg);
  bool ok = param->shape().rank() == normalized.size();
  for (std::size_t i = 0; ok && i < normalized.size(); ++i)
    ok = !param->shape()[i].is_known() || param->shape()[i].raw() == normalized[i];
  if (!ok)
    call.fail("argument '{}' of shape {} must have exactly normalized_shape {}", arg, param->shape(),
              list_text(normalized));
}

OutputMeta layer_norm_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const IntList normalized = call.int_list(1);
  detail::require_floating(call, x, "input");
  if (normalized.empty())
    call.fail("normalized_shape must name at least one trailing dim, got [] (input of shape {}); pass the "
              "sizes of the trailing dims to normalise over",
              x.shape());
  for (std::int64_t s : normalized)
    if (s < 0)
      call.fail("normalized_shape {} has a negative size (input of shape {})", list_text(normalized), x.shape());
  const std::size_t k = normalized.size();
  bool ok = x.shape().rank() >= k;
  for (std::size_t i = 0; ok && i < k; ++i) {
    const Dim d = x.shape()[x.shape().rank() - k + i];
    ok = detail::same_size(call, d, normalized[i], "layer_norm(): the trailing dims must be normalized_shape").has_value();
  }
  if (!ok)
    call.fail("normalized_shape {} does not match the trailing dims of input of shape {}; expected input of "
              "shape [*, {}]",
              list_text(normalized), x.shape(), fmt::join(normalized, ", "));
  check_affine_param(call, call.optional_tensor(2), "weight", normalized);
  check_affine_param(call, call.optional_tensor(3), "bias", normalized);
  return OutputMeta::single(x.dtype(), x.shape());
}

Value layer_norm_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  std::int64_t inner = 1;
  for (std::int64_t s : call.int_list(1)) inner *= s;
  const std::int64_t total = *x.shape().numel();
  if (total == 0) return out;
  const std::int64_t rows = total / inner;
  const double eps = call.real(4);
  const std::vector<double> weight = param_values(call.optional_tensor(2));
  const std::vector<double> bias = param_values(call.optional_tensor(3));
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = px + r * inner;
    double sum = 0;
    for (std::int64_t i = 0; i < inner; ++i) sum += row[i];
    const double mean = sum / static_cast<double>(inner);
    double sq = 0;
    for (std::int64_t i = 0; i < inner; ++i) sq += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (std::int64_t i = 0; i < inner; ++i) {
      const auto j = static_cast<std::size_t>(i);
      double y = (row[i] - mean) * rstd;
      if (!weight.empty()) y *= weight[j];
      if (!bias.empty()) y += bias[j];
      po[r * inner + i] = static_cast<float>(y);
    }
  }
  return out;
}

// ---- group_norm, instance_norm ----------------------------------------------------------

// Fails unless `x` is a float tensor [N, C, ...].
void require_batch_and_channels(const OpCall& call, const Tensor& x) {
  if (x.dim() < 2)
    call.fail("input must have at least 2 dims [N, C, ...], got shape {}; add a batch dim with unsqueeze(0)",
              x.shape());
  detail::require_floating(call, x, "input");
}

// group_norm(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps)
OutputMeta group_norm_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  require_batch_and_channels(call, x);
  const std::int64_t groups = call.integer(1);
  if (groups <= 0) call.fail("num_groups must be positive, got {} (input of shape {})", groups, x.shape());
  const Dim channels = x.shape()[1];
  if (channels.is_known() && channels.raw() % groups != 0)
    call.fail("input of shape {} has {} channels (dim 1), which num_groups={} does not divide", x.shape(), channels,
              groups);
  check_channel_param(call, call.optional_tensor(2), "weight", x.shape());
  check_channel_param(call, call.optional_tensor(3), "bias", x.shape());
  return OutputMeta::single(x.dtype(), x.shape());
}

// Normalises each of `rows` consecutive runs of `inner` values of `px` into `po` with the run's
// own mean and biased variance, which `mean` and `var` receive.
void normalize_rows(const float* px, float* po, std::int64_t rows, std::int64_t inner, double eps,
                    std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<std::size_t>(rows), 0.0);
  var.assign(static_cast<std::size_t>(rows), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = px + r * inner;
    double sum = 0;
    for (std::int64_t i = 0; i < inner; ++i) sum += row[i];
    const double m = sum / static_cast<double>(inner);
    double sq = 0;
    for (std::int64_t i = 0; i < inner; ++i) sq += (row[i] - m) * (row[i] - m);
    const double v = sq / static_cast<double>(inner);
    const double rstd = 1.0 / std::sqrt(v + eps);
    for (std::int64_t i = 0; i < inner; ++i) po[r * inner + i] = static_cast<float>((row[i] - m) * rstd);
    mean[static_cast<std::size_t>(r)] = m;
    var[static_cast<std::size_t>(r)] = v;
  }
}

// Applies the per-channel affine weight and bias (either may be empty) to `po` [N, C, inner].
void apply_affine(float* po, std::int64_t batch, std::int64_t channels, std::int64_t inner,
                  const std::vector<double>& weight, const std::vector<double>& bias) {
  if (weight.empty() && bias.empty()) return;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      const auto k = static_cast<std::size_t>(c);
      const double w = weight.empty() ? 1.0 : weight[k];
      const double b = bias.empty() ? 0.0 : bias[k];
      float* p = po + (n * channels + c) * inner;
      for (std::int64_t i = 0; i < inner; ++i) p[i] = static_cast<float>(p[i] * w + b);
    }
}

Value group_norm_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const std::int64_t total = *x.shape().numel();
  if (total == 0) return out;
  const IntList sizes = x.shape().sizes();
  const std::int64_t batch = sizes[0], channels = sizes[1], groups = call.integer(1);
  const std::int64_t inner = total / (batch * channels);
  std::vector<double> mean, var;
  normalize_rows(x.data_ptr<float>(), out.data_ptr<float>(), batch * groups, channels / groups * inner,
                 call.real(4), mean, var);
  apply_affine(out.data_ptr<float>(), batch, channels, inner, param_values(call.optional_tensor(2)),
               param_values(call.optional_tensor(3)));
  return out;
}

// instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var,
//               bool use_input_stats, float momentum, float eps)
constexpr std::size_t kInUseInputStats = 5, kInMomentum = 6, kInEps = 7;

OutputMeta instance_norm_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  require_batch_and_channels(call, x);
  const Tensor* mean = call.optional_tensor(3);
  const Tensor* var = call.optional_tensor(4);
  if (!call.boolean(kInUseInputStats) && (mean == nullptr || var == nullptr))
    call.fail("running_mean and running_var are required when use_input_stats is False (input of shape {}); pass "
              "the running statistics, or use_input_stats=True to normalise with each sample's statistics",
              x.shape());
  if ((mean == nullptr) != (var == nullptr))
    call.fail("running_mean and running_var must be given together, got only {} (input of shape {})",
              mean ? "running_mean" : "running_var", x.shape());
  check_channel_param(call, call.optional_tensor(1), "weight", x.shape());
  check_channel_param(call, call.optional_tensor(2), "bias", x.shape());
  check_channel_param(call, mean, "running_mean", x.shape());
  check_channel_param(call, var, "running_var", x.shape());
  return OutputMeta::single(x.dtype(), x.shape());
}

Value instance_norm_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const std::int64_t total = *x.shape().numel();
  if (total == 0) return out;
  const IntList sizes = x.shape().sizes();
  const std::int64_t batch = sizes[0], channels = sizes[1], inner = total / (batch * channels);
  const double eps = call.real(kInEps);
  const std::vector<double> weight = param_values(call.optional_tensor(1));
  const std::vector<double> bias = param_values(call.optional_tensor(2));
  const Tensor* running_mean = call.optional_tensor(3);
  const Tensor* running_var = call.optional_tensor(4);
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();

  if (!call.boolean(kInUseInputStats)) {
    // The running statistics, as batch_norm in evaluation.
    const std::vector<double> mean = param_values(running_mean);
    const std::vector<double> var = param_values(running_var);
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t c = 0; c < channels; ++c) {
        const auto k = static_cast<std::size_t>(c);
        const double scale = (weight.empty() ? 1.0 : weight[k]) / std::sqrt(var[k] + eps);
        const double shift = (bias.empty() ? 0.0 : bias[k]) - mean[k] * scale;
        const std::int64_t at = (n * channels + c) * inner;
        for (std::int64_t i = 0; i < inner; ++i) po[at + i] = static_cast<float>(px[at + i] * scale + shift);
      }
    return out;
  }

  std::vector<double> mean, var;
  normalize_rows(px, po, batch * channels, inner, eps, mean, var);
  apply_affine(po, batch, channels, inner, weight, bias);
  // PyTorch's update of the running statistics: each channel's mean over the batch of the
  // samples' means and unbiased variances (a sample of one value leaves an infinite or NaN
  // variance there, as in PyTorch).
  if (running_mean != nullptr) {
    const double momentum = call.real(kInMomentum);
    const double unbias = static_cast<double>(inner) / static_cast<double>(inner - 1);
    float* rm = running_mean->data_ptr<float>();
    float* rv = running_var->data_ptr<float>();
    const std::int64_t sm = running_mean->strides()[0];
    const std::int64_t sv = running_var->strides()[0];
    for (std::int64_t c = 0; c < channels; ++c) {
      double m = 0, v = 0;
      for (std::int64_t n = 0; n < batch; ++n) {
        m += mean[static_cast<std::size_t>(n * channels + c)];
        v += var[static_cast<std::size_t>(n * channels + c)] * unbias;
      }
      m /= static_cast<double>(batch);
      v /= static_cast<double>(batch);
      rm[c * sm] = static_cast<float>((1 - momentum) * rm[c * sm] + momentum * m);
      rv[c * sv] = static_cast<float>((1 - momentum) * rv[c * sv] + momentum * v);
    }
  }
  return out;
}

}  // namespace

void detail::register_normalization_ops(OpRegistry& r) {
  // batch_norm is not pure: with training=True and running statistics given, it updates
  // running_mean and running_var (arguments 3 and 4) in place. OpFlags::inplace would be wrong
  // (it means "mutates its first argument and returns it"); mutates_arguments says exactly this,
  // so passes do not treat it as removable or reorderable across other uses of those statistics.
  r.add("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
        "bool training, float momentum=0.1, float eps=1e-05) -> Tensor",
        batch_norm_meta, batch_norm_kernel, OpFlags::mutates_arguments | OpFlags::channel_passthrough);
  r.add("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
        "float eps=1e-05) -> Tensor",
        layer_norm_meta, layer_norm_kernel, OpFlags::channel_passthrough);
  // Not channel_passthrough: each output channel depends on the other channels of its group.
  r.add("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor",
        group_norm_meta, group_norm_kernel);
  // Updates running_mean and running_var in place when given with use_input_stats=True, as batch_norm.
  r.add("instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
        "bool use_input_stats, float momentum, float eps) -> Tensor",
        instance_norm_meta, instance_norm_kernel, OpFlags::mutates_arguments | OpFlags::channel_passthrough);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::optional_tensor_value;

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, Where where) {
  return invoke(SYMTRACE_OP("batch_norm"), where, CallStyle::function, input, optional_tensor_value(weight),
                optional_tensor_value(bias), optional_tensor_value(running_mean),
                optional_tensor_value(running_var), training, momentum, eps);
}

Tensor layer_norm(const Tensor& input, const IntList& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, Where where) {
  return invoke(SYMTRACE_OP("layer_norm"), where, CallStyle::function, input, normalized_shape,
                optional_tensor_value(weight), optional_tensor_value(bias), eps);
}

Tensor group_norm(const Tensor& input, std::int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  Where where) {
  return invoke(SYMTRACE_OP("group_norm"), where, CallStyle::function, input, num_groups,
                optional_tensor_value(weight), optional_tensor_value(bias), eps);
}

Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps, Where where) {
  return invoke(SYMTRACE_OP("instance_norm"), where, CallStyle::function, input, optional_tensor_value(weight),
                optional_tensor_value(bias), optional_tensor_value(running_mean), optional_tensor_value(running_var),
                use_input_stats, momentum, eps);
}

}  // namespace symtrace

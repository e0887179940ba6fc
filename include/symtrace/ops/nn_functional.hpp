#pragma once
/// \file
/// Neural-network functions (`torch.nn.functional`'s): convolution, pooling, normalisation,
/// dropout, embedding, nearest and bilinear upsampling. Optional tensors are passed as undefined Tensors.
///
/// Schemas:
/// - `conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1, 1],
///   int[] padding=[0, 0], int[] dilation=[1, 1], int groups=1)`; `conv1d` and `conv3d` the
///   same over one and three spatial dims (defaults `[1]`, `[1, 1, 1]`, ...)
/// - `conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1, 1],
///   int[] padding=[0, 0], int[] output_padding=[0, 0], int groups=1, int[] dilation=[1, 1])`
///   (PyTorch's argument order; weight [in_channels, out_channels / groups, kH, kW]; output size
///   (in - 1)*stride - 2*padding + dilation*(k - 1) + output_padding + 1, output_padding smaller
///   than the stride or the dilation); `conv_transpose1d` and `conv_transpose3d` likewise
/// - `max_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0, 0],
///   int[] dilation=[1, 1], bool ceil_mode=False)` (empty stride = kernel_size)
/// - `avg_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0, 0],
///   bool ceil_mode=False, bool count_include_pad=True)`
/// - `adaptive_avg_pool2d(Tensor self, int[] output_size)`
/// - `upsample_nearest2d(Tensor self, int[]? output_size=None, float[]? scale_factors=None)`
/// - `upsample_bilinear2d(Tensor self, int[]? output_size=None, bool align_corners=False,
///   float[]? scale_factors=None)` (PyTorch's `interpolate(mode="bilinear")`)
/// - `batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
///   Tensor? running_var, bool training, float momentum=0.1, float eps=1e-05)` (in training,
///   updates the running statistics in place, as PyTorch does)
/// - `layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None,
///   float eps=1e-05)`
/// - `group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None,
///   float eps=1e-05)` (statistics per sample over each of num_groups groups of channels)
/// - `instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
///   Tensor? running_var, bool use_input_stats, float momentum, float eps)` (statistics per
///   sample and channel with use_input_stats, then updating the running statistics in place when
///   given, as PyTorch does; else the running statistics)
/// - `dropout(Tensor input, float p=0.5, bool train=True)` (identity when not training)
/// - `embedding(Tensor weight, Tensor indices)`
/// Pairs (`stride`, `padding`, ...) take one value for both dims or two values; the 3-D ops'
/// triples one value for all three dims or three values.

#include "symtrace/core/random.hpp"
#include "symtrace/core/tensor.hpp"

#include <optional>
#include <source_location>

namespace symtrace {

using Where = std::source_location;

/// A convolution over the last dim of [N, C, L] (or unbatched [C, L]), as `torch.nn.functional.conv1d`.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, const IntList& stride = {1},
              const IntList& padding = {0}, const IntList& dilation = {1}, std::int64_t groups = 1,
              Where where = Where::current());
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, const IntList& stride = {1, 1},
              const IntList& padding = {0, 0}, const IntList& dilation = {1, 1}, std::int64_t groups = 1,
              Where where = Where::current());
/// A convolution over the last three dims of [N, C, D, H, W] (or unbatched [C, D, H, W]), as
/// `torch.nn.functional.conv3d`.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, const IntList& stride = {1, 1, 1},
              const IntList& padding = {0, 0, 0}, const IntList& dilation = {1, 1, 1}, std::int64_t groups = 1,
              Where where = Where::current());
/// The transpose of conv1d, as `torch.nn.functional.conv_transpose1d`.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        const IntList& stride = {1}, const IntList& padding = {0},
                        const IntList& output_padding = {0}, std::int64_t groups = 1,
                        const IntList& dilation = {1}, Where where = Where::current());
/// The transpose of conv3d, as `torch.nn.functional.conv_transpose3d`.
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        const IntList& stride = {1, 1, 1}, const IntList& padding = {0, 0, 0},
                        const IntList& output_padding = {0, 0, 0}, std::int64_t groups = 1,
                        const IntList& dilation = {1, 1, 1}, Where where = Where::current());
/// The transpose (gradient) of conv2d, as `torch.nn.functional.conv_transpose2d`: each input
/// pixel scatters its kernel-weighted values into the output, upsampling by `stride`.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        const IntList& stride = {1, 1}, const IntList& padding = {0, 0},
                        const IntList& output_padding = {0, 0}, std::int64_t groups = 1,
                        const IntList& dilation = {1, 1}, Where where = Where::current());
Tensor max_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0, 0}, const IntList& dilation = {1, 1}, bool ceil_mode = false,
                  Where where = Where::current());
Tensor avg_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true,
                  Where where = Where::current());
Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size, Where where = Where::current());
/// Nearest-neighbour upsampling to `output_size`, or by `scale_factors` (give exactly one).
Tensor upsample_nearest2d(const Tensor& x, std::optional<IntList> output_size,
                          std::optional<std::vector<double>> scale_factors = std::nullopt,
                          Where where = Where::current());
/// Bilinear upsampling (or downsampling) to `output_size`, or by `scale_factors` (give
/// exactly one), as PyTorch computes it on the CPU.
Tensor upsample_bilinear2d(const Tensor& x, std::optional<IntList> output_size, bool align_corners = false,
                           std::optional<std::vector<double>> scale_factors = std::nullopt,
                           Where where = Where::current());
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5,
                  Where where = Where::current());
Tensor layer_norm(const Tensor& input, const IntList& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, Where where = Where::current());
/// Normalises each sample of [N, C, ...] over each of `num_groups` groups of C / num_groups
/// channels, as `torch.nn.functional.group_norm`; then the per-channel affine weight and bias.
Tensor group_norm(const Tensor& input, std::int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5, Where where = Where::current());
/// Normalises each channel of each sample of [N, C, ...], as `torch.nn.functional.instance_norm`
/// (aten's argument order).
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats = true, double momentum = 0.1,
                     double eps = 1e-5, Where where = Where::current());
/// Zeroes each element with probability `p` (from this thread's default generator) and
/// scales the rest by 1/(1-p) when `train`; the identity otherwise.
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true, Where where = Where::current());
/// Rows of `weight` [num, dim] picked by int64 `indices`: shape indices.shape + [dim].
Tensor embedding(const Tensor& weight, const Tensor& indices, Where where = Where::current());

}  // namespace symtrace

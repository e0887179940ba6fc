// 2-D convolution and its transpose. The meta functions check the channel and group arithmetic
// of input, weight and bias and that the (dilated) kernel fits the padded input; conv2d's kernel
// lowers each batch element and group to one GEMM: weight [O/g, C/g*kh*kw] x columns
// [C/g*kh*kw, oh*ow] (im2col). A 1x1 kernel with stride 1 and no padding needs no columns: the
// input already is that matrix. conv_transpose2d runs the same product backwards: columns
// [O/g*kh*kw, h*w] = weight^T x input, each column then added into the output where the
// forward convolution would have read it (col2im).
// See Note [Meta before kernel]: meta functions do all checking, kernels only compute.

#include "symtrace/ops/nn_functional.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/gemm.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

namespace symtrace {

namespace {

// conv2d(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups)
enum Arg : std::size_t {
  kInput,
  kWeight,
  kBias,
  kStride,
  kPadding,
  kDilation,
  kGroups
};

using detail::Pair;
using detail::pair_arg;

struct ConvParams {
  Pair stride, padding, dilation;
  std::int64_t groups;
};

ConvParams conv_params(const OpCall& call) {
  ConvParams p{pair_arg(call, kStride), pair_arg(call, kPadding), pair_arg(call, kDilation), call.integer(kGroups)};
  if (p.stride[0] <= 0 || p.stride[1] <= 0)
    call.fail("stride must be positive, got [{}]", fmt::join(call.int_list(kStride), ", "));
  if (p.padding[0] < 0 || p.padding[1] < 0)
    call.fail("padding must be non-negative, got [{}]", fmt::join(call.int_list(kPadding), ", "));
  if (p.dilation[0] <= 0 || p.dilation[1] <= 0)
    call.fail("dilation must be positive, got [{}]", fmt::join(call.int_list(kDilation), ", "));
  if (p.groups <= 0) call.fail("groups must be positive, got {}", p.groups);
  return p;
}

OutputMeta conv2d_meta(const OpCall& call) {
  const Tensor& input = call.tensor(kInput);
  const Tensor& weight = call.tensor(kWeight);
  const Tensor* bias = call.optional_tensor(kBias);
  detail::require_floating(call, input, "input");
  detail::require_floating(call, weight, "weight");
  if (bias) detail::require_floating(call, *bias, "bias");
  detail::require_rank(call, input, "input", 4, 3);
  detail::require_rank(call, weight, "weight", 4);
  const ConvParams p = conv_params(call);

  const Shape& x = input.shape();
  const Shape& w = weight.shape();
  const std::size_t c_dim = x.rank() == 4 ? 1 : 0;  // channels of [N, C, H, W] or unbatched [C, H, W]
  const Dim channels = x[c_dim];
  const Dim out_channels = w[0];
  if (out_channels.is_known() && out_channels.raw() % p.groups != 0)
    call.fail("weight of shape {} has {} output channels, which groups={} does not divide", w, out_channels,
              p.groups);
  if (channels.is_known() && channels.raw() % p.groups != 0)
    call.fail("input of shape {} has {} channels, which groups={} does not divide", x, channels, p.groups);
  if (channels.is_symbolic() && w[1].is_known())
    detail::require(call, SymFact{*channels.expr(), SymRel::eq, SymExpr(w[1].raw() * p.groups)},
                    "the input's channels must be the weight's in_channels");
  if (channels.is_known() && w[1].is_known() && channels.raw() != w[1].raw() * p.groups)
    call.fail("input of shape {} has {} channels, but weight of shape {} with groups={} expects {} "
              "(weight.shape[1] * groups); check the channel dim of input and weight",
              x, channels, w, p.groups, w[1].raw() * p.groups);
  if (bias) {
    if (bias->dim() != 1 || (out_channels.is_known() && bias->shape()[0].is_known() &&
                             bias->shape()[0].raw() != out_channels.raw()))
      call.fail("bias of shape {} does not match weight of shape {}: expected shape [{}] (one value per output "
                "channel)",
                bias->shape(), w, out_channels);
  }

  // Output size per spatial dim: floor((in + 2p - d*(k-1) - 1) / s) + 1, once the kernel fits.
  std::array<Dim, 2> out{}, padded{}, span{};
  bool fits = true;
  for (std::size_t i = 0; i < 2; ++i) {
    const Dim in = x[c_dim + 1 + i];
    const Dim k = w[2 + i];
    padded[i] = in + Dim(2 * p.padding[i]);
    if (k.is_known()) span[i] = Dim(p.dilation[i] * (k.raw() - 1) + 1);
    if (padded[i].is_symbolic() && span[i].is_known()) {
      detail::require(call, SymFact{*padded[i].expr(), SymRel::ge, SymExpr(span[i].raw())},
                      fmt::format("the kernel of size {} must fit the padded input in spatial dim {}", span[i], i));
      out[i] = floordiv(padded[i] - span[i], p.stride[i]) + Dim(1);
      continue;
    }
    if (!padded[i].is_known() || !span[i].is_known()) continue;
    if (span[i].raw() > padded[i].raw()) fits = false;
    else out[i] = Dim((padded[i].raw() - span[i].raw()) / p.stride[i] + 1);
  }
  if (!fits) {
    const std::string dilated = p.dilation == Pair{1, 1} ? std::string()
                                                         : fmt::format(" ({}x{} with dilation [{}])", span[0], span[1],
                                                                       fmt::join(p.dilation, ", "));
    call.fail("the kernel of size {}x{}{} does not fit the padded input of size {}x{} (input of shape {}, padding "
              "[{}]); use a smaller kernel or dilation, or more padding",
              w[2], w[3], dilated, padded[0], padded[1], x, fmt::join(p.padding, ", "));
  }

  Shape shape = x.rank() == 4 ? Shape{x[0], out_channels, out[0], out[1]} : Shape{out_channels, out[0], out[1]};
  return OutputMeta::single(DType::float32, std::move(shape));
}

// ceil(a / b) for b > 0, and 0 when a <= 0.
std::int64_t ceil_div_positive(std::int64_t a, std::int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Fills `col` [C*kh*kw, oh*ow] with the input patches of one image [C, h, w]: row (c, i, j) holds,
// for every output position, the input element kernel tap (i, j) of channel c reads (0 in padding).
void im2col(const float* image, std::int64_t channels, std::int64_t h, std::int64_t w, Pair k, Pair out,
            const ConvParams& p, float* col) {
  const auto [kh, kw] = k;
  const auto [oh, ow] = out;
  for (std::int64_t c = 0; c < channels; ++c) {
    const float* plane = image + c * h * w;
    for (std::int64_t i = 0; i < kh; ++i) {
      for (std::int64_t j = 0; j < kw; ++j) {
        // Output columns whose input column x = ox*s - p + j*d lies in [0, w): ox in [lo, hi).
        const std::int64_t shift = j * p.dilation[1] - p.padding[1];
        const std::int64_t lo = std::min(ceil_div_positive(-shift, p.stride[1]), ow);
        const std::int64_t hi = std::clamp(ceil_div_positive(w - shift, p.stride[1]), lo, ow);
        for (std::int64_t oy = 0; oy < oh; ++oy, col += ow) {
          const std::int64_t y = oy * p.stride[0] - p.padding[0] + i * p.dilation[0];
          if (y < 0 || y >= h) {
            std::fill_n(col, ow, 0.0f);
            continue;
          }
          const float* row = plane + y * w;
          std::fill_n(col, lo, 0.0f);
          if (p.stride[1] == 1) {
            std::copy(row + lo + shift, row + hi + shift, col + lo);
          } else {
            for (std::int64_t ox = lo; ox < hi; ++ox) col[ox] = row[ox * p.stride[1] + shift];
          }
          std::fill(col + hi, col + ow, 0.0f);
        }
      }
    }
  }
}

Value conv2d_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor input = detail::contiguous_copy(call.tensor(kInput));
  const Tensor weight = detail::contiguous_copy(call.tensor(kWeight));
  const Tensor* bias_arg = call.optional_tensor(kBias);
  const Tensor bias = bias_arg ? detail::contiguous_copy(*bias_arg) : Tensor();
  const ConvParams p = conv_params(call);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);

  const bool batched = input.dim() == 4;
  const IntList x = input.shape().sizes();
  const IntList w = weight.shape().sizes();
  const IntList y = out.shape().sizes();
  const std::int64_t n = batched ? x[0] : 1;
  const std::int64_t c = x[batched ? 1 : 0], h = x[batched ? 2 : 1], wd = x[batched ? 3 : 2];
  const std::int64_t o = w[0], kh = w[2], kw = w[3];
  const std::int64_t oh = y[batched ? 2 : 1], ow = y[batched ? 3 : 2];
  const std::int64_t g = p.groups, cg = c / g, og = o / g;
  const std::int64_t kdim = cg * kh * kw, pixels = oh * ow;
  const bool direct = kh == 1 && kw == 1 && p.stride == Pair{1, 1} && p.padding == Pair{0, 0};

  const float* px = input.data_ptr<float>();
  const float* pw = weight.data_ptr<float>();
  const float* pb = bias.defined() ? bias.data_ptr<float>() : nullptr;
  float* py = out.data_ptr<float>();
  std::vector<float> col(direct || n == 0 ? 0 : static_cast<std::size_t>(kdim * pixels));
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t gi = 0; gi < g; ++gi) {
      const float* image = px + (b * c + gi * cg) * h * wd;
      float* result = py + (b * o + gi * og) * pixels;
      if (pb)
        for (std::int64_t oc = 0; oc < og; ++oc) std::fill_n(result + oc * pixels, pixels, pb[gi * og + oc]);
      const float* columns = image;
      if (!direct) {
        im2col(image, cg, h, wd, {kh, kw}, {oh, ow}, p, col.data());
        columns = col.data();
      }
      detail::gemm(og, pixels, kdim, pw + gi * og * kdim, kdim, columns, pixels, result, pixels, pb != nullptr);
    }
  }
  return out;
}

// ---- conv_transpose2d -------------------------------------------------------------------

// conv_transpose2d(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//                  int[] output_padding, int groups, int[] dilation): PyTorch's argument order.
struct Transposed {
  enum Arg : std::size_t {
    kInput,
    kWeight,
    kBias,
    kStride,
    kPadding,
    kOutputPadding,
    kGroups,
    kDilation
  };
};

struct TransposedParams {
  Pair stride, padding, output_padding, dilation;
  std::int64_t groups;
};

TransposedParams transposed_params(const OpCall& call) {
  using A = Transposed;
  TransposedParams p{pair_arg(call, A::kStride), pair_arg(call, A::kPadding), pair_arg(call, A::kOutputPadding),
                     pair_arg(call, A::kDilation), call.integer(A::kGroups)};
  if (p.stride[0] <= 0 || p.stride[1] <= 0)
    call.fail("stride must be positive, got [{}]", fmt::join(call.int_list(A::kStride), ", "));
  if (p.padding[0] < 0 || p.padding[1] < 0)
    call.fail("padding must be non-negative, got [{}]", fmt::join(call.int_list(A::kPadding), ", "));
  if (p.dilation[0] <= 0 || p.dilation[1] <= 0)
    call.fail("dilation must be positive, got [{}]", fmt::join(call.int_list(A::kDilation), ", "));
  if (p.groups <= 0) call.fail("groups must be positive, got {}", p.groups);
  // The extra rows and columns only choose among the input sizes a strided (or dilated)
  // convolution maps to the same output size, so there are fewer than the stride or dilation.
  for (std::size_t i = 0; i < 2; ++i)
    if (p.output_padding[i] < 0 || p.output_padding[i] >= std::max(p.stride[i], p.dilation[i]))
      call.fail("output_padding [{}] must be non-negative and smaller than the stride [{}] or the dilation [{}] in "
                "each dim",
                fmt::join(p.output_padding, ", "), fmt::join(p.stride, ", "), fmt::join(p.dilation, ", "));
  return p;
}

OutputMeta conv_transpose2d_meta(const OpCall& call) {
  using A = Transposed;
  const Tensor& input = call.tensor(A::kInput);
  const Tensor& weight = call.tensor(A::kWeight);
  const Tensor* bias = call.optional_tensor(A::kBias);
  detail::require_floating(call, input, "input");
  detail::require_floating(call, weight, "weight");
  if (bias) detail::require_floating(call, *bias, "bias");
  detail::require_rank(call, input, "input", 4, 3);
  detail::require_rank(call, weight, "weight", 4);
  const TransposedParams p = transposed_params(call);

  const Shape& x = input.shape();
  const Shape& w = weight.shape();  // [in_channels, out_channels / groups, kh, kw]
  const std::size_t c_dim = x.rank() == 4 ? 1 : 0;
  const Dim channels = x[c_dim];
  if (w[0].is_known() && w[0].raw() % p.groups != 0)
    call.fail("weight of shape {} has {} input channels, which groups={} does not divide", w, w[0], p.groups);
  if (channels.is_symbolic() && w[0].is_known())
    detail::require(call, SymFact{*channels.expr(), SymRel::eq, SymExpr(w[0].raw())},
                    "the input's channels must be the weight's in_channels");
  if (channels.is_known() && w[0].is_known() && channels.raw() != w[0].raw())
    call.fail("input of shape {} has {} channels, but weight of shape {} expects {} (weight.shape[0]; a transposed "
              "convolution's weight is [in_channels, out_channels / groups, kH, kW])",
              x, channels, w, w[0]);
  const Dim out_channels = w[1] * Dim(p.groups);
  if (bias) {
    if (bias->dim() != 1 || (out_channels.is_known() && bias->shape()[0].is_known() &&
                             bias->shape()[0].raw() != out_channels.raw()))
      call.fail("bias of shape {} does not match weight of shape {} with groups={}: expected shape [{}] (one value "
                "per output channel)",
                bias->shape(), w, p.groups, out_channels);
  }

  // Output size per spatial dim: (in - 1)*s - 2p + d*(k - 1) + output_padding + 1.
  std::array<Dim, 2> out{};
  for (std::size_t i = 0; i < 2; ++i) {
    const Dim in = x[c_dim + 1 + i];
    const Dim k = w[2 + i];
    if (in.is_symbolic() && k.is_known()) {
      const SymExpr size = (*in.expr() - SymExpr(1)) * SymExpr(p.stride[i]) +
                           SymExpr(p.dilation[i] * (k.raw() - 1) + p.output_padding[i] + 1 - 2 * p.padding[i]);
      detail::require(call, SymFact{size, SymRel::gt, SymExpr(0)},
                      fmt::format("the output must have a positive size in spatial dim {}", i));
      out[i] = size;
      continue;
    }
    if (!in.is_known() || !k.is_known()) continue;
    const std::int64_t size = (in.raw() - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (k.raw() - 1) +
                              p.output_padding[i] + 1;
    if (size <= 0)
      call.fail("the output would have size {} in spatial dim {} (input of shape {}, weight of shape {}, stride "
                "[{}], padding [{}]); use less padding",
                size, i, x, w, fmt::join(p.stride, ", "),
                fmt::join(p.padding, ", "));
    out[i] = Dim(size);
  }
  Shape shape = x.rank() == 4 ? Shape{x[0], out_channels, out[0], out[1]} : Shape{out_channels, out[0], out[1]};
  return OutputMeta::single(DType::float32, std::move(shape));
}

// Adds `col` [O/g*kh*kw, h*w] into the output planes [O/g, oh, ow] of one image: column entry
// (c, i, j; y, x) lands where the forward convolution's kernel tap (i, j) at output position
// (y, x) would have read its input.
void col2im(const float* col, std::int64_t channels, Pair in, Pair k, Pair out, const TransposedParams& p,
            float* image) {
  const auto [h, w] = in;
  const auto [kh, kw] = k;
  const auto [oh, ow] = out;
  for (std::int64_t c = 0; c < channels; ++c) {
    float* plane = image + c * oh * ow;
    for (std::int64_t i = 0; i < kh; ++i) {
      for (std::int64_t j = 0; j < kw; ++j) {
        for (std::int64_t y = 0; y < h; ++y, col += w) {
          const std::int64_t oy = y * p.stride[0] - p.padding[0] + i * p.dilation[0];
          if (oy < 0 || oy >= oh) continue;
          float* row = plane + oy * ow;
          for (std::int64_t x = 0; x < w; ++x) {
            const std::int64_t ox = x * p.stride[1] - p.padding[1] + j * p.dilation[1];
            if (ox >= 0 && ox < ow) row[ox] += col[x];
          }
        }
      }
    }
  }
}

Value conv_transpose2d_kernel(const OpCall& call, const OutputMeta& meta) {
  using A = Transposed;
  const Tensor input = detail::contiguous_copy(call.tensor(A::kInput));
  const Tensor weight = detail::contiguous_copy(call.tensor(A::kWeight));
  const Tensor* bias_arg = call.optional_tensor(A::kBias);
  const Tensor bias = bias_arg ? detail::contiguous_copy(*bias_arg) : Tensor();
  const TransposedParams p = transposed_params(call);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);

  const bool batched = input.dim() == 4;
  const IntList x = input.shape().sizes();
  const IntList w = weight.shape().sizes();
  const IntList y = out.shape().sizes();
  const std::int64_t n = batched ? x[0] : 1;
  const std::int64_t c = x[batched ? 1 : 0], h = x[batched ? 2 : 1], wd = x[batched ? 3 : 2];
  const std::int64_t og = w[1], kh = w[2], kw = w[3];
  const std::int64_t g = p.groups, cg = c / g, o = og * g;
  const std::int64_t oh = y[batched ? 2 : 1], ow = y[batched ? 3 : 2];
  const std::int64_t rows = og * kh * kw, pixels = h * wd, out_pixels = oh * ow;

  // Each group's weight [C/g, O/g*kh*kw], transposed once for all images.
  const float* pw = weight.data_ptr<float>();
  std::vector<float> wt(static_cast<std::size_t>(g * rows * cg));
  for (std::int64_t gi = 0; gi < g; ++gi)
    for (std::int64_t ic = 0; ic < cg; ++ic)
      for (std::int64_t r = 0; r < rows; ++r)
        wt[static_cast<std::size_t>((gi * rows + r) * cg + ic)] = pw[(gi * cg + ic) * rows + r];

  const float* px = input.data_ptr<float>();
  const float* pb = bias.defined() ? bias.data_ptr<float>() : nullptr;
  float* py = out.data_ptr<float>();
  std::vector<float> col(n == 0 ? 0 : static_cast<std::size_t>(rows * pixels));
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t gi = 0; gi < g; ++gi) {
      float* result = py + (b * o + gi * og) * out_pixels;
      for (std::int64_t oc = 0; oc < og; ++oc)
        std::fill_n(result + oc * out_pixels, out_pixels, pb ? pb[gi * og + oc] : 0.0f);
      detail::gemm(rows, pixels, cg, wt.data() + gi * rows * cg, cg, px + (b * c + gi * cg) * pixels, pixels,
                   col.data(), pixels);
      col2im(col.data(), og, {h, wd}, {kh, kw}, {oh, ow}, p, result);
    }
  }
  return out;
}

}  // namespace

void detail::register_convolution_ops(OpRegistry& r) {
  r.add("conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1, 1], int[] padding=[0, 0], "
        "int[] dilation=[1, 1], int groups=1) -> Tensor",
        conv2d_meta, conv2d_kernel, OpFlags::channel_mixing);
  // Not channel_mixing: that flag reads weight dim 0 as the output channels, which here are dim 1.
  r.add("conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1, 1], int[] padding=[0, 0], "
        "int[] output_padding=[0, 0], int groups=1, int[] dilation=[1, 1]) -> Tensor",
        conv_transpose2d_meta, conv_transpose2d_kernel);
}

// ---- Typed API ---------------------------------------------------------------------------

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const IntList& padding, const IntList& dilation, std::int64_t groups, Where w) {
  return detail::invoke(SYMTRACE_OP("conv2d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, dilation, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                        const IntList& padding, const IntList& output_padding, std::int64_t groups,
                        const IntList& dilation, Where w) {
  return detail::invoke(SYMTRACE_OP("conv_transpose2d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, output_padding, groups, dilation);
}

}  // namespace symtrace

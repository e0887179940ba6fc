// 2-D pooling (max, average, adaptive average) and nearest-neighbour upsampling over the last
// two dims of [N, C, H, W] or unbatched [C, H, W] inputs. Output sizes, window clipping and
// divisors follow PyTorch's CPU kernels exactly (pooling_output_shape, avg_pool2d's divisor,
// nearest_idx), so traced graphs agree with eager PyTorch on every size.
// See Note [Meta before kernel]: meta functions do all checking, kernels only compute.

#include "symtrace/ops/nn_functional.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"
#include "symtrace/ops/detail/pooled_size.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace symtrace {

namespace {

using detail::Pair;
using detail::pair_arg;

// Checks dtype and rank, and that C, H and W are not 0 (only the batch may be empty, as in
// PyTorch); returns the index of the H dim.
std::size_t check_spatial_input(const OpCall& call, bool allow_int64) {
  const Tensor& x = call.tensor(0);
  if (x.dtype() != DType::float32 && !(allow_int64 && x.dtype() == DType::int64))
    call.fail("expects a float32{} tensor, got {} of shape {}; convert it with .to(float32)",
              allow_int64 ? " or int64" : "", x.dtype(), x.shape());
  detail::require_rank(call, x, "self", 4, 3);
  const std::size_t first = x.dim() == 4 ? 1 : 0;
  for (std::size_t d = first; d < x.shape().rank(); ++d)
    if (x.shape()[d] == Dim(0))
      call.fail("input of shape {} is empty in a non-batch dim: expected [N, C, H, W] or [C, H, W] where only N "
                "may be 0",
                x.shape());
  return x.shape().rank() - 2;
}

// The input shape with its last two dims replaced.
Shape with_spatial(const Shape& in, Dim h, Dim w) {
  Shape out = in;
  out[in.rank() - 2] = h;
  out[in.rank() - 1] = w;
  return out;
}

// An output_size argument (`index`): one size for both spatial dims or two, each an int or a
// proxy SymInt (`interpolate(x, size=[int(H * 0.5), W])` traced with named dims), as Dims; a
// known size must be at least `least`.
std::array<Dim, 2> output_size_dims(const OpCall& call, std::size_t index, std::int64_t least, const Shape& in) {
  const std::vector<OpCall::SizeArg> v = call.size_args(index);
  if (v.size() != 1 && v.size() != 2)
    call.fail("argument 'output_size' must hold one value (for both spatial dims) or two (height, width), got {}",
              v.size());
  for (const OpCall::SizeArg& s : v)
    if (s.value != OpCall::unknown_size && s.value < least)
      call.fail("output_size must be {}, got {}{}", least == 0 ? "non-negative" : "positive", call.arg(index),
                least == 0 ? std::string() : fmt::format(" (input of shape {})", in));
  return {v[0].dim, v.back().dim};
}

// ---- max_pool2d and avg_pool2d -----------------------------------------------------------

struct PoolParams {
  Pair kernel, stride, padding, dilation;
  bool ceil_mode;
};

// The size of pooled dim `i` (detail::pooled_size); may be < 1, which the meta function refuses.
std::int64_t pooled_size(std::int64_t in, std::size_t i, const PoolParams& p) {
  return detail::pooled_size(in, p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
}

// max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode) and
// avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad).
PoolParams pool_params(const OpCall& call) {
  const bool is_max = call.op.name() == "max_pool2d";
  PoolParams p{};
  p.kernel = pair_arg(call, 1);
  p.stride = call.int_list(2).empty() ? p.kernel : pair_arg(call, 2);
  p.padding = pair_arg(call, 3);
  p.dilation = is_max ? pair_arg(call, 4) : Pair{1, 1};
  p.ceil_mode = call.boolean(is_max ? 5 : 4);
  if (p.kernel[0] <= 0 || p.kernel[1] <= 0)
    call.fail("kernel_size must be positive, got [{}]", fmt::join(call.int_list(1), ", "));
  if (p.stride[0] <= 0 || p.stride[1] <= 0)
    call.fail("stride must be positive, got [{}]", fmt::join(call.int_list(2), ", "));
  if (p.dilation[0] <= 0 || p.dilation[1] <= 0)
    call.fail("dilation must be positive, got [{}]", fmt::join(call.int_list(4), ", "));
  if (p.padding[0] < 0 || p.padding[1] < 0 || p.padding[0] > p.kernel[0] / 2 || p.padding[1] > p.kernel[1] / 2)
    call.fail("padding [{}] must be between 0 and half the kernel size [{}]", fmt::join(p.padding, ", "),
              fmt::join(p.kernel, ", "));
  return p;
}

OutputMeta pool_meta(const OpCall& call) {
  const bool is_max = call.op.name() == "max_pool2d";
  const std::size_t hd = check_spatial_input(call, is_max);
  const PoolParams p = pool_params(call);
  const Shape& in = call.tensor(0).shape();
  std::array<Dim, 2> out{};
  for (std::size_t i = 0; i < 2; ++i) {
    if (in[hd + i].is_symbolic()) {
      out[i] = detail::pooled_dim(in[hd + i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
      if (out[i].is_symbolic())
        detail::require(call, SymFact{*out[i].expr(), SymRel::ge, SymExpr(1)},
                        fmt::format("the pooled output must not be empty in spatial dim {}", i));
      continue;
    }
    if (!in[hd + i].is_known()) continue;
    out[i] = Dim(pooled_size(in[hd + i].raw(), i, p));
    if (out[i].raw() < 1)
      call.fail("the output would be empty for input of shape {} with kernel_size [{}], stride [{}], padding [{}]{}: "
                "the input is too small; use a smaller kernel or more padding",
                in, fmt::join(p.kernel, ", "), fmt::join(p.stride, ", "), fmt::join(p.padding, ", "),
                is_max ? fmt::format(", dilation [{}]", fmt::join(p.dilation, ", ")) : std::string());
  }
  return OutputMeta::single(call.tensor(0).dtype(), with_spatial(in, out[0], out[1]));
}

// The planes of a contiguous [..., H, W] input and output, for kernels that work plane by plane.
struct Planes {
  std::int64_t count, h, w, oh, ow;
};

Planes planes_of(const Tensor& in, const Tensor& out) {
  const IntList x = in.shape().sizes();
  const IntList y = out.shape().sizes();
  const std::size_t r = x.size();
  std::int64_t count = 1;
  for (std::size_t d = 0; d + 2 < r; ++d) count *= x[d];
  return {count, x[r - 2], x[r - 1], y[r - 2], y[r - 1]};
}

template <class T>
void max_pool_planes(const T* x, T* y, const Planes& s, const PoolParams& p) {
  for (std::int64_t plane = 0; plane < s.count; ++plane, x += s.h * s.w) {
    for (std::int64_t oy = 0; oy < s.oh; ++oy) {
      for (std::int64_t ox = 0; ox < s.ow; ++ox) {
        // Padded cells are -inf: they never win, so they are simply skipped.
        T best = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
        for (std::int64_t i = 0; i < p.kernel[0]; ++i) {
          const std::int64_t iy = oy * p.stride[0] - p.padding[0] + i * p.dilation[0];
          if (iy < 0 || iy >= s.h) continue;
          for (std::int64_t j = 0; j < p.kernel[1]; ++j) {
            const std::int64_t ix = ox * p.stride[1] - p.padding[1] + j * p.dilation[1];
            if (ix < 0 || ix >= s.w) continue;
            const T v = x[iy * s.w + ix];
            if constexpr (std::is_floating_point_v<T>) {
              if (v > best || std::isnan(v)) best = v;  // NaN propagates, as in PyTorch
            } else {
              best = std::max(best, v);
            }
          }
        }
        *y++ = best;
      }
    }
  }
}

Value max_pool_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const PoolParams p = pool_params(call);
  const Planes s = planes_of(x, out);
  if (x.dtype() == DType::int64) max_pool_planes(x.data_ptr<std::int64_t>(), out.data_ptr<std::int64_t>(), s, p);
  else max_pool_planes(x.data_ptr<float>(), out.data_ptr<float>(), s, p);
  return out;
}

Value avg_pool_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const PoolParams p = pool_params(call);
  const bool count_include_pad = call.boolean(5);
  const Planes s = planes_of(x, out);
  const float* px = x.data_ptr<float>();
  float* py = out.data_ptr<float>();
  for (std::int64_t plane = 0; plane < s.count; ++plane, px += s.h * s.w) {
    for (std::int64_t oy = 0; oy < s.oh; ++oy) {
      for (std::int64_t ox = 0; ox < s.ow; ++ox) {
        // PyTorch's divisor: the window clipped to the padded input (ceil mode may overhang
        // it), or to the input itself when padding does not count.
        std::int64_t y0 = oy * p.stride[0] - p.padding[0], x0 = ox * p.stride[1] - p.padding[1];
        std::int64_t y1 = std::min(y0 + p.kernel[0], s.h + p.padding[0]);
        std::int64_t x1 = std::min(x0 + p.kernel[1], s.w + p.padding[1]);
        const std::int64_t padded_count = (y1 - y0) * (x1 - x0);
        y0 = std::max<std::int64_t>(y0, 0);
        x0 = std::max<std::int64_t>(x0, 0);
        y1 = std::min(y1, s.h);
        x1 = std::min(x1, s.w);
        float sum = 0;
        for (std::int64_t iy = y0; iy < y1; ++iy)
          for (std::int64_t ix = x0; ix < x1; ++ix) sum += px[iy * s.w + ix];
        const std::int64_t count = count_include_pad ? padded_count : (y1 - y0) * (x1 - x0);
        *py++ = y0 < y1 && x0 < x1 ? sum / static_cast<float>(count) : 0.0f;
      }
    }
  }
  return out;
}

// ---- adaptive_avg_pool2d -----------------------------------------------------------------

OutputMeta adaptive_avg_pool_meta(const OpCall& call) {
  check_spatial_input(call, false);
  const std::array<Dim, 2> size = output_size_dims(call, 1, 0, call.tensor(0).shape());
  return OutputMeta::single(DType::float32, with_spatial(call.tensor(0).shape(), size[0], size[1]));
}

Value adaptive_avg_pool_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const Planes s = planes_of(x, out);
  const float* px = x.data_ptr<float>();
  float* py = out.data_ptr<float>();
  // Bin i of n over a dim of size `in` covers [floor(i*in/n), ceil((i+1)*in/n)).
  const auto bin_start = [](std::int64_t i, std::int64_t in, std::int64_t n) { return i * in / n; };
  const auto bin_end = [](std::int64_t i, std::int64_t in, std::int64_t n) { return ((i + 1) * in + n - 1) / n; };
  for (std::int64_t plane = 0; plane < s.count; ++plane, px += s.h * s.w) {
    for (std::int64_t oy = 0; oy < s.oh; ++oy) {
      const std::int64_t y0 = bin_start(oy, s.h, s.oh), y1 = bin_end(oy, s.h, s.oh);
      for (std::int64_t ox = 0; ox < s.ow; ++ox) {
        const std::int64_t x0 = bin_start(ox, s.w, s.ow), x1 = bin_end(ox, s.w, s.ow);
        float sum = 0;
        for (std::int64_t iy = y0; iy < y1; ++iy)
          for (std::int64_t ix = x0; ix < x1; ++ix) sum += px[iy * s.w + ix];
        *py++ = sum / static_cast<float>((y1 - y0) * (x1 - x0));
      }
    }
  }
  return out;
}

// ---- upsample_nearest2d ------------------------------------------------------------------

// The (height, width) scale factors (argument `at`), given as one value for both dims or two.
std::array<double, 2> scale_pair(const OpCall& call, std::size_t at) {
  const std::vector<double> v = call.arg(at).to_double_list();
  if (v.size() != 1 && v.size() != 2)
    call.fail("argument 'scale_factors' must hold one value (for both spatial dims) or two (height, width), got [{}]",
              fmt::join(v, ", "));
  const std::array<double, 2> s{v[0], v.back()};
  if (!(s[0] > 0 && s[1] > 0 && std::isfinite(s[0]) && std::isfinite(s[1])))
    call.fail("scale_factors must be positive and finite, got [{}]", fmt::join(v, ", "));
  return s;
}

// The output of an upsampling op: `output_size` (argument 1) or the input's spatial sizes
// times `scale_factors` (argument `scale_at`), floored.
OutputMeta resampled_meta(const OpCall& call, std::size_t scale_at) {
  const std::size_t hd = check_spatial_input(call, false);
  const Shape& in = call.tensor(0).shape();
  const bool has_size = !call.arg(1).is_none();
  const bool has_scale = !call.arg(scale_at).is_none();
  if (has_size == has_scale)
    call.fail("needs exactly one of output_size and scale_factors, got {} (input of shape {})",
              has_size ? "both" : "neither", in);
  if (has_size) {
    const std::array<Dim, 2> size = output_size_dims(call, 1, 1, in);
    return OutputMeta::single(call.tensor(0).dtype(), with_spatial(in, size[0], size[1]));
  }
  const std::array<double, 2> scale = scale_pair(call, scale_at);
  std::array<Dim, 2> out{};
  for (std::size_t i = 0; i < 2; ++i) {
    // A scale p/2^k (2, 0.5, 1.5, 0.75: exact in binary) gives floor(H*p/2^k), which is what
    // LibTorch's floor(double(H) * scale) computes for every H (the product is exact), as the
    // expression (p*H)//2^k; another scale gives an anonymous dim.
    if (in[hd + i].is_symbolic()) {
      if (const std::optional<std::pair<std::int64_t, std::int64_t>> r = detail::dyadic_fraction(scale[i]))
        out[i] = floordiv(in[hd + i] * Dim(r->first), r->second);
      continue;
    }
    if (!in[hd + i].is_known()) continue;
    out[i] = Dim(static_cast<std::int64_t>(std::floor(static_cast<double>(in[hd + i].raw()) * scale[i])));
    if (out[i].raw() < 1)
      call.fail("scale_factors [{}] make an empty output from input of shape {}; use larger factors",
                fmt::join(scale, ", "), in);
  }
  return OutputMeta::single(call.tensor(0).dtype(), with_spatial(in, out[0], out[1]));
}

OutputMeta upsample_meta(const OpCall& call) { return resampled_meta(call, 2); }

// Source index of each output index along one dim: PyTorch's nearest_idx, in its float arithmetic
// (the scale is in/out, or 1/scale_factor when one is given).
std::vector<std::int64_t> nearest_sources(std::int64_t in, std::int64_t out, std::optional<double> scale_factor) {
  std::vector<std::int64_t> src(static_cast<std::size_t>(out));
  const float scale = scale_factor ? static_cast<float>(1.0 / *scale_factor)
                                   : static_cast<float>(in) / static_cast<float>(out);
  for (std::int64_t i = 0; i < out; ++i) {
    if (out == in) src[static_cast<std::size_t>(i)] = i;
    else if (out == 2 * in) src[static_cast<std::size_t>(i)] = i >> 1;
    else src[static_cast<std::size_t>(i)] =
             std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(i) * scale)), in - 1);
  }
  return src;
}

Value upsample_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const Planes s = planes_of(x, out);
  std::optional<std::array<double, 2>> scale;
  if (!call.arg(2).is_none()) scale = scale_pair(call, 2);
  const auto rows = nearest_sources(s.h, s.oh, scale ? std::optional((*scale)[0]) : std::nullopt);
  const auto cols = nearest_sources(s.w, s.ow, scale ? std::optional((*scale)[1]) : std::nullopt);
  const float* px = x.data_ptr<float>();
  float* py = out.data_ptr<float>();
  for (std::int64_t plane = 0; plane < s.count; ++plane, px += s.h * s.w)
    for (const std::int64_t r : rows)
      for (const std::int64_t c : cols) *py++ = px[r * s.w + c];
  return out;
}

// ---- upsample_bilinear2d -----------------------------------------------------------------
// upsample_bilinear2d(self, output_size, align_corners, scale_factors): the output size as
// upsample_nearest2d's; each output pixel mixes the four input pixels around its source
// point. Source points and weights follow PyTorch's CPU kernel (area_pixel_compute_scale,
// area_pixel_compute_source_index and compute_indices_weights_linear, in float).

OutputMeta upsample_bilinear_meta(const OpCall& call) { return resampled_meta(call, 3); }

struct LinearTaps {
  std::vector<std::int64_t> lo, hi;
  std::vector<float> w_lo, w_hi;
};

LinearTaps linear_taps(std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale_factor) {
  float scale = 0;
  if (align_corners) scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  else scale = scale_factor && *scale_factor > 0 ? static_cast<float>(1.0 / *scale_factor)
                                                 : static_cast<float>(in) / static_cast<float>(out);
  LinearTaps t;
  const auto n = static_cast<std::size_t>(out);
  t.lo.resize(n);
  t.hi.resize(n);
  t.w_lo.resize(n);
  t.w_hi.resize(n);
  for (std::int64_t i = 0; i < out; ++i) {
    if (out == in) {  // PyTorch copies: each output pixel is its input pixel
      const auto k = static_cast<std::size_t>(i);
      t.lo[k] = t.hi[k] = i;
      t.w_lo[k] = 1.0f;
      t.w_hi[k] = 0.0f;
      continue;
    }
    float src = align_corners ? scale * static_cast<float>(i) : scale * (static_cast<float>(i) + 0.5f) - 0.5f;
    if (src < 0) src = 0;
    const auto lo = static_cast<std::int64_t>(src);
    const std::int64_t offset = lo < in - 1 ? 1 : 0;
    const float lambda = std::min(std::max(src - static_cast<float>(lo), 0.0f), 1.0f);
    const auto k = static_cast<std::size_t>(i);
    t.lo[k] = lo;
    t.hi[k] = lo + offset;
    t.w_lo[k] = 1.0f - lambda;
    t.w_hi[k] = lambda;
  }
  return t;
}

Value upsample_bilinear_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const Planes s = planes_of(x, out);
  const bool align_corners = call.arg(2).to_bool();
  std::optional<double> sh, sw;
  if (!call.arg(3).is_none()) {
    const std::array<double, 2> scale = scale_pair(call, 3);
    sh = scale[0];
    sw = scale[1];
  }
  const LinearTaps rows = linear_taps(s.h, s.oh, align_corners, sh);
  const LinearTaps cols = linear_taps(s.w, s.ow, align_corners, sw);
  const float* px = x.data_ptr<float>();
  float* py = out.data_ptr<float>();
  for (std::int64_t plane = 0; plane < s.count; ++plane, px += s.h * s.w) {
    for (std::size_t r = 0; r < rows.lo.size(); ++r) {
      const float* top = px + rows.lo[r] * s.w;
      const float* bottom = px + rows.hi[r] * s.w;
      for (std::size_t c = 0; c < cols.lo.size(); ++c) {
        const float t = top[cols.lo[c]] * cols.w_lo[c] + top[cols.hi[c]] * cols.w_hi[c];
        const float b = bottom[cols.lo[c]] * cols.w_lo[c] + bottom[cols.hi[c]] * cols.w_hi[c];
        *py++ = t * rows.w_lo[r] + b * rows.w_hi[r];
      }
    }
  }
  return out;
}

}  // namespace

void detail::register_pooling_ops(OpRegistry& r) {
  r.add("max_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0, 0], "
        "int[] dilation=[1, 1], bool ceil_mode=False) -> Tensor",
        pool_meta, max_pool_kernel, OpFlags::channel_passthrough);
  r.add("avg_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0, 0], "
        "bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
        pool_meta, avg_pool_kernel, OpFlags::channel_passthrough);
  r.add("adaptive_avg_pool2d(Tensor self, int[] output_size) -> Tensor", adaptive_avg_pool_meta,
        adaptive_avg_pool_kernel, OpFlags::channel_passthrough);
  r.add("upsample_nearest2d(Tensor self, int[]? output_size=None, float[]? scale_factors=None) -> Tensor",
        upsample_meta, upsample_kernel, OpFlags::channel_passthrough);
  r.add("upsample_bilinear2d(Tensor self, int[]? output_size=None, bool align_corners=False, "
        "float[]? scale_factors=None) -> Tensor",
        upsample_bilinear_meta, upsample_bilinear_kernel, OpFlags::channel_passthrough);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::fn;

Tensor max_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride, const IntList& padding,
                  const IntList& dilation, bool ceil_mode, Where w) {
  return invoke(SYMTRACE_OP("max_pool2d"), w, fn, x, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride, const IntList& padding,
                  bool ceil_mode, bool count_include_pad, Where w) {
  return invoke(SYMTRACE_OP("avg_pool2d"), w, fn, x, kernel_size, stride, padding, ceil_mode, count_include_pad);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size, Where w) {
  return invoke(SYMTRACE_OP("adaptive_avg_pool2d"), w, fn, x, output_size);
}

Tensor upsample_nearest2d(const Tensor& x, std::optional<IntList> output_size,
                          std::optional<std::vector<double>> scale_factors, Where w) {
  return invoke(SYMTRACE_OP("upsample_nearest2d"), w, fn, x, output_size, scale_factors);
}

Tensor upsample_bilinear2d(const Tensor& x, std::optional<IntList> output_size, bool align_corners,
                           std::optional<std::vector<double>> scale_factors, Where w) {
  return invoke(SYMTRACE_OP("upsample_bilinear2d"), w, fn, x, output_size, align_corners, scale_factors);
}

}  // namespace symtrace

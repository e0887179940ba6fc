// Convolutions over 1, 2 or 3 spatial dims (conv1d, conv2d, conv3d) and their transposes. The
// meta functions check the channel and group arithmetic of input, weight and bias and that the
// (dilated) kernel fits the padded input. The kernels treat every convolution as a 3-D one
// whose missing leading spatial dims have size 1 (a conv1d over [N, C, L] is a conv3d over
// [N, C, 1, 1, L]). The forward kernel lowers each batch element and group to one GEMM: weight
// [O/g, C/g*kd*kh*kw] x columns [C/g*kd*kh*kw, od*oh*ow] (im2col). A 1x1 kernel with stride 1
// and no padding needs no columns: the input already is that matrix. The transposed kernel
// runs the same product backwards: columns [O/g*kd*kh*kw, d*h*w] = weight^T x input, each
// column then added into the output where the forward convolution would have read it
// (col2im).
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
#include <span>
#include <vector>

namespace symtrace {

namespace {

// conv{1,2,3}d(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups)
enum Arg : std::size_t {
  kInput,
  kWeight,
  kBias,
  kStride,
  kPadding,
  kDilation,
  kGroups
};

// conv_transpose{1,2,3}d(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//                        int[] output_padding, int groups, int[] dilation): PyTorch's argument order.
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

// Sizes of the (up to three) spatial dims, as (depth, height, width). A convolution over fewer
// dims fills the leading ones: size, stride and dilation 1, padding 0.
using Spatial = std::array<std::int64_t, 3>;

// The number of spatial dims of the op in `call`: conv1d, conv_transpose3d, ...
std::size_t spatial_dims(const OpCall& call) {
  const std::string_view name = call.op.name();
  return static_cast<std::size_t>(name[name.size() - 2] - '0');
}

// The first `nd` entries of a Spatial, as the caller wrote them (for messages).
std::span<const std::int64_t> written(const Spatial& s, std::size_t nd) {
  return std::span<const std::int64_t>(s).subspan(3 - nd);
}

// Argument `index`: one value for every spatial dim, or one per dim; `fill` in the unused
// leading dims.
Spatial spatial_arg(const OpCall& call, std::size_t index, std::size_t nd, std::int64_t fill) {
  if (nd == 2) {
    const detail::Pair p = detail::pair_arg(call, index);
    return {fill, p[0], p[1]};
  }
  const IntList v = call.int_list(index);
  if (v.size() != 1 && v.size() != nd)
    call.fail("argument '{}' must hold {}, got [{}]", call.op.schema.args[index].name,
              nd == 1 ? "one value" : "one value (for all three spatial dims) or three (depth, height, width)",
              fmt::join(v, ", "));
  Spatial s{fill, fill, fill};
  for (std::size_t i = 0; i < nd; ++i) s[3 - nd + i] = v.size() == 1 ? v[0] : v[i];
  return s;
}

struct ConvParams {
  std::size_t nd = 2;
  Spatial stride, padding, dilation, output_padding{0, 0, 0};
  std::int64_t groups = 1;
  bool transposed = false;
};

// The parameters of a convolution (`transposed`: of a transposed one), checked.
ConvParams conv_params(const OpCall& call, bool transposed) {
  using A = Transposed;
  ConvParams p;
  p.nd = spatial_dims(call);
  p.transposed = transposed;
  const std::size_t stride = transposed ? std::size_t{A::kStride} : std::size_t{kStride};
  const std::size_t padding = transposed ? std::size_t{A::kPadding} : std::size_t{kPadding};
  const std::size_t dilation = transposed ? std::size_t{A::kDilation} : std::size_t{kDilation};
  p.stride = spatial_arg(call, stride, p.nd, 1);
  p.padding = spatial_arg(call, padding, p.nd, 0);
  p.dilation = spatial_arg(call, dilation, p.nd, 1);
  p.groups = call.integer(transposed ? std::size_t{A::kGroups} : std::size_t{kGroups});
  const auto any = [](const Spatial& s, auto bad) { return std::any_of(s.begin(), s.end(), bad); };
  if (any(p.stride, [](std::int64_t v) { return v <= 0; }))
    call.fail("stride must be positive, got [{}]", fmt::join(call.int_list(stride), ", "));
  if (any(p.padding, [](std::int64_t v) { return v < 0; }))
    call.fail("padding must be non-negative, got [{}]", fmt::join(call.int_list(padding), ", "));
  if (any(p.dilation, [](std::int64_t v) { return v <= 0; }))
    call.fail("dilation must be positive, got [{}]", fmt::join(call.int_list(dilation), ", "));
  if (p.groups <= 0) call.fail("groups must be positive, got {}", p.groups);
  if (transposed) {
    p.output_padding = spatial_arg(call, A::kOutputPadding, p.nd, 0);
    // The extra rows and columns only choose among the input sizes a strided (or dilated)
    // convolution maps to the same output size, so there are fewer than the stride or dilation.
    for (std::size_t i = 0; i < 3; ++i)
      if (p.output_padding[i] < 0 || (i >= 3 - p.nd && p.output_padding[i] >= std::max(p.stride[i], p.dilation[i])))
        call.fail("output_padding [{}] must be non-negative and smaller than the stride [{}] or the dilation [{}] in "
                  "each dim",
                  fmt::join(written(p.output_padding, p.nd), ", "), fmt::join(written(p.stride, p.nd), ", "),
                  fmt::join(written(p.dilation, p.nd), ", "));
  }
  return p;
}

// The checks every convolution's meta function shares: dtypes and ranks.
void check_operands(const OpCall& call, std::size_t nd) {
  const Tensor& input = call.tensor(kInput);
  const Tensor& weight = call.tensor(kWeight);
  const Tensor* bias = call.optional_tensor(kBias);
  detail::require_floating(call, input, "input");
  detail::require_floating(call, weight, "weight");
  if (bias) detail::require_floating(call, *bias, "bias");
  const auto rank = static_cast<std::int64_t>(nd);
  detail::require_rank(call, input, "input", rank + 2, rank + 1);
  detail::require_rank(call, weight, "weight", rank + 2);
}

OutputMeta conv_meta(const OpCall& call) {
  const std::size_t nd = spatial_dims(call);
  check_operands(call, nd);
  const Tensor& input = call.tensor(kInput);
  const Tensor& weight = call.tensor(kWeight);
  const Tensor* bias = call.optional_tensor(kBias);
  const ConvParams p = conv_params(call, false);

  const Shape& x = input.shape();
  const Shape& w = weight.shape();
  const std::size_t c_dim = x.rank() == nd + 2 ? 1 : 0;  // channels of [N, C, ...] or unbatched [C, ...]
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
  std::vector<Dim> out(nd), padded(nd), span(nd);
  bool fits = true;
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t j = 3 - nd + i;  // index into the Spatial parameters
    const Dim in = x[c_dim + 1 + i];
    const Dim k = w[2 + i];
    padded[i] = in + Dim(2 * p.padding[j]);
    if (k.is_known()) span[i] = Dim(p.dilation[j] * (k.raw() - 1) + 1);
    if (padded[i].is_symbolic() && span[i].is_known()) {
      detail::require(call, SymFact{*padded[i].expr(), SymRel::ge, SymExpr(span[i].raw())},
                      fmt::format("the kernel of size {} must fit the padded input in spatial dim {}", span[i], i));
      out[i] = floordiv(padded[i] - span[i], p.stride[j]) + Dim(1);
      continue;
    }
    if (!padded[i].is_known() || !span[i].is_known()) continue;
    if (span[i].raw() > padded[i].raw()) fits = false;
    else out[i] = Dim((padded[i].raw() - span[i].raw()) / p.stride[j] + 1);
  }
  if (!fits) {
    const std::vector<Dim> kernel(w.begin() + 2, w.end());
    const bool dilated = std::any_of(p.dilation.begin(), p.dilation.end(), [](std::int64_t d) { return d != 1; });
    const std::string dilation = dilated ? fmt::format(" ({} with dilation [{}])", fmt::join(span, "x"),
                                                       fmt::join(written(p.dilation, nd), ", "))
                                         : std::string();
    call.fail("the kernel of size {}{} does not fit the padded input of size {} (input of shape {}, padding "
              "[{}]); use a smaller kernel or dilation, or more padding",
              fmt::join(kernel, "x"), dilation, fmt::join(padded, "x"), x, fmt::join(written(p.padding, nd), ", "));
  }

  Shape shape;
  if (c_dim == 1) shape.push_back(x[0]);
  shape.push_back(out_channels);
  for (const Dim& d : out) shape.push_back(d);
  return OutputMeta::single(DType::float32, std::move(shape));
}

OutputMeta conv_transpose_meta(const OpCall& call) {
  using A = Transposed;
  const std::size_t nd = spatial_dims(call);
  check_operands(call, nd);
  const Tensor& input = call.tensor(A::kInput);
  const Tensor& weight = call.tensor(A::kWeight);
  const Tensor* bias = call.optional_tensor(A::kBias);
  const ConvParams p = conv_params(call, true);

  const Shape& x = input.shape();
  const Shape& w = weight.shape();  // [in_channels, out_channels / groups, k...]
  const std::size_t c_dim = x.rank() == nd + 2 ? 1 : 0;
  const Dim channels = x[c_dim];
  if (w[0].is_known() && w[0].raw() % p.groups != 0)
    call.fail("weight of shape {} has {} input channels, which groups={} does not divide", w, w[0], p.groups);
  if (channels.is_symbolic() && w[0].is_known())
    detail::require(call, SymFact{*channels.expr(), SymRel::eq, SymExpr(w[0].raw())},
                    "the input's channels must be the weight's in_channels");
  if (channels.is_known() && w[0].is_known() && channels.raw() != w[0].raw())
    call.fail("input of shape {} has {} channels, but weight of shape {} expects {} (weight.shape[0]; a transposed "
              "convolution's weight is [in_channels, out_channels / groups, {}])",
              x, channels, w, w[0], nd == 1 ? "kW" : nd == 2 ? "kH, kW"
                                                             : "kD, kH, kW");
  const Dim out_channels = w[1] * Dim(p.groups);
  if (bias) {
    if (bias->dim() != 1 || (out_channels.is_known() && bias->shape()[0].is_known() &&
                             bias->shape()[0].raw() != out_channels.raw()))
      call.fail("bias of shape {} does not match weight of shape {} with groups={}: expected shape [{}] (one value "
                "per output channel)",
                bias->shape(), w, p.groups, out_channels);
  }

  // Output size per spatial dim: (in - 1)*s - 2p + d*(k - 1) + output_padding + 1.
  std::vector<Dim> out(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t j = 3 - nd + i;
    const Dim in = x[c_dim + 1 + i];
    const Dim k = w[2 + i];
    if (in.is_symbolic() && k.is_known()) {
      const SymExpr size = (*in.expr() - SymExpr(1)) * SymExpr(p.stride[j]) +
                           SymExpr(p.dilation[j] * (k.raw() - 1) + p.output_padding[j] + 1 - 2 * p.padding[j]);
      detail::require(call, SymFact{size, SymRel::gt, SymExpr(0)},
                      fmt::format("the output must have a positive size in spatial dim {}", i));
      out[i] = size;
      continue;
    }
    if (!in.is_known() || !k.is_known()) continue;
    const std::int64_t size = (in.raw() - 1) * p.stride[j] - 2 * p.padding[j] + p.dilation[j] * (k.raw() - 1) +
                              p.output_padding[j] + 1;
    if (size <= 0)
      call.fail("the output would have size {} in spatial dim {} (input of shape {}, weight of shape {}, stride "
                "[{}], padding [{}]); use less padding",
                size, i, x, w, fmt::join(written(p.stride, nd), ", "), fmt::join(written(p.padding, nd), ", "));
    out[i] = Dim(size);
  }
  Shape shape;
  if (c_dim == 1) shape.push_back(x[0]);
  shape.push_back(out_channels);
  for (const Dim& d : out) shape.push_back(d);
  return OutputMeta::single(DType::float32, std::move(shape));
}

// ---- kernels ------------------------------------------------------------------------------

// The sizes a kernel works with, as a 3-D convolution's: batch, channels, and the spatial
// sizes of input, kernel and output, leading ones filled with 1.
struct Geometry {
  std::int64_t n = 1, c = 0;
  Spatial in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1};
};

std::int64_t volume(const Spatial& s) { return s[0] * s[1] * s[2]; }

Geometry geometry(const Tensor& input, const Tensor& weight, const Tensor& out, std::size_t nd) {
  Geometry g;
  const bool batched = input.dim() == static_cast<std::int64_t>(nd) + 2;
  const IntList x = input.shape().sizes();
  const IntList w = weight.shape().sizes();
  const IntList y = out.shape().sizes();
  const std::size_t first = batched ? 2 : 1;  // the first spatial dim of input and output
  g.n = batched ? x[0] : 1;
  g.c = x[first - 1];
  for (std::size_t i = 0; i < nd; ++i) {
    g.in[3 - nd + i] = x[first + i];
    g.k[3 - nd + i] = w[2 + i];
    g.out[3 - nd + i] = y[first + i];
  }
  return g;
}

// ceil(a / b) for b > 0, and 0 when a <= 0.
std::int64_t ceil_div_positive(std::int64_t a, std::int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Fills `col` [C*kd*kh*kw, od*oh*ow] with the input patches of one image [C, d, h, w]: row
// (c, a, i, j) holds, for every output position, the input element kernel tap (a, i, j) of
// channel c reads (0 in padding).
void im2col(const float* image, std::int64_t channels, const Geometry& g, const ConvParams& p, float* col) {
  const auto [d, h, w] = g.in;
  const auto [kd, kh, kw] = g.k;
  const auto [od, oh, ow] = g.out;
  for (std::int64_t c = 0; c < channels; ++c) {
    const float* volume_in = image + c * d * h * w;
    for (std::int64_t a = 0; a < kd; ++a) {
      for (std::int64_t i = 0; i < kh; ++i) {
        for (std::int64_t j = 0; j < kw; ++j) {
          // Output columns whose input column x = ox*s - p + j*dil lies in [0, w): ox in [lo, hi).
          const std::int64_t shift = j * p.dilation[2] - p.padding[2];
          const std::int64_t lo = std::min(ceil_div_positive(-shift, p.stride[2]), ow);
          const std::int64_t hi = std::clamp(ceil_div_positive(w - shift, p.stride[2]), lo, ow);
          for (std::int64_t oz = 0; oz < od; ++oz) {
            const std::int64_t z = oz * p.stride[0] - p.padding[0] + a * p.dilation[0];
            for (std::int64_t oy = 0; oy < oh; ++oy, col += ow) {
              const std::int64_t y = oy * p.stride[1] - p.padding[1] + i * p.dilation[1];
              if (z < 0 || z >= d || y < 0 || y >= h) {
                std::fill_n(col, ow, 0.0f);
                continue;
              }
              const float* row = volume_in + (z * h + y) * w;
              std::fill_n(col, lo, 0.0f);
              if (p.stride[2] == 1) {
                std::copy(row + lo + shift, row + hi + shift, col + lo);
              } else {
                for (std::int64_t ox = lo; ox < hi; ++ox) col[ox] = row[ox * p.stride[2] + shift];
              }
              std::fill(col + hi, col + ow, 0.0f);
            }
          }
        }
      }
    }
  }
}

Value conv_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor input = detail::contiguous_copy(call.tensor(kInput));
  const Tensor weight = detail::contiguous_copy(call.tensor(kWeight));
  const Tensor* bias_arg = call.optional_tensor(kBias);
  const Tensor bias = bias_arg ? detail::contiguous_copy(*bias_arg) : Tensor();
  const ConvParams p = conv_params(call, false);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);

  const Geometry geo = geometry(input, weight, out, p.nd);
  const std::int64_t n = geo.n, c = geo.c, o = weight.shape()[0].raw();
  const std::int64_t g = p.groups, cg = c / g, og = o / g;
  const std::int64_t in_size = volume(geo.in), kdim = cg * volume(geo.k), positions = volume(geo.out);
  const bool direct = volume(geo.k) == 1 && p.stride == Spatial{1, 1, 1} && p.padding == Spatial{0, 0, 0};

  const float* px = input.data_ptr<float>();
  const float* pw = weight.data_ptr<float>();
  const float* pb = bias.defined() ? bias.data_ptr<float>() : nullptr;
  float* py = out.data_ptr<float>();
  std::vector<float> col(direct || n == 0 ? 0 : static_cast<std::size_t>(kdim * positions));
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t gi = 0; gi < g; ++gi) {
      const float* image = px + (b * c + gi * cg) * in_size;
      float* result = py + (b * o + gi * og) * positions;
      if (pb)
        for (std::int64_t oc = 0; oc < og; ++oc) std::fill_n(result + oc * positions, positions, pb[gi * og + oc]);
      const float* columns = image;
      if (!direct) {
        im2col(image, cg, geo, p, col.data());
        columns = col.data();
      }
      detail::gemm(og, positions, kdim, pw + gi * og * kdim, kdim, columns, positions, result, positions,
                   pb != nullptr);
    }
  }
  return out;
}

// Adds `col` [O/g*kd*kh*kw, d*h*w] into the output volumes [O/g, od, oh, ow] of one image:
// column entry (c, a, i, j; z, y, x) lands where the forward convolution's kernel tap (a, i, j)
// at output position (z, y, x) would have read its input.
void col2im(const float* col, std::int64_t channels, const Geometry& g, const ConvParams& p, float* image) {
  const auto [d, h, w] = g.in;
  const auto [kd, kh, kw] = g.k;
  const auto [od, oh, ow] = g.out;
  for (std::int64_t c = 0; c < channels; ++c) {
    float* volume_out = image + c * od * oh * ow;
    for (std::int64_t a = 0; a < kd; ++a) {
      for (std::int64_t i = 0; i < kh; ++i) {
        for (std::int64_t j = 0; j < kw; ++j) {
          for (std::int64_t z = 0; z < d; ++z) {
            const std::int64_t oz = z * p.stride[0] - p.padding[0] + a * p.dilation[0];
            for (std::int64_t y = 0; y < h; ++y, col += w) {
              const std::int64_t oy = y * p.stride[1] - p.padding[1] + i * p.dilation[1];
              if (oz < 0 || oz >= od || oy < 0 || oy >= oh) continue;
              float* row = volume_out + (oz * oh + oy) * ow;
              for (std::int64_t x = 0; x < w; ++x) {
                const std::int64_t ox = x * p.stride[2] - p.padding[2] + j * p.dilation[2];
                if (ox >= 0 && ox < ow) row[ox] += col[x];
              }
            }
          }
        }
      }
    }
  }
}

Value conv_transpose_kernel(const OpCall& call, const OutputMeta& meta) {
  using A = Transposed;
  const Tensor input = detail::contiguous_copy(call.tensor(A::kInput));
  const Tensor weight = detail::contiguous_copy(call.tensor(A::kWeight));
  const Tensor* bias_arg = call.optional_tensor(A::kBias);
  const Tensor bias = bias_arg ? detail::contiguous_copy(*bias_arg) : Tensor();
  const ConvParams p = conv_params(call, true);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);

  const Geometry geo = geometry(input, weight, out, p.nd);
  const std::int64_t n = geo.n, c = geo.c, og = weight.shape()[1].raw();
  const std::int64_t g = p.groups, cg = c / g, o = og * g;
  const std::int64_t rows = og * volume(geo.k), positions = volume(geo.in), out_positions = volume(geo.out);

  // Each group's weight [C/g, O/g*kd*kh*kw], transposed once for all images.
  const float* pw = weight.data_ptr<float>();
  std::vector<float> wt(static_cast<std::size_t>(g * rows * cg));
  for (std::int64_t gi = 0; gi < g; ++gi)
    for (std::int64_t ic = 0; ic < cg; ++ic)
      for (std::int64_t r = 0; r < rows; ++r)
        wt[static_cast<std::size_t>((gi * rows + r) * cg + ic)] = pw[(gi * cg + ic) * rows + r];

  const float* px = input.data_ptr<float>();
  const float* pb = bias.defined() ? bias.data_ptr<float>() : nullptr;
  float* py = out.data_ptr<float>();
  std::vector<float> col(n == 0 ? 0 : static_cast<std::size_t>(rows * positions));
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t gi = 0; gi < g; ++gi) {
      float* result = py + (b * o + gi * og) * out_positions;
      for (std::int64_t oc = 0; oc < og; ++oc)
        std::fill_n(result + oc * out_positions, out_positions, pb ? pb[gi * og + oc] : 0.0f);
      detail::gemm(rows, positions, cg, wt.data() + gi * rows * cg, cg, px + (b * c + gi * cg) * positions,
                   positions, col.data(), positions);
      col2im(col.data(), og, geo, p, result);
    }
  }
  return out;
}

}  // namespace

void detail::register_convolution_ops(OpRegistry& r) {
  constexpr std::array<const char*, 3> ones = {"[1]", "[1, 1]", "[1, 1, 1]"};
  constexpr std::array<const char*, 3> zeros = {"[0]", "[0, 0]", "[0, 0, 0]"};
  for (std::size_t nd = 1; nd <= 3; ++nd) {
    const char* one = ones[nd - 1];
    const char* zero = zeros[nd - 1];
    r.add(fmt::format("conv{}d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride={}, int[] padding={}, "
                      "int[] dilation={}, int groups=1) -> Tensor",
                      nd, one, zero, one),
          conv_meta, conv_kernel, OpFlags::channel_mixing);
    // Not channel_mixing: that flag reads weight dim 0 as the output channels, which here are dim 1.
    r.add(fmt::format("conv_transpose{}d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride={}, "
                      "int[] padding={}, int[] output_padding={}, int groups=1, int[] dilation={}) -> Tensor",
                      nd, one, zero, zero, one),
          conv_transpose_meta, conv_transpose_kernel);
  }
}

// ---- Typed API ---------------------------------------------------------------------------

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const IntList& padding, const IntList& dilation, std::int64_t groups, Where w) {
  return detail::invoke(SYMTRACE_OP("conv1d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, dilation, groups);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const IntList& padding, const IntList& dilation, std::int64_t groups, Where w) {
  return detail::invoke(SYMTRACE_OP("conv2d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, dilation, groups);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const IntList& padding, const IntList& dilation, std::int64_t groups, Where w) {
  return detail::invoke(SYMTRACE_OP("conv3d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, dilation, groups);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                        const IntList& padding, const IntList& output_padding, std::int64_t groups,
                        const IntList& dilation, Where w) {
  return detail::invoke(SYMTRACE_OP("conv_transpose1d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, output_padding, groups, dilation);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                        const IntList& padding, const IntList& output_padding, std::int64_t groups,
                        const IntList& dilation, Where w) {
  return detail::invoke(SYMTRACE_OP("conv_transpose2d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, output_padding, groups, dilation);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                        const IntList& padding, const IntList& output_padding, std::int64_t groups,
                        const IntList& dilation, Where w) {
  return detail::invoke(SYMTRACE_OP("conv_transpose3d"), w, CallStyle::function, input, weight,
                        detail::optional_tensor_value(bias), stride, padding, output_padding, groups, dilation);
}

}  // namespace symtrace

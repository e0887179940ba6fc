// Note [Layer output metadata]: the output metadata of the built-in layers, computed from
// their arguments' metadata without running forward.
//
// A tracer records a built-in layer as a leaf, and the leaf's node needs the shape of what
// the layer returns. Running the layer's forward on symbolic tensors finds it (and that run
// stays the reference: it goes through the op's meta function, which checks everything), but
// it costs a side run, a dispatch and a boxed argument list per leaf, more than the rest of
// the node. So each layer computes its result's metadata directly for the calls its op
// accepts, in the op's own formula, and answers nullopt for anything else: an unusual dtype, a
// dim it would have to check but cannot see, a mismatch. The tracer then runs forward, which
// gives the metadata or the op's error, exactly as before. A layer never answers for a call
// its op would refuse (tests/nn/layer_output_meta_test.cpp compares every layer with its
// eager forward on valid and invalid shapes).
#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/dropout.hpp"
#include "symtrace/nn/layer_norm.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/pooling.hpp"
#include "symtrace/nn/shape_layers.hpp"
#include "symtrace/ops/detail/pooled_size.hpp"

#include <array>
#include <cstdint>
#include <optional>

namespace symtrace::nn {

namespace {

/// The one tensor a single-input forward takes, or nullptr.
const TensorMeta* single_input(const ValueList& args) {
  if (args.size() != 1) return nullptr;
  const Tensor* t = boost::variant2::get_if<Tensor>(&args[0].value);
  return t != nullptr && t->defined() && t->meta().shape.is_rank_known() ? &t->meta() : nullptr;
}

/// The one float32 tensor a single-input forward takes, or nullptr.
const TensorMeta* float_input(const ValueList& args) {
  const TensorMeta* x = single_input(args);
  return x != nullptr && x->dtype == DType::float32 ? x : nullptr;
}

/// True for an undefined tensor or a float32 tensor of shape [n].
bool absent_or_vector(const Tensor& t, std::int64_t n) {
  if (!t.defined()) return true;
  const TensorMeta& m = t.meta();
  return m.dtype == DType::float32 && m.shape.rank() == 1 && m.shape[0] == Dim(n);
}

/// An elementwise layer on float32: the input's metadata.
std::optional<TensorMeta> same_as_float_input(const ValueList& args) {
  if (const TensorMeta* x = float_input(args)) return *x;
  return std::nullopt;
}

/// The [..., C, H, W] input of a 2-D layer ([N, C, H, W] or [C, H, W]) with C known and H and W
/// known or named (an expression its dims' ranges keep >= 1), all positive (only the batch may
/// be unknown or 0), or nullptr.
const TensorMeta* spatial_input(const ValueList& args) {
  const TensorMeta* x = float_input(args);
  if (x == nullptr || (x->shape.rank() != 4 && x->shape.rank() != 3)) return nullptr;
  for (std::size_t d = x->shape.rank() - 3; d < x->shape.rank(); ++d) {
    const Dim n = x->shape[d];
    const bool channels = d == x->shape.rank() - 3;
    const bool positive = n.is_known() ? n.raw() > 0 : !channels && n.is_symbolic() && n.expr()->bounds().lo >= 1;
    if (!positive) return nullptr;
  }
  return x;
}

/// A pooled [..., H, W] input, or nullopt when the window is invalid or the output empty.
std::optional<TensorMeta> pooled(const TensorMeta& x, Size2 kernel, Size2 stride, Size2 padding, Size2 dilation,
                                 bool ceil_mode) {
  const std::array<std::int64_t, 2> k{kernel.h, kernel.w}, s{stride.h, stride.w}, p{padding.h, padding.w},
      d{dilation.h, dilation.w};
  TensorMeta out = x;
  for (std::size_t i = 0; i < 2; ++i) {
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || p[i] < 0 || p[i] > k[i] / 2) return std::nullopt;
    const std::size_t dim = x.shape.rank() - 2 + i;
    // A named size: the op's formula, when the ranges prove it is not empty (else the op's
    // meta function records the guard).
    const Dim size = symtrace::detail::pooled_dim(x.shape[dim], k[i], s[i], p[i], d[i], ceil_mode);
    if (size.is_anonymous()) return std::nullopt;
    if (size.is_known() ? size.raw() < 1 : SymFact{*size.expr(), SymRel::ge, SymExpr(1)}.decide() != true)
      return std::nullopt;
    out.shape[dim] = size;
  }
  return out;
}

}  // namespace

std::optional<TensorMeta> LinearImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = float_input(args);
  if (x == nullptr || x->shape.rank() == 0 || !weight.defined()) return std::nullopt;
  const TensorMeta& w = weight.meta();
  if (w.dtype != DType::float32 || w.shape.rank() != 2 || !w.shape.is_fully_known()) return std::nullopt;
  if (x->shape[x->shape.rank() - 1] != w.shape[1] || !absent_or_vector(bias, w.shape[0].raw())) return std::nullopt;
  TensorMeta out = *x;
  out.shape[out.shape.rank() - 1] = w.shape[0];
  return out;
}

std::optional<TensorMeta> Conv2dImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = spatial_input(args);
  if (x == nullptr || !weight.defined()) return std::nullopt;
  const TensorMeta& w = weight.meta();
  const std::int64_t groups = options.groups;
  if (w.dtype != DType::float32 || w.shape.rank() != 4 || !w.shape.is_fully_known() || groups <= 0) return std::nullopt;
  const std::size_t c = x->shape.rank() - 3;  // the channel dim
  const std::int64_t out_channels = w.shape[0].raw();
  if (out_channels % groups != 0 || x->shape[c].raw() != w.shape[1].raw() * groups ||
      !absent_or_vector(bias, out_channels))
    return std::nullopt;
  const std::array<std::int64_t, 2> s{options.stride.h, options.stride.w}, p{options.padding.h, options.padding.w},
      d{options.dilation.h, options.dilation.w};
  TensorMeta out = *x;
  out.shape[c] = Dim(out_channels);
  for (std::size_t i = 0; i < 2; ++i) {
    if (s[i] <= 0 || p[i] < 0 || d[i] <= 0) return std::nullopt;
    // floor((in + 2p - d*(k-1) - 1) / s) + 1, once the kernel fits the padded input (for a named
    // size, once its range proves that; else the op's meta function records the guard).
    const Dim in = x->shape[c + 1 + i];
    const std::int64_t span = d[i] * (w.shape[2 + i].raw() - 1) + 1;
    if (in.is_symbolic()) {
      const SymExpr padded = *in.expr() + SymExpr(2 * p[i]);
      if (SymFact{padded, SymRel::ge, SymExpr(span)}.decide() != true) return std::nullopt;
      out.shape[c + 1 + i] = floordiv(padded - SymExpr(span), s[i]) + SymExpr(1);
      continue;
    }
    const std::int64_t padded = in.raw() + 2 * p[i];
    if (span > padded) return std::nullopt;
    out.shape[c + 1 + i] = Dim((padded - span) / s[i] + 1);
  }
  return out;
}

std::optional<TensorMeta> BatchNorm2dImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = float_input(args);
  if (x == nullptr || x->shape.rank() != 4 || !x->shape[1].is_known()) return std::nullopt;
  const std::int64_t channels = x->shape[1].raw();
  if (!absent_or_vector(weight, channels) || !absent_or_vector(bias, channels) ||
      !absent_or_vector(running_mean, channels) || !absent_or_vector(running_var, channels) ||
      running_mean.defined() != running_var.defined())
    return std::nullopt;
  if (is_training() || !options.track_running_stats) {
    // Batch statistics need more than one value per channel.
    const std::optional<std::int64_t> n = x->shape.numel();
    if (!n || *n == channels) return std::nullopt;
  } else if (!running_mean.defined()) {
    return std::nullopt;
  }
  return *x;
}

std::optional<TensorMeta> LayerNormImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = float_input(args);
  const std::size_t k = normalized_shape.size();
  if (x == nullptr || k == 0 || x->shape.rank() < k) return std::nullopt;
  for (std::size_t i = 0; i < k; ++i) {
    const Dim d = x->shape[x->shape.rank() - k + i];
    // A named dim needs the op's guard that it is normalized_shape: the op's meta function records it.
    if (normalized_shape[i] < 0 || d.is_symbolic() || (d.is_known() && d.raw() != normalized_shape[i])) return std::nullopt;
  }
  for (const Tensor* param : {&weight, &bias}) {
    if (!param->defined()) continue;
    const TensorMeta& m = param->meta();
    if (m.dtype != DType::float32 || m.shape.rank() != k) return std::nullopt;
    for (std::size_t i = 0; i < k; ++i) {
      if (m.shape[i] != Dim(normalized_shape[i])) return std::nullopt;
    }
  }
  return *x;
}

std::optional<TensorMeta> ReLUImpl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }
std::optional<TensorMeta> ReLU6Impl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }
std::optional<TensorMeta> GELUImpl::layer_output_meta(const ValueList& args) const {
  if (options.approximate != "none" && options.approximate != "tanh") return std::nullopt;
  return same_as_float_input(args);
}
std::optional<TensorMeta> SiLUImpl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }
std::optional<TensorMeta> HardswishImpl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }
std::optional<TensorMeta> HardsigmoidImpl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }
std::optional<TensorMeta> SigmoidImpl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }
std::optional<TensorMeta> TanhImpl::layer_output_meta(const ValueList& args) const { return same_as_float_input(args); }

std::optional<TensorMeta> DropoutImpl::layer_output_meta(const ValueList& args) const {
  if (!(options.p >= 0.0 && options.p <= 1.0)) return std::nullopt;
  return same_as_float_input(args);
}

std::optional<TensorMeta> MaxPool2dImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = spatial_input(args);
  if (x == nullptr) return std::nullopt;
  return pooled(*x, kernel_size, stride, options.padding, options.dilation, options.ceil_mode);
}

std::optional<TensorMeta> AvgPool2dImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = spatial_input(args);
  if (x == nullptr) return std::nullopt;
  return pooled(*x, kernel_size, stride, options.padding, Size2(1), options.ceil_mode);
}

std::optional<TensorMeta> AdaptiveAvgPool2dImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = spatial_input(args);
  if (x == nullptr || output_size.h < 0 || output_size.w < 0) return std::nullopt;
  TensorMeta out = *x;
  out.shape[out.shape.rank() - 2] = Dim(output_size.h);
  out.shape[out.shape.rank() - 1] = Dim(output_size.w);
  return out;
}

std::optional<TensorMeta> FlattenImpl::layer_output_meta(const ValueList& args) const {
  const TensorMeta* x = single_input(args);
  if (x == nullptr || x->shape.rank() == 0) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(x->shape.rank());
  const std::int64_t start = options.start_dim < 0 ? options.start_dim + rank : options.start_dim;
  const std::int64_t end = options.end_dim < 0 ? options.end_dim + rank : options.end_dim;
  if (start < 0 || end >= rank || start > end) return std::nullopt;
  TensorMeta out{x->dtype, Shape{}};
  Dim merged = 1;
  for (std::int64_t d = 0; d < rank; ++d) {
    const Dim n = x->shape[static_cast<std::size_t>(d)];
    if (d < start || d > end) out.shape.push_back(n);
    else merged = merged * n;
    if (d == end) out.shape.push_back(merged);
  }
  return out;
}

std::optional<TensorMeta> IdentityImpl::layer_output_meta(const ValueList& args) const {
  if (const TensorMeta* x = single_input(args)) return *x;
  return std::nullopt;
}

}  // namespace symtrace::nn

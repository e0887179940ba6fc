// dropout: zeroes each element with probability p, drawing from this thread's default
// generator in row-major order of the logical index space (so the mask for a given seed does
// not depend on the input's strides), and scales the kept elements by 1/(1-p).

#include "symtrace/ops/nn_functional.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <algorithm>

namespace symtrace {

namespace {

OutputMeta dropout_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const double p = call.real(1);
  if (!(p >= 0.0 && p <= 1.0))
    call.fail("dropout probability p must be between 0 and 1, got {} (input of shape {})", p, x.shape());
  detail::require_floating(call, x, "input");
  return OutputMeta::single(x.dtype(), x.shape());
}

Value dropout_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const double p = call.real(1);
  // As PyTorch: no draw and the input itself when not training, when p == 0 or when it is empty.
  if (!call.boolean(2) || p == 0.0 || x.shape().numel() == 0) return x;
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  if (p == 1.0) {
    std::fill_n(out.data_ptr<float>(), *out.shape().numel(), 0.0f);
    return out;
  }
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  Generator& gen = default_generator();
  // map_unary visits elements in row-major order, which fixes the order of the draws.
  detail::map_unary<float, float>(out, x, [&](float v) {
    return static_cast<double>(gen.uniform()) < p ? 0.0f : v * scale;
  });
  return out;
}

}  // namespace

void detail::register_dropout_ops(OpRegistry& r) {
  // Not flagged elementwise although each output element depends only on its input element:
  // the mask depends on the element's position in the draw order, so dropout does not commute
  // with the layout changes an elementwise-aware pass might make.
  r.add("dropout(Tensor input, float p=0.5, bool train=True) -> Tensor", dropout_meta, dropout_kernel,
        OpFlags::random | OpFlags::channel_passthrough);
}

// ---- Typed API ---------------------------------------------------------------------------

Tensor dropout(const Tensor& input, double p, bool train, Where where) {
  return detail::invoke(SYMTRACE_OP("dropout"), where, CallStyle::function, input, p, train);
}

}  // namespace symtrace

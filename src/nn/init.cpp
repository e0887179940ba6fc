#include "symtrace/nn/init.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/detail/skip_init.hpp"

#include <cmath>

namespace symtrace::nn {

namespace {
thread_local bool t_skip_init = false;
}  // namespace

bool detail::skipping_init() noexcept { return t_skip_init; }
detail::SkipInitScope::SkipInitScope() noexcept : previous_(t_skip_init) { t_skip_init = true; }
detail::SkipInitScope::~SkipInitScope() { t_skip_init = previous_; }

}  // namespace symtrace::nn

namespace symtrace::nn::init {

namespace {
// Fills every element of `t` (any strides) with gen(); the tensor must be concrete float32.
template <class F>
Tensor fill(const Tensor& t, const char* what, F&& gen) {
  const auto where = std::source_location::current();
  if (!t.defined() || t.is_symbolic() || t.dtype() != DType::float32)
    throw_invalid_argument(where, "nn::init::{}: needs a concrete float32 tensor", what);
  if (nn::detail::skipping_init()) return t;  // Note: the caller overwrites every value
  // Parameters are made contiguous by the layers; fill a contiguous copy otherwise.
  const Tensor target = t.is_contiguous() ? t : Tensor::empty(t.shape());
  float* data = target.data_ptr<float>();
  const std::int64_t n = *t.shape().numel();
  for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(gen());
  if (!t.is_contiguous()) t.copy_(target);
  return t;
}
}  // namespace

Tensor uniform_(const Tensor& t, double low, double high, Generator& gen) {
  return fill(t, "uniform_", [&] { return low + (high - low) * static_cast<double>(gen.uniform()); });
}

Tensor normal_(const Tensor& t, double mean, double std, Generator& gen) {
  return fill(t, "normal_", [&] { return mean + std * static_cast<double>(gen.normal()); });
}

Tensor constant_(const Tensor& t, double value) {
  return fill(t, "constant_", [&] { return value; });
}

Tensor zeros_(const Tensor& t) { return constant_(t, 0.0); }
Tensor ones_(const Tensor& t) { return constant_(t, 1.0); }

Tensor fan_in_uniform_(const Tensor& t, std::int64_t fan_in, Generator& gen) {
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return uniform_(t, -bound, bound, gen);
}

}  // namespace symtrace::nn::init

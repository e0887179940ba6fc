#include "symtrace/nn/shape_layers.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace symtrace::nn {

Tensor FlattenImpl::forward(const Tensor& input) { return flatten(input, options.start_dim, options.end_dim); }

std::string FlattenImpl::extra_repr() const {
  return fmt::format("start_dim={}, end_dim={}", options.start_dim, options.end_dim);
}

Tensor IdentityImpl::forward(const Tensor& input) { return input; }

UpsampleImpl::UpsampleImpl(UpsampleOptions opts, std::source_location where) : options(std::move(opts)) {
  if (options.mode != "nearest")
    throw_invalid_argument(where, "Upsample: mode '{}' is not supported; only 'nearest' is", options.mode);
  if (options.size.has_value() == options.scale_factor.has_value())
    throw_invalid_argument(where, "Upsample: give exactly one of size and scale_factor, got {}",
                           options.size ? "both" : "neither");
  // Both stay as written (one value or two), as PyTorch keeps them: the op takes either form,
  // and extra_repr prints them back the same way.
  if (options.size && (options.size->empty() || options.size->size() > 2 ||
                       std::any_of(options.size->begin(), options.size->end(), [](auto d) { return d <= 0; })))
    throw_invalid_argument(where, "Upsample: size must be one or two positive sizes ([H, W]), got [{}]",
                           fmt::join(*options.size, ", "));
  if (options.scale_factor) {
    const auto& s = *options.scale_factor;
    if (s.empty() || s.size() > 2 ||
        std::any_of(s.begin(), s.end(), [](double f) { return !(f > 0) || !std::isfinite(f); }))
      throw_invalid_argument(where,
                             "Upsample: scale_factor must be one or two positive finite numbers ([sh, sw]), got [{}]",
                             fmt::join(s, ", "));
  }
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  return upsample_nearest2d(input, options.size, options.scale_factor);
}

std::string UpsampleImpl::extra_repr() const {
  // PyTorch: `size` as given (8 or (8, 8)); `scale_factor` as floats (2.0 or (2.0, 3.0)).
  std::string info;
  if (options.size) {
    const IntList& s = *options.size;
    info = s.size() == 1 ? fmt::format("size={}", s[0]) : fmt::format("size=({})", fmt::join(s, ", "));
  } else {
    const auto& s = *options.scale_factor;
    info = s.size() == 1 ? fmt::format("scale_factor={}", format_double(s[0]))
                         : fmt::format("scale_factor=({}, {})", format_double(s[0]), format_double(s[1]));
  }
  return fmt::format("{}, mode='{}'", info, options.mode);
}

}  // namespace symtrace::nn

#include "symtrace/nn/shape_layers.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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
    throw_invalid_argument(where, "Upsample: give exactly one of size and scale_factor");
  if (options.size && (options.size->size() != 2 ||
                       std::any_of(options.size->begin(), options.size->end(), [](auto d) { return d <= 0; })))
    throw_invalid_argument(where, "Upsample: size must be two positive sizes [H, W], got [{}]",
                           fmt::join(*options.size, ", "));
  if (options.scale_factor) {
    auto& s = *options.scale_factor;
    if (s.size() == 1) s.push_back(s[0]);
    if (s.size() != 2 || !(s[0] > 0) || !(s[1] > 0))
      throw_invalid_argument(where, "Upsample: scale_factor must be one or two positive numbers");
  }
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  return upsample_nearest2d(input, options.size, options.scale_factor);
}

std::string UpsampleImpl::extra_repr() const {
  if (options.size)
    return fmt::format("size=({}), mode='{}'", fmt::join(*options.size, ", "), options.mode);
  const auto& s = *options.scale_factor;
  const std::string scale =
      s[0] == s[1] ? format_double(s[0]) : fmt::format("({}, {})", format_double(s[0]), format_double(s[1]));
  return fmt::format("scale_factor={}, mode='{}'", scale, options.mode);
}

}  // namespace symtrace::nn

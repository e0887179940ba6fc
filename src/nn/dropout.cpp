#include "symtrace/nn/dropout.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

DropoutImpl::DropoutImpl(DropoutOptions opts, std::source_location where) : options(opts) {
  if (!(opts.p >= 0.0 && opts.p <= 1.0))
    throw_invalid_argument(where, "Dropout: p must be within [0, 1], got {}", format_double(opts.p));
}

Tensor DropoutImpl::forward(const Tensor& input) {
  if (options.inplace) return input.copy_(dropout(input, options.p, is_training()));
  return dropout(input, options.p, is_training());
}

std::string DropoutImpl::extra_repr() const {
  return fmt::format("p={}, inplace={}", format_double(options.p), detail::py_bool(options.inplace));
}

}  // namespace symtrace::nn

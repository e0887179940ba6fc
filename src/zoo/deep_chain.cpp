// DeepChain: a chain of modules nested n deep, the innermost failing to trace.
#include "symtrace/zoo/deep_chain.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/pointwise.hpp"
#include "symtrace/ops/reduction.hpp"

namespace symtrace::zoo {

ChainEndImpl::ChainEndImpl(std::int64_t width) { fc = register_module("fc", nn::Linear(width, width)); }

const int ChainEndImpl::data_branch_line = __LINE__ + 4;  // the `if` below

Tensor ChainEndImpl::forward(const Tensor& x) {
  const Tensor h = fc(x);
  if ((h.sum() > 0).to_bool())  // data-dependent control flow
    return relu(h);
  return h;
}

ChainLinkImpl::ChainLinkImpl(std::shared_ptr<ChainLinkImpl> inner) { next = register_module("inner", std::move(inner)); }

ChainLinkImpl::ChainLinkImpl(ChainEnd inner) { end = register_module("inner", std::move(inner)); }

namespace {
/// A link's own work, in a frame of its own: a link's forward is on the stack once per level,
/// its temporaries would be too.
[[gnu::noinline]] Tensor half_relu_residual(const Tensor& x) { return (x + relu(x)) * 0.5; }
/// The end's call, once per chain, in a frame of its own for the same reason.
[[gnu::noinline]] Tensor call_end(const ChainEnd& end, const Tensor& x) { return end(x); }
}  // namespace

Tensor ChainLinkImpl::forward(const Tensor& x) {
  if (next) return next->call_at(std::source_location::current(), half_relu_residual(x));
  return call_end(end, half_relu_residual(x));
}

std::shared_ptr<ChainLinkImpl> deep_chain(std::int64_t n, std::int64_t width, std::source_location where) {
  if (n < 2 || width < 1)
    throw_invalid_argument(where, "deep_chain(n={}, width={}): a chain has n >= 2 modules (links around an end) and width >= 1",
                           n, width);
  auto chain = std::make_shared<ChainLinkImpl>(ChainEnd(width));
  for (std::int64_t i = 2; i < n; ++i) chain = std::make_shared<ChainLinkImpl>(std::move(chain));
  return chain;
}

}  // namespace symtrace::zoo

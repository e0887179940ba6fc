// DeepMLP as bench/fx/models.py writes it in PyTorch.
#include "symtrace/zoo/mlp.hpp"

#include "symtrace/core/error.hpp"

namespace symtrace::zoo {

MLPBlockImpl::MLPBlockImpl(std::int64_t dim) {
  fc = register_module("fc", nn::Linear(dim, dim));
  norm = register_module("norm", nn::LayerNorm(dim));
  act = register_module("act", nn::GELU());
}

Tensor MLPBlockImpl::forward(const Tensor& x) { return x + act(norm(fc(x))); }

const int FailingMLPBlockImpl::data_branch_line = __LINE__ + 4;  // the `if` below

Tensor FailingMLPBlockImpl::forward(const Tensor& x) {
  const Tensor h = act(norm(fc(x)));
  if ((h.sum() > 0).to_bool())  // data-dependent control flow
    return x + h;
  return x - h;
}

DeepMLPImpl::DeepMLPImpl(std::int64_t n_blocks, std::int64_t dim, std::optional<std::int64_t> fail_every,
                         std::source_location where) {
  if (n_blocks < 0 || dim <= 0 || (fail_every && *fail_every <= 0))
    throw_invalid_argument(where,
                           "DeepMLP(n_blocks={}, dim={}, fail_every={}): n_blocks must be >= 0, dim and "
                           "fail_every positive",
                           n_blocks, dim, fail_every ? std::to_string(*fail_every) : "None");
  blocks = register_module("blocks", nn::Sequential());
  for (std::int64_t i = 0; i < n_blocks; ++i) {
    if (fail_every && i % *fail_every == 0)
      blocks->push_back(FailingMLPBlock(dim), where);
    else
      blocks->push_back(MLPBlock(dim), where);
  }
}

Tensor DeepMLPImpl::forward(const Tensor& x) { return blocks(x); }

std::shared_ptr<Module> deep_mlp(std::int64_t n_blocks, std::optional<std::int64_t> fail_every,
                                 std::source_location where) {
  return std::make_shared<DeepMLPImpl>(n_blocks, 64, fail_every, where);
}

}  // namespace symtrace::zoo

#pragma once
/// \file
/// The deep residual MLP of bench/fx/models.py (`DeepMLP`, `MLPBlock`,
/// `FailingMLPBlock`): a Sequential of N blocks x + GELU(LayerNorm(Linear(x))), all of width
/// 64 by default. It stresses tracers with many module calls (N = 100, 1000, 10000), and the
/// failing variant puts a data-dependent branch in every `fail_every`-th block. Module names
/// equal the Python's ("blocks.17.fc.weight").
///
/// ```
/// auto model = symtrace::zoo::deep_mlp(1000);      // 4'288'000 parameters, input [B, 64]
/// auto failing = symtrace::zoo::deep_mlp(1000, 64); // blocks 0, 64, ..., 960 fail to trace
/// ```

#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/layer_norm.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>

namespace symtrace::zoo {

/// One residual block: x + act(norm(fc(x))) (`MLPBlock` in Python); 4'288 parameters at dim 64.
class MLPBlockImpl : public TypedModule<MLPBlockImpl> {
 public:
  explicit MLPBlockImpl(std::int64_t dim = 64);
  virtual Tensor forward(const Tensor& x);

  nn::Linear fc{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::GELU act{nullptr};
};
SYMTRACE_MODULE(MLPBlock);

/// An MLPBlock whose forward branches on its data (`FailingMLPBlock` in Python): x + h when
/// h.sum() > 0, else x - h. A symbolic tracer cannot follow the branch.
class FailingMLPBlockImpl : public MLPBlockImpl {
 public:
  using MLPBlockImpl::MLPBlockImpl;
  Tensor forward(const Tensor& x) override;
  /// The source line of the data-dependent branch in forward (where a symbolic trace fails).
  static const int data_branch_line;
};
SYMTRACE_MODULE(FailingMLPBlock);

/// `blocks`: a Sequential of `n_blocks` MLPBlocks, FailingMLPBlock where i % fail_every == 0
/// (`DeepMLP` in Python).
class DeepMLPImpl : public TypedModule<DeepMLPImpl> {
 public:
  /// Throws std::invalid_argument for a negative block count, a non-positive dim or fail_every.
  explicit DeepMLPImpl(std::int64_t n_blocks, std::int64_t dim = 64,
                       std::optional<std::int64_t> fail_every = std::nullopt,
                       std::source_location where = std::source_location::current());
  /// x: [..., dim] -> [..., dim].
  virtual Tensor forward(const Tensor& x);

  nn::Sequential blocks{nullptr};
};
SYMTRACE_MODULE(DeepMLP);

/// DeepMLP(n_blocks) of width 64, failing every `fail_every`-th block when given
/// (n_blocks * 4'288 parameters).
[[nodiscard]] std::shared_ptr<Module> deep_mlp(std::int64_t n_blocks,
                                               std::optional<std::int64_t> fail_every = std::nullopt,
                                               std::source_location where = std::source_location::current());

}  // namespace symtrace::zoo

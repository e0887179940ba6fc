#pragma once
/// \file
/// `nn::BatchNorm2d`, as `torch.nn.BatchNorm2d`: weight 1 and bias 0 [C] (when affine),
/// buffers running_mean 0, running_var 1 [C] and num_batches_tracked 0 (int64, 0-dim) (when
/// tracking running statistics). In training mode it normalises with the batch's statistics
/// and updates the running ones; in eval mode it uses the running ones. A leaf when traced.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <source_location>

namespace symtrace::nn {

struct BatchNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;
};

class BatchNorm2dImpl : public TypedModule<BatchNorm2dImpl> {
 public:
  BatchNorm2dImpl(std::int64_t num_features, BatchNormOptions options = {},
                  std::source_location where = std::source_location::current());
  /// Throws std::invalid_argument unless the input is 4-D [N, C, H, W].
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t num_features;
  BatchNormOptions options;
  Tensor weight, bias;               ///< undefined unless affine
  Tensor running_mean, running_var;  ///< undefined unless tracking
  Tensor num_batches_tracked;        ///< undefined unless tracking
};

/// Holder of BatchNorm2dImpl: `nn::BatchNorm2d(64)`, `nn::BatchNorm2d(64, {.eps = 1e-3})`.
class BatchNorm2d : public ModuleHolder<BatchNorm2dImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>           // not a literal 0, which means a size
  BatchNorm2d(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<BatchNorm2dImpl> I>
  BatchNorm2d(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<BatchNorm2dImpl>(std::move(impl))) {}  // NOLINT
  BatchNorm2d(std::int64_t num_features, BatchNormOptions options = {},
              std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<BatchNorm2dImpl>(num_features, options, where)) {}
};

}  // namespace symtrace::nn

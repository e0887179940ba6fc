#pragma once
/// \file
/// `nn::LayerNorm`, as `torch.nn.LayerNorm`: normalises over the trailing `normalized_shape`
/// dims; weight 1 and bias 0 of that shape when elementwise_affine. A leaf when traced.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <source_location>

namespace symtrace::nn {

struct LayerNormOptions {
  double eps = 1e-5;
  bool elementwise_affine = true;
  bool bias = true;
};

class LayerNormImpl : public TypedModule<LayerNormImpl> {
 public:
  LayerNormImpl(IntList normalized_shape, LayerNormOptions options = {},
                std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;

  IntList normalized_shape;
  LayerNormOptions options;
  Tensor weight;  ///< undefined unless elementwise_affine
  Tensor bias;    ///< undefined unless elementwise_affine and bias
};

/// Holder of LayerNormImpl: `nn::LayerNorm(768, {.eps = 1e-6})`, `nn::LayerNorm(IntList{4, 8})`.
class LayerNorm : public ModuleHolder<LayerNormImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>         // not a literal 0, which means a size
  LayerNorm(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<LayerNormImpl> I>
  LayerNorm(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<LayerNormImpl>(std::move(impl))) {}  // NOLINT
  LayerNorm(std::int64_t normalized_size, LayerNormOptions options = {},
            std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<LayerNormImpl>(IntList{normalized_size}, options, where)) {}
  LayerNorm(IntList normalized_shape, LayerNormOptions options = {},
            std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<LayerNormImpl>(std::move(normalized_shape), options, where)) {}
};

}  // namespace symtrace::nn

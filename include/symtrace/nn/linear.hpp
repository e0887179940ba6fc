#pragma once
/// \file
/// `nn::Linear`: y = x W^T + b, as `torch.nn.Linear` (weight [out, in], bias [out], both
/// uniform in [-1/sqrt(in), 1/sqrt(in))). A leaf when traced by default.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <source_location>

namespace symtrace::nn {

struct LinearOptions {
  bool bias = true;
};

class LinearImpl : public TypedModule<LinearImpl> {
 public:
  LinearImpl(std::int64_t in_features, std::int64_t out_features, LinearOptions options = {},
             std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t in_features;
  std::int64_t out_features;
  Tensor weight;
  Tensor bias;  ///< undefined without bias
};

/// `torch.nn.modules.linear.NonDynamicallyQuantizableLinear`: a Linear under PyTorch's other
/// name for it, MultiheadAttention's output projection.
class NonDynamicallyQuantizableLinearImpl : public LinearImpl {
 public:
  using LinearImpl::LinearImpl;
};

/// Holder of LinearImpl: `nn::Linear(512, 1000)`, `nn::Linear(64, 64, {.bias = false})`.
class Linear : public ModuleHolder<LinearImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>      // not a literal 0, which means a size
  Linear(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<LinearImpl> I>
  Linear(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<LinearImpl>(std::move(impl))) {}  // NOLINT
  Linear(std::int64_t in_features, std::int64_t out_features, LinearOptions options = {},
         std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<LinearImpl>(in_features, out_features, options, where)) {}
};

}  // namespace symtrace::nn

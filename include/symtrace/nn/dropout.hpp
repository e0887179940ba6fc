#pragma once
/// \file
/// `nn::Dropout`, as `torch.nn.Dropout`: in training mode zeroes each element with
/// probability p and scales the rest by 1 / (1 - p); in eval mode it is the identity.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <source_location>

namespace symtrace::nn {

struct DropoutOptions {
  double p = 0.5;
  bool inplace = false;
};

class DropoutImpl : public TypedModule<DropoutImpl> {
 public:
  /// Throws std::invalid_argument unless 0 <= p <= 1.
  explicit DropoutImpl(DropoutOptions options = {},
                       std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  DropoutOptions options;
};

/// `nn::Dropout()`, `nn::Dropout({.p = 0.2})`, `nn::Dropout(0.2)`.
class Dropout : public ModuleHolder<DropoutImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>       // not a literal 0, which means a size
  Dropout(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<DropoutImpl> I>
  Dropout(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<DropoutImpl>(std::move(impl))) {}  // NOLINT
  explicit Dropout(DropoutOptions options = {}, std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<DropoutImpl>(options, where)) {}
  explicit Dropout(double p, std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<DropoutImpl>(DropoutOptions{.p = p}, where)) {}
};

}  // namespace symtrace::nn

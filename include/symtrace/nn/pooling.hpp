#pragma once
/// \file
/// 2-D pooling layers, as in `torch.nn`: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d. The stride
/// defaults to the kernel size. Leaves when traced by default.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/size2.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <optional>
#include <source_location>

namespace symtrace::nn {

struct MaxPool2dOptions {
  std::optional<Size2> stride = std::nullopt;  ///< the kernel size when not given
  Size2 padding = 0;
  Size2 dilation = 1;
  bool ceil_mode = false;
};

class MaxPool2dImpl : public TypedModule<MaxPool2dImpl> {
 public:
  MaxPool2dImpl(Size2 kernel_size, MaxPool2dOptions options = {},
                std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  Size2 kernel_size;
  Size2 stride;
  MaxPool2dOptions options;
};

/// `nn::MaxPool2d(3, {.stride = 2, .padding = 1})`.
class MaxPool2d : public ModuleHolder<MaxPool2dImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>         // not a literal 0, which means a size
  MaxPool2d(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<MaxPool2dImpl> I>
  MaxPool2d(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<MaxPool2dImpl>(std::move(impl))) {}  // NOLINT
  MaxPool2d(Size2 kernel_size, MaxPool2dOptions options = {},
            std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<MaxPool2dImpl>(kernel_size, options, where)) {}
};

struct AvgPool2dOptions {
  std::optional<Size2> stride = std::nullopt;  ///< the kernel size when not given
  Size2 padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;
};

class AvgPool2dImpl : public TypedModule<AvgPool2dImpl> {
 public:
  AvgPool2dImpl(Size2 kernel_size, AvgPool2dOptions options = {},
                std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  Size2 kernel_size;
  Size2 stride;
  AvgPool2dOptions options;
};

/// `nn::AvgPool2d(2)`, `nn::AvgPool2d(3, {.stride = 1, .padding = 1})`.
class AvgPool2d : public ModuleHolder<AvgPool2dImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>         // not a literal 0, which means a size
  AvgPool2d(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<AvgPool2dImpl> I>
  AvgPool2d(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<AvgPool2dImpl>(std::move(impl))) {}  // NOLINT
  AvgPool2d(Size2 kernel_size, AvgPool2dOptions options = {},
            std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<AvgPool2dImpl>(kernel_size, options, where)) {}
};

class AdaptiveAvgPool2dImpl : public TypedModule<AdaptiveAvgPool2dImpl> {
 public:
  explicit AdaptiveAvgPool2dImpl(Size2 output_size,
                                 std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  Size2 output_size;
};

/// `nn::AdaptiveAvgPool2d(1)`, `nn::AdaptiveAvgPool2d({7, 7})`.
class AdaptiveAvgPool2d : public ModuleHolder<AdaptiveAvgPool2dImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>                 // not a literal 0, which means a size
  AdaptiveAvgPool2d(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<AdaptiveAvgPool2dImpl> I>
  AdaptiveAvgPool2d(std::shared_ptr<I> impl) noexcept  // NOLINT
      : ModuleHolder(std::shared_ptr<AdaptiveAvgPool2dImpl>(std::move(impl))) {}
  explicit AdaptiveAvgPool2d(Size2 output_size, std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<AdaptiveAvgPool2dImpl>(output_size, where)) {}
};

}  // namespace symtrace::nn

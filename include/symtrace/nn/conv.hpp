#pragma once
/// \file
/// `nn::Conv2d`, as `torch.nn.Conv2d` with zero padding: weight [out, in / groups, kh, kw] and
/// bias [out], uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in / groups * kh * kw.
/// A leaf when traced by default.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/size2.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <source_location>

namespace symtrace::nn {

struct Conv2dOptions {
  Size2 stride = 1;
  Size2 padding = 0;
  Size2 dilation = 1;
  std::int64_t groups = 1;
  bool bias = true;
};

class Conv2dImpl : public TypedModule<Conv2dImpl> {
 public:
  /// Throws std::invalid_argument for non-positive sizes or channels not divisible by groups.
  Conv2dImpl(std::int64_t in_channels, std::int64_t out_channels, Size2 kernel_size,
             Conv2dOptions options = {}, std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t in_channels;
  std::int64_t out_channels;
  Size2 kernel_size;
  Conv2dOptions options;
  Tensor weight;
  Tensor bias;  ///< undefined without bias
};

/// Holder of Conv2dImpl: `nn::Conv2d(3, 64, 7, {.stride = 2, .padding = 3, .bias = false})`.
class Conv2d : public ModuleHolder<Conv2dImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>      // not a literal 0, which means a size
  Conv2d(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<Conv2dImpl> I>
  Conv2d(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<Conv2dImpl>(std::move(impl))) {}  // NOLINT
  Conv2d(std::int64_t in_channels, std::int64_t out_channels, Size2 kernel_size, Conv2dOptions options = {},
         std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<Conv2dImpl>(in_channels, out_channels, kernel_size, options, where)) {}
};

}  // namespace symtrace::nn

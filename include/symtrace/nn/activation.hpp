#pragma once
/// \file
/// Activation layers, as in `torch.nn`: ReLU, ReLU6, GELU, SiLU, Hardswish, Hardsigmoid,
/// Sigmoid, Tanh, Softmax. Leaves when traced by default. `inplace` (ReLU, ReLU6, Hardswish,
/// Hardsigmoid) writes the result into the input, as PyTorch's `inplace=True`.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace symtrace::nn {

struct ReLUOptions {
  bool inplace = false;
};

class ReLUImpl : public TypedModule<ReLUImpl> {
 public:
  explicit ReLUImpl(ReLUOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  ReLUOptions options;
};

/// `nn::ReLU()`, `nn::ReLU({.inplace = true})`.
class ReLU : public ModuleHolder<ReLUImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>    // not a literal 0, which means a size
  ReLU(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<ReLUImpl> I>
  ReLU(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<ReLUImpl>(std::move(impl))) {}  // NOLINT
  explicit ReLU(ReLUOptions options = {}) : ModuleHolder(std::make_shared<ReLUImpl>(options)) {}
};

class ReLU6Impl : public TypedModule<ReLU6Impl> {
 public:
  explicit ReLU6Impl(ReLUOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  ReLUOptions options;
};

/// `nn::ReLU6()`, `nn::ReLU6({.inplace = true})`: min(max(x, 0), 6).
class ReLU6 : public ModuleHolder<ReLU6Impl> {
 public:
  template <std::same_as<std::nullptr_t> Null>     // not a literal 0, which means a size
  ReLU6(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<ReLU6Impl> I>
  ReLU6(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<ReLU6Impl>(std::move(impl))) {}  // NOLINT
  explicit ReLU6(ReLUOptions options = {}) : ModuleHolder(std::make_shared<ReLU6Impl>(options)) {}
};

class HardswishImpl : public TypedModule<HardswishImpl> {
 public:
  explicit HardswishImpl(ReLUOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  ReLUOptions options;
};

/// `nn::Hardswish()`, `nn::Hardswish({.inplace = true})`: x * relu6(x + 3) / 6.
class Hardswish : public ModuleHolder<HardswishImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>         // not a literal 0
  Hardswish(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<HardswishImpl> I>
  Hardswish(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<HardswishImpl>(std::move(impl))) {}  // NOLINT
  explicit Hardswish(ReLUOptions options = {}) : ModuleHolder(std::make_shared<HardswishImpl>(options)) {}
};

class HardsigmoidImpl : public TypedModule<HardsigmoidImpl> {
 public:
  explicit HardsigmoidImpl(ReLUOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  ReLUOptions options;
};

/// `nn::Hardsigmoid()`, `nn::Hardsigmoid({.inplace = true})`: relu6(x + 3) / 6.
class Hardsigmoid : public ModuleHolder<HardsigmoidImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>           // not a literal 0
  Hardsigmoid(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<HardsigmoidImpl> I>
  Hardsigmoid(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<HardsigmoidImpl>(std::move(impl))) {}  // NOLINT
  explicit Hardsigmoid(ReLUOptions options = {}) : ModuleHolder(std::make_shared<HardsigmoidImpl>(options)) {}
};

struct GELUOptions {
  std::string approximate = "none";  ///< "none" (erf) or "tanh"
};

class GELUImpl : public TypedModule<GELUImpl> {
 public:
  /// Throws std::invalid_argument unless approximate is "none" or "tanh".
  explicit GELUImpl(GELUOptions options = {},
                    std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  GELUOptions options;
};

/// `nn::GELU()`, `nn::GELU({.approximate = "tanh"})`.
class GELU : public ModuleHolder<GELUImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>    // not a literal 0, which means a size
  GELU(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<GELUImpl> I>
  GELU(std::shared_ptr<I> impl)
  noexcept : ModuleHolder(std::shared_ptr<GELUImpl>(std::move(impl))) {}  // NOLINT
  explicit GELU(GELUOptions options = {}, std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<GELUImpl>(std::move(options), where)) {}
};

/// x * sigmoid(x).
class SiLUImpl : public TypedModule<SiLUImpl> {
 public:
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
};
SYMTRACE_MODULE(SiLU);

class SigmoidImpl : public TypedModule<SigmoidImpl> {
 public:
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
};
SYMTRACE_MODULE(Sigmoid);

class TanhImpl : public TypedModule<TanhImpl> {
 public:
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
};
SYMTRACE_MODULE(Tanh);

/// softmax over `dim`; without one, PyTorch's legacy choice (dim 0 for inputs of rank 0, 1
/// or 3, else dim 1).
class SoftmaxImpl : public TypedModule<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(std::optional<std::int64_t> dim = std::nullopt) : dim(dim) {}
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::string extra_repr() const override;
  std::optional<std::int64_t> dim;
};

/// `nn::Softmax(-1)`.
class Softmax : public ModuleHolder<SoftmaxImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>       // not a literal 0, which means a dim
  Softmax(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<SoftmaxImpl> I>
  Softmax(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<SoftmaxImpl>(std::move(impl))) {}  // NOLINT
  explicit Softmax(std::optional<std::int64_t> dim = std::nullopt) : ModuleHolder(std::make_shared<SoftmaxImpl>(dim)) {}
};

}  // namespace symtrace::nn

#pragma once
/// \file
/// Layers that only move data around, as in `torch.nn`: Flatten, Identity, Upsample
/// (nearest neighbour). Leaves when traced by default.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace symtrace::nn {

struct FlattenOptions {
  std::int64_t start_dim = 1;
  std::int64_t end_dim = -1;
};

/// Flattens dims start_dim..end_dim into one (PyTorch's default keeps the batch dim).
class FlattenImpl : public TypedModule<FlattenImpl> {
 public:
  explicit FlattenImpl(FlattenOptions options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
  [[nodiscard]] std::string extra_repr() const override;
  FlattenOptions options;
};

/// `nn::Flatten()`, `nn::Flatten({.start_dim = 0})`.
class Flatten : public ModuleHolder<FlattenImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>       // not a literal 0, which means a size
  Flatten(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<FlattenImpl> I>
  Flatten(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<FlattenImpl>(std::move(impl))) {}  // NOLINT
  explicit Flatten(FlattenOptions options = {}) : ModuleHolder(std::make_shared<FlattenImpl>(options)) {}
};

/// Returns its input.
class IdentityImpl : public TypedModule<IdentityImpl> {
 public:
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::optional<TensorMeta> layer_output_meta(const ValueList& args) const override;  // Note [Layer output metadata]
};
SYMTRACE_MODULE(Identity);

struct UpsampleOptions {
  std::optional<IntList> size = std::nullopt;                      ///< output [H, W] (one value applies to both); or
  std::optional<std::vector<double>> scale_factor = std::nullopt;  ///< [sh, sw] (one value applies to both)
  std::string mode = "nearest";                                    ///< only "nearest"
};

/// Nearest-neighbour upsampling of [N, C, H, W] inputs to `size` or by `scale_factor`.
class UpsampleImpl : public TypedModule<UpsampleImpl> {
 public:
  /// Throws std::invalid_argument unless exactly one of size / scale_factor is given and the
  /// mode is "nearest".
  explicit UpsampleImpl(UpsampleOptions options,
                        std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& input);
  [[nodiscard]] std::string extra_repr() const override;
  UpsampleOptions options;
};

/// `nn::Upsample({.scale_factor = std::vector{2.0}})`, `nn::Upsample({.size = IntList{8, 8}})`.
class Upsample : public ModuleHolder<UpsampleImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>        // not a literal 0, which means a size
  Upsample(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<UpsampleImpl> I>
  Upsample(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<UpsampleImpl>(std::move(impl))) {}  // NOLINT
  explicit Upsample(UpsampleOptions options, std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<UpsampleImpl>(std::move(options), where)) {}
};

}  // namespace symtrace::nn

#pragma once
/// \file
/// `nn::Embedding`, as `torch.nn.Embedding`: a lookup table weight [num_embeddings,
/// embedding_dim] drawn from N(0, 1); the row `padding_idx`, when given, is zero.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <optional>
#include <source_location>

namespace symtrace::nn {

struct EmbeddingOptions {
  std::optional<std::int64_t> padding_idx = std::nullopt;  ///< negative counts from the end, as in PyTorch
};

class EmbeddingImpl : public TypedModule<EmbeddingImpl> {
 public:
  EmbeddingImpl(std::int64_t num_embeddings, std::int64_t embedding_dim, EmbeddingOptions options = {},
                std::source_location where = std::source_location::current());
  /// `indices`: an int64 tensor of any shape; the result has shape indices.shape + [embedding_dim].
  Tensor forward(const Tensor& indices);
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t num_embeddings;
  std::int64_t embedding_dim;
  std::optional<std::int64_t> padding_idx;  ///< normalised to [0, num_embeddings)
  Tensor weight;
};

/// Holder of EmbeddingImpl: `nn::Embedding(1000, 64)`, `nn::Embedding(10, 4, {.padding_idx = 0})`.
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>         // not a literal 0, which means a size
  Embedding(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<EmbeddingImpl> I>
  Embedding(std::shared_ptr<I> impl) noexcept : ModuleHolder(std::shared_ptr<EmbeddingImpl>(std::move(impl))) {}  // NOLINT
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim, EmbeddingOptions options = {},
            std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<EmbeddingImpl>(num_embeddings, embedding_dim, options, where)) {}
};

}  // namespace symtrace::nn

#pragma once
/// \file
/// `nn::MultiheadAttention`, as `torch.nn.MultiheadAttention`: scaled dot-product attention
/// over `num_heads` heads, with the query, key and value projections packed in
/// `in_proj_weight` [3E, E] and `in_proj_bias` [3E], and the output projection `out_proj` (a
/// Linear). A leaf when traced by default. `multi_head_attention` is its computation, as
/// `torch.nn.functional.multi_head_attention_forward`.

#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <optional>
#include <source_location>
#include <tuple>

namespace symtrace::nn {

struct MultiheadAttentionOptions {
  double dropout = 0.0;      ///< on the attention weights, in training
  bool bias = true;          ///< in_proj_bias and out_proj.bias
  bool batch_first = false;  ///< inputs [N, L, E] rather than [L, N, E]
  /// The size of each head: 0 for embed_dim / num_heads, as PyTorch's; a layer whose heads
  /// were cut keeps its head size with fewer heads (projections of 3 x num_heads x head_dim
  /// rows, an out_proj of num_heads x head_dim inputs).
  std::int64_t head_dim = 0;
};

/// What `multi_head_attention` needs besides its inputs: the heads and the projections.
struct AttentionWeights {
  std::int64_t num_heads;
  Tensor in_proj_weight;   ///< [3E, E], or [3 x num_heads x head size, E] with heads cut
  Tensor in_proj_bias;     ///< [3E] or undefined
  Tensor out_proj_weight;  ///< [E, E], or [E, num_heads x head size]
  Tensor out_proj_bias;    ///< [E] or undefined
  double dropout = 0.0;
  bool training = false;
};

/// Attention of `query` [L, N, E] over `key` and `value` [S, N, E] (batch first when
/// `batch_first`; unbatched [L, E] and [S, E] too). `key_padding_mask` [N, S] and `attn_mask`
/// [L, S], [N * heads, L, S] or [N, heads, L, S] are bool (true: not attended) or float (added to the scores).
/// Returns the output, shaped as `query`, and with `need_weights` the attention weights
/// [N, L, S] (averaged over the heads) or [N, heads, L, S]. Throws std::invalid_argument for
/// inputs of the wrong rank or size.
std::tuple<Tensor, std::optional<Tensor>> multi_head_attention(
    const Tensor& query, const Tensor& key, const Tensor& value, const AttentionWeights& weights,
    const std::optional<Tensor>& key_padding_mask = std::nullopt, bool need_weights = true,
    const std::optional<Tensor>& attn_mask = std::nullopt, bool average_attn_weights = true,
    bool batch_first = false, std::source_location where = std::source_location::current());

class MultiheadAttentionImpl : public TypedModule<MultiheadAttentionImpl> {
 public:
  /// Throws std::invalid_argument unless embed_dim > 0 and num_heads > 0 divides it (or
  /// `options.head_dim` is positive).
  MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, MultiheadAttentionOptions options = {},
                         std::source_location where = std::source_location::current());
  /// PyTorch's forward: omitted `need_weights` and `average_attn_weights` are true.
  std::tuple<Tensor, std::optional<Tensor>> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                    const std::optional<Tensor>& key_padding_mask,
                                                    std::optional<bool> need_weights,
                                                    const std::optional<Tensor>& attn_mask,
                                                    std::optional<bool> average_attn_weights);

  std::int64_t embed_dim;
  std::int64_t num_heads;
  MultiheadAttentionOptions options;
  Tensor in_proj_weight;
  Tensor in_proj_bias;  ///< undefined without bias
  Linear out_proj{nullptr};
};

/// Holder of MultiheadAttentionImpl: `nn::MultiheadAttention(768, 12, {.batch_first = true})`;
/// `auto [out, weights] = attn(x, x, x)`.
class MultiheadAttention : public ModuleHolder<MultiheadAttentionImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>                  // not a literal 0, which means a size
  MultiheadAttention(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<MultiheadAttentionImpl> I>
  MultiheadAttention(std::shared_ptr<I> impl) noexcept  // NOLINT
      : ModuleHolder(std::shared_ptr<MultiheadAttentionImpl>(std::move(impl))) {}
  MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads, MultiheadAttentionOptions options = {},
                     std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<MultiheadAttentionImpl>(embed_dim, num_heads, options, where)) {}
};

}  // namespace symtrace::nn

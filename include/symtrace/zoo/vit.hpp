#pragma once
/// \file
/// The Vision Transformer of bench/fx/models.py (ViT-B/16 and its tiny variant): a
/// patch-embedding convolution, a class token and learned position embeddings, a stack of
/// pre-norm encoder blocks whose attention is written with explicit matmul / softmax (the
/// qkv projection reshaped to [B, N, 3, heads, head_dim] and permuted as in the Python), a
/// final LayerNorm and a linear head on the class token. Module names equal the Python's, so
/// state-dict keys match a PyTorch checkpoint of the same architecture ("blocks.0.attn.qkv.weight").
///
/// ```
/// auto model = symtrace::zoo::vit_b16();   // 86'567'656 parameters, input [B, 3, 224, 224]
/// auto small = symtrace::zoo::vit({.image_size = 32});  // same blocks, 5 tokens
/// ```

#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/layer_norm.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>
#include <source_location>

namespace symtrace::zoo {

/// The hyperparameters of a ViT; the defaults are ViT-B/16 at 224x224.
struct ViTConfig {
  std::int64_t image_size = 224;  ///< square input images of this side
  std::int64_t patch = 16;        ///< patch side (the patch embedding's kernel and stride)
  std::int64_t dim = 768;         ///< hidden size
  std::int64_t depth = 12;        ///< encoder blocks
  std::int64_t heads = 12;        ///< attention heads (must divide dim)
  std::int64_t mlp = 3072;        ///< hidden size of each block's MLP
  std::int64_t num_classes = 1000;

  /// ViT-B/16: the defaults.
  [[nodiscard]] static ViTConfig b16() { return {}; }
  /// ViT-Ti/16: dim 192, 3 heads, MLP 768.
  [[nodiscard]] static ViTConfig tiny() { return {.dim = 192, .heads = 3, .mlp = 768}; }
  /// Tokens per image: the patches plus the class token.
  [[nodiscard]] std::int64_t num_tokens() const { return (image_size / patch) * (image_size / patch) + 1; }
};

/// Multi-head self-attention with explicit matmul / softmax (`Attention` in Python).
class AttentionImpl : public TypedModule<AttentionImpl> {
 public:
  /// Throws std::invalid_argument unless `heads` divides `dim`.
  AttentionImpl(std::int64_t dim, std::int64_t heads,
                std::source_location where = std::source_location::current());
  /// x: [B, N, dim] -> [B, N, dim].
  virtual Tensor forward(const Tensor& x);

  std::int64_t heads;
  std::int64_t head_dim;
  double scale;  ///< head_dim^-0.5
  nn::Linear qkv{nullptr};
  nn::Linear proj{nullptr};
};
SYMTRACE_MODULE(Attention);

/// The encoder block's feed-forward network: fc1, GELU, fc2 (`MLP` in Python).
class MLPImpl : public TypedModule<MLPImpl> {
 public:
  MLPImpl(std::int64_t dim, std::int64_t hidden);
  virtual Tensor forward(const Tensor& x);

  nn::Linear fc1{nullptr};
  nn::GELU act{nullptr};
  nn::Linear fc2{nullptr};
};
SYMTRACE_MODULE(MLP);

/// A pre-norm encoder block: x + attn(ln1(x)), then x + mlp(ln2(x)).
class EncoderBlockImpl : public TypedModule<EncoderBlockImpl> {
 public:
  EncoderBlockImpl(std::int64_t dim, std::int64_t heads, std::int64_t mlp_hidden,
                   std::source_location where = std::source_location::current());
  virtual Tensor forward(const Tensor& x);

  nn::LayerNorm ln1{nullptr};
  Attention attn{nullptr};
  nn::LayerNorm ln2{nullptr};
  MLP mlp{nullptr};
};
SYMTRACE_MODULE(EncoderBlock);

/// The Vision Transformer (`ViT` in Python): [B, 3, image_size, image_size] -> [B, num_classes].
class ViTImpl : public TypedModule<ViTImpl> {
 public:
  /// Throws std::invalid_argument for non-positive sizes, a patch that does not divide the
  /// image, or heads that do not divide dim.
  explicit ViTImpl(const ViTConfig& config = {}, std::source_location where = std::source_location::current());
  virtual Tensor forward(const Tensor& x);

  ViTConfig config;
  nn::Conv2d patch_embed{nullptr};
  Tensor cls_token;  ///< [1, 1, dim], zeros
  Tensor pos_embed;  ///< [1, num_tokens, dim], N(0, 0.02^2)
  nn::Sequential blocks{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(ViT);

/// A ViT with `config`.
[[nodiscard]] std::shared_ptr<Module> vit(const ViTConfig& config,
                                          std::source_location where = std::source_location::current());
/// ViT-B/16 (86'567'656 parameters).
[[nodiscard]] std::shared_ptr<Module> vit_b16();
/// ViT-Ti/16 (5'717'416 parameters).
[[nodiscard]] std::shared_ptr<Module> vit_tiny();

}  // namespace symtrace::zoo

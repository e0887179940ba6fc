// ViT-B/16 and ViT-Ti/16 as written in bench/fx/models.py. The forwards follow the
// Python line by line (same reshape/permute of qkv, explicit matmul and softmax, class token
// taken with select) so a trace of this model has the same node sequence as torch.fx's.
#include "symtrace/zoo/vit.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/ops/linalg.hpp"
#include "symtrace/ops/reduction.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <cmath>

namespace symtrace::zoo {

AttentionImpl::AttentionImpl(std::int64_t dim, std::int64_t heads, std::source_location where)
    : heads(heads), head_dim(heads > 0 ? dim / heads : 0) {
  if (dim <= 0 || heads <= 0 || dim % heads != 0)
    throw_invalid_argument(where, "Attention(dim={}, heads={}): heads must be positive and divide dim", dim,
                           heads);
  scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  qkv = register_module("qkv", nn::Linear(dim, dim * 3));
  proj = register_module("proj", nn::Linear(dim, dim));
}

Tensor AttentionImpl::forward(const Tensor& x) {
  const SymInt B = x.size(0), N = x.size(1), C = x.size(2);
  const Tensor packed = qkv(x).reshape({B, N, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
  const Tensor q = packed.select(0, 0), k = packed.select(0, 1), v = packed.select(0, 2);
  Tensor attn = matmul(q, k.transpose(-2, -1)) * scale;
  attn = softmax(attn, -1);
  Tensor out = matmul(attn, v);  // B, heads, N, head_dim
  out = out.transpose(1, 2).reshape({B, N, C});
  return proj(out);
}

MLPImpl::MLPImpl(std::int64_t dim, std::int64_t hidden) {
  fc1 = register_module("fc1", nn::Linear(dim, hidden));
  act = register_module("act", nn::GELU());
  fc2 = register_module("fc2", nn::Linear(hidden, dim));
}

Tensor MLPImpl::forward(const Tensor& x) { return fc2(act(fc1(x))); }

EncoderBlockImpl::EncoderBlockImpl(std::int64_t dim, std::int64_t heads, std::int64_t mlp_hidden,
                                   std::source_location where) {
  ln1 = register_module("ln1", nn::LayerNorm(dim, {.eps = 1e-6}));
  attn = register_module("attn", Attention(dim, heads, where));
  ln2 = register_module("ln2", nn::LayerNorm(dim, {.eps = 1e-6}));
  mlp = register_module("mlp", MLP(dim, mlp_hidden));
}

Tensor EncoderBlockImpl::forward(const Tensor& x) {
  Tensor out = x + attn(ln1(x));
  out = out + mlp(ln2(out));
  return out;
}

ViTImpl::ViTImpl(const ViTConfig& config, std::source_location where) : config(config) {
  const ViTConfig& c = config;
  if (c.image_size <= 0 || c.patch <= 0 || c.dim <= 0 || c.depth < 0 || c.heads <= 0 || c.mlp <= 0 ||
      c.num_classes <= 0)
    throw_invalid_argument(where,
                           "ViT(image_size={}, patch={}, dim={}, depth={}, heads={}, mlp={}, num_classes={}): "
                           "sizes must be positive (depth >= 0)",
                           c.image_size, c.patch, c.dim, c.depth, c.heads, c.mlp, c.num_classes);
  if (c.image_size % c.patch != 0)
    throw_invalid_argument(where, "ViT: patch {} does not divide image_size {}; choose a patch that tiles the image",
                           c.patch, c.image_size);
  if (c.dim % c.heads != 0)
    throw_invalid_argument(where, "ViT: heads {} do not divide dim {}; choose dim = heads * head_dim", c.heads,
                           c.dim);
  patch_embed = register_module("patch_embed", nn::Conv2d(3, c.dim, c.patch, {.stride = c.patch}));
  cls_token = register_parameter("cls_token", zeros({1, 1, c.dim}));
  pos_embed = register_parameter("pos_embed", randn({1, c.num_tokens(), c.dim}) * 0.02);
  blocks = register_module("blocks", nn::Sequential());
  for (std::int64_t i = 0; i < c.depth; ++i) blocks->push_back(EncoderBlock(c.dim, c.heads, c.mlp, where));
  norm = register_module("norm", nn::LayerNorm(c.dim, {.eps = 1e-6}));
  head = register_module("head", nn::Linear(c.dim, c.num_classes));
}

Tensor ViTImpl::forward(const Tensor& x) {
  Tensor out = patch_embed(x);           // B, dim, H/patch, W/patch
  out = out.flatten(2).transpose(1, 2);  // B, N, dim
  const Tensor cls = cls_token.expand({out.size(0), -1, -1});
  out = cat({cls, out}, 1);
  out = out + pos_embed;
  out = blocks(out);
  out = norm(out);
  return head(out.select(1, 0));
}

std::shared_ptr<Module> vit(const ViTConfig& config, std::source_location where) {
  return std::make_shared<ViTImpl>(config, where);
}

std::shared_ptr<Module> vit_b16() { return vit(ViTConfig::b16()); }

std::shared_ptr<Module> vit_tiny() { return vit(ViTConfig::tiny()); }

}  // namespace symtrace::zoo

#include "symtrace/nn/attention.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/nn/init.hpp"
#include "symtrace/ops/linalg.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/pointwise.hpp"
#include "symtrace/ops/reduction.hpp"
#include "symtrace/ops/shape_ops.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace symtrace::nn {

namespace {

// The last dim of `t`, when known.
std::optional<std::int64_t> last_size(const Tensor& t) {
  const Shape& s = t.shape();
  return s.is_rank_known() && s.rank() > 0 ? s[s.rank() - 1].maybe() : std::nullopt;
}

// Throws unless `mask` is bool or float32 and its known sizes are `sizes` (where known).
void check_mask(const Tensor& mask, std::string_view what, std::initializer_list<Dim> sizes, std::source_location loc) {
  if (mask.dtype() != DType::bool_ && mask.dtype() != DType::float32)
    throw_invalid_argument(loc, "multi_head_attention: {} must be bool or float32, got {}", what, mask.dtype());
  const Shape& s = mask.shape();
  bool fits = !s.is_rank_known() || s.rank() == sizes.size();
  std::size_t k = 0;
  for (Dim want : sizes) {
    if (!fits) break;
    const Dim have = s[k++];
    fits = !have.is_known() || !want.is_known() || have.raw() == want.raw();
  }
  if (!fits) throw_invalid_argument(loc, "multi_head_attention: {} must be {}, got shape {}", what, Shape(sizes), s);
}

// A bool mask as the float to add to the scores (-inf where true), a float mask as it is.
Tensor additive(const Tensor& mask, std::source_location loc) {
  if (mask.dtype() != DType::bool_) return mask;
  return symtrace::where(mask, -std::numeric_limits<double>::infinity(), 0.0, loc);
}

}  // namespace

std::tuple<Tensor, std::optional<Tensor>> multi_head_attention(const Tensor& query, const Tensor& key,
                                                               const Tensor& value, const AttentionWeights& w,
                                                               const std::optional<Tensor>& key_padding_mask,
                                                               bool need_weights, const std::optional<Tensor>& attn_mask,
                                                               bool average_attn_weights, bool batch_first,
                                                               std::source_location where) {
  const std::int64_t rank = query.dim(where);
  if (rank != 2 && rank != 3)
    throw_invalid_argument(where, "multi_head_attention: the query must be 2-D (unbatched) or 3-D, got shape {}",
                           query.shape());
  if (key.dim(where) != rank || value.dim(where) != rank)
    throw_invalid_argument(where, "multi_head_attention: query, key and value must have the same rank, got {}, {} and {}",
                           query.shape(), key.shape(), value.shape());
  const std::int64_t e = w.in_proj_weight.size(1, where).value(where);
  const std::int64_t heads = w.num_heads;
  // The head size is the projections' (3 x heads x head size rows): embed_dim / heads, as
  // PyTorch computes it, unless whole heads were cut (analysis/prune.hpp).
  const std::int64_t rows = w.in_proj_weight.size(0, where).value(where);
  if (heads <= 0 || rows % (3 * heads) != 0)
    throw_invalid_argument(where, "multi_head_attention: embed_dim {} is not divisible by num_heads {}", rows / 3, heads);
  const std::int64_t d = rows / (3 * heads);
  const std::int64_t inner = heads * d;  // embed_dim, unless heads were cut
  if (w.in_proj_weight.shape() != Shape{3 * inner, e})
    throw_invalid_argument(where, "multi_head_attention: in_proj_weight must be [3 * embed_dim, embed_dim], got {}",
                           w.in_proj_weight.shape());
  for (const Tensor* t : {&query, &key, &value}) {
    if (auto n = last_size(*t); n && *n != e)
      throw_invalid_argument(where, "multi_head_attention: inputs must have embed_dim {} features, got shape {}", e,
                             t->shape());
  }
  const bool batched = rank == 3;
  auto seq_first = [&](const Tensor& t) {  // [L, N, E]
    return !batched ? unsqueeze(t, 1, where) : batch_first ? transpose(t, 0, 1, where)
                                                           : t;
  };
  const Tensor q_in = seq_first(query), k_in = seq_first(key), v_in = seq_first(value);
  const SymInt l = q_in.size(0, where), n = q_in.size(1, where), s = k_in.size(0, where);
  const Dim l_dim = q_in.shape()[0], n_dim = q_in.shape()[1], s_dim = k_in.shape()[0];
  if (attn_mask) {
    if (attn_mask->dim(where) == 3) check_mask(*attn_mask, "a 3-D attn_mask", {n_dim * Dim(heads), l_dim, s_dim}, where);
    else if (attn_mask->dim(where) == 4) check_mask(*attn_mask, "a 4-D attn_mask", {n_dim, Dim(heads), l_dim, s_dim}, where);
    else check_mask(*attn_mask, "attn_mask", {l_dim, s_dim}, where);
  }
  if (key_padding_mask) {
    if (batched) check_mask(*key_padding_mask, "key_padding_mask", {n_dim, s_dim}, where);
    else check_mask(*key_padding_mask, "key_padding_mask", {s_dim}, where);
  }
  const TensorList in_w = chunk(w.in_proj_weight, 3, 0, where);
  const TensorList in_b = w.in_proj_bias.defined() ? chunk(w.in_proj_bias, 3, 0, where) : TensorList(3);
  auto project = [&](const Tensor& x, std::size_t part, const SymInt& len) {  // [N * heads, len, d]
    Tensor y = linear(x, in_w[part], in_b[part], where);
    return transpose(reshape(y, {len, n * heads, SymInt(d)}, where), 0, 1, where);
  };
  Tensor q = div(project(q_in, 0, l), std::sqrt(static_cast<double>(d)), where);
  Tensor k = project(k_in, 1, s);
  Tensor v = project(v_in, 2, s);
  Tensor scores = matmul(q, transpose(k, -2, -1, where), where);  // [N * heads, L, S]
  if (attn_mask) {
    Tensor m = additive(*attn_mask, where);
    const std::int64_t mask_rank = m.dim(where);
    if (mask_rank == 2) m = unsqueeze(m, 0, where);                     // [L, S]
    else if (mask_rank == 4) m = reshape(m, {n * heads, l, s}, where);  // [N, heads, L, S]
    scores = add(scores, m, where);
  }
  if (key_padding_mask) {
    Tensor m = additive(*key_padding_mask, where);
    if (!batched) m = unsqueeze(m, 0, where);
    Tensor per_head = reshape(scores, {n, SymInt(heads), l, s}, where);
    per_head = add(per_head, reshape(m, {n, SymInt(1), SymInt(1), s}, where), where);
    scores = reshape(per_head, {n * heads, l, s}, where);
  }
  Tensor attn = softmax(scores, -1, where);
  if (w.training && w.dropout > 0.0) attn = dropout(attn, w.dropout, true, where);
  Tensor out = reshape(transpose(matmul(attn, v, where), 0, 1, where), {l, n, SymInt(inner)}, where);
  out = linear(out, w.out_proj_weight, w.out_proj_bias, where);  // [L, N, E]
  out = !batched ? squeeze(out, 1, where) : batch_first ? transpose(out, 0, 1, where)
                                                        : out;
  if (!need_weights) return {out, std::nullopt};
  Tensor weights = reshape(attn, {n, SymInt(heads), l, s}, where);
  if (average_attn_weights) weights = mean(weights, {1}, false, where);
  if (!batched) weights = squeeze(weights, 0, where);
  return {out, weights};
}

MultiheadAttentionImpl::MultiheadAttentionImpl(std::int64_t embed, std::int64_t heads, MultiheadAttentionOptions opts,
                                               std::source_location where)
    : embed_dim(embed), num_heads(heads), options(opts) {
  if (embed <= 0 || heads <= 0 || opts.head_dim < 0 || (opts.head_dim == 0 && embed % heads != 0))
    throw_invalid_argument(where, "MultiheadAttention({}, {}): embed_dim must be positive and divisible by num_heads",
                           embed, heads);
  const std::int64_t inner = opts.head_dim == 0 ? embed : heads * opts.head_dim;
  // PyTorch's initialisation: xavier_uniform_ projections, zero biases.
  const double bound = std::sqrt(6.0 / static_cast<double>(embed + 3 * inner));
  in_proj_weight = register_parameter("in_proj_weight", init::uniform_(Tensor::empty(Shape{3 * inner, embed}), -bound, bound),
                                      where);
  if (opts.bias) in_proj_bias = register_parameter("in_proj_bias", zeros(IntList{3 * inner}), where);
  out_proj = register_module(
      "out_proj", Linear(std::make_shared<NonDynamicallyQuantizableLinearImpl>(inner, embed, LinearOptions{.bias = opts.bias}, where)),
      where);
  if (opts.bias) init::zeros_(out_proj->bias);
}

std::tuple<Tensor, std::optional<Tensor>> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& key_padding_mask,
    std::optional<bool> need_weights, const std::optional<Tensor>& attn_mask, std::optional<bool> average_attn_weights) {
  const AttentionWeights w{num_heads, in_proj_weight, in_proj_bias, out_proj->weight, out_proj->bias,
                           options.dropout, is_training()};
  return multi_head_attention(query, key, value, w, key_padding_mask, need_weights.value_or(true), attn_mask,
                              average_attn_weights.value_or(true), options.batch_first);
}

}  // namespace symtrace::nn

#include "symtrace/nn/embedding.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/init.hpp"
#include "symtrace/ops/nn_functional.hpp"

#include <fmt/format.h>

namespace symtrace::nn {

EmbeddingImpl::EmbeddingImpl(std::int64_t num, std::int64_t dim, EmbeddingOptions opts, std::source_location where)
    : num_embeddings(num), embedding_dim(dim) {
  if (num < 0 || dim < 0) throw_invalid_argument(where, "Embedding({}, {}): sizes must be >= 0", num, dim);
  if (opts.padding_idx) {
    const std::int64_t p = *opts.padding_idx;
    if (p >= num || p < -num)
      throw_invalid_argument(where, "Embedding({}, {}): padding_idx {} must be within [-{}, {})", num, dim, p,
                             num, num);
    padding_idx = p < 0 ? p + num : p;
  }
  weight = register_parameter("weight", init::normal_(Tensor::empty(Shape{num, dim})), where);
  if (padding_idx) weight.select(0, *padding_idx).fill_(0);
}

Tensor EmbeddingImpl::forward(const Tensor& indices) { return embedding(weight, indices); }

std::string EmbeddingImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}", num_embeddings, embedding_dim);
  if (padding_idx) s += fmt::format(", padding_idx={}", *padding_idx);
  return s;
}

}  // namespace symtrace::nn

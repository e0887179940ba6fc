// The hand-unrolled Elman RNN. The time loop is ordinary C++ whose bound is read from the
// input's shape: eagerly it runs T steps, and a tracer that knows T records T cell calls.
#include "symtrace/zoo/rnn.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/ops/pointwise.hpp"

namespace symtrace::zoo {

ElmanCellImpl::ElmanCellImpl(std::int64_t input_size, std::int64_t hidden_size) {
  ih = register_module("ih", nn::Linear(input_size, hidden_size));
  hh = register_module("hh", nn::Linear(hidden_size, hidden_size));
}

Tensor ElmanCellImpl::forward(const Tensor& x, const Tensor& h) { return tanh(ih(x) + hh(h)); }

ElmanRNNImpl::ElmanRNNImpl(const RNNConfig& config, std::source_location where)
    : TypedModule({"tokens"}, where), config(config) {
  if (config.vocab <= 0 || config.embed <= 0 || config.hidden <= 0)
    throw_invalid_argument(where, "ElmanRNN(vocab={}, embed={}, hidden={}): sizes must be positive", config.vocab,
                           config.embed, config.hidden);
  embed = register_module("embed", nn::Embedding(config.vocab, config.embed));
  cell = register_module("cell", ElmanCell(config.embed, config.hidden));
  head = register_module("head", nn::Linear(config.hidden, config.vocab));
}

const int ElmanRNNImpl::length_loop_line = __LINE__ + 4;  // the `for` below
Tensor ElmanRNNImpl::forward(const Tensor& tokens) {
  const Tensor x = embed(tokens);  // B, T, embed
  Tensor h = zeros({x.size(0), config.hidden});
  for (std::int64_t t = 0; t < x.size(1); ++t) h = cell(x.select(1, t), h);
  return head(h);
}

std::shared_ptr<Module> rnn() { return std::make_shared<ElmanRNNImpl>(); }

}  // namespace symtrace::zoo

#pragma once
/// \file
/// A recurrent language-model head written the way users write RNNs by hand: an embedding,
/// an Elman cell h = tanh(ih(x_t) + hh(h)) unrolled by a C++ `for` loop over the time steps,
/// and a linear head on the last hidden state. The loop bound is
/// `tokens.size(1)`: it comes from the input's shape, not its data, so a tracer that knows the
/// shape can unroll it (one `cell` call per step). With an unknown batch it still traces: the
/// initial state is `zeros({x.size(0), hidden})`, sized by a proxy. With an unknown length it
/// cannot (a TraceError at the loop, `length_loop_line` of rnn.cpp).
///
/// ```
/// auto model = symtrace::zoo::rnn();  // 217'832 parameters
/// model->call({tokens});              // tokens: int64 [B, T] in [0, 1000) -> [B, 1000]
/// ```

#include "symtrace/nn/embedding.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>
#include <source_location>

namespace symtrace::zoo {

/// The sizes of an ElmanRNN; the defaults are the zoo's `rnn`.
struct RNNConfig {
  std::int64_t vocab = 1000;  ///< token ids are in [0, vocab); also the number of output classes
  std::int64_t embed = 64;    ///< embedding size (the cell's input size)
  std::int64_t hidden = 128;  ///< hidden state size
};

/// One step of an Elman RNN: h' = tanh(ih(x) + hh(h)).
class ElmanCellImpl : public TypedModule<ElmanCellImpl> {
 public:
  ElmanCellImpl(std::int64_t input_size, std::int64_t hidden_size);
  /// x: [B, input_size], h: [B, hidden_size] -> [B, hidden_size].
  virtual Tensor forward(const Tensor& x, const Tensor& h);

  nn::Linear ih{nullptr};
  nn::Linear hh{nullptr};
};
SYMTRACE_MODULE(ElmanCell);

/// embed -> cell unrolled over the time steps -> head on the last hidden state. Its input is
/// named "tokens".
class ElmanRNNImpl : public TypedModule<ElmanRNNImpl> {
 public:
  /// Throws std::invalid_argument for non-positive sizes.
  explicit ElmanRNNImpl(const RNNConfig& config = {}, std::source_location where = std::source_location::current());
  /// tokens: int64 [B, T] -> logits [B, vocab]; runs the cell T times, from h = 0.
  virtual Tensor forward(const Tensor& tokens);
  /// The line of rnn.cpp whose loop bound is the input's length.
  static const int length_loop_line;

  RNNConfig config;
  nn::Embedding embed{nullptr};
  ElmanCell cell{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(ElmanRNN);

/// The zoo's `rnn`: ElmanRNN with vocab 1000, embedding 64, hidden 128 (217'832 parameters).
[[nodiscard]] std::shared_ptr<Module> rnn();

}  // namespace symtrace::zoo

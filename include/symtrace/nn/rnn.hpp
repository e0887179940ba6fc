#pragma once
/// \file
/// The recurrent layers of torch.nn: `nn::LSTM`, `nn::GRU` and `nn::RNN`, stacks of layers (one
/// or both directions) with PyTorch's parameters `weight_ih_l{k}[_reverse]` [G*H, in],
/// `weight_hh_l{k}[_reverse]` [G*H, H] and the biases `bias_ih_l{k}`, `bias_hh_l{k}` [G*H], where
/// G is the number of gates (4, 3, 1). Leaves when traced by default. `lstm`, `gru` and `rnn` are
/// their computations, as `torch._VF`'s: for the LSTM, per step,
/// gates = x W_ih^T + b_ih + h W_hh^T + b_hh; i, f, g, o = chunk(gates, 4);
/// c = σ(f) c + σ(i) tanh(g); h = σ(o) tanh(c). The number of steps must be known.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>

namespace symtrace::nn {

struct LSTMOptions {
  std::int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;  ///< input and output [N, T, F] rather than [T, N, F]
  double dropout = 0.0;      ///< between layers, in training
  bool bidirectional = false;
};

/// GRU's options are LSTM's.
using GRUOptions = LSTMOptions;

/// RNN's: LSTM's and the nonlinearity, "tanh" or "relu" (in the order of torch.nn.RNN's
/// arguments).
struct RNNOptions {
  std::int64_t num_layers = 1;
  std::string nonlinearity = "tanh";
  bool bias = true;
  bool batch_first = false;
  double dropout = 0.0;
  bool bidirectional = false;
};

/// The LSTM of `input` ([T, N, F], [N, T, F] when batch_first, or unbatched [T, F]) from `h0`
/// and `c0` ([layers * directions, N, H], or [layers * directions, H] unbatched). `params` are
/// per layer and direction: W_ih, W_hh, and with `has_biases` b_ih, b_hh. Returns the output
/// [T, N, directions * H] (shaped as the input) and the last h and c. Throws
/// std::invalid_argument for inputs of the wrong rank or a wrong number of parameters, and
/// TraceError when the number of steps is unknown.
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const Tensor& h0, const Tensor& c0, const TensorList& params,
                                        bool has_biases, std::int64_t num_layers, double dropout, bool train,
                                        bool bidirectional, bool batch_first,
                                        std::source_location where = std::source_location::current());

/// The GRU of `input` from `h0` (shaped as for `lstm`), as `torch._VF.gru`: `params` as for
/// `lstm`, with the gates (r, z, n) stacked in [3H, ...] weights; per step,
/// r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r h_n), h = (1 - z) n + z h, where
/// x_* = chunk(x W_ih^T + b_ih, 3) and h_* = chunk(h W_hh^T + b_hh, 3). Returns the output and
/// the last h; throws as `lstm`.
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& h0, const TensorList& params, bool has_biases,
                               std::int64_t num_layers, double dropout, bool train, bool bidirectional,
                               bool batch_first, std::source_location where = std::source_location::current());

/// The Elman RNN of `input` from `h0`, as `torch._VF.rnn_tanh` (`relu` false) and
/// `torch._VF.rnn_relu`: per step h = act(x W_ih^T + b_ih + h W_hh^T + b_hh). Returns the
/// output and the last h; throws as `lstm`.
std::tuple<Tensor, Tensor> rnn(const Tensor& input, const Tensor& h0, const TensorList& params, bool has_biases,
                               std::int64_t num_layers, double dropout, bool train, bool bidirectional,
                               bool batch_first, bool relu, std::source_location where = std::source_location::current());

class LSTMImpl : public TypedModule<LSTMImpl> {
 public:
  /// Throws std::invalid_argument unless the sizes and num_layers are positive and dropout
  /// is in [0, 1].
  LSTMImpl(std::int64_t input_size, std::int64_t hidden_size, LSTMOptions options = {},
           std::source_location where = std::source_location::current());
  /// `hx`: (h_0, c_0), zeros when omitted. Returns (output, (h_n, c_n)), as PyTorch does.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input, const std::optional<TensorList>& hx);
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t input_size;
  std::int64_t hidden_size;
  LSTMOptions options;
  TensorList flat_weights;  ///< the parameters in `lstm`'s order
};

/// Holder of LSTMImpl: `nn::LSTM(8, 16, {.num_layers = 2, .batch_first = true})`;
/// `auto [out, state] = lstm(x)`.
class LSTM : public ModuleHolder<LSTMImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>    // not a literal 0, which means a size
  LSTM(Null) noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<LSTMImpl> I>
  LSTM(std::shared_ptr<I> impl)
  noexcept : ModuleHolder(std::shared_ptr<LSTMImpl>(std::move(impl))) {}  // NOLINT
  LSTM(std::int64_t input_size, std::int64_t hidden_size, LSTMOptions options = {},
       std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<LSTMImpl>(input_size, hidden_size, options, where)) {}
};

class GRUImpl : public TypedModule<GRUImpl> {
 public:
  /// Throws as LSTMImpl's.
  GRUImpl(std::int64_t input_size, std::int64_t hidden_size, GRUOptions options = {},
          std::source_location where = std::source_location::current());
  /// `hx`: h_0, zeros when omitted. Returns (output, h_n), as PyTorch does.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const std::optional<Tensor>& hx);
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t input_size;
  std::int64_t hidden_size;
  GRUOptions options;
  TensorList flat_weights;  ///< the parameters in `gru`'s order
};

/// Holder of GRUImpl: `nn::GRU(8, 16, {.batch_first = true})`; `auto [out, h] = gru(x)`.
class GRU : public ModuleHolder<GRUImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>
  GRU(Null)
  noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<GRUImpl> I>
  GRU(std::shared_ptr<I> impl)
  noexcept : ModuleHolder(std::shared_ptr<GRUImpl>(std::move(impl))) {}  // NOLINT
  GRU(std::int64_t input_size, std::int64_t hidden_size, GRUOptions options = {},
      std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<GRUImpl>(input_size, hidden_size, options, where)) {}
};

class RNNImpl : public TypedModule<RNNImpl> {
 public:
  /// Throws as LSTMImpl's, and for a nonlinearity other than "tanh" and "relu".
  RNNImpl(std::int64_t input_size, std::int64_t hidden_size, RNNOptions options = {},
          std::source_location where = std::source_location::current());
  /// `hx`: h_0, zeros when omitted. Returns (output, h_n), as PyTorch does.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const std::optional<Tensor>& hx);
  [[nodiscard]] std::string extra_repr() const override;

  std::int64_t input_size;
  std::int64_t hidden_size;
  RNNOptions options;
  TensorList flat_weights;  ///< the parameters in `rnn`'s order
};

/// Holder of RNNImpl: `nn::RNN(8, 16, {.nonlinearity = "relu"})`; `auto [out, h] = rnn(x)`.
class RNN : public ModuleHolder<RNNImpl> {
 public:
  template <std::same_as<std::nullptr_t> Null>
  RNN(Null)
  noexcept : ModuleHolder(nullptr) {}  // NOLINT
  template <std::derived_from<RNNImpl> I>
  RNN(std::shared_ptr<I> impl)
  noexcept : ModuleHolder(std::shared_ptr<RNNImpl>(std::move(impl))) {}  // NOLINT
  RNN(std::int64_t input_size, std::int64_t hidden_size, RNNOptions options = {},
      std::source_location where = std::source_location::current())
      : ModuleHolder(std::make_shared<RNNImpl>(input_size, hidden_size, options, where)) {}
};

}  // namespace symtrace::nn

#include "symtrace/nn/rnn.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/nn/init.hpp"
#include "symtrace/ops/linalg.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/pointwise.hpp"
#include "symtrace/ops/shape_ops.hpp"
#include "nn/repr.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace symtrace::nn {

namespace {

// The recurrences of torch._VF: their names, and the gates their weights stack.
enum class Recurrence {
  lstm,
  gru,
  rnn_tanh,
  rnn_relu
};

const char* name_of(Recurrence r) {
  switch (r) {
    case Recurrence::lstm: return "lstm";
    case Recurrence::gru: return "gru";
    case Recurrence::rnn_tanh: return "rnn_tanh";
    case Recurrence::rnn_relu: return "rnn_relu";
  }
  return "";
}

// One step of cell `kind` from the input step x [N, F]: updates h (and c for an LSTM).
void step(Recurrence kind, const Tensor& x, Tensor& h, Tensor& c, const Tensor& w_ih, const Tensor& w_hh,
          const Tensor& b_ih, const Tensor& b_hh, std::source_location where) {
  switch (kind) {
    case Recurrence::lstm: {
      Tensor gates = add(linear(x, w_ih, b_ih, where), linear(h, w_hh, b_hh, where), where);
      const TensorList g = chunk(gates, 4, 1, where);
      c = add(mul(sigmoid(g[1], where), c, where), mul(sigmoid(g[0], where), tanh(g[2], where), where), where);
      h = mul(sigmoid(g[3], where), tanh(c, where), where);
      return;
    }
    case Recurrence::gru: {
      // r, z, n = chunk(x W_ih^T + b_ih, 3) and chunk(h W_hh^T + b_hh, 3):
      // n = tanh(x_n + σ(x_r + h_r) h_n); h = n + σ(x_z + h_z) (h - n), i.e. (1 - z) n + z h.
      const TensorList gx = chunk(linear(x, w_ih, b_ih, where), 3, 1, where);
      const TensorList gh = chunk(linear(h, w_hh, b_hh, where), 3, 1, where);
      const Tensor r = sigmoid(add(gx[0], gh[0], where), where);
      const Tensor z = sigmoid(add(gx[1], gh[1], where), where);
      const Tensor n = tanh(add(gx[2], mul(r, gh[2], where), where), where);
      h = add(n, mul(z, sub(h, n, where), where), where);
      return;
    }
    case Recurrence::rnn_tanh:
    case Recurrence::rnn_relu: {
      const Tensor pre = add(linear(x, w_ih, b_ih, where), linear(h, w_hh, b_hh, where), where);
      h = kind == Recurrence::rnn_tanh ? tanh(pre, where) : relu(pre, where);
      return;
    }
  }
}

// The layers, directions and steps every recurrence shares, from the initial h (and c for an
// LSTM: `c0` undefined otherwise). Returns the output and the last h and c (c undefined unless
// an LSTM).
std::tuple<Tensor, Tensor, Tensor> recurrent(Recurrence kind, const Tensor& input, const Tensor& h0, const Tensor& c0,
                                             const TensorList& params, bool has_biases, std::int64_t num_layers,
                                             double dropout_p, bool train, bool bidirectional, bool batch_first,
                                             std::source_location where) {
  const char* name = name_of(kind);
  const bool lstm = kind == Recurrence::lstm;
  const std::int64_t rank = input.dim(where);
  if (rank != 2 && rank != 3)
    throw_invalid_argument(where, "{}: the input must be 2-D (unbatched) or 3-D, got shape {}", name, input.shape());
  const std::int64_t directions = bidirectional ? 2 : 1;
  const std::size_t per_cell = has_biases ? 4 : 2;
  const auto cells = static_cast<std::size_t>(num_layers * directions);
  if (num_layers <= 0 || params.size() != cells * per_cell)
    throw_invalid_argument(where, "{}: expects {} weights for {} layers, got {}{}", name, cells * per_cell, num_layers,
                           params.size(), lstm ? " (projections are not supported)" : "");
  const bool batched = rank == 3;
  const std::string states = lstm ? "h_0 and c_0" : "h_0";
  const std::string given = lstm ? fmt::format("{} and {}", h0.shape(), c0.shape()) : fmt::format("{}", h0.shape());
  if (h0.dim(where) != rank || (lstm && c0.dim(where) != rank))
    throw_invalid_argument(where, "{}: {} must be {}-D for a {}-D input, got {} {}", name, states, rank, rank,
                           lstm ? "shapes" : "shape", given);
  // [N, T, F]; unbatched inputs get a batch of one.
  Tensor x = !batched ? unsqueeze(input, 0, where) : batch_first ? input
                                                                 : transpose(input, 0, 1, where);
  const Tensor h_init = batched ? h0 : unsqueeze(h0, 1, where);
  const Tensor c_init = !lstm ? Tensor() : batched ? c0
                                                   : unsqueeze(c0, 1, where);
  // [layers * directions, N, H], where known.
  const Shape state{Dim(static_cast<std::int64_t>(cells)), x.shape()[0], params[1].shape()[1]};
  for (const Tensor* s : {&h_init, &c_init}) {
    if (!s->defined()) continue;
    bool fits = s->shape().rank() == 3;
    for (std::size_t k = 0; fits && k < 3; ++k)
      fits = !s->shape()[k].is_known() || !state[k].is_known() || s->shape()[k].raw() == state[k].raw();
    if (!fits)
      throw_invalid_argument(where, "{}: {} must be {} for an input of shape {}, got {}", name, states, state,
                             input.shape(), given);
  }
  const std::int64_t steps = x.size(1, where).value(where);
  TensorList h_n, c_n;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    if (layer > 0 && train && dropout_p > 0.0) x = dropout(x, dropout_p, true, where);
    TensorList outputs;  // per direction: [N, T, H]
    for (std::int64_t dir = 0; dir < directions; ++dir) {
      const auto cell = static_cast<std::size_t>(layer * directions + dir);
      const std::size_t base = cell * per_cell;
      const Tensor b_ih = has_biases ? params[base + 2] : Tensor();
      const Tensor b_hh = has_biases ? params[base + 3] : Tensor();
      Tensor h = select(h_init, 0, static_cast<std::int64_t>(cell), where);
      Tensor c = lstm ? select(c_init, 0, static_cast<std::int64_t>(cell), where) : Tensor();
      TensorList hs(static_cast<std::size_t>(steps));
      for (std::int64_t k = 0; k < steps; ++k) {
        const std::int64_t t = dir == 0 ? k : steps - 1 - k;
        step(kind, select(x, 1, t, where), h, c, params[base], params[base + 1], b_ih, b_hh, where);
        hs[static_cast<std::size_t>(t)] = h;
      }
      outputs.push_back(stack(hs, 1, where));
      h_n.push_back(std::move(h));
      if (lstm) c_n.push_back(std::move(c));
    }
    x = outputs.size() == 1 ? outputs[0] : cat(outputs, -1, where);
  }
  Tensor out = !batched ? squeeze(x, 0, where) : batch_first ? x
                                                             : transpose(x, 0, 1, where);
  Tensor h_last = stack(h_n, 0, where);
  Tensor c_last = lstm ? stack(c_n, 0, where) : Tensor();
  if (!batched) {
    h_last = squeeze(h_last, 1, where);
    if (lstm) c_last = squeeze(c_last, 1, where);
  }
  return {out, h_last, c_last};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const Tensor& h0, const Tensor& c0, const TensorList& params,
                                        bool has_biases, std::int64_t num_layers, double dropout_p, bool train,
                                        bool bidirectional, bool batch_first, std::source_location where) {
  return recurrent(Recurrence::lstm, input, h0, c0, params, has_biases, num_layers, dropout_p, train, bidirectional,
                   batch_first, where);
}

std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& h0, const TensorList& params, bool has_biases,
                               std::int64_t num_layers, double dropout_p, bool train, bool bidirectional,
                               bool batch_first, std::source_location where) {
  auto [out, h, c] = recurrent(Recurrence::gru, input, h0, Tensor(), params, has_biases, num_layers, dropout_p, train,
                               bidirectional, batch_first, where);
  return {out, h};
}

std::tuple<Tensor, Tensor> rnn(const Tensor& input, const Tensor& h0, const TensorList& params, bool has_biases,
                               std::int64_t num_layers, double dropout_p, bool train, bool bidirectional,
                               bool batch_first, bool relu, std::source_location where) {
  auto [out, h, c] = recurrent(relu ? Recurrence::rnn_relu : Recurrence::rnn_tanh, input, h0, Tensor(), params,
                               has_biases, num_layers, dropout_p, train, bidirectional, batch_first, where);
  return {out, h};
}

namespace {

// The checks and parameters every recurrent layer shares: `gates` gates per layer and
// direction, registered under PyTorch's names in torch._VF's order, each uniform in
// [-1/sqrt(H), 1/sqrt(H)] as PyTorch initialises them.
TensorList register_weights(Module& m, const char* type, std::int64_t gates, std::int64_t input, std::int64_t hidden,
                            std::int64_t num_layers, bool bias, bool bidirectional, double dropout,
                            std::source_location where) {
  if (input <= 0 || hidden <= 0 || num_layers <= 0)
    throw_invalid_argument(where, "{}({}, {}, num_layers={}): the sizes and num_layers must be positive", type, input,
                           hidden, num_layers);
  if (!(dropout >= 0.0 && dropout <= 1.0))
    throw_invalid_argument(where, "{}: dropout must be in [0, 1], got {}", type, format_double(dropout));
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  TensorList weights;
  auto make = [&](const std::string& name, IntList shape) {
    weights.push_back(m.register_parameter(name, init::uniform_(Tensor::empty(Shape(std::move(shape))), -bound, bound), where));
  };
  const std::int64_t directions = bidirectional ? 2 : 1;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    for (std::int64_t dir = 0; dir < directions; ++dir) {
      const std::string suffix = fmt::format("_l{}{}", layer, dir == 1 ? "_reverse" : "");
      const std::int64_t in = layer == 0 ? input : hidden * directions;
      make("weight_ih" + suffix, {gates * hidden, in});
      make("weight_hh" + suffix, {gates * hidden, hidden});
      if (bias) {
        make("bias_ih" + suffix, {gates * hidden});
        make("bias_hh" + suffix, {gates * hidden});
      }
    }
  }
  return weights;
}

// Zeros of the initial state's shape for `input`: [layers * directions, N, H], or without N
// for an unbatched input.
Tensor zero_state(const Tensor& input, std::int64_t num_layers, bool bidirectional, bool batch_first,
                  std::int64_t hidden) {
  const std::int64_t cells = num_layers * (bidirectional ? 2 : 1);
  const SymIntList shape = input.dim() == 3
                               ? SymIntList{SymInt(cells), input.size(batch_first ? 0 : 1), SymInt(hidden)}
                               : SymIntList{SymInt(cells), SymInt(hidden)};
  return zeros(shape, input.dtype());
}

// PyTorch's RNNBase.extra_repr.
std::string recurrent_repr(std::int64_t input, std::int64_t hidden, std::int64_t num_layers, bool bias,
                           bool batch_first, double dropout, bool bidirectional) {
  std::string s = fmt::format("{}, {}", input, hidden);
  if (num_layers != 1) s += fmt::format(", num_layers={}", num_layers);
  if (!bias) s += ", bias=False";
  if (batch_first) s += ", batch_first=True";
  if (dropout != 0.0) s += fmt::format(", dropout={}", format_double(dropout));
  if (bidirectional) s += ", bidirectional=True";
  return s;
}

}  // namespace

LSTMImpl::LSTMImpl(std::int64_t input, std::int64_t hidden, LSTMOptions opts, std::source_location where)
    : input_size(input), hidden_size(hidden), options(opts),
      flat_weights(register_weights(*this, "LSTM", 4, input, hidden, opts.num_layers, opts.bias, opts.bidirectional,
                                    opts.dropout, where)) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 const std::optional<TensorList>& hx) {
  Tensor h0, c0;
  if (hx) {
    if (hx->size() != 2) throw std::invalid_argument(fmt::format("LSTM: hx must be (h_0, c_0), got {} tensors", hx->size()));
    h0 = (*hx)[0];
    c0 = (*hx)[1];
  } else {
    h0 = zero_state(input, options.num_layers, options.bidirectional, options.batch_first, hidden_size);
    c0 = zero_state(input, options.num_layers, options.bidirectional, options.batch_first, hidden_size);
  }
  auto [out, h, c] = lstm(input, h0, c0, flat_weights, options.bias, options.num_layers, options.dropout, is_training(),
                          options.bidirectional, options.batch_first);
  return {out, {h, c}};
}

std::string LSTMImpl::extra_repr() const {
  return recurrent_repr(input_size, hidden_size, options.num_layers, options.bias, options.batch_first,
                        options.dropout, options.bidirectional);
}

GRUImpl::GRUImpl(std::int64_t input, std::int64_t hidden, GRUOptions opts, std::source_location where)
    : input_size(input), hidden_size(hidden), options(opts),
      flat_weights(register_weights(*this, "GRU", 3, input, hidden, opts.num_layers, opts.bias, opts.bidirectional,
                                    opts.dropout, where)) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const std::optional<Tensor>& hx) {
  const Tensor h0 = hx ? *hx : zero_state(input, options.num_layers, options.bidirectional, options.batch_first, hidden_size);
  return gru(input, h0, flat_weights, options.bias, options.num_layers, options.dropout, is_training(),
             options.bidirectional, options.batch_first);
}

std::string GRUImpl::extra_repr() const {
  return recurrent_repr(input_size, hidden_size, options.num_layers, options.bias, options.batch_first,
                        options.dropout, options.bidirectional);
}

namespace {
const RNNOptions& checked(const RNNOptions& opts, std::source_location where) {
  if (opts.nonlinearity != "tanh" && opts.nonlinearity != "relu")
    throw_invalid_argument(where, "RNN: nonlinearity must be 'tanh' or 'relu', got '{}'", opts.nonlinearity);
  return opts;
}
}  // namespace

RNNImpl::RNNImpl(std::int64_t input, std::int64_t hidden, RNNOptions opts, std::source_location where)
    : input_size(input), hidden_size(hidden), options(checked(opts, where)),
      flat_weights(register_weights(*this, "RNN", 1, input, hidden, opts.num_layers, opts.bias, opts.bidirectional,
                                    opts.dropout, where)) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const std::optional<Tensor>& hx) {
  const Tensor h0 = hx ? *hx : zero_state(input, options.num_layers, options.bidirectional, options.batch_first, hidden_size);
  return rnn(input, h0, flat_weights, options.bias, options.num_layers, options.dropout, is_training(),
             options.bidirectional, options.batch_first, options.nonlinearity == "relu");
}

std::string RNNImpl::extra_repr() const {
  std::string s = recurrent_repr(input_size, hidden_size, options.num_layers, options.bias, options.batch_first,
                                 options.dropout, options.bidirectional);
  // As torch.nn.RNNCell's repr (torch.nn.RNN's leaves it out, but it is what the layer computes).
  if (options.nonlinearity != "tanh") s += fmt::format(", nonlinearity={}", options.nonlinearity);
  return s;
}

}  // namespace symtrace::nn

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

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const Tensor& h0, const Tensor& c0, const TensorList& params,
                                        bool has_biases, std::int64_t num_layers, double dropout_p, bool train,
                                        bool bidirectional, bool batch_first, std::source_location where) {
  const std::int64_t rank = input.dim(where);
  if (rank != 2 && rank != 3)
    throw_invalid_argument(where, "lstm: the input must be 2-D (unbatched) or 3-D, got shape {}", input.shape());
  const std::int64_t directions = bidirectional ? 2 : 1;
  const std::size_t per_cell = has_biases ? 4 : 2;
  const auto cells = static_cast<std::size_t>(num_layers * directions);
  if (num_layers <= 0 || params.size() != cells * per_cell)
    throw_invalid_argument(where, "lstm: expects {} weights for {} layers, got {} (projections are not supported)",
                           cells * per_cell, num_layers, params.size());
  const bool batched = rank == 3;
  if (h0.dim(where) != rank || c0.dim(where) != rank)
    throw_invalid_argument(where, "lstm: h_0 and c_0 must be {}-D for a {}-D input, got shapes {} and {}", rank, rank,
                           h0.shape(), c0.shape());
  // [N, T, F]; unbatched inputs get a batch of one.
  Tensor x = !batched ? unsqueeze(input, 0, where) : batch_first ? input
                                                                 : transpose(input, 0, 1, where);
  const Tensor h_init = batched ? h0 : unsqueeze(h0, 1, where);
  const Tensor c_init = batched ? c0 : unsqueeze(c0, 1, where);
  // [layers * directions, N, H], where known.
  const Shape state{Dim(static_cast<std::int64_t>(cells)), x.shape()[0], params[1].shape()[1]};
  for (const Tensor* s : {&h_init, &c_init}) {
    bool fits = s->shape().rank() == 3;
    for (std::size_t k = 0; fits && k < 3; ++k)
      fits = !s->shape()[k].is_known() || !state[k].is_known() || s->shape()[k].raw() == state[k].raw();
    if (!fits)
      throw_invalid_argument(where, "lstm: h_0 and c_0 must be {} for an input of shape {}, got {} and {}", state,
                             input.shape(), h0.shape(), c0.shape());
  }
  const std::int64_t steps = x.size(1, where).value(where);
  TensorList h_n, c_n;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    if (layer > 0 && train && dropout_p > 0.0) x = dropout(x, dropout_p, true, where);
    TensorList outputs;  // per direction: [N, T, H]
    for (std::int64_t dir = 0; dir < directions; ++dir) {
      const auto cell = static_cast<std::size_t>(layer * directions + dir);
      const std::size_t base = cell * per_cell;
      const Tensor& w_ih = params[base];
      const Tensor& w_hh = params[base + 1];
      const Tensor b_ih = has_biases ? params[base + 2] : Tensor();
      const Tensor b_hh = has_biases ? params[base + 3] : Tensor();
      Tensor h = select(h_init, 0, static_cast<std::int64_t>(cell), where);
      Tensor c = select(c_init, 0, static_cast<std::int64_t>(cell), where);
      TensorList hs(static_cast<std::size_t>(steps));
      for (std::int64_t k = 0; k < steps; ++k) {
        const std::int64_t t = dir == 0 ? k : steps - 1 - k;
        Tensor gates = add(linear(select(x, 1, t, where), w_ih, b_ih, where), linear(h, w_hh, b_hh, where), where);
        const TensorList g = chunk(gates, 4, 1, where);
        c = add(mul(sigmoid(g[1], where), c, where), mul(sigmoid(g[0], where), tanh(g[2], where), where), where);
        h = mul(sigmoid(g[3], where), tanh(c, where), where);
        hs[static_cast<std::size_t>(t)] = h;
      }
      outputs.push_back(stack(hs, 1, where));
      h_n.push_back(std::move(h));
      c_n.push_back(std::move(c));
    }
    x = outputs.size() == 1 ? outputs[0] : cat(outputs, -1, where);
  }
  Tensor out = !batched ? squeeze(x, 0, where) : batch_first ? x
                                                             : transpose(x, 0, 1, where);
  Tensor h_last = stack(h_n, 0, where), c_last = stack(c_n, 0, where);
  if (!batched) {
    h_last = squeeze(h_last, 1, where);
    c_last = squeeze(c_last, 1, where);
  }
  return {out, h_last, c_last};
}

LSTMImpl::LSTMImpl(std::int64_t input, std::int64_t hidden, LSTMOptions opts, std::source_location where)
    : input_size(input), hidden_size(hidden), options(opts) {
  if (input <= 0 || hidden <= 0 || opts.num_layers <= 0)
    throw_invalid_argument(where, "LSTM({}, {}, num_layers={}): the sizes and num_layers must be positive", input,
                           hidden, opts.num_layers);
  if (!(opts.dropout >= 0.0 && opts.dropout <= 1.0))
    throw_invalid_argument(where, "LSTM: dropout must be in [0, 1], got {}", format_double(opts.dropout));
  // PyTorch's initialisation: every parameter uniform in [-1/sqrt(H), 1/sqrt(H)].
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  auto make = [&](const std::string& name, IntList shape) {
    flat_weights.push_back(
        register_parameter(name, init::uniform_(Tensor::empty(Shape(std::move(shape))), -bound, bound), where));
  };
  const std::int64_t directions = opts.bidirectional ? 2 : 1;
  for (std::int64_t layer = 0; layer < opts.num_layers; ++layer) {
    for (std::int64_t dir = 0; dir < directions; ++dir) {
      const std::string suffix = fmt::format("_l{}{}", layer, dir == 1 ? "_reverse" : "");
      const std::int64_t in = layer == 0 ? input : hidden * directions;
      make("weight_ih" + suffix, {4 * hidden, in});
      make("weight_hh" + suffix, {4 * hidden, hidden});
      if (opts.bias) {
        make("bias_ih" + suffix, {4 * hidden});
        make("bias_hh" + suffix, {4 * hidden});
      }
    }
  }
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 const std::optional<TensorList>& hx) {
  Tensor h0, c0;
  if (hx) {
    if (hx->size() != 2) throw std::invalid_argument(fmt::format("LSTM: hx must be (h_0, c_0), got {} tensors", hx->size()));
    h0 = (*hx)[0];
    c0 = (*hx)[1];
  } else {
    const std::int64_t cells = options.num_layers * (options.bidirectional ? 2 : 1);
    const bool batched = input.dim() == 3;
    SymIntList shape = batched ? SymIntList{SymInt(cells), input.size(options.batch_first ? 0 : 1), SymInt(hidden_size)}
                               : SymIntList{SymInt(cells), SymInt(hidden_size)};
    h0 = zeros(shape, input.dtype());
    c0 = zeros(shape, input.dtype());
  }
  auto [out, h, c] = lstm(input, h0, c0, flat_weights, options.bias, options.num_layers, options.dropout, is_training(),
                          options.bidirectional, options.batch_first);
  return {out, {h, c}};
}

std::string LSTMImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}", input_size, hidden_size);
  if (options.num_layers != 1) s += fmt::format(", num_layers={}", options.num_layers);
  if (!options.bias) s += ", bias=False";
  if (options.batch_first) s += ", batch_first=True";
  if (options.dropout != 0.0) s += fmt::format(", dropout={}", format_double(options.dropout));
  if (options.bidirectional) s += ", bidirectional=True";
  return s;
}

}  // namespace symtrace::nn

// The sequence layers torch.nn has and models use: MultiheadAttention, LSTM, GRU, RNN and Softmax. Their
// parameters under PyTorch's names and shapes; forward numerics against a reference written
// here with plain loops (per head, per step), with masks, both layouts and unbatched inputs;
// errors with the caller's file:line; and each is a call_module leaf when traced, the
// interpreter giving what eager gives.

#include "support/checks.hpp"

#include <symtrace/graph.hpp>
#include <symtrace/interp/interpreter.hpp>
#include <symtrace/nn.hpp>
#include <symtrace/trace.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

std::string at_line(int line, std::string_view message) { return fmt::format("{}:{}: {}", __FILE__, line, message); }

double max_diff(const Tensor& a, const std::vector<double>& b) {
  const std::vector<double> v = a.to_vector<double>();
  REQUIRE(v.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < v.size(); ++i) m = std::max(m, std::abs(v[i] - b[i]));
  return m;
}

// y[r] = sum_c w[o + r][c] x[c] + b[o + r] for r in [0, rows): rows o.. of a Linear.
std::vector<double> affine(const std::vector<double>& w, const std::vector<double>& b, std::size_t o, std::size_t rows,
                           const std::vector<double>& x) {
  std::vector<double> y(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double s = b.empty() ? 0.0 : b[o + r];
    for (std::size_t c = 0; c < x.size(); ++c) s += w[(o + r) * x.size() + c] * x[c];
    y[r] = s;
  }
  return y;
}

struct AttentionReference {
  std::vector<double> out;      // [L, N, E]
  std::vector<double> weights;  // [N, L, S], averaged over the heads
};

// Multi-head attention, seq first, one (n, head, l) at a time; mask(n, h, l, s) is added to
// the scores.
template <class Mask>
AttentionReference attention_reference(const nn::MultiheadAttentionImpl& m, const Tensor& q, const Tensor& k,
                                       const Tensor& v, Mask mask) {
  const auto L = static_cast<std::size_t>(q.shape()[0].value()), N = static_cast<std::size_t>(q.shape()[1].value());
  const auto S = static_cast<std::size_t>(k.shape()[0].value()), E = static_cast<std::size_t>(m.embed_dim);
  const auto H = static_cast<std::size_t>(m.num_heads), d = E / H;
  const auto W = m.in_proj_weight.to_vector<double>(), B = m.in_proj_bias.to_vector<double>();
  const auto Wo = m.out_proj->weight.to_vector<double>(), Bo = m.out_proj->bias.to_vector<double>();
  const auto qv = q.to_vector<double>(), kv = k.to_vector<double>(), vv = v.to_vector<double>();
  auto row = [&](const std::vector<double>& t, std::size_t i, std::size_t n) {
    return std::vector<double>(t.begin() + static_cast<std::ptrdiff_t>((i * N + n) * E),
                               t.begin() + static_cast<std::ptrdiff_t>((i * N + n + 1) * E));
  };
  AttentionReference r{std::vector<double>(L * N * E), std::vector<double>(N * L * S)};
  for (std::size_t n = 0; n < N; ++n) {
    std::vector<std::vector<double>> Q(L), K(S), V(S);
    for (std::size_t l = 0; l < L; ++l) Q[l] = affine(W, B, 0, E, row(qv, l, n));
    for (std::size_t s = 0; s < S; ++s) {
      K[s] = affine(W, B, E, E, row(kv, s, n));
      V[s] = affine(W, B, 2 * E, E, row(vv, s, n));
    }
    for (std::size_t l = 0; l < L; ++l) {
      std::vector<double> ctx(E);
      for (std::size_t h = 0; h < H; ++h) {
        std::vector<double> a(S);
        double top = -std::numeric_limits<double>::infinity();
        for (std::size_t s = 0; s < S; ++s) {
          double dot = 0;
          for (std::size_t j = 0; j < d; ++j) dot += Q[l][h * d + j] * K[s][h * d + j];
          a[s] = dot / std::sqrt(static_cast<double>(d)) + mask(n, h, l, s);
          top = std::max(top, a[s]);
        }
        double total = 0;
        for (double& x : a) total += (x = std::exp(x - top));
        for (std::size_t s = 0; s < S; ++s) {
          a[s] /= total;
          r.weights[(n * L + l) * S + s] += a[s] / static_cast<double>(H);
          for (std::size_t j = 0; j < d; ++j) ctx[h * d + j] += a[s] * V[s][h * d + j];
        }
      }
      const std::vector<double> o = affine(Wo, Bo, 0, E, ctx);
      std::copy(o.begin(), o.end(), r.out.begin() + static_cast<std::ptrdiff_t>((l * N + n) * E));
    }
  }
  return r;
}

nn::MultiheadAttention seeded_attention(std::int64_t e, std::int64_t heads, nn::MultiheadAttentionOptions options = {}) {
  manual_seed(7);
  nn::MultiheadAttention m(e, heads, options);
  // Biases away from PyTorch's zeros, so that the test sees them.
  (void)m->in_proj_bias.copy_(randn({3 * e}));
  (void)m->out_proj->bias.copy_(randn({e}));
  return m;
}

}  // namespace

// ---- MultiheadAttention ----------------------------------------------------------------------

TEST_CASE("MultiheadAttention has PyTorch's packed projections, zero biases and out_proj") {
  manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  const StateDict state = m->state_dict();
  CHECK(state.size() == 4);
  CHECK(state.at("in_proj_weight").shape() == Shape{24, 8});
  CHECK(state.at("in_proj_bias").shape() == Shape{24});
  CHECK(state.at("out_proj.weight").shape() == Shape{8, 8});
  CHECK(state.at("out_proj.bias").shape() == Shape{8});
  CHECK(m->num_parameters() == 24 * 8 + 24 + 8 * 8 + 8);
  CHECK(m->in_proj_bias.to_vector<double>() == std::vector<double>(24, 0.0));
  CHECK(m->out_proj->bias.to_vector<double>() == std::vector<double>(8, 0.0));
  // xavier_uniform_: within sqrt(6 / (fan_in + fan_out)).
  for (double w : m->in_proj_weight.to_vector<double>()) CHECK(std::abs(w) <= std::sqrt(6.0 / 32.0) * (1 + 1e-6));
  CHECK(m.ptr()->is_builtin_layer());
  CHECK(m->type_name() == "MultiheadAttention");
  nn::MultiheadAttention no_bias(8, 2, {.bias = false});
  CHECK(no_bias->state_dict().size() == 2);
  // PyTorch prints only the output projection, under its class's name.
  CHECK(to_string(*m.ptr()) ==
        "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n)");
  CHECK(to_string(*no_bias.ptr()).find("NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=False)") !=
        std::string::npos);
}

TEST_CASE("MultiheadAttention is softmax(q k^T / sqrt(d) + mask) v per head, projected") {
  nn::MultiheadAttention m = seeded_attention(8, 2);
  Generator gen(3);
  const Tensor q = randn({3, 2, 8}, gen), k = randn({4, 2, 8}, gen), v = randn({4, 2, 8}, gen);
  auto none = [](std::size_t, std::size_t, std::size_t, std::size_t) { return 0.0; };

  SUBCASE("no mask: output and averaged weights") {
    const AttentionReference ref = attention_reference(*m, q, k, v, none);
    auto [out, weights] = m(q, k, v);
    CHECK(out.shape() == Shape{3, 2, 8});
    CHECK(max_diff(out, ref.out) < 1e-5);
    REQUIRE(weights);
    CHECK(weights->shape() == Shape{2, 3, 4});
    CHECK(max_diff(*weights, ref.weights) < 1e-6);
    auto [same, no_weights] = m(q, k, v, std::nullopt, false);
    CHECK_FALSE(no_weights);
    CHECK(max_diff(same, ref.out) < 1e-5);
    auto [_, per_head] = m(q, k, v, std::nullopt, true, std::nullopt, false);
    REQUIRE(per_head);
    CHECK(per_head->shape() == Shape{2, 2, 3, 4});
    CHECK(max_diff(per_head->mean({1}), ref.weights) < 1e-6);
  }
  SUBCASE("a bool attention mask hides keys as -inf does, and a float one is added") {
    const Tensor hide = tensor({false, true, false, false, false, false, true, true, true, false, false, false}, {3, 4});
    auto hidden = [&](std::size_t, std::size_t, std::size_t l, std::size_t s) {
      return hide.to_vector<bool>()[l * 4 + s] ? -std::numeric_limits<double>::infinity() : 0.0;
    };
    const AttentionReference ref = attention_reference(*m, q, k, v, hidden);
    auto [out, weights] = m(q, k, v, std::nullopt, true, hide);
    CHECK(max_diff(out, ref.out) < 1e-5);
    CHECK(max_diff(*weights, ref.weights) < 1e-6);
    const Tensor bias = randn({3, 4}, gen);
    auto added = [&](std::size_t, std::size_t, std::size_t l, std::size_t s) {
      return bias.to_vector<double>()[l * 4 + s];
    };
    auto [with_bias, w2] = m(q, k, v, std::nullopt, true, bias);
    CHECK(max_diff(with_bias, attention_reference(*m, q, k, v, added).out) < 1e-5);
  }
  SUBCASE("a key padding mask hides a batch's keys: their values no longer matter") {
    const Tensor pad = tensor({false, false, false, true, false, true, false, false}, {2, 4});
    auto padded = [&](std::size_t n, std::size_t, std::size_t, std::size_t s) {
      return pad.to_vector<bool>()[n * 4 + s] ? -std::numeric_limits<double>::infinity() : 0.0;
    };
    auto [out, weights] = m(q, k, v, pad);
    CHECK(max_diff(out, attention_reference(*m, q, k, v, padded).out) < 1e-5);
    const Tensor v2 = v + 0.0;                        // a copy
    (void)v2.select(0, 3).select(0, 0).fill_(100.0);  // key 3 of batch 0 is padded
    auto [out2, w2] = m(q, k, v2, pad);
    CHECK(max_diff(out2, out.to_vector<double>()) < 1e-6);
  }
}

TEST_CASE("MultiheadAttention batch first and unbatched give what seq first gives") {
  nn::MultiheadAttention seq = seeded_attention(4, 2);
  nn::MultiheadAttention batch = seeded_attention(4, 2, {.batch_first = true});
  Generator gen(5);
  const Tensor x = randn({3, 2, 4}, gen);  // [L, N, E]
  auto [a, wa] = seq(x, x, x);
  auto [b, wb] = batch(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1));
  CHECK(max_diff(b.transpose(0, 1), a.to_vector<double>()) < 1e-6);
  CHECK(max_diff(*wb, wa->to_vector<double>()) < 1e-6);
  const Tensor one = x.select(1, 1);  // [L, E]
  auto [u, wu] = seq(one, one, one);
  CHECK(u.shape() == Shape{3, 4});
  CHECK(wu->shape() == Shape{3, 3});
  CHECK(max_diff(u, a.select(1, 1).to_vector<double>()) < 1e-6);
}

TEST_CASE("MultiheadAttention refuses sizes heads do not divide and inputs of the wrong size") {
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(10, 3), at_line(line, "MultiheadAttention(10, 3): embed_dim must be positive and divisible by num_heads").c_str(),
                       std::invalid_argument);
  nn::MultiheadAttention m(4, 2);
  const Tensor bad = randn({3, 2, 5});
  CHECK_THROWS_WITH_AS(m(bad, bad, bad), doctest::Contains("inputs must have embed_dim 4 features, got shape [3, 2, 5]"),
                       std::invalid_argument);
  const Tensor flat = randn({4});
  CHECK_THROWS_WITH_AS(m(flat, flat, flat), doctest::Contains("the query must be 2-D (unbatched) or 3-D"),
                       std::invalid_argument);
}

// ---- LSTM ------------------------------------------------------------------------------------

namespace {

double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The LSTM, seq first [T, N, F], one step, batch and direction at a time; returns the output
// [T, N, D * H] and h_n, c_n [layers * D, N, H].
std::tuple<std::vector<double>, std::vector<double>, std::vector<double>> lstm_reference(
    const nn::LSTMImpl& m, const Tensor& x, const Tensor& h0, const Tensor& c0) {
  const auto T = static_cast<std::size_t>(x.shape()[0].value()), N = static_cast<std::size_t>(x.shape()[1].value());
  const auto H = static_cast<std::size_t>(m.hidden_size);
  const std::size_t D = m.options.bidirectional ? 2 : 1;
  std::vector<double> in = x.to_vector<double>();
  std::size_t F = static_cast<std::size_t>(m.input_size);
  const auto h_init = h0.to_vector<double>(), c_init = c0.to_vector<double>();
  std::vector<double> h_n, c_n;
  for (std::size_t layer = 0; layer < static_cast<std::size_t>(m.options.num_layers); ++layer) {
    std::vector<double> out(T * N * D * H);
    for (std::size_t dir = 0; dir < D; ++dir) {
      const std::string sfx = fmt::format("_l{}{}", layer, dir ? "_reverse" : "");
      const auto w_ih = m.find_parameter("weight_ih" + sfx).to_vector<double>();
      const auto w_hh = m.find_parameter("weight_hh" + sfx).to_vector<double>();
      const auto b_ih = m.find_parameter("bias_ih" + sfx).to_vector<double>();
      const auto b_hh = m.find_parameter("bias_hh" + sfx).to_vector<double>();
      const std::size_t cell = layer * D + dir;
      for (std::size_t n = 0; n < N; ++n) {
        std::vector<double> h(h_init.begin() + static_cast<std::ptrdiff_t>((cell * N + n) * H),
                              h_init.begin() + static_cast<std::ptrdiff_t>((cell * N + n + 1) * H));
        std::vector<double> c(c_init.begin() + static_cast<std::ptrdiff_t>((cell * N + n) * H),
                              c_init.begin() + static_cast<std::ptrdiff_t>((cell * N + n + 1) * H));
        for (std::size_t k = 0; k < T; ++k) {
          const std::size_t t = dir ? T - 1 - k : k;
          std::vector<double> xt(in.begin() + static_cast<std::ptrdiff_t>((t * N + n) * F),
                                 in.begin() + static_cast<std::ptrdiff_t>((t * N + n + 1) * F));
          const auto gx = affine(w_ih, b_ih, 0, 4 * H, xt), gh = affine(w_hh, b_hh, 0, 4 * H, h);
          for (std::size_t j = 0; j < H; ++j) {
            const double i = sigmoid_of(gx[j] + gh[j]), f = sigmoid_of(gx[H + j] + gh[H + j]);
            const double g = std::tanh(gx[2 * H + j] + gh[2 * H + j]), o = sigmoid_of(gx[3 * H + j] + gh[3 * H + j]);
            c[j] = f * c[j] + i * g;
            h[j] = o * std::tanh(c[j]);
          }
          for (std::size_t j = 0; j < H; ++j) out[((t * N + n) * D + dir) * H + j] = h[j];
        }
        h_n.insert(h_n.end(), h.begin(), h.end());
        c_n.insert(c_n.end(), c.begin(), c.end());
      }
    }
    in = std::move(out);
    F = D * H;
  }
  return {in, h_n, c_n};
}

}  // namespace

TEST_CASE("LSTM has PyTorch's parameters per layer and direction, uniform within 1/sqrt(hidden)") {
  manual_seed(0);
  nn::LSTM m(3, 4, {.num_layers = 2, .bidirectional = true});
  std::vector<std::string> names;
  for (const auto& [name, t] : m->state_dict()) names.push_back(name);
  CHECK(names.size() == 16);
  CHECK(m->find_parameter("weight_ih_l0").shape() == Shape{16, 3});
  CHECK(m->find_parameter("weight_hh_l0_reverse").shape() == Shape{16, 4});
  CHECK(m->find_parameter("weight_ih_l1").shape() == Shape{16, 8});  // both directions in
  CHECK(m->find_parameter("bias_hh_l1_reverse").shape() == Shape{16});
  for (const Tensor& w : m->flat_weights)
    for (double x : w.to_vector<double>()) CHECK(std::abs(x) <= 0.5 * (1 + 1e-6));
  CHECK(to_string(*m.ptr()) == "LSTM(3, 4, num_layers=2, bidirectional=True)");
  CHECK(to_string(*nn::LSTM(3, 4, {.bias = false, .batch_first = true}).ptr()) == "LSTM(3, 4, bias=False, batch_first=True)");
  CHECK(nn::LSTM(3, 4, {.bias = false})->state_dict().size() == 2);
}

TEST_CASE("LSTM steps c = σ(f) c + σ(i) tanh(g), h = σ(o) tanh(c) through layers and both directions") {
  manual_seed(1);
  nn::LSTM m(3, 4, {.num_layers = 2, .bidirectional = true});
  Generator gen(2);
  const Tensor x = randn({5, 2, 3}, gen), h0 = randn({4, 2, 4}, gen), c0 = randn({4, 2, 4}, gen);
  const auto [ref_out, ref_h, ref_c] = lstm_reference(*m, x, h0, c0);
  auto [out, state] = m(x, TensorList{h0, c0});
  auto [h, c] = state;
  CHECK(out.shape() == Shape{5, 2, 8});
  CHECK(h.shape() == Shape{4, 2, 4});
  CHECK(max_diff(out, ref_out) < 1e-5);
  CHECK(max_diff(h, ref_h) < 1e-5);
  CHECK(max_diff(c, ref_c) < 1e-5);

  SUBCASE("no state is a zero state") {
    const Tensor zero = zeros(IntList{4, 2, 4});
    auto [a, sa] = m(x);
    auto [b, sb] = m(x, TensorList{zero, zero});
    CHECK(max_diff(a, b.to_vector<double>()) == 0.0);
  }
  SUBCASE("batch first and unbatched give what seq first gives") {
    nn::LSTM bf(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
    for (const auto& [name, t] : m->named_parameters()) (void)bf->find_parameter(name).copy_(t);
    auto [b, sb] = bf(x.transpose(0, 1), TensorList{h0, c0});
    CHECK(max_diff(b.transpose(0, 1), out.to_vector<double>()) < 1e-6);
    auto [u, su] = m(x.select(1, 0), TensorList{h0.select(1, 0), c0.select(1, 0)});
    CHECK(u.shape() == Shape{5, 8});
    CHECK(max_diff(u, out.select(1, 0).to_vector<double>()) < 1e-6);
    CHECK(std::get<0>(su).shape() == Shape{4, 4});
  }
}

TEST_CASE("LSTM refuses bad sizes and a state that is not (h_0, c_0)") {
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::LSTM(3, 0), at_line(line, "LSTM(3, 0, num_layers=1): the sizes and num_layers must be positive").c_str(),
                       std::invalid_argument);
  nn::LSTM m(3, 4);
  const Tensor x = randn({2, 1, 3});
  CHECK_THROWS_WITH_AS(m(x, TensorList{zeros(IntList{1, 1, 4})}), doctest::Contains("hx must be (h_0, c_0), got 1 tensors"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(m(randn({3})), doctest::Contains("the input must be 2-D (unbatched) or 3-D"), std::invalid_argument);
}

// ---- gru, rnn -----------------------------------------------------------------------------------
// Their values are compared with LibTorch's in tests/torchscript/native_ops_test.cpp.

TEST_CASE("gru and rnn give the output and the last h, shaped as PyTorch's") {
  const TensorList gru_params = {randn({12, 3}), randn({12, 4}), randn({12}), randn({12})};
  auto [out, h] = nn::gru(randn({5, 2, 3}), zeros(IntList{1, 2, 4}), gru_params, true, 1, 0.0, false, false, false);
  CHECK(out.shape() == Shape{5, 2, 4});
  CHECK(h.shape() == Shape{1, 2, 4});
  // The last step's h is the output's last row.
  CHECK(testing::max_abs_diff(select(out, 0, 4), select(h, 0, 0)) == 0);
  const TensorList rnn_params = {randn({4, 3}), randn({4, 4})};
  auto [y, last] = nn::rnn(randn({6, 3}), zeros(IntList{1, 4}), rnn_params, false, 1, 0.0, false, false, false, true);
  CHECK(y.shape() == Shape{6, 4});
  CHECK(last.shape() == Shape{1, 4});
  CHECK(y.to_vector<float>() == relu(y).to_vector<float>());  // relu's outputs are not negative
}

TEST_CASE("gru and rnn refuse a wrong number of weights and a state of the wrong shape") {
  const TensorList params = {randn({12, 3}), randn({12, 4})};
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::gru(randn({5, 2, 3}), zeros(IntList{1, 2, 4}), params, true, 1, 0.0, false, false, false),
                       at_line(line, "gru: expects 4 weights for 1 layers, got 2").c_str(), std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::gru(randn({5, 2, 3}), zeros(IntList{2, 4}), params, false, 1, 0.0, false, false, false),
                       doctest::Contains("gru: h_0 must be 3-D for a 3-D input, got shape [2, 4]"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::rnn(randn({5, 2, 3}), zeros(IntList{1, 3, 4}), params, false, 1, 0.0, false, false, false,
                               false),
                       doctest::Contains("rnn_tanh: h_0 must be [1, 2, 4] for an input of shape [5, 2, 3], got [1, 3, 4]"),
                       std::invalid_argument);
}

TEST_CASE("GRU and RNN have PyTorch's parameters (3 and 1 gates) and compute gru and rnn over them") {
  manual_seed(0);
  nn::GRU gru(3, 4, {.num_layers = 2, .bidirectional = true});
  CHECK(gru->state_dict().size() == 16);
  CHECK(gru->find_parameter("weight_ih_l0").shape() == Shape{12, 3});
  CHECK(gru->find_parameter("weight_ih_l1_reverse").shape() == Shape{12, 8});
  CHECK(gru->find_parameter("bias_hh_l1").shape() == Shape{12});
  for (const Tensor& w : gru->flat_weights)
    for (double x : w.to_vector<double>()) CHECK(std::abs(x) <= 0.5 * (1 + 1e-6));
  CHECK(to_string(*gru.ptr()) == "GRU(3, 4, num_layers=2, bidirectional=True)");
  nn::RNN rnn(3, 4, {.nonlinearity = "relu", .bias = false, .batch_first = true});
  CHECK(rnn->state_dict().size() == 2);
  CHECK(rnn->find_parameter("weight_hh_l0").shape() == Shape{4, 4});
  CHECK(to_string(*rnn.ptr()) == "RNN(3, 4, bias=False, batch_first=True, nonlinearity=relu)");
  CHECK(to_string(*nn::RNN(3, 4).ptr()) == "RNN(3, 4)");

  Generator gen(3);
  const Tensor x = randn({5, 2, 3}, gen), h0 = randn({4, 2, 4}, gen);
  auto [out, h] = gru(x, h0);
  auto [ref_out, ref_h] = nn::gru(x, h0, gru->flat_weights, true, 2, 0.0, false, true, false);
  CHECK(out.shape() == Shape{5, 2, 8});
  CHECK(max_diff(out, ref_out.to_vector<double>()) == 0.0);
  CHECK(max_diff(h, ref_h.to_vector<double>()) == 0.0);
  // No state is a zero state; batch first transposes.
  auto [a, ha] = gru(x);
  auto [b, hb] = gru(x, zeros(IntList{4, 2, 4}));
  CHECK(max_diff(a, b.to_vector<double>()) == 0.0);
  const Tensor xb = randn({2, 5, 3}, gen);
  auto [y, hy] = rnn(xb);
  auto [ref_y, ref_hy] = nn::rnn(xb, zeros(IntList{1, 2, 4}), rnn->flat_weights, false, 1, 0.0, false, false, true, true);
  CHECK(y.shape() == Shape{2, 5, 4});
  CHECK(max_diff(y, ref_y.to_vector<double>()) == 0.0);
  CHECK(max_diff(hy, ref_hy.to_vector<double>()) == 0.0);
}

TEST_CASE("GRU and RNN refuse bad sizes and an unknown nonlinearity") {
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::GRU(0, 4), at_line(line, "GRU(0, 4, num_layers=1): the sizes and num_layers must be positive").c_str(),
                       std::invalid_argument);
  const int line2 = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::RNN(3, 4, {.nonlinearity = "gelu"}),
                       at_line(line2, "RNN: nonlinearity must be 'tanh' or 'relu', got 'gelu'").c_str(), std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::RNN(3, 4, {.dropout = 2.0}), doctest::Contains("RNN: dropout must be in [0, 1], got 2"),
                       std::invalid_argument);
}

// ---- Softmax ---------------------------------------------------------------------------------

TEST_CASE("Softmax normalises over its dim, or PyTorch's legacy dim when it has none") {
  Generator gen(4);
  const Tensor x = randn({2, 3, 4}, gen);
  CHECK(max_diff(nn::Softmax(-1)(x), softmax(x, -1).to_vector<double>()) == 0.0);
  CHECK(max_diff(nn::Softmax()(x), softmax(x, 0).to_vector<double>()) == 0.0);  // rank 3: dim 0
  const Tensor m = randn({2, 5}, gen);
  CHECK(max_diff(nn::Softmax()(m), softmax(m, 1).to_vector<double>()) == 0.0);  // rank 2: dim 1
  CHECK(to_string(*nn::Softmax(1).ptr()) == "Softmax(dim=1)");
  CHECK(to_string(*nn::Softmax().ptr()) == "Softmax(dim=None)");
}

// ---- Traced ----------------------------------------------------------------------------------

namespace {

struct EncoderImpl : TypedModule<EncoderImpl> {
  EncoderImpl() {
    attn = register_module("attn", nn::MultiheadAttention(8, 2, {.batch_first = true}));
    lstm = register_module("lstm", nn::LSTM(8, 4, {.batch_first = true}));
    softmax = register_module("softmax", nn::Softmax(-1));
    gru = register_module("gru", nn::GRU(4, 4, {.batch_first = true}));
    rnn = register_module("rnn", nn::RNN(4, 4, {.nonlinearity = "relu", .batch_first = true}));
  }
  Tensor forward(const Tensor& x) {
    auto [y, weights] = attn(x, x, x);
    auto [z, state] = lstm(y + x);
    auto [g, g_h] = gru(z);
    auto [r, r_h] = rnn(g, g_h);
    return softmax(r) + std::get<0>(state).sum();
  }
  nn::MultiheadAttention attn{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Softmax softmax{nullptr};
  nn::GRU gru{nullptr};
  nn::RNN rnn{nullptr};
};
SYMTRACE_MODULE(Encoder);

}  // namespace

TEST_CASE("MultiheadAttention, LSTM, GRU, RNN and Softmax are call_module leaves, and the interpreter gives eager's result") {
  manual_seed(0);
  Encoder model;
  const Graph g = symbolic_trace(*model.ptr(), {InputSpec(Shape{2, 5, 8})});
  CHECK_NOTHROW(g.lint());
  std::vector<std::string> leaves;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_module) leaves.emplace_back(n.target());
  CHECK(leaves == std::vector<std::string>{"attn", "lstm", "gru", "rnn", "softmax"});
  const Tensor x = randn({2, 5, 8});
  const Tensor eager = model(x);
  const Tensor traced = Interpreter(*model.ptr(), g).run({x}).to_tensor();
  CHECK(testing::max_rel_error(traced, eager) <= 1e-6);
}

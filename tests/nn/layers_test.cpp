// The built-in layers (torch.nn's): their parameters and buffers with PyTorch's names, shapes,
// dtypes and initialisation; forward numerics, bit for bit those of the functional op called
// with the layer's own parameters and options; training and eval modes; PyTorch's printed
// form; constructor errors with the caller's file:line; the type-erased entry point; and
// layers chained in a Sequential.

#include "support/checks.hpp"

#include <symtrace/nn.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// Checks that `actual` has `expected`'s dtype and shape and exactly its values.
void check_same(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.defined());
  REQUIRE(expected.defined());
  CHECK(actual.dtype() == expected.dtype());
  REQUIRE(actual.shape() == expected.shape());
  CHECK(actual.to_vector<double>() == expected.to_vector<double>());
}

/// The full message of an error raised by a call on `line` of this file.
std::string at_line(int line, std::string_view message) { return fmt::format("{}:{}: {}", __FILE__, line, message); }

std::vector<std::string> names_of(const std::vector<NamedTensor>& tensors) {
  std::vector<std::string> out;
  for (const auto& t : tensors) out.push_back(t.name);
  return out;
}

/// Checks that every value of `t` is in [-bound, bound] and that the values are spread over
/// most of that range (some below -spread * bound, some above spread * bound).
void check_uniform_within(const Tensor& t, double bound, double spread) {
  const auto v = t.to_vector<double>();
  REQUIRE_FALSE(v.empty());
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  // The bound is rounded to float32 when the values are drawn.
  CHECK(*lo >= -bound * (1 + 1e-6));
  CHECK(*hi <= bound * (1 + 1e-6));
  CHECK(*lo < -spread * bound);
  CHECK(*hi > spread * bound);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

// ---- Linear ----------------------------------------------------------------------------------

TEST_CASE("Linear has a float32 weight [out, in] and bias [out] drawn uniformly within 1/sqrt(in_features)") {
  manual_seed(1);
  nn::Linear fc(64, 32);
  CHECK(names_of(fc->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(fc->named_buffers().empty());
  CHECK(fc->weight.dtype() == DType::float32);
  CHECK(fc->weight.shape() == Shape{32, 64});
  CHECK(fc->bias.shape() == Shape{32});
  CHECK(fc->num_parameters() == 64 * 32 + 32);
  CHECK(fc->in_features == 64);
  CHECK(fc->out_features == 32);
  check_uniform_within(fc->weight, 1.0 / 8.0, 0.95);
  check_uniform_within(fc->bias, 1.0 / 8.0, 0.5);
  CHECK(std::abs(mean_of(fc->weight.to_vector<double>())) < 0.01);
  // The public members are the registered handles.
  CHECK(fc->find_parameter("weight").shares_storage_with(fc->weight));

  SUBCASE("the bias bound is 1/sqrt(in_features) too, not 1/sqrt(out_features)") {
    nn::Linear wide(4, 256);
    check_uniform_within(wide->bias, 0.5, 0.9);
  }
}

TEST_CASE("layers built after the same manual_seed have the same parameters") {
  manual_seed(7);
  nn::Linear a(5, 3);
  nn::Conv2d ca(2, 3, 3);
  manual_seed(7);
  nn::Linear b(5, 3);
  nn::Conv2d cb(2, 3, 3);
  check_same(a->weight, b->weight);
  check_same(a->bias, b->bias);
  check_same(ca->weight, cb->weight);
  nn::Linear c(5, 3);
  CHECK(c->weight.to_vector<float>() != a->weight.to_vector<float>());
}

TEST_CASE("Linear without bias registers only the weight and prints bias=False") {
  nn::Linear fc(512, 1000, {.bias = false});
  CHECK_FALSE(fc->bias.defined());
  CHECK_FALSE(fc->find_parameter("bias").defined());
  CHECK(names_of(fc->named_parameters()) == std::vector<std::string>{"weight"});
  CHECK(to_string(*fc) == "Linear(in_features=512, out_features=1000, bias=False)");
  CHECK(to_string(*nn::Linear(512, 1000)) == "Linear(in_features=512, out_features=1000, bias=True)");
}

TEST_CASE("Linear's forward is linear() with its own weight and bias, bit for bit") {
  Generator gen(11);
  nn::Linear fc(5, 3);
  SUBCASE("a matrix") {
    const Tensor x = randn({4, 5}, gen);
    check_same(fc(x), linear(x, fc->weight, fc->bias));
  }
  SUBCASE("leading batch dims") {
    const Tensor x = randn({2, 3, 5}, gen);
    const Tensor y = fc(x);
    CHECK(y.shape() == Shape{2, 3, 3});
    check_same(y, linear(x, fc->weight, fc->bias));
  }
  SUBCASE("without bias") {
    nn::Linear nobias(5, 3, {.bias = false});
    const Tensor x = randn({4, 5}, gen);
    check_same(nobias(x), linear(x, nobias->weight));
  }
  SUBCASE("values by hand") {
    fc->weight.copy_(tensor({1.f, 0.f, 0.f, 0.f, 0.f, 0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 1.f, 1.f, 1.f, 1.f}, {3, 5}));
    fc->bias.copy_(tensor({0.5f, -1.f, 0.f}));
    testing::check_tensor(fc(tensor({1.f, 2.f, 3.f, 4.f, 5.f}, {1, 5})), DType::float32, {1, 3}, {1.5, 4, 15});
  }
}

TEST_CASE("Linear with no input features has a zero bias, as PyTorch's bound of 0 for fan_in 0") {
  nn::Linear fc(0, 3);
  CHECK(fc->weight.shape() == Shape{3, 0});
  testing::check_tensor(fc->bias, DType::float32, {3}, {0, 0, 0});
  testing::check_tensor(fc(zeros({2, 0})), DType::float32, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST_CASE("Linear refuses negative feature counts, naming the caller's line") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::Linear(-1, 3), at_line(line, "Linear(-1, 3): feature counts must be >= 0").c_str(),
                       std::invalid_argument);
}

TEST_CASE("Linear on an input whose last dim is not in_features gives linear()'s error") {
  nn::Linear fc(5, 3);
  CHECK_THROWS_WITH_AS(fc(zeros({2, 4})), doctest::Contains("linear(): "), OpError);
}

// ---- Conv2d ----------------------------------------------------------------------------------

TEST_CASE("Conv2d has weight [out, in / groups, kh, kw] and bias [out] uniform within 1/sqrt(fan_in)") {
  manual_seed(2);
  nn::Conv2d conv(6, 8, {3, 5}, {.groups = 2});
  CHECK(names_of(conv->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(conv->named_buffers().empty());
  CHECK(conv->weight.dtype() == DType::float32);
  CHECK(conv->weight.shape() == Shape{8, 3, 3, 5});
  CHECK(conv->bias.dtype() == DType::float32);
  CHECK(conv->bias.shape() == Shape{8});
  const double bound = 1.0 / std::sqrt(3.0 * 3.0 * 5.0);  // fan_in = in / groups * kh * kw
  check_uniform_within(conv->weight, bound, 0.95);
  check_uniform_within(conv->bias, bound, 0.3);

  SUBCASE("the bias bound comes from fan_in, not from out_channels") {
    nn::Conv2d wide(1, 256, 2);
    check_uniform_within(wide->bias, 0.5, 0.9);
  }
  SUBCASE("bias=false registers only the weight") {
    nn::Conv2d nobias(3, 4, 1, {.bias = false});
    CHECK_FALSE(nobias->bias.defined());
    CHECK(names_of(nobias->named_parameters()) == std::vector<std::string>{"weight"});
  }
}

TEST_CASE("Conv2d's forward is conv2d() with its own parameters and options, bit for bit") {
  Generator gen(3);
  SUBCASE("defaults") {
    nn::Conv2d conv(2, 3, 3);
    const Tensor x = randn({2, 2, 5, 6}, gen);
    const Tensor y = conv(x);
    CHECK(y.shape() == Shape{2, 3, 3, 4});
    check_same(y, conv2d(x, conv->weight, conv->bias));
  }
  SUBCASE("stride, padding and dilation per dim") {
    nn::Conv2d conv(2, 4, {3, 2}, {.stride = {2, 1}, .padding = {1, 2}, .dilation = {2, 1}});
    const Tensor x = randn({1, 2, 7, 5}, gen);
    const Tensor y = conv(x);
    check_same(y, conv2d(x, conv->weight, conv->bias, {2, 1}, {1, 2}, {2, 1}));
    CHECK(y.shape() == Shape{1, 4, 3, 8});
  }
  SUBCASE("groups without bias") {
    nn::Conv2d conv(4, 6, 3, {.padding = 1, .groups = 2, .bias = false});
    const Tensor x = randn({1, 4, 4, 4}, gen);
    check_same(conv(x), conv2d(x, conv->weight, Tensor(), {1, 1}, {1, 1}, {1, 1}, 2));
  }
  SUBCASE("depthwise") {
    nn::Conv2d conv(3, 3, 3, {.stride = 2, .groups = 3});
    const Tensor x = randn({2, 3, 5, 5}, gen);
    check_same(conv(x), conv2d(x, conv->weight, conv->bias, {2, 2}, {0, 0}, {1, 1}, 3));
  }
}

TEST_CASE("Conv2d prints as PyTorch does: pairs, with padding, dilation, groups and bias only when not default") {
  CHECK(to_string(*nn::Conv2d(3, 64, 7, {.stride = 2, .padding = 3, .bias = false})) ==
        "Conv2d(3, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)");
  CHECK(to_string(*nn::Conv2d(64, 64, 3, {.padding = 1})) ==
        "Conv2d(64, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  CHECK(to_string(*nn::Conv2d(16, 8, 1)) == "Conv2d(16, 8, kernel_size=(1, 1), stride=(1, 1))");
  CHECK(to_string(*nn::Conv2d(32, 32, {3, 1}, {.padding = {1, 0}, .dilation = 2, .groups = 32})) ==
        "Conv2d(32, 32, kernel_size=(3, 1), stride=(1, 1), padding=(1, 0), dilation=(2, 2), groups=32)");
  // A pair written out that equals the default is still the default.
  CHECK(to_string(*nn::Conv2d(2, 2, {1, 1}, {.stride = {1, 1}, .padding = {0, 0}, .dilation = {1, 1}})) ==
        "Conv2d(2, 2, kernel_size=(1, 1), stride=(1, 1))");
}

TEST_CASE("Conv2d refuses bad sizes and groups, naming the caller's line") {
  SUBCASE("channels") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(0, 4, 3),
                         at_line(line, "Conv2d(0, 4, kernel_size=(3, 3)): channel counts must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("kernel size") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(3, 4, {3, 0}),
                         at_line(line, "Conv2d(3, 4, kernel_size=(3, 0)): the kernel size must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("stride") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(3, 4, 3, {.stride = 0}),
                         at_line(line, "Conv2d(3, 4, kernel_size=(3, 3)): the stride must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("padding") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(3, 4, 3, {.padding = {0, -1}}),
                         at_line(line, "Conv2d(3, 4, kernel_size=(3, 3)): the padding must be >= 0").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("dilation") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(3, 4, 3, {.dilation = 0}),
                         at_line(line, "Conv2d(3, 4, kernel_size=(3, 3)): the dilation must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("groups not positive") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(3, 4, 3, {.groups = 0}),
                         at_line(line, "Conv2d(3, 4, kernel_size=(3, 3)): groups must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("groups not dividing the input channels") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(6, 8, 3, {.groups = 4}),
                         at_line(line, "Conv2d(6, 8, kernel_size=(3, 3)): in_channels and out_channels must be "
                                       "divisible by groups (4)")
                             .c_str(),
                         std::invalid_argument);
  }
  SUBCASE("groups not dividing the output channels") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Conv2d(4, 6, 1, {.groups = 4}),
                         at_line(line, "Conv2d(4, 6, kernel_size=(1, 1)): in_channels and out_channels must be "
                                       "divisible by groups (4)")
                             .c_str(),
                         std::invalid_argument);
  }
}

TEST_CASE("Conv2d on an input with the wrong channel count or rank gives conv2d()'s error") {
  nn::Conv2d conv(3, 4, 3);
  CHECK_THROWS_WITH_AS(conv(zeros({1, 2, 5, 5})), doctest::Contains("conv2d(): "), OpError);
  CHECK_THROWS_WITH_AS(conv(zeros({5, 5})), doctest::Contains("conv2d(): "), OpError);
}

// ---- BatchNorm2d -----------------------------------------------------------------------------

TEST_CASE("BatchNorm2d has weight 1, bias 0, running_mean 0, running_var 1 and an int64 0-dim counter") {
  nn::BatchNorm2d bn(3);
  CHECK(names_of(bn->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(names_of(bn->named_buffers()) ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  testing::check_tensor(bn->weight, DType::float32, {3}, {1, 1, 1});
  testing::check_tensor(bn->bias, DType::float32, {3}, {0, 0, 0});
  testing::check_tensor(bn->running_mean, DType::float32, {3}, {0, 0, 0});
  testing::check_tensor(bn->running_var, DType::float32, {3}, {1, 1, 1});
  testing::check_tensor(bn->num_batches_tracked, DType::int64, {}, {0});
  CHECK(bn->num_batches_tracked.dim() == 0);
  CHECK(bn->num_parameters() == 6);
  // PyTorch's state dict order.
  std::vector<std::string> keys;
  for (const auto& [key, value] : bn->state_dict()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});

  SUBCASE("affine=false has no parameters") {
    nn::BatchNorm2d plain(3, {.affine = false});
    CHECK(plain->named_parameters().empty());
    CHECK_FALSE(plain->weight.defined());
    CHECK(plain->named_buffers().size() == 3);
  }
  SUBCASE("track_running_stats=false has no buffers") {
    nn::BatchNorm2d untracked(3, {.track_running_stats = false});
    CHECK(untracked->named_buffers().empty());
    CHECK_FALSE(untracked->running_mean.defined());
    CHECK_FALSE(untracked->num_batches_tracked.defined());
  }
}

TEST_CASE("BatchNorm2d in training normalises with batch statistics and updates the running ones with momentum") {
  // Channel c of x holds 8 values: c * 10 + {0, 1, ..., 7} spread over the batch and space.
  std::vector<float> values;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 4; ++i) values.push_back(static_cast<float>(c * 10 + n * 4 + i * i % 5));
  const Tensor x = tensor(values, {2, 3, 2, 2});
  nn::BatchNorm2d bn(3);
  bn->weight.copy_(tensor({1.f, 2.f, 0.5f}));
  bn->bias.copy_(tensor({0.f, 1.f, -1.f}));
  REQUIRE(bn->is_training());

  const Tensor rm = zeros({3}), rv = ones({3});
  const Tensor expected = batch_norm(x, bn->weight, bn->bias, rm, rv, true, 0.1, 1e-5);
  check_same(bn(x), expected);

  // Per-channel mean and unbiased variance of the 8 values, by hand.
  std::vector<double> mean(3), var(3);
  for (int c = 0; c < 3; ++c) {
    std::vector<double> v;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 4; ++i) v.push_back(values[static_cast<std::size_t>(n * 12 + c * 4 + i)]);
    mean[static_cast<std::size_t>(c)] = mean_of(v);
    double ss = 0;
    for (double e : v) ss += (e - mean_of(v)) * (e - mean_of(v));
    var[static_cast<std::size_t>(c)] = ss / 7.0;
  }
  testing::check_tensor(bn->running_mean, DType::float32, {3}, {0.1 * mean[0], 0.1 * mean[1], 0.1 * mean[2]});
  testing::check_tensor(bn->running_var, DType::float32, {3},
                        {0.9 + 0.1 * var[0], 0.9 + 0.1 * var[1], 0.9 + 0.1 * var[2]});
  // The layer's running stats are exactly what the functional op left in its own copies.
  check_same(bn->running_mean, rm);
  check_same(bn->running_var, rv);
  CHECK(bn->num_batches_tracked.item<std::int64_t>() == 1);

  SUBCASE("a second batch moves them again and counts 2") {
    const Tensor x2 = x * 2.0f;
    check_same(bn(x2), batch_norm(x2, bn->weight, bn->bias, rm, rv, true, 0.1, 1e-5));
    check_same(bn->running_mean, rm);
    check_same(bn->running_var, rv);
    testing::check_tensor(bn->running_mean, DType::float32, {3},
                          {0.09 * mean[0] + 0.2 * mean[0], 0.09 * mean[1] + 0.2 * mean[1],
                           0.09 * mean[2] + 0.2 * mean[2]});
    CHECK(bn->num_batches_tracked.item<std::int64_t>() == 2);
  }
  SUBCASE("the momentum option sets the update rate") {
    nn::BatchNorm2d fast(3, {.momentum = 0.5});
    (void)fast(x);
    testing::check_tensor(fast->running_mean, DType::float32, {3}, {0.5 * mean[0], 0.5 * mean[1], 0.5 * mean[2]});
    testing::check_tensor(fast->running_var, DType::float32, {3},
                          {0.5 + 0.5 * var[0], 0.5 + 0.5 * var[1], 0.5 + 0.5 * var[2]});
  }
}

TEST_CASE("BatchNorm2d in eval mode normalises with the running statistics and changes nothing") {
  Generator gen(5);
  const Tensor x = randn({2, 3, 2, 2}, gen);
  nn::BatchNorm2d bn(3, {.eps = 1e-3});
  bn->running_mean.copy_(tensor({1.f, -2.f, 0.5f}));
  bn->running_var.copy_(tensor({4.f, 0.25f, 1.f}));
  bn->weight.copy_(tensor({2.f, 1.f, 1.f}));
  bn->eval();
  CHECK_FALSE(bn->is_training());

  const Tensor y = bn(x);
  check_same(y, batch_norm(x, bn->weight, bn->bias, bn->running_mean, bn->running_var, false, 0.1, 1e-3));
  // (x - mean) / sqrt(var + eps) * weight + bias, for the first element.
  const double x0 = x.to_vector<double>()[0];
  CHECK(y.to_vector<double>()[0] == doctest::Approx((x0 - 1.0) / std::sqrt(4.001) * 2.0).epsilon(1e-6));
  testing::check_tensor(bn->running_mean, DType::float32, {3}, {1, -2, 0.5});
  testing::check_tensor(bn->running_var, DType::float32, {3}, {4, 0.25, 1});
  CHECK(bn->num_batches_tracked.item<std::int64_t>() == 0);

  SUBCASE("back in training mode it uses and updates batch statistics again") {
    bn->train();
    (void)bn(x);
    CHECK(bn->num_batches_tracked.item<std::int64_t>() == 1);
    CHECK(bn->running_mean.to_vector<float>() != std::vector<float>{1.f, -2.f, 0.5f});
  }
}

TEST_CASE("BatchNorm2d without running statistics uses batch statistics in eval mode too") {
  Generator gen(6);
  const Tensor x = randn({2, 3, 2, 2}, gen);
  nn::BatchNorm2d bn(3, {.affine = false, .track_running_stats = false});
  const Tensor expected = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  check_same(bn(x), expected);
  bn->eval();
  check_same(bn(x), expected);
}

TEST_CASE("BatchNorm2d prints as PyTorch does") {
  CHECK(to_string(*nn::BatchNorm2d(64)) ==
        "BatchNorm2d(64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  CHECK(to_string(*nn::BatchNorm2d(8, {.eps = 1e-3, .momentum = 0.01, .affine = false, .track_running_stats = false})) ==
        "BatchNorm2d(8, eps=0.001, momentum=0.01, affine=False, track_running_stats=False)");
  CHECK(to_string(*nn::BatchNorm2d(8, {.momentum = 1})) ==
        "BatchNorm2d(8, eps=1e-05, momentum=1.0, affine=True, track_running_stats=True)");
}

TEST_CASE("BatchNorm2d refuses a non-positive feature count, naming the caller's line") {
  const std::int64_t features = 0;  // a literal 0 would also convert to the holder's nullptr_t
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(features, {}), at_line(line, "BatchNorm2d(0): num_features must be positive").c_str(),
                       std::invalid_argument);
}

TEST_CASE("BatchNorm2d refuses an input that is not 4-D and leaves its statistics unchanged") {
  nn::BatchNorm2d bn(3);
  CHECK_THROWS_WITH_AS(bn(zeros({2, 3, 4})),
                       doctest::Contains("BatchNorm2d: expected a 4-D input [N, C, H, W], got float32[2, 3, 4]"),
                       std::invalid_argument);
  CHECK(bn->num_batches_tracked.item<std::int64_t>() == 0);
}

TEST_CASE("BatchNorm2d refused by batch_norm() in training leaves running stats and counter unchanged") {
  nn::BatchNorm2d bn(3);
  SUBCASE("wrong channel count") {
    CHECK_THROWS_WITH_AS(bn(ones({2, 4, 2, 2})), doctest::Contains("batch_norm(): "), OpError);
  }
  SUBCASE("one value per channel") {
    CHECK_THROWS_WITH_AS(bn(ones({1, 3, 1, 1})), doctest::Contains("Expected more than 1 value per channel"),
                         OpError);
  }
  testing::check_tensor(bn->running_mean, DType::float32, {3}, {0, 0, 0});
  testing::check_tensor(bn->running_var, DType::float32, {3}, {1, 1, 1});
  CHECK(bn->num_batches_tracked.item<std::int64_t>() == 0);
}

// ---- LayerNorm -------------------------------------------------------------------------------

TEST_CASE("LayerNorm has weight 1 and bias 0 of normalized_shape") {
  nn::LayerNorm ln(IntList{4, 8});
  CHECK(names_of(ln->named_parameters()) == std::vector<std::string>{"weight", "bias"});
  CHECK(ln->named_buffers().empty());
  CHECK(ln->weight.shape() == Shape{4, 8});
  CHECK(ln->weight.dtype() == DType::float32);
  CHECK(ln->bias.shape() == Shape{4, 8});
  CHECK(ln->weight.to_vector<double>() == std::vector<double>(32, 1.0));
  CHECK(ln->bias.to_vector<double>() == std::vector<double>(32, 0.0));
  CHECK(nn::LayerNorm(768)->normalized_shape == IntList{768});

  SUBCASE("elementwise_affine=false has no parameters") {
    nn::LayerNorm plain(8, {.elementwise_affine = false});
    CHECK(plain->named_parameters().empty());
    CHECK_FALSE(plain->weight.defined());
  }
  SUBCASE("bias=false has only the weight") {
    nn::LayerNorm nobias(8, {.bias = false});
    CHECK(names_of(nobias->named_parameters()) == std::vector<std::string>{"weight"});
    CHECK_FALSE(nobias->bias.defined());
  }
}

TEST_CASE("LayerNorm's forward is layer_norm() with its own parameters and eps, bit for bit") {
  Generator gen(8);
  const Tensor x = randn({2, 3, 4}, gen);
  SUBCASE("last dim, eps option") {
    nn::LayerNorm ln(4, {.eps = 1e-6});
    ln->weight.copy_(randn({4}, gen));
    ln->bias.copy_(randn({4}, gen));
    check_same(ln(x), layer_norm(x, {4}, ln->weight, ln->bias, 1e-6));
  }
  SUBCASE("two trailing dims") {
    nn::LayerNorm ln(IntList{3, 4});
    check_same(ln(x), layer_norm(x, {3, 4}, ln->weight, ln->bias, 1e-5));
  }
  SUBCASE("without affine parameters") {
    nn::LayerNorm ln(4, {.elementwise_affine = false});
    const Tensor y = ln(x);
    check_same(y, layer_norm(x, {4}));
    // Each row has mean 0.
    for (double m : y.mean({-1}).to_vector<double>()) CHECK(std::abs(m) < 1e-6);
  }
  SUBCASE("a trailing shape that does not match gives layer_norm()'s error") {
    nn::LayerNorm ln(5);
    CHECK_THROWS_WITH_AS(ln(x), doctest::Contains("layer_norm(): "), OpError);
  }
}

TEST_CASE("LayerNorm prints its shape as a Python tuple, as PyTorch does") {
  CHECK(to_string(*nn::LayerNorm(768, {.eps = 1e-6})) == "LayerNorm((768,), eps=1e-06, elementwise_affine=True)");
  CHECK(to_string(*nn::LayerNorm(IntList{4, 8}, {.elementwise_affine = false})) ==
        "LayerNorm((4, 8), eps=1e-05, elementwise_affine=False)");
}

TEST_CASE("LayerNorm refuses an empty or negative shape, naming the caller's line") {
  SUBCASE("empty") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::LayerNorm(IntList{}),
                         at_line(line, "LayerNorm(): normalized_shape must be non-empty with sizes >= 0").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("negative") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::LayerNorm(IntList{4, -1}),
                         at_line(line, "LayerNorm(4, -1): normalized_shape must be non-empty with sizes >= 0").c_str(),
                         std::invalid_argument);
  }
}

// ---- Embedding -------------------------------------------------------------------------------

TEST_CASE("Embedding has a float32 weight [num_embeddings, embedding_dim] drawn from N(0, 1)") {
  manual_seed(9);
  nn::Embedding emb(2000, 8);
  CHECK(names_of(emb->named_parameters()) == std::vector<std::string>{"weight"});
  CHECK(emb->weight.dtype() == DType::float32);
  CHECK(emb->weight.shape() == Shape{2000, 8});
  CHECK_FALSE(emb->padding_idx.has_value());
  const auto v = emb->weight.to_vector<double>();
  const double mean = mean_of(v);
  double ss = 0, max_abs = 0;
  for (double e : v) {
    ss += (e - mean) * (e - mean);
    max_abs = std::max(max_abs, std::abs(e));
  }
  CHECK(std::abs(mean) < 0.03);
  CHECK(std::sqrt(ss / static_cast<double>(v.size())) == doctest::Approx(1.0).epsilon(0.03));
  CHECK(max_abs > 3.0);  // a normal, not a uniform within [-1, 1]
}

TEST_CASE("Embedding zeroes the padding_idx row and normalises a negative index") {
  manual_seed(10);
  SUBCASE("positive") {
    nn::Embedding emb(10, 4, {.padding_idx = 3});
    CHECK(emb->padding_idx == 3);
    CHECK(emb->weight.select(0, 3).to_vector<double>() == std::vector<double>(4, 0.0));
    for (std::int64_t r : {0, 2, 4, 9}) CHECK(emb->weight.select(0, r).abs().sum().item<double>() > 0);
    CHECK(to_string(*emb) == "Embedding(10, 4, padding_idx=3)");
  }
  SUBCASE("negative counts from the end") {
    nn::Embedding emb(10, 4, {.padding_idx = -1});
    CHECK(emb->padding_idx == 9);
    CHECK(emb->weight.select(0, 9).to_vector<double>() == std::vector<double>(4, 0.0));
    CHECK(to_string(*emb) == "Embedding(10, 4, padding_idx=9)");
  }
  CHECK(to_string(*nn::Embedding(1000, 64)) == "Embedding(1000, 64)");
}

TEST_CASE("Embedding's forward is embedding() with its own weight: indices.shape + [embedding_dim]") {
  nn::Embedding emb(10, 3);
  const Tensor idx = tensor({0, 3, 9, 3, 1, 0}, {2, 3});
  const Tensor y = emb(idx);
  CHECK(y.shape() == Shape{2, 3, 3});
  check_same(y, embedding(emb->weight, idx));
  check_same(y.select(0, 0).select(0, 1), emb->weight.select(0, 3));

  SUBCASE("float indices give embedding()'s error") {
    CHECK_THROWS_WITH_AS(emb(zeros({2})), doctest::Contains("embedding(): "), OpError);
  }
  SUBCASE("an index out of range gives embedding()'s error") {
    CHECK_THROWS_WITH_AS(emb(tensor({10})), doctest::Contains("embedding(): "), OpError);
  }
}

TEST_CASE("Embedding refuses negative sizes and a padding_idx out of range, naming the caller's line") {
  SUBCASE("negative size") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Embedding(-2, 4), at_line(line, "Embedding(-2, 4): sizes must be >= 0").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("padding_idx too large") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Embedding(10, 4, {.padding_idx = 10}),
                         at_line(line, "Embedding(10, 4): padding_idx 10 must be within [-10, 10)").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("padding_idx too small") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Embedding(10, 4, {.padding_idx = -11}),
                         at_line(line, "Embedding(10, 4): padding_idx -11 must be within [-10, 10)").c_str(),
                         std::invalid_argument);
  }
}

// ---- Activations -----------------------------------------------------------------------------

TEST_CASE("activation layers compute their functional op bit for bit and leave the input alone") {
  const Tensor x = tensor({-7.f, -3.f, -0.5f, 0.f, 0.25f, 1.f, 5.5f, 6.f, 9.f}, {3, 3});
  const std::vector<double> before = x.to_vector<double>();
  check_same(nn::ReLU()(x), relu(x));
  check_same(nn::ReLU6()(x), relu6(x));
  check_same(nn::GELU()(x), gelu(x, "none"));
  check_same(nn::GELU({.approximate = "tanh"})(x), gelu(x, "tanh"));
  check_same(nn::SiLU()(x), silu(x));
  check_same(nn::Hardswish()(x), hardswish(x));
  check_same(nn::Hardsigmoid()(x), hardsigmoid(x));
  check_same(nn::Sigmoid()(x), sigmoid(x));
  check_same(nn::Tanh()(x), tanh(x));
  CHECK(x.to_vector<double>() == before);
  testing::check_tensor(nn::ReLU6()(x), DType::float32, {3, 3}, {0, 0, 0, 0, 0.25, 1, 5.5, 6, 6});
  // x * relu6(x + 3) / 6 and relu6(x + 3) / 6, as torch.nn.Hardswish and Hardsigmoid give them.
  testing::check_tensor(nn::Hardswish()(x), DType::float32, {3, 3},
                        {0, 0, -0.208333333, 0, 0.135416667, 0.666666667, 5.5, 6, 9});
  testing::check_tensor(nn::Hardsigmoid()(x), DType::float32, {3, 3},
                        {0, 0, 0.416666667, 0.5, 0.541666667, 0.666666667, 1, 1, 1});
  // The two GELUs are different functions.
  CHECK(nn::GELU()(x).to_vector<float>() != nn::GELU({.approximate = "tanh"})(x).to_vector<float>());
}

TEST_CASE("inplace ReLU, ReLU6, Hardswish and Hardsigmoid write the result into the input and return it") {
  SUBCASE("ReLU") {
    const Tensor x = tensor({-1.f, 2.f, 7.f});
    const Tensor y = nn::ReLU({.inplace = true})(x);
    CHECK(y.shares_storage_with(x));
    testing::check_tensor(x, DType::float32, {3}, {0, 2, 7});
    testing::check_tensor(y, DType::float32, {3}, {0, 2, 7});
  }
  SUBCASE("ReLU6") {
    const Tensor x = tensor({-1.f, 2.f, 7.f});
    const Tensor y = nn::ReLU6({.inplace = true})(x);
    CHECK(y.shares_storage_with(x));
    testing::check_tensor(x, DType::float32, {3}, {0, 2, 6});
  }
  SUBCASE("Hardswish") {
    const Tensor x = tensor({-4.f, 1.5f, 7.f});
    const Tensor y = nn::Hardswish({.inplace = true})(x);
    CHECK(y.shares_storage_with(x));
    testing::check_tensor(x, DType::float32, {3}, {0, 1.125, 7});
  }
  SUBCASE("Hardsigmoid") {
    const Tensor x = tensor({-4.f, 1.5f, 7.f});
    const Tensor y = nn::Hardsigmoid({.inplace = true})(x);
    CHECK(y.shares_storage_with(x));
    testing::check_tensor(x, DType::float32, {3}, {0, 0.75, 1});
  }
  SUBCASE("without inplace the input keeps its values") {
    const Tensor x = tensor({-1.f, 2.f, 7.f});
    const Tensor y = nn::ReLU()(x);
    CHECK_FALSE(y.shares_storage_with(x));
    testing::check_tensor(x, DType::float32, {3}, {-1, 2, 7});
  }
}

TEST_CASE("activation layers print as PyTorch does") {
  CHECK(to_string(*nn::ReLU()) == "ReLU()");
  CHECK(to_string(*nn::ReLU({.inplace = true})) == "ReLU(inplace=True)");
  CHECK(to_string(*nn::ReLU6()) == "ReLU6()");
  CHECK(to_string(*nn::ReLU6({.inplace = true})) == "ReLU6(inplace=True)");
  CHECK(to_string(*nn::GELU()) == "GELU(approximate='none')");
  CHECK(to_string(*nn::GELU({.approximate = "tanh"})) == "GELU(approximate='tanh')");
  CHECK(to_string(*nn::SiLU()) == "SiLU()");
  CHECK(to_string(*nn::Hardswish()) == "Hardswish()");
  CHECK(to_string(*nn::Hardswish({.inplace = true})) == "Hardswish(inplace=True)");
  CHECK(to_string(*nn::Hardsigmoid()) == "Hardsigmoid()");
  CHECK(to_string(*nn::Hardsigmoid({.inplace = true})) == "Hardsigmoid(inplace=True)");
  CHECK(to_string(*nn::Sigmoid()) == "Sigmoid()");
  CHECK(to_string(*nn::Tanh()) == "Tanh()");
  CHECK(nn::ReLU()->named_parameters().empty());
}

TEST_CASE("GELU refuses an unknown approximation, naming the caller's line") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(nn::GELU({.approximate = "fast"}),
                       at_line(line, "GELU: approximate must be 'none' or 'tanh', got 'fast'").c_str(),
                       std::invalid_argument);
}

// ---- Dropout ---------------------------------------------------------------------------------

TEST_CASE("Dropout in eval mode is the identity") {
  Generator gen(12);
  const Tensor x = randn({4, 5}, gen);
  nn::Dropout drop(0.5);
  drop->eval();
  check_same(drop(x), x);
  nn::Dropout inplace({.p = 0.5, .inplace = true});
  inplace->eval();
  const std::vector<double> before = x.to_vector<double>();
  const Tensor y = inplace(x);
  CHECK(y.shares_storage_with(x));
  CHECK(x.to_vector<double>() == before);
}

TEST_CASE("Dropout in training zeroes about p of the elements and scales the rest by 1/(1-p)") {
  manual_seed(13);
  const Tensor x = ones({100, 100});
  nn::Dropout drop(0.3);
  REQUIRE(drop->is_training());
  const auto y = drop(x).to_vector<float>();
  const auto scaled = static_cast<float>(1.0 / 0.7);
  const auto zeros_count = std::count(y.begin(), y.end(), 0.0f);
  CHECK(std::count(y.begin(), y.end(), scaled) + zeros_count == 10000);
  CHECK(zeros_count > 2700);
  CHECK(zeros_count < 3300);
  CHECK(x.to_vector<float>() == std::vector<float>(10000, 1.0f));

  SUBCASE("the same draws as dropout() from the same seed") {
    Generator gen(14);
    const Tensor z = randn({6, 7}, gen);
    manual_seed(15);
    const Tensor a = drop(z);
    manual_seed(15);
    check_same(a, dropout(z, 0.3, true));
  }
  SUBCASE("p = 0 keeps everything, p = 1 zeroes everything") {
    check_same(nn::Dropout(0.0)(x), x);
    CHECK(nn::Dropout(1.0)(x).to_vector<float>() == std::vector<float>(10000, 0.0f));
  }
  SUBCASE("inplace writes the result into the input and returns it") {
    const Tensor z = ones({50, 50});
    manual_seed(16);
    const Tensor expected = dropout(z, 0.3, true);
    manual_seed(16);
    const Tensor out = nn::Dropout({.p = 0.3, .inplace = true})(z);
    CHECK(out.shares_storage_with(z));
    check_same(z, expected);
  }
}

TEST_CASE("Dropout prints p and inplace as PyTorch does") {
  CHECK(to_string(*nn::Dropout()) == "Dropout(p=0.5, inplace=False)");
  CHECK(to_string(*nn::Dropout({.p = 0.2, .inplace = true})) == "Dropout(p=0.2, inplace=True)");
  CHECK(to_string(*nn::Dropout(0.0)) == "Dropout(p=0.0, inplace=False)");
}

TEST_CASE("Dropout refuses p outside [0, 1], naming the caller's line") {
  SUBCASE("negative") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Dropout(-0.1), at_line(line, "Dropout: p must be within [0, 1], got -0.1").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("above one") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Dropout({.p = 1.5}), at_line(line, "Dropout: p must be within [0, 1], got 1.5").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("NaN") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Dropout(std::numeric_limits<double>::quiet_NaN()),
                         at_line(line, "Dropout: p must be within [0, 1], got nan").c_str(), std::invalid_argument);
  }
}

// ---- Pooling ---------------------------------------------------------------------------------

TEST_CASE("MaxPool2d's forward is max_pool2d() with its options, the stride defaulting to the kernel size") {
  Generator gen(17);
  const Tensor x = randn({2, 3, 7, 7}, gen);
  SUBCASE("default stride") {
    nn::MaxPool2d pool(2);
    CHECK(pool->stride == nn::Size2(2));
    const Tensor y = pool(x);
    CHECK(y.shape() == Shape{2, 3, 3, 3});
    check_same(y, max_pool2d(x, {2, 2}, {2, 2}));
  }
  SUBCASE("stride and padding") {
    nn::MaxPool2d pool(3, {.stride = 2, .padding = 1});
    const Tensor y = pool(x);
    CHECK(y.shape() == Shape{2, 3, 4, 4});
    check_same(y, max_pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false));
  }
  SUBCASE("dilation") {
    nn::MaxPool2d pool(2, {.stride = 1, .dilation = 2});
    const Tensor y = pool(x);
    CHECK(y.shape() == Shape{2, 3, 5, 5});
    check_same(y, max_pool2d(x, {2, 2}, {1, 1}, {0, 0}, {2, 2}, false));
  }
  SUBCASE("ceil_mode keeps the partial window at the end") {
    const Tensor small = testing::iota({1, 1, 5, 5});
    const Tensor y = nn::MaxPool2d(2, {.ceil_mode = true})(small);
    testing::check_tensor(y, DType::float32, {1, 1, 3, 3}, {6, 8, 9, 16, 18, 19, 21, 23, 24});
    check_same(y, max_pool2d(small, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true));
    CHECK(nn::MaxPool2d(2)(small).shape() == Shape{1, 1, 2, 2});
  }
  SUBCASE("non-square options") {
    nn::MaxPool2d pool({3, 2}, {.stride = nn::Size2{1, 2}, .padding = {1, 0}});
    check_same(pool(x), max_pool2d(x, {3, 2}, {1, 2}, {1, 0}, {1, 1}, false));
  }
}

TEST_CASE("AvgPool2d's forward is avg_pool2d() with its options, count_include_pad changing the borders") {
  const Tensor x = testing::iota({1, 1, 4, 4});
  SUBCASE("default stride") {
    const Tensor y = nn::AvgPool2d(2)(x);
    testing::check_tensor(y, DType::float32, {1, 1, 2, 2}, {2.5, 4.5, 10.5, 12.5});
    check_same(y, avg_pool2d(x, {2, 2}));
  }
  SUBCASE("padding counted (the default)") {
    const Tensor y = nn::AvgPool2d(3, {.stride = 2, .padding = 1})(x);
    check_same(y, avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, true));
    CHECK(y.to_vector<double>()[0] == doctest::Approx((0 + 1 + 4 + 5) / 9.0));
  }
  SUBCASE("padding not counted") {
    const Tensor y = nn::AvgPool2d(3, {.stride = 2, .padding = 1, .count_include_pad = false})(x);
    check_same(y, avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, false));
    CHECK(y.to_vector<double>()[0] == doctest::Approx((0 + 1 + 4 + 5) / 4.0));
  }
  SUBCASE("ceil_mode") {
    const Tensor five = testing::iota({1, 1, 5, 5});
    const Tensor y = nn::AvgPool2d(2, {.ceil_mode = true})(five);
    CHECK(y.shape() == Shape{1, 1, 3, 3});
    check_same(y, avg_pool2d(five, {2, 2}, {2, 2}, {0, 0}, true, true));
  }
}

TEST_CASE("AdaptiveAvgPool2d's forward is adaptive_avg_pool2d() with its output size") {
  Generator gen(18);
  const Tensor x = randn({2, 3, 5, 7}, gen);
  const Tensor g = nn::AdaptiveAvgPool2d(1)(x);
  CHECK(g.shape() == Shape{2, 3, 1, 1});
  check_same(g, adaptive_avg_pool2d(x, {1, 1}));
  const Tensor m = x.mean({2, 3}, true);
  CHECK(testing::max_abs_diff(g, m) < 1e-6);
  const Tensor y = nn::AdaptiveAvgPool2d({2, 3})(x);
  CHECK(y.shape() == Shape{2, 3, 2, 3});
  check_same(y, adaptive_avg_pool2d(x, {2, 3}));
}

TEST_CASE("pooling layers print their options as written, as PyTorch does") {
  CHECK(to_string(*nn::MaxPool2d(3, {.stride = 2, .padding = 1})) ==
        "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)");
  CHECK(to_string(*nn::MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(to_string(*nn::MaxPool2d({3, 3}, {.ceil_mode = true})) ==
        "MaxPool2d(kernel_size=(3, 3), stride=(3, 3), padding=0, dilation=1, ceil_mode=True)");
  CHECK(to_string(*nn::MaxPool2d({3, 2}, {.stride = 1, .padding = {1, 0}, .dilation = {1, 2}})) ==
        "MaxPool2d(kernel_size=(3, 2), stride=1, padding=(1, 0), dilation=(1, 2), ceil_mode=False)");
  CHECK(to_string(*nn::AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  CHECK(to_string(*nn::AvgPool2d({2, 3}, {.stride = 1, .padding = {1, 0}, .count_include_pad = false})) ==
        "AvgPool2d(kernel_size=(2, 3), stride=1, padding=(1, 0))");
  CHECK(to_string(*nn::AdaptiveAvgPool2d({1, 1})) == "AdaptiveAvgPool2d(output_size=(1, 1))");
  CHECK(to_string(*nn::AdaptiveAvgPool2d(1)) == "AdaptiveAvgPool2d(output_size=1)");
  CHECK(to_string(*nn::AdaptiveAvgPool2d({7, 7})) == "AdaptiveAvgPool2d(output_size=(7, 7))");
  CHECK(nn::MaxPool2d(2)->named_parameters().empty());
}

TEST_CASE("a Size2 compares its sizes, not how they were written") {
  CHECK(nn::Size2(3) == nn::Size2(3, 3));
  CHECK_FALSE(nn::Size2(3).written_as_pair);
  CHECK(nn::Size2(3, 3).written_as_pair);
  CHECK(nn::Size2(3, 4) != nn::Size2(4, 3));
  CHECK(nn::Size2(3, 4).list() == IntList{3, 4});
}

TEST_CASE("pooling layers refuse bad windows, naming the caller's line") {
  SUBCASE("kernel size") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::MaxPool2d({2, 0}),
                         at_line(line, "MaxPool2d(kernel_size=(2, 0), stride=(2, 0)): sizes must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("stride") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::AvgPool2d(2, {.stride = nn::Size2{1, 0}}),
                         at_line(line, "AvgPool2d(kernel_size=2, stride=(1, 0)): sizes must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("padding above half the kernel") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::MaxPool2d(3, {.padding = 2}),
                         at_line(line, "MaxPool2d(kernel_size=3): padding 2 must be >= 0 and at most half the kernel "
                                       "size")
                             .c_str(),
                         std::invalid_argument);
  }
  SUBCASE("negative padding") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::AvgPool2d(2, {.padding = {0, -1}}),
                         at_line(line, "AvgPool2d(kernel_size=2): padding (0, -1) must be >= 0 and at most half the "
                                       "kernel size")
                             .c_str(),
                         std::invalid_argument);
  }
  SUBCASE("dilation") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::MaxPool2d(2, {.dilation = 0}),
                         at_line(line, "MaxPool2d(kernel_size=2): dilation 0 must be positive").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("adaptive output size") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::AdaptiveAvgPool2d({2, 0}),
                         at_line(line, "AdaptiveAvgPool2d: output_size (2, 0) must be positive").c_str(),
                         std::invalid_argument);
  }
}

TEST_CASE("pooling an input that is too small or of the wrong rank gives the op's error") {
  CHECK_THROWS_WITH_AS(nn::MaxPool2d(3)(zeros({1, 1, 2, 2})), doctest::Contains("max_pool2d(): "), OpError);
  CHECK_THROWS_WITH_AS(nn::AvgPool2d(2)(zeros({4})), doctest::Contains("avg_pool2d(): "), OpError);
  CHECK_THROWS_WITH_AS(nn::AdaptiveAvgPool2d(1)(zeros({2, 2})), doctest::Contains("adaptive_avg_pool2d(): "),
                       OpError);
}

// ---- Flatten, Identity, Upsample -------------------------------------------------------------

TEST_CASE("Flatten keeps the batch dim by default and is flatten() with its dims") {
  const Tensor x = testing::iota({2, 3, 4, 5});
  const Tensor y = nn::Flatten()(x);
  CHECK(y.shape() == Shape{2, 60});
  check_same(y, flatten(x, 1, -1));
  CHECK(nn::Flatten({.start_dim = 0})(x).shape() == Shape{120});
  CHECK(nn::Flatten({.start_dim = 1, .end_dim = 2})(x).shape() == Shape{2, 12, 5});
  CHECK(to_string(*nn::Flatten()) == "Flatten(start_dim=1, end_dim=-1)");
  CHECK(to_string(*nn::Flatten({.start_dim = 0, .end_dim = 2})) == "Flatten(start_dim=0, end_dim=2)");
  CHECK_THROWS_WITH_AS(nn::Flatten({.start_dim = 5})(x), doctest::Contains("flatten(): "), OpError);
}

TEST_CASE("Identity returns its input") {
  const Tensor x = tensor({1.f, 2.f});
  const Tensor y = nn::Identity()(x);
  CHECK(y.shares_storage_with(x));
  check_same(y, x);
  CHECK(to_string(*nn::Identity()) == "Identity()");
}

TEST_CASE("Upsample repeats pixels by scale_factor or to size, as upsample_nearest2d()") {
  const Tensor x = testing::iota({1, 1, 2, 2});
  SUBCASE("one scale factor") {
    const Tensor y = nn::Upsample({.scale_factor = std::vector{2.0}})(x);
    testing::check_tensor(y, DType::float32, {1, 1, 4, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3});
    check_same(y, upsample_nearest2d(x, std::nullopt, std::vector{2.0}));
  }
  SUBCASE("two scale factors") {
    const Tensor y = nn::Upsample({.scale_factor = std::vector{1.0, 3.0}})(x);
    testing::check_tensor(y, DType::float32, {1, 1, 2, 6}, {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3});
  }
  SUBCASE("a size") {
    const Tensor y = nn::Upsample({.size = IntList{3, 5}})(x);
    CHECK(y.shape() == Shape{1, 1, 3, 5});
    check_same(y, upsample_nearest2d(x, IntList{3, 5}));
  }
  SUBCASE("one size for both dims") {
    const Tensor y = nn::Upsample({.size = IntList{4}})(x);
    CHECK(y.shape() == Shape{1, 1, 4, 4});
    check_same(y, upsample_nearest2d(x, IntList{4, 4}));
  }
}

TEST_CASE("Upsample prints size and scale_factor as PyTorch does") {
  CHECK(to_string(*nn::Upsample({.scale_factor = std::vector{2.0}})) == "Upsample(scale_factor=2.0, mode='nearest')");
  CHECK(to_string(*nn::Upsample({.scale_factor = std::vector{2.0, 2.0}})) ==
        "Upsample(scale_factor=(2.0, 2.0), mode='nearest')");
  CHECK(to_string(*nn::Upsample({.scale_factor = std::vector{1.5, 3.0}})) ==
        "Upsample(scale_factor=(1.5, 3.0), mode='nearest')");
  CHECK(to_string(*nn::Upsample({.size = IntList{8, 8}})) == "Upsample(size=(8, 8), mode='nearest')");
  CHECK(to_string(*nn::Upsample({.size = IntList{8}})) == "Upsample(size=8, mode='nearest')");
}

TEST_CASE("Upsample refuses a missing or double target, bad sizes and other modes, naming the caller's line") {
  SUBCASE("neither size nor scale_factor") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample(nn::UpsampleOptions{}),
                         at_line(line, "Upsample: give exactly one of size and scale_factor, got neither").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("both") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample({.size = IntList{4, 4}, .scale_factor = std::vector{2.0}}),
                         at_line(line, "Upsample: give exactly one of size and scale_factor, got both").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("an unsupported mode") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample({.scale_factor = std::vector{2.0}, .mode = "bilinear"}),
                         at_line(line, "Upsample: mode 'bilinear' is not supported; only 'nearest' is").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("a zero size") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample({.size = IntList{0, 4}}),
                         at_line(line, "Upsample: size must be one or two positive sizes ([H, W]), got [0, 4]").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("three sizes") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample({.size = IntList{2, 2, 2}}),
                         at_line(line, "Upsample: size must be one or two positive sizes ([H, W]), got [2, 2, 2]").c_str(),
                         std::invalid_argument);
  }
  SUBCASE("a negative scale") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample({.scale_factor = std::vector{2.0, -1.0}}),
                         at_line(line, "Upsample: scale_factor must be one or two positive finite numbers ([sh, sw]), "
                                       "got [2, -1]")
                             .c_str(),
                         std::invalid_argument);
  }
  SUBCASE("no scale") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(nn::Upsample({.scale_factor = std::vector<double>{}}),
                         at_line(line, "Upsample: scale_factor must be one or two positive finite numbers ([sh, sw]), "
                                       "got []")
                             .c_str(),
                         std::invalid_argument);
  }
}

TEST_CASE("Upsample on an input that is not 3-D or 4-D gives upsample_nearest2d()'s error") {
  CHECK_THROWS_WITH_AS(nn::Upsample({.scale_factor = std::vector{2.0}})(zeros({4, 4})),
                       doctest::Contains("upsample_nearest2d(): "), OpError);
}

// ---- The type-erased entry point -------------------------------------------------------------

TEST_CASE("every layer takes one tensor named x through forward_values and returns forward's result") {
  struct Case {
    std::shared_ptr<Module> layer;
    Tensor input;
    std::string type_name;
  };
  Generator gen(19);
  const Tensor image = randn({2, 4, 6, 6}, gen);
  const Tensor rows = randn({3, 4}, gen);
  const std::vector<Case> cases = {
      {nn::Linear(4, 2).ptr(), rows, "Linear"},
      {nn::Conv2d(4, 2, 3).ptr(), image, "Conv2d"},
      {nn::BatchNorm2d(4).ptr(), image, "BatchNorm2d"},
      {nn::LayerNorm(4).ptr(), rows, "LayerNorm"},
      {nn::Embedding(5, 3).ptr(), tensor({0, 4, 2}), "Embedding"},
      {nn::ReLU().ptr(), rows, "ReLU"},
      {nn::ReLU6().ptr(), rows, "ReLU6"},
      {nn::GELU().ptr(), rows, "GELU"},
      {nn::SiLU().ptr(), rows, "SiLU"},
      {nn::Sigmoid().ptr(), rows, "Sigmoid"},
      {nn::Tanh().ptr(), rows, "Tanh"},
      {nn::Dropout(0.5).ptr(), rows, "Dropout"},
      {nn::MaxPool2d(2).ptr(), image, "MaxPool2d"},
      {nn::AvgPool2d(2).ptr(), image, "AvgPool2d"},
      {nn::AdaptiveAvgPool2d(1).ptr(), image, "AdaptiveAvgPool2d"},
      {nn::Flatten().ptr(), image, "Flatten"},
      {nn::Identity().ptr(), rows, "Identity"},
      {nn::Upsample({.scale_factor = std::vector{2.0}}).ptr(), image, "Upsample"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.type_name);
    Module& m = *c.layer;
    m.eval();  // deterministic Dropout and no BatchNorm update, so two calls agree
    CHECK(m.type_name() == c.type_name);
    CHECK(m.is_callable());
    CHECK(m.input_names() == std::vector<std::string>{"x"});
    const ForwardSignature* sig = m.forward_signature();
    REQUIRE(sig != nullptr);
    REQUIRE(sig->parameters.size() == 1);
    CHECK(sig->parameters[0].type == ParamType::tensor);
    CHECK(sig->num_required == 1);
    CHECK(sig->result == ParamType::tensor);
    CHECK(sig->result_type_name == "Tensor");
    const Value boxed = m.forward_values({c.input});
    REQUIRE(boxed.is_tensor());
    const Value called = m.call({c.input});
    REQUIRE(called.is_tensor());
    check_same(boxed.to_tensor(), called.to_tensor());
    CHECK_THROWS_WITH_AS(m.forward_values({Value(std::int64_t{3})}),
                         fmt::format("{}.forward(): argument 'x' (position 1) must be Tensor, got int", c.type_name)
                             .c_str(),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(m.forward_values({c.input, c.input}),
                         fmt::format("{}.forward() takes 1 argument (x), got 2", c.type_name).c_str(),
                         std::invalid_argument);
  }
}

TEST_CASE("forward_values on a layer gives the typed forward's result, bit for bit") {
  Generator gen(20);
  const Tensor x = randn({2, 3, 4, 4}, gen);
  nn::Conv2d conv(3, 5, 3, {.padding = 1});
  check_same(conv->forward_values({x}).to_tensor(), conv(x));
  nn::BatchNorm2d bn(3);
  bn->eval();
  check_same(bn->forward_values({x}).to_tensor(), bn(x));
}

// ---- Layers chained in a Sequential ----------------------------------------------------------

TEST_CASE("a Sequential of layers runs them in order and prints them as PyTorch does") {
  manual_seed(21);
  nn::Sequential seq(nn::Conv2d(3, 4, 3, {.padding = 1, .bias = false}), nn::BatchNorm2d(4), nn::ReLU({.inplace = true}),
                     nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.1), nn::Linear(64, 10));
  CHECK(to_string(*seq) ==
        "Sequential(\n"
        "  (0): Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)\n"
        "  (1): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
        "  (2): ReLU(inplace=True)\n"
        "  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
        "  (4): Flatten(start_dim=1, end_dim=-1)\n"
        "  (5): Dropout(p=0.1, inplace=False)\n"
        "  (6): Linear(in_features=64, out_features=10, bias=True)\n"
        ")");
  std::vector<std::string> keys;
  for (const auto& [key, value] : seq->state_dict()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"0.weight", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                                         "1.num_batches_tracked", "6.weight", "6.bias"});

  Generator gen(22);
  const Tensor x = randn({2, 3, 8, 8}, gen);
  seq->eval();
  CHECK_FALSE(seq->at<nn::BatchNorm2dImpl>(1).is_training());
  CHECK_FALSE(seq->at<nn::DropoutImpl>(5).is_training());
  const Tensor y = seq(x);
  CHECK(y.shape() == Shape{2, 10});
  // The same chain called by hand.
  Tensor h = seq->at<nn::Conv2dImpl>(0).forward(x);
  h = seq->at<nn::BatchNorm2dImpl>(1).forward(h);
  h = relu(h);
  h = max_pool2d(h, {2, 2});
  h = flatten(h, 1);
  check_same(y, seq->at<nn::LinearImpl>(6).forward(h));
  CHECK(seq->at<nn::BatchNorm2dImpl>(1).num_batches_tracked.item<std::int64_t>() == 0);

  SUBCASE("in training mode the BatchNorm inside counts the batch") {
    seq->train();
    (void)seq(x);
    CHECK(seq->at<nn::BatchNorm2dImpl>(1).num_batches_tracked.item<std::int64_t>() == 1);
  }
}

TEST_CASE("a layer's state dict loads into a layer of the same configuration, which then computes the same") {
  Generator gen(23);
  manual_seed(24);
  nn::Conv2d a(2, 3, 3);
  nn::BatchNorm2d bn_a(3);
  manual_seed(25);
  nn::Conv2d b(2, 3, 3);
  nn::BatchNorm2d bn_b(3);
  const Tensor x = randn({2, 2, 5, 5}, gen);
  (void)bn_a(a(x));  // moves bn_a's running statistics
  CHECK(a(x).to_vector<float>() != b(x).to_vector<float>());
  b->load_state_dict(a->state_dict());
  bn_b->load_state_dict(bn_a->state_dict());
  check_same(b(x), a(x));
  check_same(bn_b->running_mean, bn_a->running_mean);
  CHECK(bn_b->num_batches_tracked.item<std::int64_t>() == 1);
  bn_a->eval();
  bn_b->eval();
  check_same(bn_b(b(x)), bn_a(a(x)));
}

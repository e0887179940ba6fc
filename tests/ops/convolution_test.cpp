#include "support/checks.hpp"

using namespace symtrace;
using testing::iota;
using symtrace::testing::check_tensor;

namespace {

struct Config {
  IntList input, weight;
  bool bias;
  IntList stride, padding, dilation;
  std::int64_t groups;
};

// The definition of conv2d, written as directly as possible: one loop nest per output element.
Tensor naive_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Config& c) {
  const auto x = input.to_vector<float>();
  const auto w = weight.to_vector<float>();
  const auto b = bias.defined() ? bias.to_vector<float>() : std::vector<float>();
  const std::int64_t n = c.input[0], ch = c.input[1], h = c.input[2], wd = c.input[3];
  const std::int64_t o = c.weight[0], cg = c.weight[1], kh = c.weight[2], kw = c.weight[3];
  const std::int64_t og = o / c.groups;
  const std::int64_t oh = (h + 2 * c.padding[0] - c.dilation[0] * (kh - 1) - 1) / c.stride[0] + 1;
  const std::int64_t ow = (wd + 2 * c.padding[1] - c.dilation[1] * (kw - 1) - 1) / c.stride[1] + 1;
  std::vector<float> y;
  for (std::int64_t bi = 0; bi < n; ++bi)
    for (std::int64_t oc = 0; oc < o; ++oc)
      for (std::int64_t oy = 0; oy < oh; ++oy)
        for (std::int64_t ox = 0; ox < ow; ++ox) {
          double sum = b.empty() ? 0.0 : b[static_cast<std::size_t>(oc)];
          const std::int64_t g = oc / og;
          for (std::int64_t ic = 0; ic < cg; ++ic)
            for (std::int64_t i = 0; i < kh; ++i)
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t iy = oy * c.stride[0] - c.padding[0] + i * c.dilation[0];
                const std::int64_t ix = ox * c.stride[1] - c.padding[1] + j * c.dilation[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                const std::int64_t xc = g * cg + ic;
                sum += static_cast<double>(x[static_cast<std::size_t>(((bi * ch + xc) * h + iy) * wd + ix)]) *
                       w[static_cast<std::size_t>(((oc * cg + ic) * kh + i) * kw + j)];
              }
          y.push_back(static_cast<float>(sum));
        }
  return tensor(y, {n, o, oh, ow});
}

// The definition of conv_transpose2d, written as directly as possible: every input pixel adds
// its kernel-weighted value to the output positions the forward convolution would have read it for.
Tensor naive_conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Config& c,
                              const IntList& output_padding) {
  const auto x = input.to_vector<float>();
  const auto w = weight.to_vector<float>();
  const auto b = bias.defined() ? bias.to_vector<float>() : std::vector<float>();
  const std::int64_t n = c.input[0], ch = c.input[1], h = c.input[2], wd = c.input[3];
  const std::int64_t og = c.weight[1], kh = c.weight[2], kw = c.weight[3];
  const std::int64_t cg = ch / c.groups, o = og * c.groups;
  const std::int64_t oh = (h - 1) * c.stride[0] - 2 * c.padding[0] + c.dilation[0] * (kh - 1) + output_padding[0] + 1;
  const std::int64_t ow = (wd - 1) * c.stride[1] - 2 * c.padding[1] + c.dilation[1] * (kw - 1) + output_padding[1] + 1;
  std::vector<double> y(static_cast<std::size_t>(n * o * oh * ow));
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t bi = 0; bi < n; ++bi)
    for (std::int64_t oc = 0; oc < o; ++oc)
      for (std::int64_t i = 0; i < oh * ow; ++i) y[at((bi * o + oc) * oh * ow + i)] = b.empty() ? 0.0 : b[at(oc)];
  for (std::int64_t bi = 0; bi < n; ++bi)
    for (std::int64_t ic = 0; ic < ch; ++ic)
      for (std::int64_t iy = 0; iy < h; ++iy)
        for (std::int64_t ix = 0; ix < wd; ++ix)
          for (std::int64_t j = 0; j < og; ++j)
            for (std::int64_t ky = 0; ky < kh; ++ky)
              for (std::int64_t kx = 0; kx < kw; ++kx) {
                const std::int64_t oy = iy * c.stride[0] - c.padding[0] + ky * c.dilation[0];
                const std::int64_t ox = ix * c.stride[1] - c.padding[1] + kx * c.dilation[1];
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const std::int64_t oc = ic / cg * og + j;
                y[at(((bi * o + oc) * oh + oy) * ow + ox)] +=
                    static_cast<double>(x[at(((bi * ch + ic) * h + iy) * wd + ix)]) *
                    w[at(((ic * og + j) * kh + ky) * kw + kx)];
              }
  return tensor(std::vector<float>(y.begin(), y.end()), {n, o, oh, ow});
}

}  // namespace

TEST_CASE("conv2d of a 4x4 arange with a 3x3 kernel of ones sums each window") {
  const Tensor y = conv2d(iota({1, 1, 4, 4}), ones({1, 1, 3, 3}));
  check_tensor(y, DType::float32, {1, 1, 2, 2}, {45, 54, 81, 90});
}

TEST_CASE("conv2d with stride and padding reads zeros outside the input") {
  const Tensor y = conv2d(iota({1, 1, 4, 4}), ones({1, 1, 3, 3}), {}, {2}, {1});
  check_tensor(y, DType::float32, {1, 1, 2, 2}, {10, 24, 51, 90});
}

TEST_CASE("conv2d with dilation spreads the kernel taps apart") {
  const Tensor w = tensor({1.f, 2.f, 3.f, 4.f}, {1, 1, 2, 2});
  const Tensor y = conv2d(iota({1, 1, 4, 4}), w, {}, {1, 1}, {0, 0}, {2, 2});
  check_tensor(y, DType::float32, {1, 1, 2, 2}, {68, 78, 108, 118});
}

TEST_CASE("conv2d with different strides and paddings per spatial dim") {
  // 1x3 kernel of ones over a 3x4 arange; height stride 2 without padding, width stride 1 with padding 1.
  const Tensor y = conv2d(iota({1, 1, 3, 4}), ones({1, 1, 1, 3}), {}, {2, 1}, {0, 1});
  check_tensor(y, DType::float32, {1, 1, 2, 4}, {1, 3, 6, 5, 17, 27, 30, 21});
}

TEST_CASE("conv2d adds the bias to each output channel") {
  const Tensor w = tensor({2.f, -1.f}, {2, 1, 1, 1});
  const Tensor y = conv2d(iota({1, 1, 2, 2}), w, tensor({10.f, 20.f}));
  check_tensor(y, DType::float32, {1, 2, 2, 2}, {10, 12, 14, 16, 20, 19, 18, 17});
}

TEST_CASE("conv2d with two groups convolves each half of the channels separately") {
  // Channels [0, 1], [2, 3], [4, 5], [6, 7]; group 0 adds channels 0 and 1, group 1 subtracts 3 from 2.
  const Tensor w = tensor({1.f, 1.f, 1.f, -1.f}, {2, 2, 1, 1});
  const Tensor y = conv2d(iota({1, 4, 1, 2}), w, {}, {1}, {0}, {1}, 2);
  check_tensor(y, DType::float32, {1, 2, 1, 2}, {2, 4, -2, -2});
}

TEST_CASE("depthwise conv2d applies one kernel per channel") {
  // Channel 0 (0..8) is summed over 2x2 windows; channel 1 (9..17) picks each window's bottom right.
  const Tensor w = tensor({1.f, 1.f, 1.f, 1.f, 0.f, 0.f, 0.f, 1.f}, {2, 1, 2, 2});
  const Tensor y = conv2d(iota({1, 2, 3, 3}), w, {}, {1}, {0}, {1}, 2);
  check_tensor(y, DType::float32, {1, 2, 2, 2}, {8, 12, 20, 24, 13, 14, 16, 17});
}

TEST_CASE("conv2d accepts an unbatched [C, H, W] input and returns a 3-D result") {
  const Tensor y = conv2d(iota({1, 4, 4}), ones({1, 1, 3, 3}), tensor({1.f}));
  check_tensor(y, DType::float32, {1, 2, 2}, {46, 55, 82, 91});
}

TEST_CASE("conv2d reads a non-contiguous (transposed) input") {
  const Tensor base = iota({1, 1, 4, 4});
  const Tensor transposed = Tensor::view_of(base, Shape{1, 1, 4, 4}, {16, 16, 1, 4}, 0);
  REQUIRE_FALSE(transposed.is_contiguous());
  const Tensor y = conv2d(transposed, ones({1, 1, 3, 3}));
  check_tensor(y, DType::float32, {1, 1, 2, 2}, {45, 81, 54, 90});
}

TEST_CASE("conv2d handles size-1 spatial dims") {
  SUBCASE("a 1x1 image and a 1x1 kernel") {
    check_tensor(conv2d(full({1, 1, 1, 1}, 3.f), full({1, 1, 1, 1}, 2.f), tensor({1.f})), DType::float32,
                 {1, 1, 1, 1}, {7});
  }
  SUBCASE("a single row") {
    check_tensor(conv2d(iota({1, 1, 1, 4}), ones({1, 1, 1, 2})), DType::float32, {1, 1, 1, 3}, {1, 3, 5});
  }
}

TEST_CASE("conv2d of an empty batch is an empty batch of the output shape") {
  const Tensor y = conv2d(zeros({0, 3, 5, 5}), ones({4, 3, 3, 3}), zeros({4}));
  check_tensor(y, DType::float32, {0, 4, 3, 3}, {});
}

TEST_CASE("conv2d matches a direct loop on random inputs") {
  Generator gen(1234);
  const std::vector<Config> configs = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 3, 9, 8}, {5, 3, 3, 2}, false, {2, 3}, {1, 0}, {1, 1}, 1},
      {{1, 2, 9, 9}, {3, 2, 3, 3}, true, {1, 2}, {2, 1}, {2, 3}, 1},
      {{2, 4, 6, 5}, {6, 2, 3, 1}, true, {1, 1}, {0, 1}, {1, 1}, 2},
      {{1, 4, 8, 8}, {4, 1, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 4},   // depthwise
      {{1, 3, 5, 7}, {6, 1, 2, 3}, false, {1, 2}, {1, 1}, {2, 1}, 3},  // depthwise, two kernels per channel
      {{3, 8, 4, 4}, {16, 8, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1},  // 1x1: no im2col
      {{1, 8, 7, 7}, {4, 8, 1, 1}, false, {2, 2}, {0, 0}, {1, 1}, 1},  // 1x1 strided
      {{1, 3, 12, 12}, {8, 3, 7, 7}, true, {2, 2}, {3, 3}, {1, 1}, 1},
  };
  for (const Config& c : configs) {
    const std::string config = fmt::format("input {} weight {} stride {} padding {} dilation {} groups {}", c.input,
                                           c.weight, c.stride, c.padding, c.dilation, c.groups);
    INFO(config);
    const Tensor x = randn(c.input, gen);
    const Tensor w = randn(c.weight, gen);
    const Tensor b = c.bias ? randn({c.weight[0]}, gen) : Tensor();
    const Tensor y = conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
    const Tensor expected = naive_conv2d(x, w, b, c);
    REQUIRE(y.shape() == expected.shape());
    CHECK(testing::max_abs_diff(y, expected) < 1e-4);
  }
}

TEST_CASE("conv2d meta agrees with the kernel over random shapes and configurations") {
  Generator gen(1234);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  for (int iter = 0; iter < 50; ++iter) {
    const std::int64_t cg = pick(1, 3), og = pick(1, 2);
    const std::int64_t groups = pick(0, 2) == 0 ? 1 : pick(1, 3);
    IntList k{pick(1, 3), pick(1, 3)}, s{pick(1, 2), pick(1, 2)}, p{pick(0, 2), pick(0, 2)}, d{pick(1, 2), pick(1, 2)};
    IntList spatial;
    for (std::size_t i = 0; i < 2; ++i)
      spatial.push_back(std::max<std::int64_t>(1, d[i] * (k[i] - 1) + 1 - 2 * p[i] + pick(0, 3)));
    IntList in{groups * cg, spatial[0], spatial[1]};
    if (pick(0, 3) != 0) in.insert(in.begin(), pick(0, 2));
    const Tensor x = randn(in, gen);
    const Tensor w = randn({groups * og, cg, k[0], k[1]}, gen);
    const Value bias = pick(0, 1) ? Value(randn({groups * og}, gen)) : Value();
    const auto pair = [&](const IntList& v) { return v[0] == v[1] && pick(0, 1) ? IntList{v[0]} : v; };
    testing::check_meta_agrees("conv2d", {x, w, bias},
                               {{"stride", pair(s)}, {"padding", pair(p)}, {"dilation", pair(d)}, {"groups", groups}},
                               gen);
  }
}

TEST_CASE("conv2d with unknown spatial dims gives unknown output dims and keeps the known ones") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 3, Dim::unknown(), 8}},
                                    SymbolicRef{1, 1});
  const Tensor w = ones({4, 3, 3, 3});
  const OutputMeta meta = infer_meta(OpRegistry::instance().get("conv2d"),
                                     ValueList{x, w, Value(), IntList{1, 2}, IntList{1}, IntList{1}, 1});
  CHECK(meta.outputs[0].shape == Shape{Dim::unknown(), 4, Dim::unknown(), 4});
}

TEST_CASE("conv2d refuses an input whose channels do not match the weight") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return conv2d(zeros({1, 4, 5, 5}), zeros({2, 3, 3, 3})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("input of shape [1, 4, 5, 5] has 4 channels, but weight of shape "
                                                "[2, 3, 3, 3] with groups=1 expects 3"),
                       OpError);
}

TEST_CASE("conv2d refuses groups that do not divide the channels") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return conv2d(zeros({1, 4, 5, 5}), zeros({3, 2, 3, 3}), {}, {1}, {0}, {1}, 2); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("weight of shape [3, 2, 3, 3] has 3 output channels, which groups=2 "
                                                "does not divide"),
                       OpError);
}

TEST_CASE("conv2d refuses a kernel larger than the padded input") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return conv2d(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the kernel of size 3x3 does not fit the padded input of size 2x2 "
                                                "(input of shape [1, 1, 2, 2], padding [0, 0])"),
                       OpError);
  static constexpr int dilated_line = __LINE__ + 1;
  const auto dilated = [] { return conv2d(zeros({1, 1, 4, 4}), zeros({1, 1, 2, 2}), {}, {1}, {0}, {4}); };
  CHECK_THROWS_WITH_AS(dilated(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", dilated_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(dilated(), doctest::Contains("the kernel of size 2x2 (5x5 with dilation [4, 4]) does not fit "
                                                    "the padded input of size 4x4"),
                       OpError);
}

TEST_CASE("conv2d refuses a non-positive stride and a malformed pair") {
  static constexpr int line = __LINE__ + 1;
  const auto zero_stride = [] { return conv2d(zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3}), {}, {1, 0}); };
  CHECK_THROWS_WITH_AS(zero_stride(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(zero_stride(), doctest::Contains("stride must be positive, got [1, 0]"), OpError);
  static constexpr int pair_line = __LINE__ + 1;
  const auto three = [] { return conv2d(zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3}), {}, {1}, {1, 1, 1}); };
  CHECK_THROWS_WITH_AS(three(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", pair_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(three(), doctest::Contains("argument 'padding' must hold one value (for both spatial dims) or "
                                                  "two (height, width), got [1, 1, 1]"),
                       OpError);
}

TEST_CASE("conv2d refuses a bias that is not one value per output channel") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return conv2d(zeros({1, 1, 4, 4}), zeros({2, 1, 3, 3}), zeros({3})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("bias of shape [3] does not match weight of shape [2, 1, 3, 3]: "
                                                "expected shape [2]"),
                       OpError);
}

TEST_CASE("conv2d refuses integer inputs and inputs of the wrong rank") {
  static constexpr int line = __LINE__ + 1;
  const auto integer = [] { return conv2d(zeros({1, 1, 4, 4}, DType::int64), zeros({1, 1, 3, 3})); };
  CHECK_THROWS_WITH_AS(integer(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(integer(), doctest::Contains("argument 'input' must be a floating-point tensor, got int64 of "
                                                    "shape [1, 1, 4, 4]"),
                       OpError);
  static constexpr int rank_line = __LINE__ + 1;
  const auto rank2 = [] { return conv2d(zeros({4, 4}), zeros({1, 1, 3, 3})); };
  CHECK_THROWS_WITH_AS(rank2(), doctest::Contains(fmt::format("_test.cpp:{}: conv2d(): ", rank_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(rank2(), doctest::Contains("argument 'input' must have 4 or 3 dims, got shape [4, 4]"), OpError);
}

// ---- conv_transpose2d ----------------------------------------------------------------------
// Expected values: PyTorch 1.13's torch.nn.functional.conv_transpose2d (CPU).

TEST_CASE("conv_transpose2d spreads each input pixel over a kernel-sized patch of the output") {
  // [[0, 1], [2, 3]] through a 2x2 kernel of ones: each output pixel sums the inputs whose patch covers it.
  const Tensor y = conv_transpose2d(iota({1, 1, 2, 2}), ones({1, 1, 2, 2}));
  check_tensor(y, DType::float32, {1, 1, 3, 3}, {0, 1, 1, 2, 6, 4, 2, 5, 3});
}

TEST_CASE("conv_transpose2d with stride 2, padding, output_padding and a bias") {
  const Tensor x = iota({1, 2, 2, 3}) * 0.25 - 1.0;
  const Tensor w = iota({2, 3, 2, 2}) * 0.1 - 0.5;  // [in_channels, out_channels, kH, kW]
  const Tensor y = conv_transpose2d(x, w, tensor({0.5f, -1.f, 2.f}), {2}, {1}, {1});
  check_tensor(y, DType::float32, {1, 3, 3, 5},
               {1.2, 1.4, 1.4, 1.55, 1.6, 1.6, 1.55, 1.7, 1.6, 1.8, 1.8, 1.85, 2, 2, 2.2,
                -0.5, -0.1, -0.1, 0.25, 0.3, 0.5, 0.65, 0.8, 0.9, 1.1, 0.7, 0.95, 1.1, 1.3, 1.5,
                2.3, 2.9, 2.9, 3.45, 3.5, 3.9, 4.25, 4.4, 4.7, 4.9, 4.1, 4.55, 4.7, 5.1, 5.3});
}

TEST_CASE("conv_transpose2d with groups, dilation and different strides per spatial dim") {
  const Tensor x = iota({1, 4, 2, 2}) * 0.5 - 2.0;
  const Tensor w = iota({4, 1, 3, 3}) * 0.05 - 0.7;  // two groups of two input channels, one output channel each
  const Tensor y = conv_transpose2d(x, w, {}, {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
  check_tensor(y, DType::float32, {1, 2, 4, 6},
               {1.1, 0.775, 1, 0.725, 0.9, 0.675, 1.25, 0.6, 1.15, 0.6, 1.05, 0.6,
                0.45, 0.125, 0.45, 0.175, 0.45, 0.225, 0.45, 0.275, 0.45, 0.325, 0.45, 0.375,
                3.9, 4.475, 4.2, 4.825, 4.5, 5.175, 8.65, 9.8, 9.35, 10.6, 10.05, 11.4,
                5.05, 5.625, 5.45, 6.075, 5.85, 6.525, 6.25, 6.975, 6.65, 7.425, 7.05, 7.875});
}

TEST_CASE("conv_transpose2d takes an unbatched input and an empty batch") {
  check_tensor(conv_transpose2d(zeros({3, 5, 7}), zeros({3, 2, 3, 3}), {}, {2}), DType::float32, {2, 11, 15},
               std::vector<double>(2 * 11 * 15, 0.0));
  check_tensor(conv_transpose2d(zeros({0, 3, 5, 7}), zeros({3, 2, 3, 3}), zeros({2}), {2}), DType::float32,
               {0, 2, 11, 15}, {});
}

TEST_CASE("conv_transpose2d matches a direct loop on random inputs") {
  Generator gen(1234);
  struct Case {
    Config c;
    IntList output_padding;
  };
  const std::vector<Case> cases = {
      {{{2, 3, 4, 5}, {3, 4, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}, {0, 0}},
      {{{1, 4, 3, 3}, {4, 2, 3, 2}, false, {2, 3}, {1, 0}, {1, 1}, 1}, {1, 2}},
      {{{1, 4, 5, 4}, {4, 3, 2, 3}, true, {2, 1}, {0, 1}, {2, 3}, 2}, {1, 2}},  // output_padding < dilation
      {{{2, 6, 3, 4}, {6, 1, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 6}, {1, 1}},  // depthwise
      {{{1, 8, 3, 3}, {8, 5, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}, {0, 0}},  // 1x1
  };
  for (const auto& [c, op] : cases) {
    const std::string config = fmt::format("input {} weight {} stride {} padding {} output_padding {} dilation {} "
                                           "groups {}",
                                           c.input, c.weight, c.stride, c.padding, op, c.dilation,
                                           c.groups);
    INFO(config);
    const Tensor x = randn(c.input, gen);
    const Tensor w = randn(c.weight, gen);
    const Tensor b = c.bias ? randn({c.weight[1] * c.groups}, gen) : Tensor();
    const Tensor y = conv_transpose2d(x, w, b, c.stride, c.padding, op, c.groups, c.dilation);
    const Tensor expected = naive_conv_transpose2d(x, w, b, c, op);
    REQUIRE(y.shape() == expected.shape());
    CHECK(testing::max_abs_diff(y, expected) < 1e-4);
  }
}

TEST_CASE("conv_transpose2d meta agrees with the kernel and keeps unknown dims unknown") {
  Generator gen(1234);
  for (int iter = 0; iter < 50; ++iter) {
    const std::int64_t cg = testing::uniform_int(gen, 1, 3), og = testing::uniform_int(gen, 1, 2);
    const std::int64_t groups = testing::uniform_int(gen, 1, 2);
    IntList s, d, op;
    for (int i = 0; i < 2; ++i) {
      s.push_back(testing::uniform_int(gen, 1, 3));
      d.push_back(testing::uniform_int(gen, 1, 2));
      op.push_back(testing::uniform_int(gen, 0, std::max(s.back(), d.back()) - 1));
    }
    IntList in{groups * cg, testing::uniform_int(gen, 1, 4), testing::uniform_int(gen, 1, 4)};
    if (gen.bits() % 4 != 0) in.insert(in.begin(), testing::uniform_int(gen, 0, 2));
    const Tensor x = randn(in, gen);
    const Tensor w = randn({groups * cg, og, testing::uniform_int(gen, 1, 3), testing::uniform_int(gen, 1, 3)}, gen);
    const Value bias = gen.bits() & 1 ? Value(randn({groups * og}, gen)) : Value();
    testing::check_meta_agrees("conv_transpose2d", {x, w, bias},
                               {{"stride", s}, {"output_padding", op}, {"groups", groups}, {"dilation", d}}, gen);
  }
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 4, Dim::unknown(), 5}},
                                    SymbolicRef{1, 1});
  const OutputMeta meta = infer_meta(OpRegistry::instance().get("conv_transpose2d"),
                                     ValueList{x, ones({4, 3, 3, 3}), Value(), IntList{2}, IntList{1}, IntList{1}, 2,
                                               IntList{1}});
  CHECK(meta.outputs[0].shape == Shape{Dim::unknown(), 6, Dim::unknown(), 10});
}

TEST_CASE("conv_transpose2d refuses an output_padding not below the stride, and mismatched channels") {
  static constexpr int line = __LINE__ + 1;
  const auto padded = [] { return conv_transpose2d(zeros({1, 2, 3, 3}), zeros({2, 3, 2, 2}), {}, {1}, {0}, {1}); };
  CHECK_THROWS_WITH_AS(padded(), doctest::Contains(fmt::format("_test.cpp:{}: conv_transpose2d(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(padded(), doctest::Contains("output_padding [1, 1] must be non-negative and smaller than the "
                                                   "stride [1, 1] or the dilation [1, 1] in each dim"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv_transpose2d(zeros({1, 4, 3, 3}), zeros({2, 3, 2, 2})),
                       doctest::Contains("input of shape [1, 4, 3, 3] has 4 channels, but weight of shape [2, 3, 2, 2] "
                                         "expects 2 (weight.shape[0]"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv_transpose2d(zeros({1, 3, 3, 3}), zeros({3, 3, 2, 2}), {}, {1}, {0}, {0}, 2),
                       doctest::Contains("weight of shape [3, 3, 2, 2] has 3 input channels, which groups=2 does not "
                                         "divide"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv_transpose2d(zeros({1, 2, 1, 1}), zeros({2, 1, 1, 1}), {}, {1}, {1}),
                       doctest::Contains("the output would have size -1 in spatial dim 0"), OpError);
  CHECK_THROWS_WITH_AS(conv_transpose2d(zeros({1, 2, 3, 3}), zeros({2, 3, 2, 2}), zeros({2})),
                       doctest::Contains("bias of shape [2] does not match weight of shape [2, 3, 2, 2] with groups=1: "
                                         "expected shape [3]"),
                       OpError);
}

// ---- conv1d, conv3d and their transposes ------------------------------------------------------
// Their values are compared with LibTorch's in tests/torchscript/native_ops_test.cpp.

TEST_CASE("conv1d, conv3d and their transposes give PyTorch's output shapes, batched and unbatched") {
  CHECK(conv1d(zeros({2, 3, 10}), zeros({4, 3, 3}), {}, {2}, {1}, {2}).shape() == Shape{2, 4, 4});
  CHECK(conv1d(zeros({3, 10}), zeros({4, 3, 3})).shape() == Shape{4, 8});
  CHECK(conv3d(zeros({1, 2, 4, 5, 6}), zeros({4, 1, 3, 3, 3}), zeros({4}), {1, 2, 3}, {1}, {1}, 2).shape() ==
        Shape{1, 4, 4, 3, 2});
  CHECK(conv3d(zeros({2, 4, 5, 6}), zeros({1, 2, 1, 1, 1})).shape() == Shape{1, 4, 5, 6});
  CHECK(conv_transpose1d(zeros({2, 3, 5}), zeros({3, 2, 3}), {}, {2}, {1}, {1}).shape() == Shape{2, 2, 10});
  CHECK(conv_transpose3d(zeros({2, 4, 2, 3, 4}), zeros({4, 1, 2, 2, 2}), {}, {2}, {0}, {0}, 2).shape() ==
        Shape{2, 2, 4, 6, 8});
  CHECK(conv_transpose3d(zeros({4, 2, 3, 4}), zeros({4, 1, 2, 2, 2}), {}, {1, 2, 1}).shape() == Shape{1, 3, 6, 5});
}

TEST_CASE("conv1d, conv3d and their transposes: meta agrees with the kernel over random shapes and configurations") {
  Generator gen(99);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) { return testing::uniform_int(gen, lo, hi); };
  for (const std::size_t nd : {std::size_t{1}, std::size_t{3}}) {
    for (const bool transposed : {false, true}) {
      const std::string op = fmt::format("conv{}{}d", transposed ? "_transpose" : "", nd);
      CAPTURE(op);
      for (int iter = 0; iter < 20; ++iter) {
        const std::int64_t cg = pick(1, 3), og = pick(1, 2);
        const std::int64_t groups = pick(0, 2) == 0 ? 1 : pick(1, 3);
        IntList k, s, p, d, out_pad, spatial;
        for (std::size_t i = 0; i < nd; ++i) {
          k.push_back(pick(1, 3));
          s.push_back(pick(1, 2));
          p.push_back(pick(0, 1));
          d.push_back(pick(1, 2));
          out_pad.push_back(pick(0, std::max(s[i], d[i]) - 1));
          spatial.push_back(std::max<std::int64_t>(1, d[i] * (k[i] - 1) + 1 - 2 * p[i] + pick(0, 3)));
          // A transposed convolution's output must not be empty either.
          if (transposed && (spatial[i] - 1) * s[i] + d[i] * (k[i] - 1) + out_pad[i] + 1 - 2 * p[i] <= 0) p[i] = 0;
        }
        IntList in{groups * cg};
        in.insert(in.end(), spatial.begin(), spatial.end());
        if (pick(0, 3) != 0) in.insert(in.begin(), pick(0, 2));
        IntList w = transposed ? IntList{groups * cg, og} : IntList{groups * og, cg};
        w.insert(w.end(), k.begin(), k.end());
        const Value bias = pick(0, 1) ? Value(randn({groups * og}, gen)) : Value();
        KeywordValues kwargs = {{"stride", s}, {"padding", p}, {"dilation", d}, {"groups", groups}};
        if (transposed) kwargs.emplace_back("output_padding", out_pad);
        testing::check_meta_agrees(op, {randn(in, gen), randn(w, gen), bias}, kwargs, gen);
      }
    }
  }
}

TEST_CASE("conv1d keeps a named batch dim and leaves an unknown length unknown") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim("N"), 3, Dim::unknown()}}, SymbolicRef{1, 1});
  const OutputMeta meta = infer_meta(OpRegistry::instance().get("conv1d"),
                                     ValueList{x, ones({4, 3, 3}), Value(), IntList{2}, IntList{1}, IntList{1}, 1});
  CHECK(meta.outputs[0].shape == Shape{Dim("N"), 4, Dim::unknown()});
}

TEST_CASE("conv1d and conv3d refuse inputs of the wrong rank, malformed triples and kernels that do not fit") {
  static constexpr int line = __LINE__ + 1;
  const auto rank = [] { return conv1d(zeros({1, 1, 4, 4}), zeros({1, 1, 3})); };
  CHECK_THROWS_WITH_AS(rank(), doctest::Contains(fmt::format("_test.cpp:{}: conv1d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(rank(), doctest::Contains("argument 'input' must have 3 or 2 dims, got shape [1, 1, 4, 4]"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv3d(zeros({1, 1, 4, 4, 4}), zeros({1, 1, 3, 3})),
                       doctest::Contains("argument 'weight' must have 5 dims, got shape [1, 1, 3, 3]"), OpError);
  static constexpr int triple_line = __LINE__ + 1;
  const auto pair = [] { return conv3d(zeros({1, 1, 4, 4, 4}), zeros({1, 1, 3, 3, 3}), {}, {1, 1}); };
  CHECK_THROWS_WITH_AS(pair(), doctest::Contains(fmt::format("_test.cpp:{}: conv3d(): ", triple_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(pair(), doctest::Contains("argument 'stride' must hold one value (for all three spatial dims) "
                                                 "or three (depth, height, width), got [1, 1]"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv1d(zeros({1, 1, 4}), zeros({1, 1, 3}), {}, {1}, {1, 1}),
                       doctest::Contains("argument 'padding' must hold one value, got [1, 1]"), OpError);
  CHECK_THROWS_WITH_AS(conv1d(zeros({1, 1, 4}), zeros({1, 1, 3}), {}, {1}, {0}, {2}),
                       doctest::Contains("the kernel of size 3 (5 with dilation [2]) does not fit the padded input of "
                                         "size 4 (input of shape [1, 1, 4], padding [0]); use a smaller kernel or "
                                         "dilation, or more padding"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv3d(zeros({1, 1, 4, 2, 4}), zeros({1, 1, 3, 3, 3}), {}, {1}, {0, 0, 1}),
                       doctest::Contains("the kernel of size 3x3x3 does not fit the padded input of size 4x2x6 (input "
                                         "of shape [1, 1, 4, 2, 4], padding [0, 0, 1])"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv1d(zeros({1, 4, 5}), zeros({2, 3, 3})),
                       doctest::Contains("input of shape [1, 4, 5] has 4 channels, but weight of shape [2, 3, 3] with "
                                         "groups=1 expects 3"),
                       OpError);
}

TEST_CASE("conv_transpose1d and conv_transpose3d refuse an output_padding not below the stride and mismatched "
          "channels") {
  static constexpr int line = __LINE__ + 1;
  const auto padded = [] { return conv_transpose1d(zeros({1, 2, 3}), zeros({2, 3, 2}), {}, {2}, {0}, {2}); };
  CHECK_THROWS_WITH_AS(padded(), doctest::Contains(fmt::format("_test.cpp:{}: conv_transpose1d(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(padded(), doctest::Contains("output_padding [2] must be non-negative and smaller than the "
                                                   "stride [2] or the dilation [1] in each dim"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv_transpose3d(zeros({1, 4, 3, 3, 3}), zeros({2, 3, 2, 2, 2})),
                       doctest::Contains("input of shape [1, 4, 3, 3, 3] has 4 channels, but weight of shape "
                                         "[2, 3, 2, 2, 2] expects 2 (weight.shape[0]; a transposed convolution's "
                                         "weight is [in_channels, out_channels / groups, kD, kH, kW])"),
                       OpError);
  CHECK_THROWS_WITH_AS(conv_transpose3d(zeros({1, 2, 1, 1, 1}), zeros({2, 1, 1, 1, 1}), {}, {1}, {0, 0, 1}),
                       doctest::Contains("the output would have size -1 in spatial dim 2"), OpError);
}

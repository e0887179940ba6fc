#include "support/checks.hpp"

#include <limits>

using namespace symtrace;
using testing::uniform_int;
using testing::iota;
using symtrace::testing::check_tensor;

namespace {

// A 4x4 image whose maxima sit in different places in each window.
const std::vector<float> kScrambled = {3, 9, 1, 4, 8, 0, 6, 2, 5, 7, 15, 11, 12, 14, 10, 13};

Tensor scrambled() { return tensor(kScrambled, {1, 1, 4, 4}); }

// The transpose of the scrambled image, as a non-contiguous view.
Tensor scrambled_transposed() {
  const Tensor t = Tensor::view_of(scrambled(), Shape{1, 1, 4, 4}, {16, 16, 1, 4}, 0);
  REQUIRE_FALSE(t.is_contiguous());
  return t;
}

// A random [N, C, H, W] (N in 0..2) or [C, H, W] shape with the given spatial sizes.
IntList random_input_shape(Generator& gen, std::int64_t h, std::int64_t w) {
  IntList shape{uniform_int(gen, 1, 3), h, w};
  if (uniform_int(gen, 0, 3) != 0) shape.insert(shape.begin(), uniform_int(gen, 0, 2));
  return shape;
}

IntList maybe_single(Generator& gen, const IntList& v) { return v[0] == v[1] && uniform_int(gen, 0, 1) ? IntList{v[0]} : v; }

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

// ---- max_pool2d --------------------------------------------------------------------------

TEST_CASE("max_pool2d takes the maximum of each window, the stride defaulting to the kernel size") {
  check_tensor(max_pool2d(scrambled(), {2}), DType::float32, {1, 1, 2, 2}, {9, 6, 14, 15});
}

TEST_CASE("max_pool2d with stride 1 uses overlapping windows") {
  check_tensor(max_pool2d(scrambled(), {2}, {1}), DType::float32, {1, 1, 3, 3}, {9, 9, 6, 8, 15, 15, 14, 15, 15});
}

TEST_CASE("max_pool2d with dilation takes every other element") {
  check_tensor(max_pool2d(scrambled(), {2}, {1}, {0}, {2}), DType::float32, {1, 1, 2, 2}, {15, 11, 12, 14});
}

TEST_CASE("max_pool2d pads with -inf, so padding never wins over negative values") {
  check_tensor(max_pool2d(neg(iota({1, 1, 4, 4})), {3}, {2}, {1}), DType::float32, {1, 1, 2, 2}, {0, -1, -4, -5});
}

TEST_CASE("max_pool2d in ceil mode keeps a last partial window that starts inside the input") {
  check_tensor(max_pool2d(iota({1, 1, 5, 5}), {2}), DType::float32, {1, 1, 2, 2}, {6, 8, 16, 18});
  check_tensor(max_pool2d(iota({1, 1, 5, 5}), {2}, {}, {0}, {1}, true), DType::float32, {1, 1, 3, 3},
               {6, 8, 9, 16, 18, 19, 21, 23, 24});
}

TEST_CASE("max_pool2d in ceil mode drops a last window that would start in the right padding") {
  // Without PyTorch's rule the 3x3 input with padding 1 would give 3 windows per dim.
  check_tensor(max_pool2d(iota({1, 1, 3, 3}), {2}, {2}, {1}, {1}, true), DType::float32, {1, 1, 2, 2}, {0, 2, 6, 8});
}

TEST_CASE("max_pool2d works on int64 tensors") {
  const Tensor x = to(scrambled(), DType::int64);
  check_tensor(max_pool2d(x, {2}), DType::int64, {1, 1, 2, 2}, {9, 6, 14, 15});
  check_tensor(max_pool2d(x, {3}, {2}, {1}), DType::int64, {1, 1, 2, 2}, {9, 9, 14, 15});
}

TEST_CASE("max_pool2d propagates NaN as PyTorch does") {
  check_tensor(max_pool2d(tensor({1.f, kNan, 3.f, 2.f, kNan, 5.f, 1.f, 2.f}, {2, 2, 2}), {2}), DType::float32,
               {2, 1, 1}, {kNan, kNan});
}

TEST_CASE("max_pool2d accepts unbatched, non-contiguous, size-1 and empty-batch inputs") {
  SUBCASE("unbatched [C, H, W]") {
    check_tensor(max_pool2d(iota({2, 2, 2}), {2}), DType::float32, {2, 1, 1}, {3, 7});
  }
  SUBCASE("a transposed view") {
    check_tensor(max_pool2d(scrambled_transposed(), {2}), DType::float32, {1, 1, 2, 2}, {9, 14, 6, 15});
  }
  SUBCASE("a single row") {
    check_tensor(max_pool2d(iota({1, 1, 1, 3}), {1, 2}, {1}), DType::float32, {1, 1, 1, 2}, {1, 2});
  }
  SUBCASE("an empty batch") {
    check_tensor(max_pool2d(zeros({0, 2, 4, 4}), {2}), DType::float32, {0, 2, 2, 2}, {});
  }
}

// ---- avg_pool2d --------------------------------------------------------------------------

TEST_CASE("avg_pool2d averages each window") {
  check_tensor(avg_pool2d(iota({1, 1, 4, 4}), {2}), DType::float32, {1, 1, 2, 2}, {2.5, 4.5, 10.5, 12.5});
}

TEST_CASE("avg_pool2d counts padded cells in the divisor unless count_include_pad is false") {
  const Tensor x = iota({1, 1, 4, 4});
  check_tensor(avg_pool2d(x, {3}, {2}, {1}), DType::float32, {1, 1, 2, 2}, {10.0 / 9, 24.0 / 9, 51.0 / 9, 10});
  check_tensor(avg_pool2d(x, {3}, {2}, {1}, false, false), DType::float32, {1, 1, 2, 2}, {2.5, 4, 8.5, 10});
}

TEST_CASE("avg_pool2d in ceil mode divides a partial last window by its size inside the input") {
  check_tensor(avg_pool2d(iota({1, 1, 5, 5}), {2}, {}, {0}, true), DType::float32, {1, 1, 3, 3},
               {3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24});
}

TEST_CASE("avg_pool2d in ceil mode with padding counts the padding but not the overhang beyond it") {
  // Per dim the windows cover 2, 3 and 1 input cells of 3, 3 and 2 padded cells.
  const Tensor x = ones({1, 1, 4, 4});
  check_tensor(avg_pool2d(x, {3}, {2}, {1}, true), DType::float32, {1, 1, 3, 3},
               {4.0 / 9, 2.0 / 3, 1.0 / 3, 2.0 / 3, 1, 0.5, 1.0 / 3, 0.5, 0.25});
  check_tensor(avg_pool2d(x, {3}, {2}, {1}, true, false), DType::float32, {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
}

TEST_CASE("avg_pool2d accepts unbatched, non-contiguous, size-1 and empty-batch inputs") {
  SUBCASE("unbatched [C, H, W]") {
    check_tensor(avg_pool2d(iota({2, 2, 2}), {2}), DType::float32, {2, 1, 1}, {1.5, 5.5});
  }
  SUBCASE("a transposed view") {
    check_tensor(avg_pool2d(scrambled_transposed(), {2}), DType::float32, {1, 1, 2, 2}, {5, 9.5, 3.25, 12.25});
  }
  SUBCASE("a single column") {
    check_tensor(avg_pool2d(iota({1, 1, 3, 1}), {2, 1}, {1}), DType::float32, {1, 1, 2, 1}, {0.5, 1.5});
  }
  SUBCASE("an empty batch") {
    check_tensor(avg_pool2d(zeros({0, 3, 4, 4}), {2}), DType::float32, {0, 3, 2, 2}, {});
  }
}

// ---- adaptive_avg_pool2d -----------------------------------------------------------------

TEST_CASE("adaptive_avg_pool2d to a divisor of the input size averages equal blocks") {
  check_tensor(adaptive_avg_pool2d(iota({1, 1, 4, 4}), {2}), DType::float32, {1, 1, 2, 2}, {2.5, 4.5, 10.5, 12.5});
  check_tensor(adaptive_avg_pool2d(iota({1, 1, 4, 4}), {1, 1}), DType::float32, {1, 1, 1, 1}, {7.5});
}

TEST_CASE("adaptive_avg_pool2d bins overlap when the output size does not divide the input size") {
  // Rows and columns bins of 5 -> 3: {0, 1}, {1, 2, 3}, {3, 4}.
  check_tensor(adaptive_avg_pool2d(iota({1, 1, 5, 5}), {3}), DType::float32, {1, 1, 3, 3},
               {3, 4.5, 6, 10.5, 12, 13.5, 18, 19.5, 21});
}

TEST_CASE("adaptive_avg_pool2d to a larger size repeats and blends input cells") {
  // Bins of 2 -> 3: {0}, {0, 1}, {1}.
  check_tensor(adaptive_avg_pool2d(tensor({0.f, 2.f}, {1, 1, 1, 2}), {1, 3}), DType::float32, {1, 1, 1, 3}, {0, 1, 2});
}

TEST_CASE("adaptive_avg_pool2d accepts unbatched, non-contiguous and empty-batch inputs") {
  SUBCASE("unbatched [C, H, W]") {
    check_tensor(adaptive_avg_pool2d(iota({2, 2, 2}), {1}), DType::float32, {2, 1, 1}, {1.5, 5.5});
  }
  SUBCASE("a transposed view") {
    check_tensor(adaptive_avg_pool2d(scrambled_transposed(), {2, 2}), DType::float32, {1, 1, 2, 2},
                 {5, 9.5, 3.25, 12.25});
  }
  SUBCASE("an empty batch") {
    check_tensor(adaptive_avg_pool2d(zeros({0, 3, 4, 4}), {1}), DType::float32, {0, 3, 1, 1}, {});
  }
}

// ---- upsample_nearest2d ------------------------------------------------------------------

TEST_CASE("upsample_nearest2d to twice the size repeats each pixel in a 2x2 block") {
  const std::vector<double> expected = {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3};
  check_tensor(upsample_nearest2d(iota({1, 1, 2, 2}), IntList{4, 4}), DType::float32, {1, 1, 4, 4}, expected);
  check_tensor(upsample_nearest2d(iota({1, 1, 2, 2}), std::nullopt, std::vector<double>{2.0}), DType::float32,
               {1, 1, 4, 4}, expected);
}

TEST_CASE("upsample_nearest2d to an output size reads source index floor(dst * in / out)") {
  check_tensor(upsample_nearest2d(iota({1, 1, 1, 3}), IntList{1, 5}), DType::float32, {1, 1, 1, 5}, {0, 0, 1, 1, 2});
  check_tensor(upsample_nearest2d(iota({1, 1, 1, 4}), IntList{1, 3}), DType::float32, {1, 1, 1, 3}, {0, 1, 2});
}

TEST_CASE("upsample_nearest2d by scale factors floors the output size and reads floor(dst / scale)") {
  check_tensor(upsample_nearest2d(iota({1, 1, 2, 2}), std::nullopt, std::vector<double>{1.0, 1.5}), DType::float32,
               {1, 1, 2, 3}, {0, 0, 1, 2, 2, 3});
  check_tensor(upsample_nearest2d(iota({1, 1, 4, 4}), std::nullopt, std::vector<double>{0.5}), DType::float32,
               {1, 1, 2, 2}, {0, 2, 8, 10});
  check_tensor(upsample_nearest2d(iota({1, 1, 1, 5}), std::nullopt, std::vector<double>{1.0, 0.7}), DType::float32,
               {1, 1, 1, 3}, {0, 1, 2});
}

TEST_CASE("upsampling named dims by a scale exact in binary keeps the dims: floor(H*scale) as an expression") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{1, 3, Dim("H"), Dim("W")}}, SymbolicRef{1, 1});
  const auto shape_for = [&](std::vector<double> scales) {
    return infer_meta(OpRegistry::instance().get("upsample_nearest2d"), ValueList{Value(x), Value(), Value(scales)})
        .outputs.at(0)
        .shape;
  };
  CHECK(to_string(shape_for({2.0})) == "[1, 3, 2*H, 2*W]");
  CHECK(to_string(shape_for({0.5, 1.5})) == "[1, 3, H//2, W + W//2]");  // (3*W)//2, canonical
  CHECK(to_string(shape_for({0.75, 0.3})) == "[1, 3, (3*H)//4, ?]");    // 0.3 is not exact in binary
  // The expression is what LibTorch's floor(double(H) * scale) gives, at every size.
  for (const std::int64_t h : {2, 3, 7, 224, 1023}) {
    CAPTURE(h);
    const Tensor real = upsample_nearest2d(zeros({1, 1, h, h}), std::nullopt, std::vector<double>{0.75, 1.5});
    CHECK(real.shape().sizes() == std::vector<std::int64_t>{1, 1, (3 * h) / 4, (3 * h) / 2});
  }
}

TEST_CASE("upsample_nearest2d accepts unbatched, non-contiguous and empty-batch inputs") {
  SUBCASE("unbatched [C, H, W]") {
    check_tensor(upsample_nearest2d(iota({2, 1, 1}), IntList{1, 2}), DType::float32, {2, 1, 2}, {0, 0, 1, 1});
  }
  SUBCASE("a transposed view") {
    const Tensor base = iota({1, 1, 2, 2});
    const Tensor t = Tensor::view_of(base, Shape{1, 1, 2, 2}, {4, 4, 1, 2}, 0);
    check_tensor(upsample_nearest2d(t, IntList{2, 4}), DType::float32, {1, 1, 2, 4}, {0, 0, 2, 2, 1, 1, 3, 3});
  }
  SUBCASE("an empty batch") {
    check_tensor(upsample_nearest2d(zeros({0, 3, 2, 2}), IntList{3}), DType::float32, {0, 3, 3, 3}, {});
  }
}

// ---- upsample_bilinear2d -----------------------------------------------------------------
// Expected values: torch.nn.functional.interpolate(x, mode="bilinear", ...) on
// x = arange(12).reshape(1, 1, 3, 4) * 0.5 - 1 (PyTorch 1.13, CPU).

TEST_CASE("upsample_bilinear2d computes what PyTorch's interpolate(mode='bilinear') computes") {
  const Tensor x = iota({1, 1, 3, 4}) * 0.5 - 1.0;
  SUBCASE("to a size, align_corners=False: source points at (dst + 0.5) * in / out - 0.5, clamped at 0") {
    check_tensor(upsample_bilinear2d(x, IntList{5, 3}, false), DType::float32, {1, 1, 5, 3},
                 {-0.916667, -0.25, 0.416667, -0.116667, 0.55, 1.216667, 1.083333, 1.75, 2.416667, 2.283334, 2.95,
                  3.616667, 3.083333, 3.75, 4.416667});
  }
  SUBCASE("to a size, align_corners=True: the corners map onto the corners") {
    check_tensor(upsample_bilinear2d(x, IntList{5, 3}, true), DType::float32, {1, 1, 5, 3},
                 {-1.0, -0.25, 0.5, 0.0, 0.75, 1.5, 1.0, 1.75, 2.5, 2.0, 2.75, 3.5, 3.0, 3.75, 4.5});
  }
  SUBCASE("by a scale factor: the size floors in * factor, the source points use 1 / factor") {
    check_tensor(upsample_bilinear2d(x, std::nullopt, false, std::vector<double>{1.5}), DType::float32, {1, 1, 4, 6},
                 {-1.0, -0.75, -0.416667, -0.083333, 0.25, 0.5, 0.0, 0.25, 0.583333, 0.916667, 1.25, 1.5,
                  1.333333, 1.583333, 1.916667, 2.25, 2.583333, 2.833333, 2.666667, 2.916667, 3.25, 3.583333,
                  3.916667, 4.166667});
  }
  SUBCASE("a factor that keeps the size copies, as PyTorch does (floor(3 * 1.2) = 3, floor(4 * 1.2) = 4)") {
    check_tensor(upsample_bilinear2d(x, std::nullopt, false, std::vector<double>{1.2}), DType::float32, {1, 1, 3, 4},
                 {-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5});
  }
  SUBCASE("a size and a factor together, or neither, are refused") {
    CHECK_THROWS_WITH_AS(upsample_bilinear2d(x, IntList{2, 2}, false, std::vector<double>{2.0}),
                         doctest::Contains("needs exactly one of output_size and scale_factors, got both"), OpError);
    CHECK_THROWS_WITH_AS(upsample_bilinear2d(x, std::nullopt, false), doctest::Contains("got neither"), OpError);
  }
}

TEST_CASE("upsample_bilinear2d meta agrees with the kernel over random shapes, sizes and align_corners") {
  Generator gen(4321);
  for (int iter = 0; iter < 30; ++iter) {
    const IntList shape = random_input_shape(gen, uniform_int(gen, 1, 6), uniform_int(gen, 1, 6));
    const Tensor x = randn(shape, gen);
    const IntList size{uniform_int(gen, 1, 9), uniform_int(gen, 1, 9)};
    testing::check_meta_agrees("upsample_bilinear2d", {x, size, iter % 2 == 0}, {}, gen);
  }
}

// ---- Meta agreement ----------------------------------------------------------------------

TEST_CASE("max_pool2d and avg_pool2d meta agree with the kernels over random shapes and configurations") {
  Generator gen(1234);
  for (int iter = 0; iter < 50; ++iter) {
    const bool is_max = iter % 2 == 0;
    const IntList k{uniform_int(gen, 1, 3), uniform_int(gen, 1, 3)};
    const IntList s{uniform_int(gen, 1, 3), uniform_int(gen, 1, 3)};
    const IntList p{uniform_int(gen, 0, k[0] / 2), uniform_int(gen, 0, k[1] / 2)};
    const IntList d = is_max ? IntList{uniform_int(gen, 1, 2), uniform_int(gen, 1, 2)} : IntList{1, 1};
    IntList hw;
    for (std::size_t i = 0; i < 2; ++i)
      hw.push_back(std::max<std::int64_t>(1, d[i] * (k[i] - 1) + 1 - 2 * p[i]) + uniform_int(gen, 0, 3));
    const IntList shape = random_input_shape(gen, hw[0], hw[1]);
    const bool ceil_mode = uniform_int(gen, 0, 1) == 1;
    const Value stride = uniform_int(gen, 0, 2) == 0 ? IntList{} : maybe_single(gen, s);
    if (is_max) {
      const bool integer = uniform_int(gen, 0, 3) == 0;
      const Tensor x = integer ? zeros(shape, DType::int64) : randn(shape, gen);
      testing::check_meta_agrees("max_pool2d",
                                 {x, maybe_single(gen, k), stride, maybe_single(gen, p), maybe_single(gen, d)},
                                 {{"ceil_mode", ceil_mode}}, gen);
    } else {
      testing::check_meta_agrees("avg_pool2d", {randn(shape, gen), maybe_single(gen, k), stride, maybe_single(gen, p)},
                                 {{"ceil_mode", ceil_mode}, {"count_include_pad", uniform_int(gen, 0, 1) == 1}}, gen);
    }
  }
}

TEST_CASE("adaptive_avg_pool2d and upsample_nearest2d meta agree with the kernels over random shapes") {
  Generator gen(1234);
  for (int iter = 0; iter < 50; ++iter) {
    const IntList shape = random_input_shape(gen, uniform_int(gen, 1, 6), uniform_int(gen, 1, 6));
    const Tensor x = randn(shape, gen);
    const IntList size{uniform_int(gen, 1, 7), uniform_int(gen, 1, 7)};
    switch (iter % 3) {
      case 0:
        testing::check_meta_agrees("adaptive_avg_pool2d", {x, maybe_single(gen, size)}, {}, gen);
        break;
      case 1:
        testing::check_meta_agrees("upsample_nearest2d", {x, maybe_single(gen, size)}, {}, gen);
        break;
      default: {
        // Factors from 0.5 to 3 in steps of 1/4, or 1 where a factor would empty a dim.
        std::vector<double> factors;
        for (std::size_t i = 0; i < 2; ++i) {
          const double f = static_cast<double>(uniform_int(gen, 2, 12)) / 4;
          factors.push_back(std::floor(static_cast<double>(shape[shape.size() - 2 + i]) * f) >= 1 ? f : 1.0);
        }
        testing::check_meta_agrees("upsample_nearest2d", {x}, {{"scale_factors", factors}}, gen);
      }
    }
  }
}

TEST_CASE("pooling with unknown spatial dims gives unknown output dims and keeps the known ones") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{2, 3, Dim::unknown(), 8}}, SymbolicRef{1, 1});
  const auto meta = [&](std::string_view op, ValueList args) {
    return infer_meta(OpRegistry::instance().get(op), args).outputs[0].shape;
  };
  CHECK(meta("max_pool2d", {x, IntList{2}, IntList{}, IntList{0}, IntList{1}, false}) ==
        Shape{2, 3, Dim::unknown(), 4});
  CHECK(meta("avg_pool2d", {x, IntList{3}, IntList{2}, IntList{1}, true, true}) == Shape{2, 3, Dim::unknown(), 5});
  CHECK(meta("adaptive_avg_pool2d", {x, IntList{1}}) == Shape{2, 3, 1, 1});
  CHECK(meta("upsample_nearest2d", {x, Value(), std::vector<double>{2.0}}) == Shape{2, 3, Dim::unknown(), 16});
  CHECK(meta("upsample_nearest2d", {x, IntList{5, 6}, Value()}) == Shape{2, 3, 5, 6});
}

// ---- Errors ------------------------------------------------------------------------------

TEST_CASE("max_pool2d refuses padding larger than half the kernel") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return max_pool2d(zeros({1, 1, 4, 4}), {2}, {}, {2}); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: max_pool2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("padding [2, 2] must be between 0 and half the kernel size [2, 2]"),
                       OpError);
}

TEST_CASE("max_pool2d refuses a kernel larger than the padded input") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return max_pool2d(zeros({1, 1, 2, 2}), {3}); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: max_pool2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the output would be empty for input of shape [1, 1, 2, 2] with "
                                                "kernel_size [3, 3], stride [3, 3], padding [0, 0], dilation [1, 1]"),
                       OpError);
}

TEST_CASE("pooling refuses a non-positive stride and a malformed kernel_size") {
  static constexpr int line = __LINE__ + 1;
  const auto zero_stride = [] { return avg_pool2d(zeros({1, 1, 4, 4}), {2}, {0}); };
  CHECK_THROWS_WITH_AS(zero_stride(), doctest::Contains(fmt::format("_test.cpp:{}: avg_pool2d(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(zero_stride(), doctest::Contains("stride must be positive, got [0]"), OpError);
  static constexpr int pair_line = __LINE__ + 1;
  const auto three = [] { return max_pool2d(zeros({1, 1, 4, 4}), {2, 2, 2}); };
  CHECK_THROWS_WITH_AS(three(), doctest::Contains(fmt::format("_test.cpp:{}: max_pool2d(): ", pair_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(three(), doctest::Contains("argument 'kernel_size' must hold one value (for both spatial dims) "
                                                  "or two (height, width), got [2, 2, 2]"),
                       OpError);
}

TEST_CASE("pooling refuses wrong ranks, dtypes and empty non-batch dims") {
  static constexpr int line = __LINE__ + 1;
  const auto rank2 = [] { return avg_pool2d(zeros({4, 4}), {2}); };
  CHECK_THROWS_WITH_AS(rank2(), doctest::Contains(fmt::format("_test.cpp:{}: avg_pool2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(rank2(), doctest::Contains("argument 'self' must have 4 or 3 dims, got shape [4, 4]"), OpError);
  static constexpr int int_line = __LINE__ + 1;
  const auto integer = [] { return avg_pool2d(zeros({1, 1, 4, 4}, DType::int64), {2}); };
  CHECK_THROWS_WITH_AS(integer(), doctest::Contains(fmt::format("_test.cpp:{}: avg_pool2d(): ", int_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(integer(), doctest::Contains("expects a float32 tensor, got int64 of shape [1, 1, 4, 4]"),
                       OpError);
  static constexpr int bool_line = __LINE__ + 1;
  const auto boolean = [] { return max_pool2d(zeros({1, 1, 4, 4}, DType::bool_), {2}); };
  CHECK_THROWS_WITH_AS(boolean(), doctest::Contains(fmt::format("_test.cpp:{}: max_pool2d(): ", bool_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(boolean(), doctest::Contains("expects a float32 or int64 tensor, got bool"), OpError);
  static constexpr int empty_line = __LINE__ + 1;
  const auto empty = [] { return adaptive_avg_pool2d(zeros({1, 0, 4, 4}), {2}); };
  CHECK_THROWS_WITH_AS(empty(),
                       doctest::Contains(fmt::format("_test.cpp:{}: adaptive_avg_pool2d(): ", empty_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(empty(), doctest::Contains("input of shape [1, 0, 4, 4] is empty in a non-batch dim"), OpError);
}

TEST_CASE("adaptive_avg_pool2d refuses a negative output size") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return adaptive_avg_pool2d(zeros({1, 1, 4, 4}), {2, -1}); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: adaptive_avg_pool2d(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("output_size must be non-negative, got [2, -1]"), OpError);
}

TEST_CASE("upsample_nearest2d needs exactly one of output_size and scale_factors") {
  static constexpr int line = __LINE__ + 1;
  const auto both = [] { return upsample_nearest2d(zeros({1, 1, 2, 2}), IntList{4}, std::vector<double>{2.0}); };
  CHECK_THROWS_WITH_AS(both(), doctest::Contains(fmt::format("_test.cpp:{}: upsample_nearest2d(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(both(), doctest::Contains("needs exactly one of output_size and scale_factors, got both "
                                                 "(input of shape [1, 1, 2, 2])"),
                       OpError);
  static constexpr int neither_line = __LINE__ + 1;
  const auto neither = [] { return upsample_nearest2d(zeros({1, 1, 2, 2}), std::nullopt); };
  CHECK_THROWS_WITH_AS(neither(),
                       doctest::Contains(fmt::format("_test.cpp:{}: upsample_nearest2d(): ", neither_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(neither(), doctest::Contains("got neither"), OpError);
}

TEST_CASE("upsample_nearest2d refuses sizes and scale factors that give an empty output") {
  static constexpr int line = __LINE__ + 1;
  const auto zero_size = [] { return upsample_nearest2d(zeros({1, 1, 2, 2}), IntList{0, 3}); };
  CHECK_THROWS_WITH_AS(zero_size(),
                       doctest::Contains(fmt::format("_test.cpp:{}: upsample_nearest2d(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(zero_size(), doctest::Contains("output_size must be positive, got [0, 3] (input of shape "
                                                      "[1, 1, 2, 2])"),
                       OpError);
  static constexpr int scale_line = __LINE__ + 1;
  const auto small = [] { return upsample_nearest2d(zeros({1, 1, 2, 2}), std::nullopt, std::vector<double>{0.25}); };
  CHECK_THROWS_WITH_AS(small(),
                       doctest::Contains(fmt::format("_test.cpp:{}: upsample_nearest2d(): ", scale_line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(small(), doctest::Contains("scale_factors [0.25, 0.25] make an empty output from input of "
                                                  "shape [1, 1, 2, 2]"),
                       OpError);
}

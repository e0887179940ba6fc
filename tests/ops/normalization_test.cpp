#include "support/checks.hpp"

using namespace symtrace;
using testing::transposed;
using testing::check_tensor;

namespace {

Value optional(const Tensor& t) { return t.defined() ? Value(t) : Value(); }

// The [N=2, C=2, H=1, W=2] input holding 1..8. Channel 0 holds 1, 2, 5, 6 (mean 3.5) and
// channel 1 holds 3, 4, 7, 8 (mean 5.5): both deviate by -2.5, -1.5, 1.5, 2.5 from their mean,
// so both have biased variance 17/4 and unbiased variance 17/3.
Tensor bn_input() { return tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f}, {2, 2, 1, 2}); }

}  // namespace

// ---- batch_norm --------------------------------------------------------------------------

TEST_CASE("batch_norm in training normalises each channel with the batch's biased variance") {
  const double s = std::sqrt(17.0 / 4.0);
  const double a = 2.5 / s, b = 1.5 / s;
  SUBCASE("without weight and bias") {
    check_tensor(batch_norm(bn_input(), {}, {}, {}, {}, true, 0.1, 0.0), DType::float32, {2, 2, 1, 2},
                 {-a, -b, -a, -b, b, a, b, a});
  }
  SUBCASE("with weight and bias") {
    const Tensor w = tensor({2.f, 0.5f});
    const Tensor bias = tensor({1.f, -1.f});
    check_tensor(batch_norm(bn_input(), w, bias, {}, {}, true, 0.1, 0.0), DType::float32, {2, 2, 1, 2},
                 {-2 * a + 1, -2 * b + 1, -0.5 * a - 1, -0.5 * b - 1, 2 * b + 1, 2 * a + 1, 0.5 * b - 1,
                  0.5 * a - 1});
  }
  SUBCASE("with the default eps") {
    const double se = std::sqrt(17.0 / 4.0 + 1e-5);
    check_tensor(batch_norm(bn_input(), {}, {}, {}, {}, true), DType::float32, {2, 2, 1, 2},
                 {-2.5 / se, -1.5 / se, -2.5 / se, -1.5 / se, 1.5 / se, 2.5 / se, 1.5 / se, 2.5 / se});
  }
}

TEST_CASE("batch_norm in training updates the running statistics in place with the unbiased variance") {
  const Tensor rm = tensor({0.f, 1.f});
  const Tensor rv = tensor({1.f, 2.f});
  SUBCASE("momentum 0.1 mixes a tenth of the batch statistics in") {
    batch_norm(bn_input(), {}, {}, rm, rv, true, 0.1, 0.0);
    check_tensor(rm, DType::float32, {2}, {0.9 * 0 + 0.1 * 3.5, 0.9 * 1 + 0.1 * 5.5});
    check_tensor(rv, DType::float32, {2}, {0.9 * 1 + 0.1 * 17.0 / 3, 0.9 * 2 + 0.1 * 17.0 / 3});
  }
  SUBCASE("momentum 1 replaces them with the batch statistics") {
    batch_norm(bn_input(), {}, {}, rm, rv, true, 1.0, 0.0);
    check_tensor(rm, DType::float32, {2}, {3.5, 5.5});
    check_tensor(rv, DType::float32, {2}, {17.0 / 3, 17.0 / 3});
  }
  SUBCASE("strided running statistics are written through to their base") {
    const Tensor mean_base = tensor({0.f, -7.f, 1.f, -7.f});
    const Tensor var_base = tensor({1.f, -7.f, 2.f, -7.f});
    const Tensor mean_view = Tensor::view_of(mean_base, Shape{2}, {2}, 0);
    const Tensor var_view = Tensor::view_of(var_base, Shape{2}, {2}, 0);
    batch_norm(bn_input(), {}, {}, mean_view, var_view, true, 0.1, 0.0);
    check_tensor(mean_base, DType::float32, {4}, {0.35, -7, 1.45, -7});
    check_tensor(var_base, DType::float32, {4}, {0.9 + 0.1 * 17.0 / 3, -7, 1.8 + 0.1 * 17.0 / 3, -7});
  }
}

TEST_CASE("batch_norm in evaluation uses the running statistics and leaves them unchanged") {
  const Tensor rm = tensor({1.f, 2.f});
  const Tensor rv = tensor({4.f, 0.25f});
  SUBCASE("with weight and bias") {
    // Channel 0: (x - 1) / 2; channel 1: (x - 2) / 0.5 * 2 + 1.
    const Tensor y = batch_norm(bn_input(), tensor({1.f, 2.f}), tensor({0.f, 1.f}), rm, rv, false, 0.1, 0.0);
    check_tensor(y, DType::float32, {2, 2, 1, 2}, {0, 0.5, 5, 9, 2, 2.5, 21, 25});
  }
  SUBCASE("without weight and bias, with the default eps") {
    const double s0 = std::sqrt(4 + 1e-5), s1 = std::sqrt(0.25 + 1e-5);
    const Tensor y = batch_norm(bn_input(), {}, {}, rm, rv, false);
    check_tensor(y, DType::float32, {2, 2, 1, 2},
                 {0 / s0, 1 / s0, 1 / s1, 2 / s1, 4 / s0, 5 / s0, 5 / s1, 6 / s1});
  }
  check_tensor(rm, DType::float32, {2}, {1, 2});
  check_tensor(rv, DType::float32, {2}, {4, 0.25});
}

TEST_CASE("batch_norm accepts a 2-D [N, C] input") {
  // Channel 0 holds 1, 2, 3 and channel 1 holds 10, 20, 30: deviations are -1, 0, 1 times
  // sqrt(3/2) standard deviations in both.
  const Tensor x = tensor({1.f, 10.f, 2.f, 20.f, 3.f, 30.f}, {3, 2});
  const double z = std::sqrt(1.5);
  check_tensor(batch_norm(x, {}, {}, {}, {}, true, 0.1, 0.0), DType::float32, {3, 2}, {-z, -z, 0, 0, z, z});
  const Tensor rm = tensor({0.f, 0.f});
  const Tensor rv = tensor({1.f, 1.f});
  check_tensor(batch_norm(x, {}, tensor({0.f, 100.f}), rm, rv, false, 0.1, 0.0), DType::float32, {3, 2},
               {1, 110, 2, 120, 3, 130});
}

TEST_CASE("batch_norm reads a non-contiguous input") {
  // The transpose of [[1, 2], [3, 4]] is [[1, 3], [2, 4]]: channel means 1.5 and 3.5, variance 1/4.
  const Tensor x = transposed(tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}));
  REQUIRE_FALSE(x.is_contiguous());
  check_tensor(batch_norm(x, {}, {}, {}, {}, true, 0.1, 0.0), DType::float32, {2, 2}, {-1, -1, 1, 1});
}

TEST_CASE("batch_norm of an empty batch is empty and leaves the running statistics alone") {
  const Tensor rm = tensor({1.f, 2.f});
  const Tensor rv = tensor({3.f, 4.f});
  check_tensor(batch_norm(zeros({0, 2}), {}, {}, rm, rv, true), DType::float32, {0, 2}, {});
  check_tensor(batch_norm(zeros({2, 2, 0}), {}, {}, rm, rv, true), DType::float32, {2, 2, 0}, {});
  check_tensor(batch_norm(zeros({0, 2}), {}, {}, rm, rv, false), DType::float32, {0, 2}, {});
  check_tensor(rm, DType::float32, {2}, {1, 2});
  check_tensor(rv, DType::float32, {2}, {3, 4});
  check_tensor(batch_norm(zeros({2, 0, 3}), {}, {}, {}, {}, true), DType::float32, {2, 0, 3}, {});
}

TEST_CASE("batch_norm with one value per channel is an error in training only") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return batch_norm(ones({1, 2, 1, 1}), {}, {}, {}, {}, true); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: batch_norm(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("Expected more than 1 value per channel when training"), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("[1, 2, 1, 1]"), OpError);
  check_tensor(batch_norm(ones({1, 2}), {}, {}, zeros({2}), ones({2}), false, 0.1, 0.0), DType::float32, {1, 2},
               {1, 1});
}

TEST_CASE("batch_norm rejects per-channel parameters that do not match the input's channels") {
  const Tensor x = bn_input();
  SUBCASE("weight") {
    static constexpr int line = __LINE__ + 1;
    const auto bad = [&] { return batch_norm(x, ones({3}), {}, {}, {}, true); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: batch_norm(): ", line).c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("argument 'weight' of shape [3] does not match input of shape "
                                                  "[2, 2, 1, 2], which has 2 channels (dim 1); expected shape [2]"),
                         OpError);
  }
  SUBCASE("running_var of the wrong rank") {
    static constexpr int line = __LINE__ + 1;
    const auto bad = [&] { return batch_norm(x, {}, {}, zeros({2}), ones({2, 1}), false); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: batch_norm(): ", line).c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("argument 'running_var' of shape [2, 1]"), OpError);
  }
  SUBCASE("an int64 bias") {
    CHECK_THROWS_WITH_AS(batch_norm(x, {}, zeros({2}, DType::int64), {}, {}, true),
                         doctest::Contains("argument 'bias' must be a floating-point tensor, got int64 of shape [2]"),
                         OpError);
  }
}

TEST_CASE("batch_norm in evaluation requires both running statistics") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return batch_norm(bn_input(), {}, {}, zeros({2}), {}, false); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: batch_norm(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("running_mean and running_var are required when training is False "
                                                "(input of shape [2, 2, 1, 2])"),
                       OpError);
  CHECK_THROWS_WITH_AS(batch_norm(bn_input(), {}, {}, {}, ones({2}), true),
                       doctest::Contains("running_mean and running_var must be given together, got only running_var"),
                       OpError);
}

TEST_CASE("batch_norm rejects an input with fewer than 2 dims or an integer input") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return batch_norm(ones({4}), {}, {}, {}, {}, true); };
  const auto expected = fmt::format(
      "_test.cpp:{}: batch_norm(): input must have at least 2 dims [N, C, ...], got shape [4]; add a batch dim", line);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(expected.c_str()), OpError);
  CHECK_THROWS_WITH_AS(batch_norm(ones({2, 2}, DType::int64), {}, {}, {}, {}, true),
                       doctest::Contains("argument 'input' must be a floating-point tensor, got int64 of shape [2, 2]"),
                       OpError);
}

TEST_CASE("batch_norm's meta function agrees with its kernel over random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    IntList shape = testing::random_shape(gen, 2, 4, 0, 3);
    const bool training = (gen.bits() & 1) != 0;
    std::int64_t per_channel = 1;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != 1) per_channel *= shape[d];
    if (training && per_channel == 1) shape[0] = 2;
    const IntList channels{shape[1]};
    const bool affine = (gen.bits() & 1) != 0;
    const bool stats = !training || (gen.bits() & 1) != 0;
    const Tensor w = affine ? randn(channels, gen) : Tensor();
    const Tensor b = affine ? randn(channels, gen) : Tensor();
    const Tensor rm = stats ? randn(channels, gen) : Tensor();
    const Tensor rv = stats ? add(rand(channels, gen), 0.5) : Tensor();
    testing::check_meta_agrees("batch_norm",
                               {randn(shape, gen), optional(w), optional(b), optional(rm), optional(rv), training},
                               {{"momentum", 0.2}}, gen);
  }
}

// ---- layer_norm --------------------------------------------------------------------------

TEST_CASE("layer_norm over the last dim normalises each row with its biased variance") {
  // Row 0 (1, 2, 3) deviates by -1, 0, 1 from 2 with variance 2/3; row 1 (4, 6, 8) by -2, 0, 2
  // from 6 with variance 8/3: both normalise to -z, 0, z.
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f, 6.f, 8.f}, {2, 3});
  const double z = std::sqrt(1.5);
  SUBCASE("without weight and bias") {
    check_tensor(layer_norm(x, {3}, {}, {}, 0.0), DType::float32, {2, 3}, {-z, 0, z, -z, 0, z});
  }
  SUBCASE("with weight and bias") {
    check_tensor(layer_norm(x, {3}, tensor({1.f, 2.f, 3.f}), tensor({0.f, 1.f, -1.f}), 0.0), DType::float32,
                 {2, 3}, {-z, 1, 3 * z - 1, -z, 1, 3 * z - 1});
  }
  SUBCASE("with the default eps") {
    const double s0 = std::sqrt(2.0 / 3 + 1e-5), s1 = std::sqrt(8.0 / 3 + 1e-5);
    check_tensor(layer_norm(x, {3}), DType::float32, {2, 3}, {-1 / s0, 0, 1 / s0, -2 / s1, 0, 2 / s1});
  }
}

TEST_CASE("layer_norm over the last two dims normalises each [2, 2] block") {
  // Blocks 0..3 and 4..7 both deviate by -1.5, -0.5, 0.5, 1.5 from their mean, variance 5/4.
  const Tensor x = tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f}, {2, 2, 2});
  const double s = std::sqrt(1.25);
  const std::vector<double> n{-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s};
  SUBCASE("without weight and bias") {
    check_tensor(layer_norm(x, {2, 2}, {}, {}, 0.0), DType::float32, {2, 2, 2},
                 {n[0], n[1], n[2], n[3], n[0], n[1], n[2], n[3]});
  }
  SUBCASE("with weight and bias") {
    const Tensor w = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
    const Tensor b = tensor({0.f, 0.f, 10.f, 10.f}, {2, 2});
    const std::vector<double> e{n[0], 2 * n[1], 3 * n[2] + 10, 4 * n[3] + 10};
    check_tensor(layer_norm(x, {2, 2}, w, b, 0.0), DType::float32, {2, 2, 2},
                 {e[0], e[1], e[2], e[3], e[0], e[1], e[2], e[3]});
  }
  SUBCASE("with weight only") {
    const Tensor w = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
    check_tensor(layer_norm(x, {2, 2}, w, {}, 0.0), DType::float32, {2, 2, 2},
                 {n[0], 2 * n[1], 3 * n[2], 4 * n[3], n[0], 2 * n[1], 3 * n[2], 4 * n[3]});
  }
}

TEST_CASE("layer_norm reads non-contiguous input and parameters") {
  // The transpose of [[1, 2], [3, 4]] is [[1, 3], [2, 4]]: each row is its mean -1 and +1.
  const Tensor x = transposed(tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}));
  REQUIRE_FALSE(x.is_contiguous());
  const Tensor w = Tensor::view_of(tensor({2.f, 0.f, 3.f, 0.f}), Shape{2}, {2}, 0);
  check_tensor(layer_norm(x, {2}, {}, {}, 0.0), DType::float32, {2, 2}, {-1, 1, -1, 1});
  check_tensor(layer_norm(x, {2}, w, {}, 0.0), DType::float32, {2, 2}, {-2, 3, -2, 3});
}

TEST_CASE("layer_norm handles size-0 and size-1 dims") {
  check_tensor(layer_norm(zeros({0, 3}), {3}), DType::float32, {0, 3}, {});
  check_tensor(layer_norm(zeros({2, 0}), {0}), DType::float32, {2, 0}, {});
  // One element per group: it equals its mean, so the result is the bias.
  check_tensor(layer_norm(tensor({1.f, -4.f, 9.f}, {3, 1}), {1}, {}, tensor({5.f})), DType::float32, {3, 1},
               {5, 5, 5});
  check_tensor(layer_norm(tensor({1.f, 3.f}), {2}, {}, {}, 0.0), DType::float32, {2}, {-1, 1});
}

TEST_CASE("layer_norm rejects a normalized_shape that does not match the input's trailing dims") {
  const Tensor x = zeros({2, 3, 5});
  SUBCASE("wrong sizes") {
    static constexpr int line = __LINE__ + 1;
    const auto bad = [&] { return layer_norm(x, {3, 4}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: layer_norm(): ", line).c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("normalized_shape [3, 4] does not match the trailing dims of input "
                                                  "of shape [2, 3, 5]; expected input of shape [*, 3, 4]"),
                         OpError);
  }
  SUBCASE("more dims than the input") {
    CHECK_THROWS_WITH_AS(layer_norm(x, {1, 2, 3, 5}),
                         doctest::Contains("normalized_shape [1, 2, 3, 5] does not match the trailing dims of input "
                                           "of shape [2, 3, 5]"),
                         OpError);
  }
  SUBCASE("empty") {
    CHECK_THROWS_WITH_AS(layer_norm(x, {}), doctest::Contains("normalized_shape must name at least one trailing dim"),
                         OpError);
  }
  SUBCASE("negative") {
    CHECK_THROWS_WITH_AS(layer_norm(x, {-5}), doctest::Contains("normalized_shape [-5] has a negative size"), OpError);
  }
}

TEST_CASE("layer_norm rejects weight and bias whose shape is not normalized_shape") {
  const Tensor x = zeros({2, 3, 5});
  static constexpr int line = __LINE__ + 1;
  const auto bad = [&] { return layer_norm(x, {3, 5}, ones({5})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: layer_norm(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("argument 'weight' of shape [5] must have exactly normalized_shape "
                                                "[3, 5]"),
                       OpError);
  CHECK_THROWS_WITH_AS(layer_norm(x, {5}, {}, ones({1, 5})),
                       doctest::Contains("argument 'bias' of shape [1, 5] must have exactly normalized_shape [5]"),
                       OpError);
}

TEST_CASE("layer_norm's meta function agrees with its kernel over random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    const IntList shape = testing::random_shape(gen, 1, 4, 0, 3);
    const auto k = 1 + static_cast<std::size_t>(gen.bits() % shape.size());
    const IntList normalized(shape.end() - static_cast<std::ptrdiff_t>(k), shape.end());
    const Tensor w = (gen.bits() & 1) ? randn(normalized, gen) : Tensor();
    const Tensor b = (gen.bits() & 1) ? randn(normalized, gen) : Tensor();
    testing::check_meta_agrees("layer_norm", {randn(shape, gen), normalized, optional(w), optional(b)}, {}, gen);
  }
}

// ---- group_norm, instance_norm -----------------------------------------------------------
// Their values on random inputs are compared with LibTorch's in
// tests/torchscript/native_ops_test.cpp.

TEST_CASE("group_norm with one group per channel pair normalises each pair of each sample") {
  // Sample 0: channels 0 and 1 hold 1, 2 and 3, 4 (one group: mean 2.5, biased variance 1.25).
  const Tensor y = group_norm(bn_input(), 1, {}, {}, 0.0);
  const double s = 1 / std::sqrt(1.25);
  check_tensor(y, DType::float32, {2, 2, 1, 2}, {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s, -1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s});
}

TEST_CASE("instance_norm normalises each channel of each sample and updates the running statistics") {
  Tensor rm = zeros({2});
  Tensor rv = ones({2});
  // Each (sample, channel) holds two values d apart: normalised to -1, 1; unbiased variance d^2 / 2.
  const Tensor y = instance_norm(bn_input(), {}, {}, rm, rv, true, 0.5, 0.0);
  check_tensor(y, DType::float32, {2, 2, 1, 2}, {-1, 1, -1, 1, -1, 1, -1, 1});
  // Channel 0's sample means are 1.5 and 5.5, channel 1's 3.5 and 7.5.
  check_tensor(rm, DType::float32, {2}, {0.5 * 3.5, 0.5 * 5.5});
  check_tensor(rv, DType::float32, {2}, {0.5 + 0.5 * 0.5, 0.5 + 0.5 * 0.5});
}

TEST_CASE("group_norm and instance_norm keep their input's shape, named dims included") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim("N"), 6, Dim::unknown()}}, SymbolicRef{1, 1});
  const OutputMeta g = infer_meta(OpRegistry::instance().get("group_norm"), ValueList{x, 3, Value(), Value(), 1e-5});
  CHECK(g.outputs[0].shape == Shape{Dim("N"), 6, Dim::unknown()});
  const OutputMeta i = infer_meta(OpRegistry::instance().get("instance_norm"),
                                  ValueList{x, Value(), Value(), Value(), Value(), true, 0.1, 1e-5});
  CHECK(i.outputs[0].shape == Shape{Dim("N"), 6, Dim::unknown()});
}

TEST_CASE("group_norm refuses groups that do not divide the channels, a bad rank and mismatched parameters") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return group_norm(zeros({2, 6, 4}), 4); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: group_norm(): ", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("input of shape [2, 6, 4] has 6 channels (dim 1), which num_groups=4 "
                                                "does not divide"),
                       OpError);
  CHECK_THROWS_WITH_AS(group_norm(zeros({6}), 2),
                       doctest::Contains("input must have at least 2 dims [N, C, ...], got shape [6]"), OpError);
  CHECK_THROWS_WITH_AS(group_norm(zeros({2, 6}), 0), doctest::Contains("num_groups must be positive, got 0"), OpError);
  CHECK_THROWS_WITH_AS(group_norm(zeros({2, 6}), 2, ones({4})),
                       doctest::Contains("argument 'weight' of shape [4] does not match input of shape [2, 6], which "
                                         "has 6 channels (dim 1); expected shape [6]"),
                       OpError);
}

TEST_CASE("instance_norm refuses a bad rank and missing running statistics without use_input_stats") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return instance_norm(zeros({2, 3, 4}), {}, {}, {}, {}, false); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: instance_norm(): ", line).c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("running_mean and running_var are required when use_input_stats is "
                                                "False (input of shape [2, 3, 4])"),
                       OpError);
  CHECK_THROWS_WITH_AS(instance_norm(zeros({3}), {}, {}, {}, {}),
                       doctest::Contains("input must have at least 2 dims [N, C, ...], got shape [3]"), OpError);
  CHECK_THROWS_WITH_AS(instance_norm(zeros({2, 3, 4}), {}, {}, zeros({3}), {}),
                       doctest::Contains("running_mean and running_var must be given together, got only running_mean"),
                       OpError);
}

TEST_CASE("group_norm's and instance_norm's meta functions agree with their kernels over random shapes") {
  Generator gen(4321);
  for (int i = 0; i < 30; ++i) {
    IntList shape = testing::random_shape(gen, 2, 4, 0, 3);
    const std::int64_t groups = testing::uniform_int(gen, 1, 2);
    shape[1] = groups * testing::uniform_int(gen, 1, 2);
    const IntList channels{shape[1]};
    const bool affine = (gen.bits() & 1) != 0;
    const Tensor w = affine ? randn(channels, gen) : Tensor();
    const Tensor b = affine ? randn(channels, gen) : Tensor();
    testing::check_meta_agrees("group_norm", {randn(shape, gen), groups, optional(w), optional(b)}, {}, gen);
    const bool stats = (gen.bits() & 1) != 0;
    const Tensor rm = stats ? randn(channels, gen) : Tensor();
    const Tensor rv = stats ? add(rand(channels, gen), 0.5) : Tensor();
    testing::check_meta_agrees("instance_norm",
                               {randn(shape, gen), optional(w), optional(b), optional(rm), optional(rv), !stats, 0.1, 1e-5},
                               {}, gen);
  }
}

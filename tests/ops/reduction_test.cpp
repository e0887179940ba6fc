#include "support/checks.hpp"

using namespace symtrace;
using testing::error_at;
using testing::transposed;
using testing::check_tensor;

namespace {

/// A random subset of the dims of a rank-`rank` tensor, each written as d or d - rank.
IntList random_dims(Generator& gen, std::size_t rank) {
  IntList dims;
  for (std::size_t d = 0; d < rank; ++d)
    if (gen.bits() & 1) dims.push_back(static_cast<std::int64_t>(d) - ((gen.bits() & 1) ? static_cast<std::int64_t>(rank) : 0));
  return dims;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

// ---- sum ---------------------------------------------------------------------------------

TEST_CASE("sum reduces over all dims by default and over the given dims otherwise") {
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  check_tensor(sum(x), DType::float32, {}, {21});
  check_tensor(sum(x, {0}), DType::float32, {3}, {5, 7, 9});
  check_tensor(sum(x, {1}), DType::float32, {2}, {6, 15});
  check_tensor(sum(x, {-1}, true), DType::float32, {2, 1}, {6, 15});
  check_tensor(sum(x, {}, true), DType::float32, {1, 1}, {21});
  check_tensor(x.sum({1, 0}), DType::float32, {}, {21});
}

TEST_CASE("sum over non-adjacent dims of a 3-D tensor keeps the others in order") {
  const Tensor y = tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f, 11.f}, {2, 3, 2});
  check_tensor(sum(y, {0, 2}), DType::float32, {3}, {0 + 1 + 6 + 7, 2 + 3 + 8 + 9, 4 + 5 + 10 + 11});
  check_tensor(sum(y, {0, 2}, true), DType::float32, {1, 3, 1}, {14, 22, 30});
  check_tensor(sum(y, {1}), DType::float32, {2, 2}, {6, 9, 24, 27});
}

TEST_CASE("sum of bool and int64 tensors gives int64") {
  check_tensor(sum(tensor({true, false, true, true})), DType::int64, {}, {3});
  check_tensor(sum(tensor({1, 2, 3, 4}, {2, 2}), {0}), DType::int64, {2}, {4, 6});
}

TEST_CASE("sum reads a transposed view through its strides") {
  const Tensor xt = transposed(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3}));  // [[1, 4], [2, 5], [3, 6]]
  check_tensor(sum(xt, {1}), DType::float32, {3}, {5, 7, 9});
  check_tensor(sum(xt, {0}), DType::float32, {2}, {6, 15});
}

TEST_CASE("sum over a size-0 dim gives zeros and over size-1 dims is the identity") {
  check_tensor(sum(zeros({0, 3}), {0}), DType::float32, {3}, {0, 0, 0});
  check_tensor(sum(zeros({2, 0}), {1}), DType::float32, {2}, {0, 0});
  check_tensor(sum(zeros({0, 3}), {1}), DType::float32, {0}, {});
  check_tensor(sum(zeros({0}, DType::int64)), DType::int64, {}, {0});
  check_tensor(sum(tensor({1.f, 2.f}, {2, 1}), {1}), DType::float32, {2}, {1, 2});
  check_tensor(sum(scalar_tensor(2.5f)), DType::float32, {}, {2.5});
  check_tensor(sum(scalar_tensor(2.5f), {0}, true), DType::float32, {}, {2.5});
}

// ---- mean --------------------------------------------------------------------------------

TEST_CASE("mean averages over the given dims") {
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  check_tensor(mean(x), DType::float32, {}, {3.5});
  check_tensor(mean(x, {0}), DType::float32, {3}, {2.5, 3.5, 4.5});
  check_tensor(mean(x, {1}, true), DType::float32, {2, 1}, {2, 5});
  check_tensor(mean(transposed(x), {0}), DType::float32, {2}, {2, 5});
  check_tensor(mean(tensor({7.f}, {1, 1}), {0, 1}), DType::float32, {}, {7});
}

TEST_CASE("mean over a size-0 dim is NaN, as in PyTorch") {
  check_tensor(mean(zeros({0, 2}), {0}), DType::float32, {2}, {kNaN, kNaN});
  check_tensor(mean(zeros({0})), DType::float32, {}, {kNaN});
}

// ---- amax --------------------------------------------------------------------------------

TEST_CASE("amax keeps the dtype and reduces over the given dims") {
  const Tensor x = tensor({3, -1, 7, 2, 9, -4}, {2, 3});
  check_tensor(amax(x), DType::int64, {}, {9});
  check_tensor(amax(x, {0}), DType::int64, {3}, {3, 9, 7});
  check_tensor(amax(x, {1}, true), DType::int64, {2, 1}, {7, 9});
  check_tensor(amax(transposed(x), {1}), DType::int64, {3}, {3, 9, 7});
  check_tensor(amax(tensor({false, true, false})), DType::bool_, {}, {1});
  check_tensor(amax(tensor({-5.f}, {1, 1}), {1}), DType::float32, {1}, {-5});
}

TEST_CASE("amax propagates NaN") {
  check_tensor(amax(tensor({1.f, kNaN, 3.f, 4.f, 5.f, 6.f}, {2, 3}), {1}), DType::float32, {2}, {kNaN, 6});
}

// ---- argmax ------------------------------------------------------------------------------

TEST_CASE("argmax without a dim indexes the flattened tensor") {
  const Tensor x = tensor({3.f, 8.f, 1.f, 2.f, 5.f, 0.f}, {2, 3});
  check_tensor(argmax(x), DType::int64, {}, {1});
  check_tensor(argmax(x, std::nullopt, true), DType::int64, {1, 1}, {1});
  check_tensor(argmax(transposed(x)), DType::int64, {}, {2});  // [[3, 2], [8, 5], [1, 0]]
  check_tensor(argmax(scalar_tensor(4.f)), DType::int64, {}, {0});
}

TEST_CASE("argmax along a dim takes the first index of ties") {
  const Tensor x = tensor({3, 8, 8, 9, 5, 9}, {2, 3});
  check_tensor(argmax(x, 1), DType::int64, {2}, {1, 0});
  check_tensor(argmax(x, 0), DType::int64, {3}, {1, 0, 1});
  check_tensor(argmax(x, -1, true), DType::int64, {2, 1}, {1, 0});
  check_tensor(argmax(transposed(x), 0), DType::int64, {2}, {1, 0});
  check_tensor(argmax(zeros({0, 3}), 1), DType::int64, {0}, {});
  check_tensor(argmax(ones({2, 1}), 1), DType::int64, {2}, {0, 0});
}

TEST_CASE("argmax treats NaN as the maximum") {
  check_tensor(argmax(tensor({1.f, kNaN, 3.f, kNaN})), DType::int64, {}, {1});
  check_tensor(argmax(tensor({1.f, 2.f, 7.f, kNaN}, {2, 2}), 1), DType::int64, {2}, {1, 1});
}

// ---- softmax, log_softmax ----------------------------------------------------------------

TEST_CASE("softmax normalises along a dim") {
  const Tensor x = tensor({0.f, 1.f, 2.f, 0.f, 0.f, 0.f}, {2, 3});
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), s = 1 + e1 + e2;
  check_tensor(softmax(x, 1), DType::float32, {2, 3}, {1 / s, e1 / s, e2 / s, 1 / 3.0, 1 / 3.0, 1 / 3.0});
  const double a = 1 / (1 + e1), b = 1 / (1 + e2);  // columns: (0, 0), (1, 0), (2, 0)
  check_tensor(softmax(x, 0), DType::float32, {2, 3}, {0.5, e1 * a, e2 * b, 0.5, a, b});
  check_tensor(x.softmax(-1), DType::float32, {2, 3}, {1 / s, e1 / s, e2 / s, 1 / 3.0, 1 / 3.0, 1 / 3.0});
  check_tensor(softmax(transposed(x), 0), DType::float32, {3, 2}, {1 / s, 1 / 3.0, e1 / s, 1 / 3.0, e2 / s, 1 / 3.0});
}

TEST_CASE("softmax subtracts the maximum so large inputs do not overflow") {
  const double e1 = std::exp(1.0);
  check_tensor(softmax(tensor({1000.f, 1001.f}), 0), DType::float32, {2}, {1 / (1 + e1), e1 / (1 + e1)});
  check_tensor(log_softmax(tensor({1000.f, 1001.f}), 0), DType::float32, {2},
               {-std::log(1 + e1), 1 - std::log(1 + e1)});
}

TEST_CASE("log_softmax is the log of softmax") {
  const Tensor x = tensor({0.f, 1.f, 2.f, -1.f}, {2, 2});
  const double l1 = std::log(1 + std::exp(1.0)), l2 = std::log(1 + std::exp(-3.0));
  check_tensor(log_softmax(x, 1), DType::float32, {2, 2}, {-l1, 1 - l1, -l2, -3 - l2});
  check_tensor(x.log_softmax(1), DType::float32, {2, 2}, {-l1, 1 - l1, -l2, -3 - l2});
}

TEST_CASE("softmax converts integer inputs to float32 and handles size-0 and size-1 dims") {
  const double e1 = std::exp(1.0);
  check_tensor(softmax(tensor({1, 2}), 0), DType::float32, {2}, {1 / (1 + e1), e1 / (1 + e1)});
  check_tensor(softmax(zeros({0, 3}), 0), DType::float32, {0, 3}, {});
  check_tensor(softmax(zeros({2, 0}), 0), DType::float32, {2, 0}, {});
  check_tensor(softmax(tensor({3.f, 4.f}, {2, 1}), 1), DType::float32, {2, 1}, {1, 1});
  check_tensor(log_softmax(tensor({3.f, 4.f}, {2, 1}), 1), DType::float32, {2, 1}, {0, 0});
  check_tensor(softmax(scalar_tensor(5.f), 0), DType::float32, {}, {1});
}

// ---- Meta functions ----------------------------------------------------------------------

TEST_CASE("sum, mean and amax meta functions agree with their kernels on random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    const IntList shape = testing::random_shape(gen, 0, 4);
    const Tensor x = randn(shape, gen);
    const IntList dims = random_dims(gen, shape.size());
    const bool keepdim = (gen.bits() & 1) != 0;
    testing::check_meta_agrees("sum", {x, dims}, {{"keepdim", keepdim}}, gen);
    testing::check_meta_agrees("sum", {x.to(DType::int64), dims, keepdim}, {}, gen);
    testing::check_meta_agrees("mean", {x, dims}, {{"keepdim", keepdim}}, gen);
    const Tensor y = randn(testing::random_shape(gen, 0, 4, 1, 4), gen);
    testing::check_meta_agrees("amax", {y, random_dims(gen, static_cast<std::size_t>(y.dim())), keepdim}, {}, gen);
  }
}

TEST_CASE("argmax, softmax and log_softmax meta functions agree with their kernels on random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    const Tensor x = randn(testing::random_shape(gen, 0, 4, 1, 4), gen);
    const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
    const std::int64_t dim = static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(2 * rank)) - rank;
    const bool keepdim = (gen.bits() & 1) != 0;
    testing::check_meta_agrees("argmax", {x, dim, keepdim}, {}, gen);
    testing::check_meta_agrees("argmax", {x}, {{"keepdim", keepdim}}, gen);
    const Tensor z = randn(testing::random_shape(gen, 0, 4), gen);
    const std::int64_t zrank = std::max<std::int64_t>(z.dim(), 1);
    const std::int64_t zdim = static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(2 * zrank)) - zrank;
    testing::check_meta_agrees("softmax", {z, zdim}, {}, gen);
    testing::check_meta_agrees("log_softmax", {z}, {{"dim", zdim}}, gen);
  }
}

TEST_CASE("reduction meta functions keep unknown dims unknown") {
  const OpDef& op = OpRegistry::instance().get("sum");
  const Tensor s = Tensor::symbolic(TensorMeta{DType::bool_, Shape{Dim::unknown(), 3, 4}}, SymbolicRef{1, 1});
  const ValueList args{s, IntList{2}, true};
  const OutputMeta meta = infer_meta(op, args);
  CHECK(meta.outputs[0] == TensorMeta{DType::int64, Shape{Dim::unknown(), 3, 1}});
  const Tensor f = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 3}}, SymbolicRef{1, 2});
  const ValueList argmax_args{f, Value(), true};
  CHECK(infer_meta(OpRegistry::instance().get("argmax"), argmax_args).outputs[0] ==
        TensorMeta{DType::int64, Shape{1, 1}});
  const ValueList amax_args{Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 3}}, SymbolicRef{1, 1}),
                            IntList{0}, false};
  CHECK(infer_meta(OpRegistry::instance().get("amax"), amax_args).outputs[0] ==
        TensorMeta{DType::float32, Shape{3}});
}

// ---- Errors ------------------------------------------------------------------------------

TEST_CASE("a reduction dim out of range or repeated is refused naming the shape") {
  const Tensor x = zeros({2, 3});
  static constexpr int line = __LINE__ + 1;
  auto out_of_range = [&] { return sum(x, {2}); };
  CHECK_THROWS_WITH_AS(out_of_range(), doctest::Contains(error_at(line, "sum").c_str()), OpError);
  CHECK_THROWS_WITH_AS(out_of_range(), doctest::Contains("dimension 2 is out of range for a tensor of shape [2, 3]"), OpError);
  static constexpr int repeat_line = __LINE__ + 1;
  auto repeated = [&] { return x.mean({1, -1}); };
  CHECK_THROWS_WITH_AS(repeated(), doctest::Contains(error_at(repeat_line, "mean").c_str()), OpError);
  CHECK_THROWS_WITH_AS(repeated(), doctest::Contains("repeats a dimension (shape [2, 3])"), OpError);
}

TEST_CASE("mean of an integer or bool tensor is refused naming the dtype") {
  static constexpr int line = __LINE__ + 1;
  auto bad = [] { return mean(tensor({1, 2, 3}, {1, 3})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "mean").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("got int64 of shape [1, 3]; convert it with .to(float32)"), OpError);
  CHECK_THROWS_WITH_AS(mean(tensor({true})), doctest::Contains("got bool of shape [1]"), OpError);
}

TEST_CASE("amax and argmax over a size-0 dim are refused") {
  static constexpr int line = __LINE__ + 1;
  auto bad_amax = [] { return amax(zeros({2, 0}), {1}); };
  CHECK_THROWS_WITH_AS(bad_amax(), doctest::Contains(error_at(line, "amax").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_amax(), doctest::Contains("expected reduction dim 1 to have non-zero size, got shape [2, 0]"), OpError);
  static constexpr int argmax_line = __LINE__ + 1;
  auto bad_argmax = [] { return argmax(zeros({0, 3}), 0); };
  CHECK_THROWS_WITH_AS(bad_argmax(), doctest::Contains(error_at(argmax_line, "argmax").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_argmax(), doctest::Contains("expected reduction dim 0 to have non-zero size, got shape [0, 3]"), OpError);
  static constexpr int flat_line = __LINE__ + 1;
  auto bad_flat = [] { return argmax(zeros({3, 0})); };
  CHECK_THROWS_WITH_AS(bad_flat(), doctest::Contains(error_at(flat_line, "argmax").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_flat(), doctest::Contains("a tensor with no elements (shape [3, 0])"), OpError);
}

TEST_CASE("argmax and softmax refuse bool tensors and bad dims") {
  static constexpr int line = __LINE__ + 1;
  auto bool_argmax = [] { return argmax(tensor({true, false})); };
  CHECK_THROWS_WITH_AS(bool_argmax(), doctest::Contains(error_at(line, "argmax").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bool_argmax(), doctest::Contains("bool tensors (shape [2])"), OpError);
  static constexpr int softmax_line = __LINE__ + 1;
  auto bool_softmax = [] { return softmax(tensor({true, false}), 0); };
  CHECK_THROWS_WITH_AS(bool_softmax(), doctest::Contains(error_at(softmax_line, "softmax").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bool_softmax(), doctest::Contains("convert with .to(float32)"), OpError);
  static constexpr int dim_line = __LINE__ + 1;
  auto bad_dim = [] { return log_softmax(zeros({2, 3}), -3); };
  CHECK_THROWS_WITH_AS(bad_dim(), doctest::Contains(error_at(dim_line, "log_softmax").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_dim(), doctest::Contains("dimension -3 is out of range for a tensor of shape [2, 3]"), OpError);
}

// ---- cumsum --------------------------------------------------------------------------------
// Its values on random inputs are compared with LibTorch's in tests/torchscript/native_ops_test.cpp.

TEST_CASE("cumsum sums each prefix along its dim, integral and bool input into int64") {
  check_tensor(cumsum(testing::iota({2, 3}), 1), DType::float32, {2, 3}, {0, 1, 3, 3, 7, 12});
  check_tensor(cumsum(testing::iota({2, 3}), -2), DType::float32, {2, 3}, {0, 1, 2, 3, 5, 7});
  check_tensor(cumsum(transposed(testing::iota({2, 3})), 0), DType::float32, {3, 2}, {0, 3, 1, 7, 3, 12});
  check_tensor(cumsum(arange(4), 0), DType::int64, {4}, {0, 1, 3, 6});
  check_tensor(cumsum(gt(testing::iota({4}), 1.0), 0), DType::int64, {4}, {0, 0, 1, 2});
  check_tensor(cumsum(arange(3), 0, DType::float32), DType::float32, {3}, {0, 1, 3});
  check_tensor(cumsum(zeros({0, 2}), 0), DType::float32, {0, 2}, {});
}

TEST_CASE("cumsum keeps a named dim and refuses a dim out of range") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim("N"), 4}}, SymbolicRef{1, 1});
  CHECK(infer_meta(OpRegistry::instance().get("cumsum"), ValueList{x, 0, Value()}).outputs[0].shape ==
        Shape{Dim("N"), 4});
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return cumsum(zeros({2, 3}), 2); };
  const std::string expected =
      error_at(line, "cumsum") + "dimension 2 is out of range for a tensor of shape [2, 3] (expected -2 to 1)";
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(expected.c_str()), OpError);
  CHECK_THROWS_WITH_AS(cumsum(zeros({2}), 0, DType::bool_),
                       doctest::Contains("cumsum(): dtype=bool is not supported (input of shape [2])"), OpUnsupported);
}

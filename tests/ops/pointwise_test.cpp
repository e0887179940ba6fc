#include "support/checks.hpp"

#include <limits>

using namespace symtrace;
using testing::check_meta_agrees;
using testing::check_tensor;

namespace {
// The transpose of a contiguous 2x3 [[0,1,2],[3,4,5]] as a strided view: [[0,3],[1,4],[2,5]].
Tensor transposed_2x3(DType dtype = DType::float32) {
  const Tensor base = arange(6, dtype);
  return Tensor::view_of(base, Shape{3, 2}, detail::Strides{1, 3}, 0);
}
}  // namespace

TEST_CASE("binary arithmetic computes elementwise with broadcasting") {
  const Tensor a = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  const Tensor row = tensor({10.f, 20.f, 30.f});
  const Tensor col = tensor({1.f, 2.f}, {2, 1});
  check_tensor(add(a, row), DType::float32, {2, 3}, {11, 22, 33, 14, 25, 36});
  check_tensor(sub(a, col), DType::float32, {2, 3}, {0, 1, 2, 2, 3, 4});
  check_tensor(mul(col, row), DType::float32, {2, 3}, {10, 20, 30, 20, 40, 60});
  check_tensor(div(a, 2), DType::float32, {2, 3}, {0.5, 1, 1.5, 2, 2.5, 3});
  check_tensor(pow(a, 2), DType::float32, {2, 3}, {1, 4, 9, 16, 25, 36});
  check_tensor(sub(1, row), DType::float32, {3}, {-9, -19, -29});
  check_tensor(div(1, tensor({2.f, 4.f})), DType::float32, {2}, {0.5, 0.25});
  check_tensor(pow(2, tensor({3, 0})), DType::int64, {2}, {8, 1});
}

TEST_CASE("operators compute like the functions and take scalars on either side") {
  const Tensor a = tensor({1.f, -2.f});
  check_tensor(a + 1, DType::float32, {2}, {2, -1});
  check_tensor(2 * a, DType::float32, {2}, {2, -4});
  check_tensor(3 - a, DType::float32, {2}, {2, 5});
  check_tensor(4 / a, DType::float32, {2}, {4, -2});
  check_tensor(a / a, DType::float32, {2}, {1, 1});
  check_tensor(-a, DType::float32, {2}, {-1, 2});
  check_tensor(a > 0, DType::bool_, {2}, {1, 0});
  check_tensor(a == -2, DType::bool_, {2}, {0, 1});
  check_tensor(a != a, DType::bool_, {2}, {0, 0});
  check_tensor(a <= 1, DType::bool_, {2}, {1, 1});
}

TEST_CASE("type promotion: int with float scalar gives float, division gives float, bool arithmetic is logical") {
  const Tensor i = tensor({1, 2, 3});
  check_tensor(i + 1, DType::int64, {3}, {2, 3, 4});
  check_tensor(i + 0.5, DType::float32, {3}, {1.5, 2.5, 3.5});
  check_tensor(i / 2, DType::float32, {3}, {0.5, 1, 1.5});
  check_tensor(i * tensor({true, false, true}), DType::int64, {3}, {1, 0, 3});
  check_tensor(add(tensor({true, false}), tensor({false, false})), DType::bool_, {2}, {1, 0});
  check_tensor(mul(tensor({true, true}), tensor({false, true})), DType::bool_, {2}, {0, 1});
  check_tensor(tensor({2.5f}) * 2, DType::float32, {1}, {5});
  check_tensor(pow(tensor({2, 3}), 3), DType::int64, {2}, {8, 27});
  check_tensor(tensor({1, 5}) < 2.5, DType::bool_, {2}, {1, 0});
}

TEST_CASE("division by zero follows IEEE: inf and nan, never a crash") {
  const auto v = div(tensor({1.f, -1.f, 0.f}), 0).to_vector<float>();
  CHECK(std::isinf(v[0]));
  CHECK(v[0] > 0);
  CHECK(std::isinf(v[1]));
  CHECK(v[1] < 0);
  CHECK(std::isnan(v[2]));
  check_tensor(tensor({1, 2}) / 0, DType::float32, {2}, {INFINITY, INFINITY});
}

TEST_CASE("unary functions compute the textbook values") {
  const Tensor x = tensor({-2.f, -0.5f, 0.f, 1.f, 7.f});
  check_tensor(neg(x), DType::float32, {5}, {2, 0.5, 0, -1, -7});
  check_tensor(abs(x), DType::float32, {5}, {2, 0.5, 0, 1, 7});
  check_tensor(relu(x), DType::float32, {5}, {0, 0, 0, 1, 7});
  check_tensor(relu6(x), DType::float32, {5}, {0, 0, 0, 1, 6});
  check_tensor(exp(tensor({0.f, 1.f})), DType::float32, {2}, {1, 2.718281828});
  check_tensor(log(tensor({1.f, 2.718281828f, 0.f})), DType::float32, {3}, {0, 1, -INFINITY});
  check_tensor(sqrt(tensor({4.f, 2.f})), DType::float32, {2}, {2, 1.414213562});
  check_tensor(rsqrt(tensor({4.f, 0.25f})), DType::float32, {2}, {0.5, 2});
  check_tensor(sigmoid(tensor({0.f, 2.f})), DType::float32, {2}, {0.5, 0.880797078});
  check_tensor(tanh(tensor({0.f, 1.f})), DType::float32, {2}, {0, 0.761594156});
  check_tensor(silu(tensor({0.f, 1.f, -1.f})), DType::float32, {3}, {0, 0.731058579, -0.268941421});
  const Tensor h = tensor({-4.f, -3.f, -1.5f, 0.f, 1.5f, 3.f, 4.f});
  check_tensor(hardsigmoid(h), DType::float32, {7}, {0, 0, 0.25, 0.5, 0.75, 1, 1});
  check_tensor(hardswish(h), DType::float32, {7}, {0, 0, -0.375, 0, 1.125, 3, 4});
  check_tensor(hardswish(tensor({std::int64_t{1}, std::int64_t{-4}})), DType::float32, {2}, {0.666666667, 0});  // ints: float32
  check_tensor(gelu(tensor({0.f, 1.f, -1.f})), DType::float32, {3}, {0, 0.841344746, -0.158655254});
  check_tensor(gelu(tensor({1.f, -1.f}), "tanh"), DType::float32, {2}, {0.841191990, -0.158808010});
  check_tensor(sqrt(tensor({4, 9})), DType::float32, {2}, {2, 3});  // integers compute in float32
  check_tensor(neg(tensor({3, -4})), DType::int64, {2}, {-3, 4});
  CHECK(std::isnan(sqrt(tensor({-1.f})).item<float>()));
}

TEST_CASE("clamp limits from either side and lets max win when min > max, as PyTorch does") {
  const Tensor x = tensor({-3.f, 0.f, 3.f});
  check_tensor(clamp(x, -1, 1), DType::float32, {3}, {-1, 0, 1});
  check_tensor(clamp(x, std::nullopt, 2), DType::float32, {3}, {-3, 0, 2});
  check_tensor(clamp(x, 1, std::nullopt), DType::float32, {3}, {1, 1, 3});
  check_tensor(clamp(x, 2, 1), DType::float32, {3}, {1, 1, 1});
  check_tensor(clamp(tensor({-5, 5}), 0, 3), DType::int64, {2}, {0, 3});
  check_tensor(clamp(tensor({-5, 5}), 0.5, 3), DType::float32, {2}, {0.5, 3});
  check_tensor(x.clamp(0, std::nullopt), DType::float32, {3}, {0, 0, 3});
}

TEST_CASE("where selects by a bool condition with broadcasting and scalar branches") {
  const Tensor cond = tensor({true, false, true});
  check_tensor(where(cond, tensor({1.f, 2.f, 3.f}), tensor({-1.f})), DType::float32, {3}, {1, -1, 3});
  check_tensor(where(cond, 1, 0), DType::int64, {3}, {1, 0, 1});
  check_tensor(where(tensor({true, false}, {2, 1}), tensor({1, 2, 3}), 0.5), DType::float32, {2, 3},
               {1, 2, 3, 0.5, 0.5, 0.5});
}

TEST_CASE("kernels read strided views correctly") {
  const Tensor t = transposed_2x3();
  CHECK_FALSE(t.is_contiguous());
  check_tensor(add(t, 1), DType::float32, {3, 2}, {1, 4, 2, 5, 3, 6});
  check_tensor(relu(t - 2), DType::float32, {3, 2}, {0, 1, 0, 2, 0, 3});
  check_tensor(mul(t, tensor({1.f, -1.f})), DType::float32, {3, 2}, {0, -3, 1, -4, 2, -5});
  check_tensor(where(t > 2, t, 0), DType::float32, {3, 2}, {0, 3, 0, 4, 0, 5});
  check_tensor(to(transposed_2x3(DType::int64), DType::float32), DType::float32, {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("size-0 and size-1 dims broadcast and compute without touching data") {
  check_tensor(add(zeros({0, 3}), ones({3})), DType::float32, {0, 3}, {});
  check_tensor(add(zeros({2, 0}), ones({2, 1})), DType::float32, {2, 0}, {});
  check_tensor(relu(zeros({0})), DType::float32, {0}, {});
  check_tensor(add(ones({1, 1}), tensor({1.f, 2.f})), DType::float32, {1, 2}, {2, 3});
  check_tensor(add(scalar_tensor(2.f), scalar_tensor(3.f)), DType::float32, {}, {5});
  check_tensor(mul(ones({2, 1, 2}), tensor({1.f, 2.f, 3.f}, {3, 1})), DType::float32, {2, 3, 2},
               {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
}

TEST_CASE("to converts dtypes and returns the same tensor when nothing changes") {
  const Tensor f = tensor({1.7f, -1.7f, 0.f});
  check_tensor(to(f, DType::int64), DType::int64, {3}, {1, -1, 0});
  check_tensor(to(f, DType::bool_), DType::bool_, {3}, {1, 1, 0});
  check_tensor(tensor({true, false}).to(DType::float32), DType::float32, {2}, {1, 0});
  CHECK(to(f, DType::float32).shares_storage_with(f));
}

TEST_CASE("in-place ops mutate the tensor, every handle to it, and broadcast the other operand") {
  Tensor x = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
  const Tensor alias = x;
  const Tensor r = x.add_(tensor({10.f, 20.f}));
  CHECK(r.shares_storage_with(x));
  check_tensor(alias, DType::float32, {2, 2}, {11, 22, 13, 24});
  x.mul_(0.5);
  check_tensor(x, DType::float32, {2, 2}, {5.5, 11, 6.5, 12});
  x.sub(20).relu_();  // in-place on a temporary result leaves x alone
  check_tensor(x, DType::float32, {2, 2}, {5.5, 11, 6.5, 12});
  Tensor y = tensor({-1.f, 2.f});
  y.relu_();
  check_tensor(y, DType::float32, {2}, {0, 2});
  y += 1;
  y *= 3;
  check_tensor(y, DType::float32, {2}, {3, 9});
  y.fill_(7);
  check_tensor(y, DType::float32, {2}, {7, 7});
  Tensor i = tensor({1, 2});
  i.add_(tensor({true, false}));
  check_tensor(i, DType::int64, {2}, {2, 2});
}

TEST_CASE("in-place ops on a strided view write through to the base; x.add_(x) reads a snapshot") {
  const Tensor base = arange(6, DType::float32);
  const Tensor evens = Tensor::view_of(base, Shape{3}, detail::Strides{2}, 0);
  evens.add_(100);
  check_tensor(base, DType::float32, {6}, {100, 1, 102, 3, 104, 5});
  const Tensor odds = Tensor::view_of(base, Shape{3}, detail::Strides{2}, 1);
  evens.copy_(odds);
  check_tensor(base, DType::float32, {6}, {1, 1, 3, 3, 5, 5});
  Tensor x = tensor({1.f, 2.f});
  x.add_(x);
  check_tensor(x, DType::float32, {2}, {2, 4});
  // Overlapping shifted views: y[1:] += y[:-1] must use the values before the update.
  const Tensor y = tensor({1.f, 1.f, 1.f, 1.f});
  Tensor::view_of(y, Shape{3}, detail::Strides{1}, 1).add_(Tensor::view_of(y, Shape{3}, detail::Strides{1}, 0));
  check_tensor(y, DType::float32, {4}, {1, 2, 2, 2});
}

TEST_CASE("copy_ broadcasts and converts the source") {
  const Tensor dst = zeros({2, 3}, DType::int64);
  dst.copy_(tensor({1.9f, 2.1f, -3.5f}));
  check_tensor(dst, DType::int64, {2, 3}, {1, 2, -3, 1, 2, -3});
}

TEST_CASE("pointwise meta functions agree with kernels over random shapes") {
  Generator gen(1234);
  const char* unary[] = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "relu",
                         "relu6", "silu", "hardsigmoid", "hardswish", "gelu", "sigmoid", "tanh",
                         "floor", "ceil", "round", "log2", "reciprocal", "atan"};
  const char* binary[] = {"add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge"};
  const DType dtypes[] = {DType::float32, DType::int64};
  for (int trial = 0; trial < 50; ++trial) {
    const IntList shape = testing::random_shape(gen, 0, 4);
    // A broadcast partner: a suffix of the shape with some dims set to 1.
    IntList other(shape.begin() + static_cast<std::ptrdiff_t>(gen.bits() % (shape.size() + 1)), shape.end());
    for (auto& d : other)
      if (gen.bits() % 3 == 0) d = 1;
    const DType dt = dtypes[trial % 2];
    const Tensor a = to(randn(shape, gen) * 3, dt);
    const Tensor b = to(randn(other, gen) * 3, dt);
    for (const char* op : unary) check_meta_agrees(op, {a}, {}, gen);
    for (const char* op : binary) {
      if (std::string_view(op) == "pow" && dt == DType::int64) continue;  // negative integer powers refused
      check_meta_agrees(op, {a, b}, {}, gen);
      check_meta_agrees(op, {b, a}, {}, gen);
      check_meta_agrees(op, {a, 2.5}, {}, gen);
    }
    if (dt == DType::int64) {
      for (const char* op : {"bitwise_and", "bitwise_or"}) {
        check_meta_agrees(op, {a, b}, {}, gen);
        check_meta_agrees(op, {a > 0, b < 0}, {}, gen);
        check_meta_agrees(op, {a, 6}, {}, gen);
      }
    }
    check_meta_agrees("clamp", {a, -1, 1}, {}, gen);
    check_meta_agrees("where", {a > 0, a, b}, {}, gen);
    check_meta_agrees("to", {a, DType::bool_}, {}, gen);
    check_meta_agrees("add_", {to(a, dt).add(0), b}, {}, gen);
    check_meta_agrees("mul_", {to(a, dt).add(0), b}, {}, gen);
    check_meta_agrees("relu_", {to(a, dt).add(0)}, {}, gen);
    check_meta_agrees("fill_", {to(a, dt).add(0), 3}, {}, gen);
    check_meta_agrees("copy_", {zeros(shape, DType::float32), b}, {}, gen);
  }
}

TEST_CASE("pointwise errors name the op, the shapes and the caller's line") {
  const Tensor a = zeros({2, 3});
  const Tensor b = zeros({4});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(add(a, b), doctest::Contains(fmt::format("pointwise_test.cpp:{}: add(): shapes [2, 3] and [4] cannot be broadcast: dimension 1 is 3 in one and 4 in the other; make them equal or 1", line).c_str()), OpError);
  static constexpr int op_line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(a * b, doctest::Contains(fmt::format("pointwise_test.cpp:{}: mul(): shapes [2, 3] and [4]", op_line).c_str()), OpError);
  static constexpr int method_line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(a.add_(zeros({3, 3})), doctest::Contains(fmt::format("pointwise_test.cpp:{}: add_(): shapes [2, 3] and [3, 3] cannot be broadcast", method_line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(a.add_(zeros({2, 2, 3})), doctest::Contains("add_(): the result of shape [2, 2, 3] (from [2, 3] and [2, 2, 3]) does not fit the in-place target of shape [2, 3]"), OpError);
  CHECK_THROWS_WITH_AS(zeros({2}, DType::int64).add_(0.5), doctest::Contains("add_(): the result type float32 cannot be stored in the in-place target of type int64 (shape [2])"), OpError);
  CHECK_THROWS_WITH_AS(where(a, a, a), doctest::Contains("where(): condition must be a bool tensor, got float32 of shape [2, 3]"), OpError);
  CHECK_THROWS_WITH_AS(neg(zeros({2}, DType::bool_)), doctest::Contains("neg(): is not defined for bool tensors (shape [2])"), OpError);
  CHECK_THROWS_WITH_AS(sub(zeros({1}, DType::bool_), zeros({1}, DType::bool_)), doctest::Contains("sub(): subtracting bool tensors is not supported"), OpError);
  CHECK_THROWS_WITH_AS(pow(tensor({2}), -1), doctest::Contains("pow(): integers cannot be raised to the negative power -1 (base shape [1])"), OpError);
  CHECK_THROWS_WITH_AS(clamp(a, std::nullopt, std::nullopt), doctest::Contains("clamp(): needs at least one of min and max (tensor of shape [2, 3])"), OpError);
  CHECK_THROWS_WITH_AS(gelu(a, "fast"), doctest::Contains("gelu(): approximate must be 'none' or 'tanh', got 'fast'"), OpError);
  CHECK_THROWS_WITH_AS(a.copy_(zeros({4, 2, 3})), doctest::Contains("copy_(): source of shape [4, 2, 3] cannot be broadcast to the destination of shape [2, 3]"), OpError);
  CHECK_THROWS_WITH_AS(add(Tensor(), a), doctest::Contains("add(): argument 'self' is an undefined Tensor"), OpError);
  CHECK_THROWS_WITH_AS(a + Tensor(), doctest::Contains("add(): argument 'other' is an undefined Tensor"), OpError);
  CHECK_THROWS_WITH_AS(a.add_(Tensor()), doctest::Contains("add_(): argument 'other' is an undefined Tensor"), OpError);
  CHECK_THROWS_WITH_AS(-Tensor(), doctest::Contains("neg(): argument 'self' is an undefined Tensor"), OpError);
  CHECK_THROWS_WITH_AS(where(a > 0, Tensor(), a), doctest::Contains("where(): argument 'self' is an undefined Tensor"), OpError);
}

TEST_CASE("int64 arithmetic wraps around on overflow, as in PyTorch") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  CHECK((tensor({max}) + 1).item<std::int64_t>() == min);
  CHECK((tensor({min}) - 1).item<std::int64_t>() == max);
  CHECK((tensor({max}) * 2).item<std::int64_t>() == -2);
  CHECK(neg(tensor({min})).item<std::int64_t>() == min);
  CHECK(abs(tensor({min})).item<std::int64_t>() == min);
  CHECK(pow(tensor({std::int64_t{1} << 32}), 1).item<std::int64_t>() == std::int64_t{1} << 32);
  CHECK(pow(tensor({3}), 40).item<std::int64_t>() == static_cast<std::int64_t>(12157665459056928801ull));
}

TEST_CASE("clamp with one bound keeps infinities on the open side") {
  check_tensor(clamp(tensor({-INFINITY, INFINITY}), std::nullopt, 6), DType::float32, {2}, {-INFINITY, 6});
  check_tensor(clamp(tensor({-INFINITY, INFINITY}), 0, std::nullopt), DType::float32, {2}, {0, INFINITY});
}

TEST_CASE("float functions take bool inputs as 0 and 1, as PyTorch does") {
  check_tensor(exp(tensor({true, false})), DType::float32, {2}, {2.718281828, 1});
  check_tensor(sigmoid(tensor({false})), DType::float32, {1}, {0.5});
}

TEST_CASE("fill_ writes without reading, so it can initialise fresh memory") {
  const Tensor t = Tensor::empty(Shape{3}, DType::bool_);
  t.fill_(true);
  check_tensor(t, DType::bool_, {3}, {1, 1, 1});
}

TEST_CASE("in-place ops refuse a target whose elements share memory (an expanded tensor)") {
  const Tensor base = zeros({1, 3});
  const Tensor wide = base.expand({2, 3});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(wide.add_(1), doctest::Contains(fmt::format("pointwise_test.cpp:{}: add_(): cannot write in place to a tensor of shape [2, 3] whose dim 0 repeats one element", line).c_str()), OpError);
  CHECK_THROWS_AS(wide.copy_(ones({2, 3})), OpError);
  CHECK_THROWS_AS(wide.fill_(1), OpError);
  CHECK_THROWS_AS(wide.relu_(), OpError);
  check_tensor(base, DType::float32, {1, 3}, {0, 0, 0});
}

TEST_CASE("in-place meta functions accept a target dim that is unknown") {
  const OpDef& add_ = OpRegistry::instance().get("add_");
  const Tensor self = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 3}}, SymbolicRef{3, 1});
  const ValueList args{self, zeros({5, 3})};
  CHECK(infer_meta(add_, args).outputs[0].shape == Shape{Dim::unknown(), 3});
  const ValueList bad{self, zeros({5, 4})};
  CHECK_THROWS_AS((void)infer_meta(add_, bad), OpError);
}

// Expected values: PyTorch 1.13 (CPU).
TEST_CASE("floor, ceil and round give PyTorch's values; round takes halves to the even neighbour") {
  const Tensor x = tensor({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f, -3.7f, NAN, INFINITY, -0.f});
  check_tensor(round(x), DType::float32, {11}, {-2, -2, -0, 0, 2, 2, 4, -4, NAN, INFINITY, -0});
  check_tensor(floor(x), DType::float32, {11}, {-3, -2, -1, 0, 1, 2, 3, -4, NAN, INFINITY, -0});
  check_tensor(ceil(x), DType::float32, {11}, {-2, -1, -0, 1, 2, 3, 4, -3, NAN, INFINITY, -0});
  CHECK(std::signbit(round(tensor({-0.5f})).item<float>()));  // -0, as torch.round(-0.5)
  SUBCASE("integers are already whole: same values, same dtype") {
    const Tensor i = tensor({1, 2, -3});
    for (const Tensor& r : {floor(i), ceil(i), round(i)}) check_tensor(r, DType::int64, {3}, {1, 2, -3});
  }
}

TEST_CASE("log2, reciprocal and atan compute in float32, also for integer and bool inputs") {
  check_tensor(log2(tensor({1.f, 8.f, 0.5f, 0.f, -1.f, 3.f})), DType::float32, {6},
               {0, 3, -1, -INFINITY, NAN, 1.5849625});
  check_tensor(reciprocal(tensor({2.f, -4.f, 0.f, -0.f, 3.f})), DType::float32, {5},
               {0.5, -0.25, INFINITY, -INFINITY, 0.33333334});
  check_tensor(atan(tensor({0.f, 1.f, -1.f, INFINITY, 0.5f})), DType::float32, {5},
               {0, 0.78539813, -0.78539813, 1.5707964, 0.46364760});
  check_tensor(reciprocal(tensor({2, -4, 0, 3})), DType::float32, {4}, {0.5, -0.25, INFINITY, 0.33333334});
  check_tensor(log2(tensor({1, 2, -3})), DType::float32, {3}, {0, 1, NAN});
  check_tensor(atan(tensor({1, 2, -3})), DType::float32, {3}, {0.78539813, 1.1071488, -1.2490458});
  check_tensor(reciprocal(tensor({true, false})), DType::float32, {2}, {1, INFINITY});
  check_tensor(log2(tensor({true, false})), DType::float32, {2}, {0, -INFINITY});
  check_tensor(atan(tensor({true, false})), DType::float32, {2}, {0.78539813, 0});
}

TEST_CASE("bitwise_and and bitwise_or are bitwise on int64 and logical on bool, with PyTorch's result type") {
  const Tensor a = tensor({12, 10, -7, 0});
  const Tensor b = tensor({10, 6, 3, -1});
  check_tensor(bitwise_and(a, b), DType::int64, {4}, {8, 2, 1, 0});
  check_tensor(bitwise_or(a, b), DType::int64, {4}, {14, 14, -5, -1});
  check_tensor(bitwise_and(a, 6), DType::int64, {4}, {4, 2, 0, 0});
  check_tensor(bitwise_or(a, -8), DType::int64, {4}, {-4, -6, -7, -8});
  const Tensor t = tensor({true, true, false, false});
  const Tensor f = tensor({true, false, true, false});
  check_tensor(bitwise_and(t, f), DType::bool_, {4}, {1, 0, 0, 0});
  check_tensor(bitwise_or(t, f), DType::bool_, {4}, {1, 1, 1, 0});
  SUBCASE("an integer operand promotes bool to int64; a bool scalar does not") {
    check_tensor(bitwise_and(t, 1), DType::int64, {4}, {1, 1, 0, 0});
    check_tensor(bitwise_or(t, true), DType::bool_, {4}, {1, 1, 1, 1});
    check_tensor(bitwise_and(t, tensor({3, 2, 1, 0})), DType::int64, {4}, {1, 0, 0, 0});
  }
  SUBCASE("shapes broadcast") {
    check_tensor(bitwise_and(tensor({true, false}, {2, 1}), tensor({true, false, true})), DType::bool_, {2, 3},
                 {1, 0, 1, 0, 0, 0});
  }
}

TEST_CASE("bitwise ops refuse floating operands and rounding refuses bool, naming the operands") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(bitwise_and(zeros({2}), tensor({1, 2})),
                       doctest::Contains(fmt::format("pointwise_test.cpp:{}: bitwise_and(): is defined for bool and "
                                                     "int64 operands only, got float32 of shape [2] and int64 of "
                                                     "shape [2]",
                                                     line)
                                             .c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS(bitwise_or(tensor({1, 2}), 1.5),
                       doctest::Contains("bitwise_or(): is defined for bool and int64 operands only, got int64 of "
                                         "shape [2] and the number 1.5; compare first (x > 0) or convert with "
                                         ".to(int64)"),
                       OpError);
  CHECK_THROWS_WITH_AS(floor(tensor({true})), doctest::Contains("floor(): is not defined for bool tensors (shape [1])"),
                       OpError);
  CHECK_THROWS_WITH_AS(round(tensor({false})), doctest::Contains("round(): is not defined for bool tensors"), OpError);
}

TEST_CASE("floor_divide and remainder round toward negative infinity, as Python's // and %") {
  auto op = [](const char* name, const Tensor& a, Value b) { return call(name, {Value(a), std::move(b)}).to_tensor(); };
  const Tensor a = tensor({7, -7, 7, -7, 0, 5});
  const Tensor b = tensor({2, 2, -2, -2, 3, 5});
  check_tensor(op("floor_divide", a, b), DType::int64, {6}, {3, -4, -4, 3, 0, 1});
  check_tensor(op("remainder", a, b), DType::int64, {6}, {1, 1, -1, -1, 0, 0});
  const Tensor x = tensor({7.5f, -7.5f, 7.5f, -0.5f, 1.f});
  check_tensor(op("floor_divide", x, 2), DType::float32, {5}, {3, -4, 3, -1, 0});
  check_tensor(op("remainder", x, 2), DType::float32, {5}, {1.5, 0.5, 1.5, 1.5, 1});
  check_tensor(op("floor_divide", x, -2), DType::float32, {5}, {-4, 3, -4, 0, -1});
  check_tensor(op("remainder", x, -2), DType::float32, {5}, {-0.5, -1.5, -0.5, -0.5, -1});
  check_tensor(op("floor_divide", x, 0.0), DType::float32, {5}, {INFINITY, -INFINITY, INFINITY, -INFINITY, INFINITY});
  CHECK_THROWS_WITH_AS(op("floor_divide", a, 0), doctest::Contains("integer division by zero"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(op("remainder", tensor({true, false}), tensor({true, true})),
                       doctest::Contains("remainder(): is not implemented for bool tensors (shapes [2] and [2])"), OpError);
}

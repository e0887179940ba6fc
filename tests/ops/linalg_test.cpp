#include "support/checks.hpp"

using namespace symtrace;
using testing::error_at;
using testing::transposed;
using testing::check_tensor;

namespace {

/// Small integers as floats (products and sums stay exact).
Tensor counting(const IntList& shape, int modulus, int shift) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  std::vector<float> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(static_cast<float>(i % modulus - shift));
  return tensor(values, shape);
}

std::int64_t random_size(Generator& gen, int lo, int hi) {
  return lo + static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(hi - lo + 1));
}

Value none() { return Value(); }

}  // namespace

// ---- matmul ------------------------------------------------------------------------------

TEST_CASE("matmul multiplies two matrices") {
  const Tensor a = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  const Tensor b = tensor({7.f, 8.f, 9.f, 10.f, 11.f, 12.f}, {3, 2});
  check_tensor(matmul(a, b), DType::float32, {2, 2}, {58, 64, 139, 154});
  check_tensor(a.matmul(b), DType::float32, {2, 2}, {58, 64, 139, 154});
}

TEST_CASE("matmul of int64 tensors stays int64 and mixed operands promote to float32") {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tensor({7, 8, 9, 10, 11, 12}, {3, 2});
  check_tensor(matmul(a, b), DType::int64, {2, 2}, {58, 64, 139, 154});
  check_tensor(matmul(a, b.to(DType::float32)), DType::float32, {2, 2}, {58, 64, 139, 154});
}

TEST_CASE("matmul of two vectors is their dot product, a 0-dim tensor") {
  check_tensor(matmul(tensor({1.f, 2.f, 3.f}), tensor({4.f, 5.f, 6.f})), DType::float32, {}, {32});
  check_tensor(matmul(tensor({2.f}), tensor({-3.f})), DType::float32, {}, {-6});
}

TEST_CASE("matmul promotes a 1-D operand to a matrix and removes the added dim") {
  const Tensor m = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  check_tensor(matmul(tensor({1.f, 2.f}), m), DType::float32, {3}, {9, 12, 15});
  check_tensor(matmul(m, tensor({1.f, 0.f, -1.f})), DType::float32, {2}, {-2, -2});
  // [2, 2, 3] x [3] -> [2, 2]; [3] x [2, 3, 2] -> [2, 2]
  const Tensor batch = counting({2, 2, 3}, 12, 0);  // 0..11
  check_tensor(matmul(batch, tensor({1.f, 1.f, 1.f})), DType::float32, {2, 2}, {3, 12, 21, 30});
  const Tensor right = counting({2, 3, 2}, 12, 0);  // [[[0, 1], [2, 3], [4, 5]], [[6, 7], [8, 9], [10, 11]]]
  check_tensor(matmul(tensor({1.f, 0.f, 2.f}), right), DType::float32, {2, 2}, {8, 11, 26, 29});
}

TEST_CASE("matmul of a 3-D by a 2-D tensor applies the matrix to every batch") {
  const Tensor a = counting({2, 2, 2}, 8, 0);  // [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
  const Tensor b = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
  check_tensor(matmul(a, b), DType::float32, {2, 2, 2}, {3, 4, 11, 16, 19, 28, 27, 40});
  // 2-D by 3-D: the left matrix is shared by every batch of the right.
  check_tensor(matmul(b, a), DType::float32, {2, 2, 2}, {4, 7, 8, 15, 16, 19, 36, 43});
}

TEST_CASE("matmul broadcasts batch dims: [2, 1, 3, 4] x [5, 4, 2] gives [2, 5, 3, 2]") {
  const Tensor a = counting({2, 1, 3, 4}, 7, 3);
  const Tensor b = counting({5, 4, 2}, 5, 2);
  const auto av = a.to_vector<double>();
  const auto bv = b.to_vector<double>();
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 2; ++c) {
          double acc = 0;
          for (int p = 0; p < 4; ++p) acc += av[static_cast<std::size_t>(i * 12 + r * 4 + p)] * bv[static_cast<std::size_t>(j * 8 + p * 2 + c)];
          expected.push_back(acc);
        }
  check_tensor(matmul(a, b), DType::float32, {2, 5, 3, 2}, expected);
}

TEST_CASE("matmul with a size-0 inner dim gives zeros and size-0 outer dims give empty results") {
  check_tensor(matmul(ones({2, 0}), ones({0, 3})), DType::float32, {2, 3}, {0, 0, 0, 0, 0, 0});
  check_tensor(matmul(zeros({0}), zeros({0})), DType::float32, {}, {0});
  check_tensor(matmul(ones({0, 3}), ones({3, 2})), DType::float32, {0, 2}, {});
  check_tensor(matmul(ones({0, 2, 3}), ones({3, 4})), DType::float32, {0, 2, 4}, {});
  check_tensor(matmul(ones({2, 3}), ones({0, 3, 4})), DType::float32, {0, 2, 4}, {});
  check_tensor(matmul(tensor({2.f}, {1, 1}), tensor({3.f, 4.f}, {1, 2})), DType::float32, {1, 2}, {6, 8});
}

TEST_CASE("matmul reads transposed operands through their strides") {
  const Tensor at = transposed(tensor({1.f, 4.f, 2.f, 5.f, 3.f, 6.f}, {3, 2}));     // [[1, 2, 3], [4, 5, 6]]
  const Tensor bt = transposed(tensor({7.f, 9.f, 11.f, 8.f, 10.f, 12.f}, {2, 3}));  // [[7, 8], [9, 10], [11, 12]]
  check_tensor(matmul(at, bt), DType::float32, {2, 2}, {58, 64, 139, 154});
  check_tensor(matmul(tensor({1.f, 1.f}), at), DType::float32, {3}, {5, 7, 9});
}

TEST_CASE("matmul's meta function agrees with its kernel on random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    const std::int64_t ra = random_size(gen, 1, 4), rb = random_size(gen, 1, 4);
    const std::int64_t m = random_size(gen, 0, 3), k = random_size(gen, 0, 3), n = random_size(gen, 0, 3);
    const IntList batch{random_size(gen, 0, 3), random_size(gen, 0, 3)};
    // Each operand takes the trailing batch dims it has room for, some of them 1 (broadcast).
    auto operand = [&](std::int64_t rank, std::int64_t rows, std::int64_t cols, bool left) {
      if (rank == 1) return IntList{left ? cols : rows};
      IntList shape(batch.end() - (rank - 2), batch.end());
      for (std::int64_t& d : shape)
        if (gen.bits() & 1) d = 1;
      shape.push_back(rows);
      shape.push_back(cols);
      return shape;
    };
    const Tensor a = randn(operand(ra, m, k, true), gen);
    const Tensor b = randn(operand(rb, k, n, false), gen);
    testing::check_meta_agrees("matmul", {a, b}, {}, gen);
    testing::check_meta_agrees("matmul", {a.to(DType::int64), b.to(DType::int64)}, {}, gen);
  }
}

TEST_CASE("matmul's meta function propagates unknown dims") {
  const OpDef& op = OpRegistry::instance().get("matmul");
  const Tensor a = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 2, 3}}, SymbolicRef{1, 1});
  const Tensor b = Tensor::symbolic(TensorMeta{DType::float32, Shape{3, Dim::unknown()}}, SymbolicRef{1, 2});
  const Tensor v = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown()}}, SymbolicRef{1, 3});
  CHECK(infer_meta(op, ValueList{a, b}).outputs[0].shape == Shape{Dim::unknown(), 2, Dim::unknown()});
  CHECK(infer_meta(op, ValueList{a, v}).outputs[0].shape == Shape{Dim::unknown(), 2});
  CHECK(infer_meta(op, ValueList{v, v}).outputs[0].shape == Shape{});
}

TEST_CASE("matmul refuses mismatched inner dims naming both shapes") {
  static constexpr int line = __LINE__ + 1;
  auto bad = [] { return matmul(zeros({2, 3}), zeros({4, 5})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "matmul").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("cannot multiply shapes [2, 3] and [4, 5]: the last dim of the first (3) must equal the second-to-last dim of the second (4)"), OpError);
  static constexpr int vector_line = __LINE__ + 1;
  auto bad_vector = [] { return matmul(zeros({2, 3}), zeros({2})); };
  CHECK_THROWS_WITH_AS(bad_vector(), doctest::Contains(error_at(vector_line, "matmul").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_vector(), doctest::Contains("cannot multiply shapes [2, 3] and [2]"), OpError);
}

TEST_CASE("matmul refuses batch dims that do not broadcast") {
  static constexpr int line = __LINE__ + 1;
  auto bad = [] { return matmul(zeros({2, 3, 4}), zeros({3, 4, 5})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "matmul").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("cannot multiply shapes [2, 3, 4] and [3, 4, 5]: their batch dims [2] and [3] cannot be broadcast"), OpError);
}

TEST_CASE("matmul refuses bool and 0-dim operands") {
  static constexpr int line = __LINE__ + 1;
  auto bad_bool = [] { return matmul(tensor({true, false}), tensor({true, true})); };
  CHECK_THROWS_WITH_AS(bad_bool(), doctest::Contains(error_at(line, "matmul").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_bool(), doctest::Contains("bool tensors (got bool of shape [2] and bool of shape [2])"), OpError);
  static constexpr int scalar_line = __LINE__ + 1;
  auto bad_scalar = [] { return matmul(scalar_tensor(2.f), zeros({2, 3})); };
  CHECK_THROWS_WITH_AS(bad_scalar(), doctest::Contains(error_at(scalar_line, "matmul").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_scalar(), doctest::Contains("need at least 1 dim, got shapes [] and [2, 3]"), OpError);
}

// ---- linear ------------------------------------------------------------------------------

TEST_CASE("linear computes x W^T + b") {
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  const Tensor w = tensor({1.f, 0.f, -1.f, 0.5f, 0.5f, 0.5f}, {2, 3});
  const Tensor b = tensor({10.f, 20.f});
  check_tensor(linear(x, w, b), DType::float32, {2, 2}, {8, 23, 8, 27.5});
  check_tensor(linear(x, w), DType::float32, {2, 2}, {-2, 3, -2, 7.5});
  check_tensor(linear(tensor({1.f, 2.f, 3.f}), w, b), DType::float32, {2}, {8, 23});
}

TEST_CASE("linear equals matmul(x, w.T) + b") {
  Generator gen(1234);
  const Tensor x = randn({2, 3, 4}, gen);
  const Tensor w = randn({5, 4}, gen);
  const Tensor b = randn({5}, gen);
  const Tensor y = linear(x, w, b);
  REQUIRE(y.shape() == Shape{2, 3, 5});
  CHECK(testing::max_abs_diff(y, matmul(x, transposed(w)) + b) < 1e-5);
  CHECK(testing::max_abs_diff(linear(x, w), matmul(x, transposed(w))) < 1e-5);
}

TEST_CASE("linear reads non-contiguous input and weight through their strides") {
  const Tensor xt = transposed(tensor({1.f, 4.f, 2.f, 5.f, 3.f, 6.f}, {3, 2}));      // [[1, 2, 3], [4, 5, 6]]
  const Tensor wt = transposed(tensor({1.f, 0.5f, 0.f, 0.5f, -1.f, 0.5f}, {3, 2}));  // [[1, 0, -1], [.5, .5, .5]]
  check_tensor(linear(xt, wt, tensor({10.f, 20.f})), DType::float32, {2, 2}, {8, 23, 8, 27.5});
}

TEST_CASE("linear with size-0 dims gives the bias or empty results") {
  check_tensor(linear(zeros({2, 0}), zeros({3, 0}), tensor({1.f, 2.f, 3.f})), DType::float32, {2, 3}, {1, 2, 3, 1, 2, 3});
  check_tensor(linear(zeros({2, 0}), zeros({3, 0})), DType::float32, {2, 3}, {0, 0, 0, 0, 0, 0});
  check_tensor(linear(zeros({0, 4}), zeros({3, 4}), zeros({3})), DType::float32, {0, 3}, {});
  check_tensor(linear(ones({2, 4}), zeros({0, 4})), DType::float32, {2, 0}, {});
  check_tensor(linear(tensor({2.f}, {1, 1}), tensor({3.f}, {1, 1}), tensor({1.f})), DType::float32, {1, 1}, {7});
}

TEST_CASE("linear's meta function agrees with its kernel on random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    IntList shape = testing::random_shape(gen, 0, 2);
    const std::int64_t in = random_size(gen, 0, 4), out = random_size(gen, 0, 4);
    shape.push_back(in);
    const Tensor x = randn(shape, gen);
    const Tensor w = randn({out, in}, gen);
    const Value bias = (gen.bits() & 1) ? Value(randn({out}, gen)) : none();
    testing::check_meta_agrees("linear", {x, w, bias}, {}, gen);
  }
}

TEST_CASE("linear's meta function propagates unknown dims") {
  const OpDef& op = OpRegistry::instance().get("linear");
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 4}}, SymbolicRef{1, 1});
  const Tensor w = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 4}}, SymbolicRef{1, 2});
  const Tensor b = Tensor::symbolic(TensorMeta{DType::float32, Shape{5}}, SymbolicRef{1, 3});
  CHECK(infer_meta(op, ValueList{x, w, none()}).outputs[0].shape == Shape{Dim::unknown(), Dim::unknown()});
  CHECK(infer_meta(op, ValueList{x, w, b}).outputs[0].shape == Shape{Dim::unknown(), 5});
}

TEST_CASE("linear refuses an input whose features do not match the weight, naming both shapes") {
  static constexpr int line = __LINE__ + 1;
  auto bad = [] { return linear(zeros({2, 3}), zeros({4, 5})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "linear").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("input of shape [2, 3] does not match weight of shape [4, 5]: the last dim of the input (3)"), OpError);
}

TEST_CASE("linear refuses a bias that does not match the weight") {
  static constexpr int line = __LINE__ + 1;
  auto bad = [] { return linear(zeros({2, 5}), zeros({4, 5}), zeros({3})); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "linear").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("bias of shape [3] does not match weight of shape [4, 5]: expected shape [4]"), OpError);
  static constexpr int rank_line = __LINE__ + 1;
  auto bad_rank = [] { return linear(zeros({2, 5}), zeros({4, 5}), zeros({1, 4})); };
  CHECK_THROWS_WITH_AS(bad_rank(), doctest::Contains(error_at(rank_line, "linear").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_rank(), doctest::Contains("argument 'bias' must have 1 dims, got shape [1, 4]"), OpError);
}

TEST_CASE("linear refuses integer inputs and weights that are not matrices") {
  static constexpr int line = __LINE__ + 1;
  auto bad_dtype = [] { return linear(zeros({2, 3}, DType::int64), zeros({4, 3})); };
  CHECK_THROWS_WITH_AS(bad_dtype(), doctest::Contains(error_at(line, "linear").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_dtype(), doctest::Contains("argument 'input' must be a floating-point tensor, got int64 of shape [2, 3]"), OpError);
  static constexpr int weight_line = __LINE__ + 1;
  auto bad_weight = [] { return linear(zeros({2, 3}), zeros({3})); };
  CHECK_THROWS_WITH_AS(bad_weight(), doctest::Contains(error_at(weight_line, "linear").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_weight(), doctest::Contains("argument 'weight' must have 2 dims, got shape [3]"), OpError);
  static constexpr int scalar_line = __LINE__ + 1;
  auto bad_input = [] { return linear(scalar_tensor(1.f), zeros({4, 3})); };
  CHECK_THROWS_WITH_AS(bad_input(), doctest::Contains(error_at(scalar_line, "linear").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad_input(), doctest::Contains("argument 'input' must have at least 1 dim, got shape []"), OpError);
}

TEST_CASE("matmul adds its products in the order of k: bit for bit the sum of a loop, across blocks and remainders") {
  Generator gen(11);
  for (const std::int64_t k : {1, 3, 4, 7, 256, 259, 517}) {
    CAPTURE(k);
    const std::int64_t m = 3, n = 9;
    const Tensor a = randn({m, k}, gen);
    const Tensor b = randn({k, n}, gen);
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = matmul(a, b).to_vector<float>();
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (std::int64_t p = 0; p < k; ++p) sum += av[static_cast<std::size_t>(i * k + p)] * bv[static_cast<std::size_t>(p * n + j)];
        CHECK(cv[static_cast<std::size_t>(i * n + j)] == sum);
      }
    }
  }
}

TEST_CASE("matmul propagates NaN and infinity through zero entries, as IEEE arithmetic does") {
  const Tensor a = tensor({0.f, 1.f}, {1, 2});
  const Tensor b = tensor({NAN, 2.f, 3.f, INFINITY}, {2, 2});
  const auto v = matmul(a, b).to_vector<float>();
  CHECK(std::isnan(v[0]));  // 0 * NaN + 1 * 3
  CHECK(std::isinf(v[1]));  // 0 * 2 + 1 * inf
}

// ---- einsum ------------------------------------------------------------------------------
// Its values on random inputs are compared with LibTorch's in tests/torchscript/native_ops_test.cpp.

TEST_CASE("einsum multiplies and sums as its equation says") {
  const Tensor a = testing::iota({2, 3});
  const Tensor b = testing::iota({3, 2});
  check_tensor(einsum("ij,jk->ik", {a, b}), DType::float32, {2, 2}, {10, 13, 28, 40});
  check_tensor(einsum("ij->ji", {a}), DType::float32, {3, 2}, {0, 3, 1, 4, 2, 5});
  check_tensor(einsum("ij", {a}), DType::float32, {2, 3}, {0, 1, 2, 3, 4, 5});
  check_tensor(einsum("ii", {testing::iota({3, 3})}), DType::float32, {}, {12});
  check_tensor(einsum("i,i->", {testing::iota({3}), testing::iota({3})}), DType::float32, {}, {5});
  check_tensor(einsum("...j->...", {a}), DType::float32, {2}, {3, 12});
  check_tensor(einsum("ij->", {zeros({0, 3})}), DType::float32, {}, {0});
}

TEST_CASE("einsum keeps named dims, and broadcasts size 1 against them") {
  const Tensor x = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim("N"), 3, 4}}, SymbolicRef{1, 1});
  const Tensor y = Tensor::symbolic(TensorMeta{DType::float32, Shape{1, 4, 5}}, SymbolicRef{2, 1});
  const OutputMeta meta = infer_meta(OpRegistry::instance().get("einsum"),
                                     ValueList{std::string("bij,bjk->bik"), TensorList{x, y}, Value()});
  CHECK(meta.outputs[0].shape == Shape{Dim("N"), 3, 5});
}

TEST_CASE("einsum refuses equations that do not fit its operands, naming the equation") {
  const Tensor a = zeros({2, 3});
  static constexpr int line = __LINE__ + 1;
  const auto bad = [&] { return einsum("ij,jk->ik", {a, a}); };
  const std::string expected = testing::error_at(line, "einsum") +
                               "equation 'ij,jk->ik': subscript j has size 2 in operand 1 of shape [2, 3], which does "
                               "not broadcast with its size 3 in an earlier operand";
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(expected.c_str()), OpError);
  const auto fails = [&](std::string_view equation, const TensorList& operands, const char* why) {
    CAPTURE(equation);
    CHECK_THROWS_WITH_AS(einsum(equation, operands), doctest::Contains(why), OpError);
  };
  fails("ij,jk", {a}, "equation 'ij,jk': the equation has 2 operand term(s) but 1 operand(s) are given");
  fails("ijk", {a}, "equation 'ijk': operand 0 has 2 dims, but its subscripts 'ijk' name 3");
  fails("i...jk", {a}, "operand 0 has 2 dims, but its subscripts 'i...jk' name 3 and an ellipsis");
  fails("i1", {a}, "equation 'i1': '1' at index 1 is not a subscript: subscripts are letters a-z and A-Z");
  fails("i..j", {a}, "a '.' at index 1 is not part of the one ellipsis ('...') a term may have");
  fails("ij->k", {a}, "equation 'ij->k': the output's subscript k is not an operand's");
  fails("ij->ii", {a}, "the output's subscript i appears more than once");
  fails("ij->...", {a}, "the output has an ellipsis ('...') but no operand has one");
  fails("ii", {a}, "subscript i is repeated in operand 0 of shape [2, 3], whose dims there differ (2 and 3)");
  CHECK_THROWS_WITH_AS(einsum("ij", {zeros({2, 3}, DType::int64)}),
                       doctest::Contains("operand 0 is int64 (shape [2, 3]); symtrace's einsum takes float32 operands"),
                       OpUnsupported);
}

#include "support/checks.hpp"

#include <functional>
#include <numeric>

using namespace symtrace;
using testing::transposed;
using testing::check_tensor;

namespace {

// Rows [0, 1], [2, 3], [4, 5].
Tensor table() { return tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, {3, 2}); }

}  // namespace

TEST_CASE("embedding picks the rows of weight named by the indices") {
  check_tensor(embedding(table(), tensor({2, 0, 2})), DType::float32, {3, 2}, {4, 5, 0, 1, 4, 5});
}

TEST_CASE("embedding appends the row dim to the indices' shape") {
  SUBCASE("2-D indices") {
    check_tensor(embedding(table(), tensor({0, 1, 2, 1}, {2, 2})), DType::float32, {2, 2, 2},
                 {0, 1, 2, 3, 4, 5, 2, 3});
  }
  SUBCASE("a 0-dim index") {
    check_tensor(embedding(table(), scalar_tensor(1)), DType::float32, {2}, {2, 3});
  }
  SUBCASE("size-1 dims") {
    check_tensor(embedding(table(), tensor({2}, {1, 1})), DType::float32, {1, 1, 2}, {4, 5});
  }
}

TEST_CASE("embedding handles size-0 indices and size-0 rows") {
  check_tensor(embedding(table(), zeros({0}, DType::int64)), DType::float32, {0, 2}, {});
  check_tensor(embedding(table(), zeros({2, 0}, DType::int64)), DType::float32, {2, 0, 2}, {});
  check_tensor(embedding(zeros({3, 0}), tensor({2, 0})), DType::float32, {2, 0}, {});
  check_tensor(embedding(zeros({0, 4}), zeros({0}, DType::int64)), DType::float32, {0, 4}, {});
}

TEST_CASE("embedding reads a non-contiguous weight and non-contiguous indices") {
  // The transpose of [[0, 2, 4], [1, 3, 5]] is table()'s rows; indices [[1, 0], [2, 1]] transposed.
  const Tensor w = transposed(tensor({0.f, 2.f, 4.f, 1.f, 3.f, 5.f}, {2, 3}));
  const Tensor idx = transposed(tensor({1, 2, 0, 1}, {2, 2}));
  REQUIRE_FALSE(w.is_contiguous());
  REQUIRE_FALSE(idx.is_contiguous());
  check_tensor(embedding(w, idx), DType::float32, {2, 2, 2}, {2, 3, 0, 1, 4, 5, 2, 3});
}

TEST_CASE("embedding reports an out-of-range index with its value and the number of rows") {
  for (const std::int64_t bad_index : {3, -1}) {
    CAPTURE(bad_index);
    static constexpr int line = __LINE__ + 1;
    const auto bad = [&] { return embedding(table(), tensor({std::int64_t{0}, bad_index})); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: embedding(): ", line).c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("index {} is out of range for an embedding table of 3 "
                                                              "rows (weight of shape [3, 2]); indices must be in "
                                                              "[0, 3)",
                                                              bad_index)
                                                      .c_str()),
                         OpError);
  }
}

TEST_CASE("embedding rejects non-int64 indices and a weight that is not 2-D") {
  SUBCASE("float indices") {
    static constexpr int line = __LINE__ + 1;
    const auto bad = [] { return embedding(table(), tensor({0.f, 1.f})); };
    const auto expected = fmt::format(
        "_test.cpp:{}: embedding(): indices must be an int64 tensor, got float32 of shape [2]; convert them", line);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(expected.c_str()), OpError);
  }
  SUBCASE("1-D weight") {
    CHECK_THROWS_WITH_AS(embedding(zeros({3}), tensor({0, 1})),
                         doctest::Contains("argument 'weight' must have 2 dims, got shape [3]"), OpError);
  }
  SUBCASE("int64 weight") {
    CHECK_THROWS_WITH_AS(embedding(zeros({3, 2}, DType::int64), tensor({0, 1})),
                         doctest::Contains("argument 'weight' must be a floating-point tensor, got int64 of shape "
                                           "[3, 2]"),
                         OpError);
  }
}

TEST_CASE("embedding's meta function agrees with its kernel over random shapes") {
  Generator gen(1234);
  for (int i = 0; i < 50; ++i) {
    const std::int64_t num = 1 + static_cast<std::int64_t>(gen.bits() % 4);
    const std::int64_t dim = static_cast<std::int64_t>(gen.bits() % 4);
    const IntList shape = testing::random_shape(gen, 0, 3);
    std::vector<std::int64_t> values;
    for (std::int64_t n = 0, total = std::reduce(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
         n < total; ++n)
      values.push_back(static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(num)));
    const Tensor indices = tensor(values, shape);
    testing::check_meta_agrees("embedding", {randn({num, dim}, gen), indices}, {}, gen);
  }
}

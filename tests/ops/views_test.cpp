#include "support/checks.hpp"

#include <algorithm>
#include <numeric>

using namespace symtrace;
using testing::error_at;
using testing::uniform_int;
using testing::iota;
using testing::range;
using testing::check_meta_agrees;
using testing::check_tensor;
using testing::random_shape;

namespace {

IntList strides_of(const Tensor& t) { return IntList(t.strides().begin(), t.strides().end()); }

void shuffle(IntList& v, Generator& gen) {
  for (std::size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[static_cast<std::size_t>(uniform_int(gen, 0, static_cast<std::int64_t>(i) - 1))]);
}

// Either `dim` or its negative form.
std::int64_t maybe_negative(std::int64_t dim, std::int64_t rank, Generator& gen) {
  return gen.bits() & 1 ? dim - rank : dim;
}

Tensor symbolic(Shape shape, DType dtype = DType::float32) {
  return Tensor::symbolic(TensorMeta{dtype, std::move(shape)}, SymbolicRef{1, 1});
}

Shape meta_shape(std::string_view op, ValueList args) {
  const OpDef& def = OpRegistry::instance().get(op);
  const ValueList bound = bind_arguments(def, std::move(args), {}, std::source_location::current());
  return infer_meta(def, bound).outputs.at(0).shape;
}

}  // namespace

// ---- reshape and view ----------------------------------------------------------------------

TEST_CASE("reshape of a contiguous tensor is a view that shares storage with it") {
  const Tensor x = iota({2, 3});
  const Tensor y = x.reshape({3, 2});
  check_tensor(y, DType::float32, {3, 2}, range(0, 6));
  CHECK(y.shares_storage_with(x));
  y.select(0, 1).fill_(9);
  check_tensor(x, DType::float32, {2, 3}, {0, 1, 9, 9, 4, 5});
}

TEST_CASE("reshape infers a single -1 from the element count") {
  check_tensor(iota({2, 3, 4}).reshape({-1, 4}), DType::float32, {6, 4}, range(0, 24));
  check_tensor(iota({2, 3, 4}).reshape({4, -1, 3}), DType::float32, {4, 2, 3}, range(0, 24));
  check_tensor(iota({2, 3}).reshape({-1}), DType::float32, {6}, range(0, 6));
  check_tensor(iota({}).reshape({-1}), DType::float32, {1}, {0});
  check_tensor(iota({1, 1}).reshape({}), DType::float32, {}, {0});
  check_tensor(iota({0, 3}).reshape({3, 0}), DType::float32, {3, 0}, {});
  check_tensor(iota({0, 3}).reshape({-1, 3}), DType::float32, {0, 3}, {});
  check_tensor(tensor({1, 2, 3, 4}).reshape({2, 2}), DType::int64, {2, 2}, {1, 2, 3, 4});
}

TEST_CASE("reshape of a transposed tensor copies it and shares nothing") {
  const Tensor x = iota({2, 3});
  const Tensor y = x.transpose(0, 1).reshape({6});
  check_tensor(y, DType::float32, {6}, {0, 3, 1, 4, 2, 5});
  CHECK_FALSE(y.shares_storage_with(x));
  CHECK(y.is_contiguous());
  y.fill_(7);
  check_tensor(x, DType::float32, {2, 3}, range(0, 6));
}

TEST_CASE("reshape stays a view whenever the strides allow one, as in PyTorch") {
  const Tensor x = iota({4, 6});
  const Tensor s = x.slice(1, 0, 3);  // [4, 3] with strides [6, 1]: rows are not adjacent
  const Tensor split_rows = s.reshape({2, 2, 3});
  check_tensor(split_rows, DType::float32, {2, 2, 3}, {0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20});
  CHECK(split_rows.shares_storage_with(x));
  CHECK(strides_of(split_rows) == IntList{12, 6, 1});
  const Tensor with_ones = s.reshape({4, 1, 3, 1});
  CHECK(with_ones.shares_storage_with(x));
  const Tensor merged = s.reshape({12});
  CHECK_FALSE(merged.shares_storage_with(x));
  check_tensor(merged, DType::float32, {12}, {0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20});

  const Tensor e = iota({3}).expand({2, 3});
  CHECK(e.reshape({2, 1, 3}).shares_storage_with(e));
  CHECK_FALSE(e.reshape({6}).shares_storage_with(e));
  check_tensor(e.reshape({6}), DType::float32, {6}, {0, 1, 2, 0, 1, 2});
}

TEST_CASE("reshape errors name the requested shape and the input shape") {
  const Tensor x = iota({2, 3});
  SUBCASE("two -1") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.reshape({-1, -1}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "reshape").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("only one dimension can be inferred"), OpError);
  }
  SUBCASE("not divisible") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.reshape({4, -1}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "reshape").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("shape [4, -1] is invalid for an input of shape [2, 3]"), OpError);
  }
  SUBCASE("wrong element count") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.reshape({5}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "reshape").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("it holds 5 elements, the input 6"), OpError);
  }
  SUBCASE("-1 next to a size 0 is ambiguous") {
    const Tensor empty = iota({0, 3});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return empty.reshape({0, -1}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "reshape").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("cannot infer the -1 in shape [0, -1] for an input of shape [0, 3]"),
                         OpError);
  }
  SUBCASE("negative size") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return reshape(x, {-2, -3}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "reshape").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("invalid size -2 at dimension 0 of shape [-2, -3]"), OpError);
  }
}

TEST_CASE("view of a contiguous tensor shares storage and writes through") {
  const Tensor x = iota({2, 3});
  const Tensor y = view(x, {3, -1});
  check_tensor(y, DType::float32, {3, 2}, range(0, 6));
  CHECK(y.shares_storage_with(x));
  y.add_(1.0f);
  check_tensor(x, DType::float32, {2, 3}, range(1, 7));
  CHECK(x.slice(1, 0, 2).view({2, 2, 1}).shares_storage_with(x));
}

TEST_CASE("view of a non-contiguous tensor fails and says to use reshape()") {
  const Tensor t = iota({2, 3}).transpose(0, 1);
  static constexpr int line = __LINE__ + 1;
  auto bad = [&] { return t.view({6}); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "view").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("view size is not compatible with input tensor's size and stride"),
                       OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("shape [3, 2] with strides [1, 3] cannot be viewed as [6]"), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("use reshape() instead"), OpError);
}

// ---- flatten -------------------------------------------------------------------------------

TEST_CASE("flatten merges the dims from start_dim to end_dim") {
  const Tensor x = iota({2, 3, 4});
  check_tensor(x.flatten(), DType::float32, {24}, range(0, 24));
  check_tensor(x.flatten(1), DType::float32, {2, 12}, range(0, 24));
  check_tensor(flatten(x, 0, 1), DType::float32, {6, 4}, range(0, 24));
  check_tensor(x.flatten(-2, -1), DType::float32, {2, 12}, range(0, 24));
  check_tensor(x.flatten(1, 1), DType::float32, {2, 3, 4}, range(0, 24));
  CHECK(x.flatten(1).shares_storage_with(x));
  check_tensor(iota({}).flatten(), DType::float32, {1}, {0});
  check_tensor(iota({2, 0, 3}).flatten(1), DType::float32, {2, 0}, {});
  check_tensor(iota({2, 3}).transpose(0, 1).flatten(), DType::float32, {6}, {0, 3, 1, 4, 2, 5});
}

TEST_CASE("flatten rejects a start_dim after end_dim and dims out of range") {
  const Tensor x = iota({2, 3, 4});
  SUBCASE("start after end") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.flatten(2, 1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "flatten").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("start_dim 2 comes after end_dim 1 for a tensor of shape [2, 3, 4]"),
                         OpError);
  }
  SUBCASE("out of range") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.flatten(0, 3); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "flatten").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 3 is out of range for a tensor of shape [2, 3, 4]"),
                         OpError);
  }
}

// ---- permute, transpose --------------------------------------------------------------------

TEST_CASE("permute reorders dims and their strides without copying") {
  const Tensor x = iota({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  std::vector<double> expected;  // p[i][j][k] = x[j][k][i]
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(j * 12 + k * 4 + i);
  check_tensor(p, DType::float32, {4, 2, 3}, expected);
  CHECK(strides_of(p) == IntList{1, 12, 4});
  CHECK(p.shares_storage_with(x));
  check_tensor(permute(x, {-1, 0, -2}), DType::float32, {4, 2, 3}, expected);
  check_tensor(iota({}).permute({}), DType::float32, {}, {0});
  check_tensor(iota({0, 2}).permute({1, 0}), DType::float32, {2, 0}, {});
}

TEST_CASE("permute rejects dims that are not a permutation, naming them") {
  const Tensor x = iota({2, 3, 4});
  SUBCASE("repeated dim") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.permute({0, -3, 1}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "permute").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dims [0, -3, 1] is not a permutation of the dimensions of shape "
                                                  "[2, 3, 4]: dimension 0 appears twice"),
                         OpError);
  }
  SUBCASE("wrong number of dims") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.permute({1, 0}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "permute").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dims [1, 0] must name each of the 3 dimensions of shape [2, 3, 4]"),
                         OpError);
  }
}

TEST_CASE("transpose swaps the sizes and strides of two dims") {
  const Tensor x = iota({2, 3});
  const Tensor t = x.transpose(0, 1);
  check_tensor(t, DType::float32, {3, 2}, {0, 3, 1, 4, 2, 5});
  CHECK(strides_of(t) == IntList{1, 3});
  CHECK(t.shares_storage_with(x));
  CHECK_FALSE(t.is_contiguous());
  check_tensor(transpose(x, -1, -2), DType::float32, {3, 2}, {0, 3, 1, 4, 2, 5});
  check_tensor(x.transpose(1, 1), DType::float32, {2, 3}, range(0, 6));
  check_tensor(iota({}).transpose(0, -1), DType::float32, {}, {0});
  const Tensor b = tensor({true, false, false, true, true, false}, {3, 2}).transpose(0, 1);
  check_tensor(b, DType::bool_, {2, 3}, {1, 0, 1, 0, 1, 0});
  static constexpr int line = __LINE__ + 1;
  auto bad = [&] { return x.transpose(0, 2); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "transpose").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 2 is out of range for a tensor of shape [2, 3]"), OpError);
}

// ---- unsqueeze, squeeze, expand, contiguous ------------------------------------------------

TEST_CASE("unsqueeze inserts a size-1 dim at any position, counting negative positions from the end") {
  const Tensor x = iota({2, 3});
  check_tensor(x.unsqueeze(0), DType::float32, {1, 2, 3}, range(0, 6));
  check_tensor(x.unsqueeze(1), DType::float32, {2, 1, 3}, range(0, 6));
  check_tensor(x.unsqueeze(2), DType::float32, {2, 3, 1}, range(0, 6));
  check_tensor(unsqueeze(x, -1), DType::float32, {2, 3, 1}, range(0, 6));
  check_tensor(x.unsqueeze(-3), DType::float32, {1, 2, 3}, range(0, 6));
  check_tensor(iota({}).unsqueeze(0), DType::float32, {1}, {0});
  check_tensor(iota({0}).unsqueeze(0), DType::float32, {1, 0}, {});
  CHECK(x.unsqueeze(1).shares_storage_with(x));
  CHECK(x.unsqueeze(1).is_contiguous());
  check_tensor(x.transpose(0, 1).unsqueeze(1), DType::float32, {3, 1, 2}, {0, 3, 1, 4, 2, 5});
  static constexpr int line = __LINE__ + 1;
  auto bad = [&] { return x.unsqueeze(3); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "unsqueeze").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 3 is out of range for inserting into a tensor of shape "
                                                "[2, 3] (expected -3 to 2)"),
                       OpError);
}

TEST_CASE("squeeze removes every size-1 dim, or only the one named") {
  const Tensor x = iota({1, 3, 1, 2});
  check_tensor(x.squeeze(), DType::float32, {3, 2}, range(0, 6));
  check_tensor(x.squeeze(0), DType::float32, {3, 1, 2}, range(0, 6));
  check_tensor(squeeze(x, -2), DType::float32, {1, 3, 2}, range(0, 6));
  check_tensor(x.squeeze(1), DType::float32, {1, 3, 1, 2}, range(0, 6));  // not 1: unchanged
  CHECK(x.squeeze().shares_storage_with(x));
  check_tensor(iota({1, 1}).squeeze(), DType::float32, {}, {0});
  check_tensor(iota({}).squeeze(), DType::float32, {}, {0});
  check_tensor(iota({}).squeeze(0), DType::float32, {}, {0});
  check_tensor(iota({1, 0}).squeeze(), DType::float32, {0}, {});
  static constexpr int line = __LINE__ + 1;
  auto bad = [&] { return x.squeeze(4); };
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "squeeze").c_str()), OpError);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 4 is out of range for a tensor of shape [1, 3, 1, 2]"),
                       OpError);
}

TEST_CASE("squeeze cannot tell whether an unknown dim is 1, so it throws TraceError") {
  const OpDef& op = OpRegistry::instance().get("squeeze");
  const Tensor x = symbolic(Shape{Dim::unknown(), 3, 1});
  SUBCASE("all dims") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return infer_meta(op, ValueList{x, Value()}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("views_test.cpp:{}: squeeze(): ", line).c_str()),
                         TraceError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("cannot tell whether dimension 0 of shape [?, 3, 1] is 1"), TraceError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("give example shapes"), TraceError);
  }
  SUBCASE("the unknown dim named") {
    CHECK_THROWS_WITH_AS(infer_meta(op, ValueList{x, Value(0)}),
                         doctest::Contains("cannot tell whether dimension 0 of shape [?, 3, 1] is 1"), TraceError);
  }
  SUBCASE("a known dim named") {
    CHECK(infer_meta(op, ValueList{x, Value(-1)}).outputs.at(0).shape == Shape{Dim::unknown(), 3});
    CHECK(infer_meta(op, ValueList{x, Value(1)}).outputs.at(0).shape == Shape{Dim::unknown(), 3, 1});
  }
}

TEST_CASE("expand stretches size-1 dims with stride 0 and adds leading dims") {
  const Tensor x = iota({3, 1});
  const Tensor e = x.expand({2, 3, 4});
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expected.push_back(j);
  check_tensor(e, DType::float32, {2, 3, 4}, expected);
  CHECK(strides_of(e) == IntList{0, 1, 0});
  CHECK(e.shares_storage_with(x));
  check_tensor(expand(x, {-1, 2}), DType::float32, {3, 2}, {0, 0, 1, 1, 2, 2});
  check_tensor(x.expand({3, 1}), DType::float32, {3, 1}, {0, 1, 2});
  check_tensor(iota({1}).expand({0}), DType::float32, {0}, {});
  check_tensor(iota({}).expand({2}), DType::float32, {2}, {0, 0});
  x.fill_(7);  // the expanded view reads the base
  check_tensor(e.select(0, 1).select(1, 3), DType::float32, {3}, {7, 7, 7});
}

TEST_CASE("expand rejects growing a dim that is not 1 and -1 in a new dim") {
  const Tensor x = iota({3, 1});
  SUBCASE("non-singleton dim") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.expand({4, 4}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "expand").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the expanded size 4 must match the existing size 3 at "
                                                  "non-singleton dimension 0: cannot expand shape [3, 1] to [4, 4]"),
                         OpError);
  }
  SUBCASE("too few sizes") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.expand({3}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "expand").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the number of sizes given (1, [3]) must be at least the number of "
                                                  "dims of shape [3, 1]"),
                         OpError);
  }
  SUBCASE("-1 in a new leading dim") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.expand({-1, 3, 2}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "expand").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the size -1 at position 0 of [-1, 3, 2] names a new leading "
                                                  "dimension"),
                         OpError);
  }
}

TEST_CASE("contiguous returns its input when already contiguous and a packed copy otherwise") {
  const Tensor x = iota({2, 3});
  const Tensor same = x.contiguous();
  CHECK(same.impl_ptr() == x.impl_ptr());
  const Tensor t = x.transpose(0, 1);
  const Tensor c = contiguous(t);
  check_tensor(c, DType::float32, {3, 2}, {0, 3, 1, 4, 2, 5});
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.shares_storage_with(x));
  check_tensor(iota({0, 2}).transpose(0, 1).contiguous(), DType::float32, {2, 0}, {});
}

// ---- slice, narrow, select -----------------------------------------------------------------

TEST_CASE("slice follows Python's rules for negative bounds, clamping and steps") {
  const Tensor x = iota({2, 5});
  check_tensor(x.slice(1, 1, 4), DType::float32, {2, 3}, {1, 2, 3, 6, 7, 8});
  check_tensor(x.slice(1, -2, std::nullopt), DType::float32, {2, 2}, {3, 4, 8, 9});
  check_tensor(x.slice(-1, std::nullopt, -3), DType::float32, {2, 2}, {0, 1, 5, 6});
  const Tensor stepped = slice(x, 1, std::nullopt, std::nullopt, 2);
  check_tensor(stepped, DType::float32, {2, 3}, {0, 2, 4, 5, 7, 9});
  CHECK(strides_of(stepped) == IntList{5, 2});
  check_tensor(x.slice(1, 1, 100, 3), DType::float32, {2, 2}, {1, 4, 6, 9});
  check_tensor(x.slice(1, 3, 100), DType::float32, {2, 2}, {3, 4, 8, 9});
  check_tensor(x.slice(1, -100, 2), DType::float32, {2, 2}, {0, 1, 5, 6});
  check_tensor(x.slice(1, 4, 2), DType::float32, {2, 0}, {});
  check_tensor(x.slice(1, 7, 9), DType::float32, {2, 0}, {});
  check_tensor(x.slice(0, 1, std::nullopt), DType::float32, {1, 5}, range(5, 10));
  check_tensor(x.transpose(0, 1).slice(0, 3, 5), DType::float32, {2, 2}, {3, 8, 4, 9});
  CHECK(x.slice(1, 1, 4).shares_storage_with(x));
}

TEST_CASE("slice rejects a non-positive step and 0-dim tensors") {
  const Tensor x = iota({2, 5});
  SUBCASE("step 0") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.slice(1, 0, 2, 0); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "slice").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("step must be positive, got 0 (shape [2, 5])"), OpError);
  }
  SUBCASE("0-dim") {
    const Tensor s = iota({});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return s.slice(0, 0, 1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "slice").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("cannot slice a 0-dim tensor"), OpError);
  }
}

TEST_CASE("narrow takes length elements from start, which may be negative") {
  const Tensor x = iota({2, 5});
  check_tensor(x.narrow(1, 1, 3), DType::float32, {2, 3}, {1, 2, 3, 6, 7, 8});
  check_tensor(narrow(x, -1, -2, 2), DType::float32, {2, 2}, {3, 4, 8, 9});
  check_tensor(x.narrow(0, 2, 0), DType::float32, {0, 5}, {});
  check_tensor(x.narrow(1, 5, 0), DType::float32, {2, 0}, {});
  check_tensor(x.narrow(0, 1, 1), DType::float32, {1, 5}, range(5, 10));
  CHECK(x.narrow(1, 1, 3).shares_storage_with(x));
}

TEST_CASE("narrow rejects a start or length outside the dim") {
  const Tensor x = iota({2, 5});
  SUBCASE("start out of range") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.narrow(1, -6, 1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "narrow").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("start -6 is out of range for dimension 1 of size 5 (shape [2, 5])"),
                         OpError);
  }
  SUBCASE("past the end") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.narrow(1, 3, 3); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "narrow").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("start (3) + length (3) exceeds the size 5 of dimension 1"), OpError);
  }
  SUBCASE("negative length") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.narrow(0, 0, -1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "narrow").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("length must be non-negative, got -1 (shape [2, 5])"), OpError);
  }
}

TEST_CASE("select removes a dim at an index, which may be negative") {
  const Tensor x = iota({2, 3});
  check_tensor(x.select(0, 1), DType::float32, {3}, {3, 4, 5});
  check_tensor(select(x, 1, -1), DType::float32, {2}, {2, 5});
  check_tensor(x.select(-1, 0), DType::float32, {2}, {0, 3});
  check_tensor(x.transpose(0, 1).select(0, 2), DType::float32, {2}, {2, 5});
  check_tensor(x.select(0, 1).select(0, 2), DType::float32, {}, {5});
  check_tensor(iota({2, 0}).select(0, 1), DType::float32, {0}, {});
  check_tensor(tensor({1, 2, 3, 4}, {2, 2}).select(1, 1), DType::int64, {2}, {2, 4});
  CHECK(x.select(0, 1).shares_storage_with(x));
}

TEST_CASE("select out of range names the index and the size") {
  const Tensor x = iota({2, 3});
  SUBCASE("past the end") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.select(1, 3); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index 3 is out of range for dimension 1 of size 3 (shape [2, 3])"),
                         OpError);
  }
  SUBCASE("before the start") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.select(0, -3); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index -3 is out of range for dimension 0 of size 2"), OpError);
  }
}

// ---- Views alias their base ----------------------------------------------------------------

TEST_CASE("in-place ops on views write through to the base") {
  const Tensor x = iota({2, 4});
  SUBCASE("slice assignment through copy_") {
    x.slice(1, 1, 3).copy_(tensor({10.f, 11.f, 12.f, 13.f}, {2, 2}));
    check_tensor(x, DType::float32, {2, 4}, {0, 10, 11, 3, 4, 12, 13, 7});
  }
  SUBCASE("copy_ broadcasting into a stepped slice") {
    x.slice(1, std::nullopt, std::nullopt, 2).copy_(tensor({-1.f, -2.f}));
    check_tensor(x, DType::float32, {2, 4}, {-1, 1, -2, 3, -1, 5, -2, 7});
  }
  SUBCASE("add_ on a selected row") {
    x.select(0, 1).add_(100.f);
    check_tensor(x, DType::float32, {2, 4}, {0, 1, 2, 3, 104, 105, 106, 107});
  }
  SUBCASE("fill_ on a narrowed column of a transposed view") {
    x.transpose(0, 1).narrow(0, 3, 1).fill_(-5);
    check_tensor(x, DType::float32, {2, 4}, {0, 1, 2, -5, 4, 5, 6, -5});
  }
  SUBCASE("fill_ through view, unsqueeze, squeeze and permute") {
    x.view({4, 2}).unsqueeze(0).squeeze(0).permute({1, 0}).select(0, 0).fill_(0.5f);
    check_tensor(x, DType::float32, {2, 4}, {0.5, 1, 0.5, 3, 0.5, 5, 0.5, 7});
  }
  SUBCASE("mul_ on a reshape that is a view") {
    x.reshape({8}).narrow(0, 6, 2).mul_(2.f);
    check_tensor(x, DType::float32, {2, 4}, {0, 1, 2, 3, 4, 5, 12, 14});
  }
}

TEST_CASE("only the ops that always return a view are flagged as views") {
  const auto& registry = OpRegistry::instance();
  for (const char* name : {"view", "permute", "transpose", "unsqueeze", "squeeze", "expand", "slice", "narrow",
                           "select"})
    CHECK_MESSAGE(registry.get(name).has(OpFlags::view), name);
  for (const char* name : {"reshape", "flatten", "contiguous"})
    CHECK_MESSAGE(!registry.get(name).has(OpFlags::view), name);
}

// ---- Unknown dims --------------------------------------------------------------------------

TEST_CASE("meta functions of views propagate unknown dims") {
  const Dim u = Dim::unknown();
  const Tensor x = symbolic(Shape{u, 3, 4});
  CHECK(meta_shape("reshape", {x, IntList{-1, 12}}) == Shape{u, 12});
  CHECK(meta_shape("reshape", {x, IntList{5, 12}}) == Shape{5, 12});
  CHECK(meta_shape("view", {x, IntList{2, -1}}) == Shape{2, u});
  CHECK(meta_shape("reshape", {symbolic(Shape{u, 0}), IntList{-1, 5}}) == Shape{0, 5});
  CHECK(meta_shape("flatten", {x}) == Shape{u});
  CHECK(meta_shape("flatten", {x, 1}) == Shape{u, 12});
  CHECK(meta_shape("flatten", {symbolic(Shape{u, 0})}) == Shape{0});
  CHECK(meta_shape("permute", {x, IntList{2, 0, 1}}) == Shape{4, u, 3});
  CHECK(meta_shape("transpose", {x, 0, -1}) == Shape{4, 3, u});
  CHECK(meta_shape("unsqueeze", {x, 1}) == Shape{u, 1, 3, 4});
  CHECK(meta_shape("expand", {symbolic(Shape{u, 1}), IntList{-1, 5}}) == Shape{u, 5});
  CHECK(meta_shape("expand", {symbolic(Shape{u, 1}), IntList{2, 7, 5}}) == Shape{2, 7, 5});
  CHECK(meta_shape("slice", {x, 0, 1, 3}) == Shape{u, 3, 4});
  CHECK(meta_shape("slice", {x, 1, 1, 3}) == Shape{u, 2, 4});
  CHECK(meta_shape("narrow", {x, 0, -2, 2}) == Shape{2, 3, 4});
  CHECK(meta_shape("select", {x, 0, 7}) == Shape{3, 4});
  CHECK(meta_shape("contiguous", {x}) == Shape{u, 3, 4});
  CHECK_THROWS_WITH_AS(meta_shape("reshape", {symbolic(Shape{u, 3}), IntList{0, -1}}),
                       doctest::Contains("the other sizes multiply to 0"), OpError);
}

// ---- Meta agrees with the kernel -----------------------------------------------------------

TEST_CASE("meta agrees with the kernel for reshape and view over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    Tensor x = randn(random_shape(gen, 0, 4, 0, 3), gen);
    IntList target = x.shape().sizes();
    shuffle(target, gen);
    if (gen.bits() & 1) target.insert(target.begin() + uniform_int(gen, 0, static_cast<std::int64_t>(target.size())), 1);
    if (!target.empty() && *x.shape().numel() > 0 && (gen.bits() & 1))
      target[static_cast<std::size_t>(uniform_int(gen, 0, static_cast<std::int64_t>(target.size()) - 1))] = -1;
    CAPTURE(x.shape());
    CAPTURE(fmt::format("{}", fmt::join(target, ", ")));
    const Tensor viewed = check_meta_agrees("view", {x, target}, {}, gen).to_tensor();
    CHECK(viewed.to_vector<float>() == x.to_vector<float>());
    if (x.dim() >= 2) x = x.transpose(0, x.dim() - 1);  // reshape may then have to copy
    const Tensor reshaped = check_meta_agrees("reshape", {x, target}, {}, gen).to_tensor();
    CHECK(reshaped.to_vector<float>() == x.to_vector<float>());
  }
}

TEST_CASE("meta agrees with the kernel for flatten over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    Tensor x = randn(random_shape(gen, 0, 4, 0, 3), gen);
    if (x.dim() >= 2 && (gen.bits() & 1)) x = x.transpose(0, 1);
    const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
    std::int64_t start = uniform_int(gen, 0, rank - 1);
    std::int64_t end = uniform_int(gen, 0, rank - 1);
    if (start > end) std::swap(start, end);
    // clang-format off
    const Tensor out = check_meta_agrees("flatten", {x}, {{"start_dim", maybe_negative(start, rank, gen)},
                                                          {"end_dim", maybe_negative(end, rank, gen)}}, gen)
                           // clang-format on
                           .to_tensor();
    CHECK(out.to_vector<float>() == x.to_vector<float>());
  }
}

TEST_CASE("meta agrees with the kernel for permute, transpose and contiguous over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 0, 4, 0, 4), gen);
    const std::int64_t rank = x.dim();
    IntList dims(static_cast<std::size_t>(rank));
    std::iota(dims.begin(), dims.end(), 0);
    shuffle(dims, gen);
    for (auto& d : dims) d = maybe_negative(d, rank, gen);
    check_meta_agrees("permute", {x, dims}, {}, gen);
    const std::int64_t r = std::max<std::int64_t>(rank, 1);
    const Value t = check_meta_agrees("transpose", {x, uniform_int(gen, -r, r - 1), uniform_int(gen, -r, r - 1)}, {},
                                      gen);
    check_meta_agrees("contiguous", {t}, {}, gen);
  }
}

TEST_CASE("meta agrees with the kernel for unsqueeze, squeeze and expand over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 0, 4, 0, 2), gen);  // many size-1 dims
    const std::int64_t rank = x.dim();
    check_meta_agrees("unsqueeze", {x, uniform_int(gen, -rank - 1, rank)}, {}, gen);
    check_meta_agrees("squeeze", {x}, {}, gen);
    const std::int64_t r = std::max<std::int64_t>(rank, 1);
    check_meta_agrees("squeeze", {x, uniform_int(gen, -r, r - 1)}, {}, gen);
    IntList sizes;
    for (std::int64_t lead = uniform_int(gen, 0, 2); lead > 0; --lead) sizes.push_back(uniform_int(gen, 0, 3));
    for (std::int64_t n : x.shape().sizes()) {
      const std::uint64_t pick = gen.bits() % 3;
      sizes.push_back(pick == 0 ? -1 : (n == 1 && pick == 1 ? uniform_int(gen, 0, 3) : n));
    }
    check_meta_agrees("expand", {x, sizes}, {}, gen);
  }
}

TEST_CASE("meta agrees with the kernel for slice, narrow and select over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    Tensor x = randn(random_shape(gen, 1, 4, 0, 5), gen);
    if (x.dim() >= 2 && (gen.bits() & 1)) x = x.transpose(0, 1);
    const std::int64_t rank = x.dim();
    const std::int64_t d = uniform_int(gen, 0, rank - 1);
    const std::int64_t n = x.shape()[static_cast<std::size_t>(d)].value();
    const auto bound = [&]() -> std::optional<std::int64_t> {
      if (gen.bits() % 4 == 0) return std::nullopt;
      return uniform_int(gen, -7, 7);
    };
    const Value s = check_meta_agrees("slice", {x, maybe_negative(d, rank, gen), bound(), bound(), uniform_int(gen, 1, 3)}, {}, gen);
    CHECK(s.to_tensor().shares_storage_with(x));
    const std::int64_t start = uniform_int(gen, 0, n);
    const std::int64_t length = uniform_int(gen, 0, n - start);
    check_meta_agrees("narrow", {x, maybe_negative(d, rank, gen), gen.bits() & 1 ? start - n : start, length}, {},
                      gen);
    if (n > 0) check_meta_agrees("select", {x, maybe_negative(d, rank, gen), uniform_int(gen, -n, n - 1)}, {}, gen);
  }
}

TEST_CASE("clone copies into new memory, contiguous whatever the input's strides") {
  const Tensor x = iota({2, 3});
  const Tensor t = testing::transposed(x);
  const Tensor c = clone(t);
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.shares_storage_with(x));
  CHECK(c.to_vector<float>() == t.to_vector<float>());
  c.fill_(1);
  CHECK(x.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  const Tensor s = Tensor::symbolic(TensorMeta{DType::int64, Shape{Dim("N"), 3}}, SymbolicRef{1, 1});
  CHECK(infer_meta(OpRegistry::instance().get("clone"), ValueList{s}).outputs[0] ==
        TensorMeta{DType::int64, Shape{Dim("N"), 3}});
}

#include "support/checks.hpp"

#include <numeric>

using namespace symtrace;
using testing::error_at;
using testing::uniform_int;
using testing::iota;
using testing::check_meta_agrees;
using testing::check_tensor;
using testing::random_shape;

namespace {

Tensor indices(const IntList& values) { return tensor(values, {static_cast<std::int64_t>(values.size())}); }

// Either `dim` or its negative form.
std::int64_t maybe_negative(std::int64_t dim, std::int64_t rank, Generator& gen) {
  return gen.bits() & 1 ? dim - rank : dim;
}

Tensor symbolic(Shape shape, DType dtype = DType::float32, std::uint32_t node = 1) {
  return Tensor::symbolic(TensorMeta{dtype, std::move(shape)}, SymbolicRef{1, node});
}

Shape meta_shape(std::string_view op, ValueList args) {
  const OpDef& def = OpRegistry::instance().get(op);
  const ValueList bound = bind_arguments(def, std::move(args), {}, std::source_location::current());
  return infer_meta(def, bound).outputs.at(0).shape;
}

}  // namespace

// ---- index_select --------------------------------------------------------------------------

TEST_CASE("index_select gathers slices along a dim, repeating and reordering them") {
  const Tensor x = iota({3, 4});
  check_tensor(x.index_select(0, indices({2, 0, 2})), DType::float32, {3, 4},
               {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  check_tensor(index_select(x, 1, indices({3, 1})), DType::float32, {3, 2}, {3, 1, 7, 5, 11, 9});
  check_tensor(x.index_select(-1, indices({0})), DType::float32, {3, 1}, {0, 4, 8});
  const Tensor out = x.index_select(0, indices({1}));
  CHECK_FALSE(out.shares_storage_with(x));
}

TEST_CASE("index_select handles strided inputs, 0-dim indices and size-0 results") {
  const Tensor x = iota({3, 4});
  check_tensor(x.transpose(0, 1).index_select(1, indices({2, 1})), DType::float32, {4, 2},
               {8, 4, 9, 5, 10, 6, 11, 7});
  check_tensor(x.index_select(0, tensor({1, 0, 2, 0}, {2, 2}).select(1, 0)), DType::float32, {2, 4},
               {4, 5, 6, 7, 8, 9, 10, 11});  // a strided index tensor
  check_tensor(x.index_select(1, scalar_tensor(2)), DType::float32, {3, 1}, {2, 6, 10});
  check_tensor(x.index_select(0, tensor(std::vector<std::int64_t>{}, {0})), DType::float32, {0, 4}, {});
  check_tensor(iota({0, 2}).index_select(1, indices({1, 1, 0})), DType::float32, {0, 3}, {});
  check_tensor(scalar_tensor(5).index_select(0, indices({0})), DType::int64, {}, {5});
  check_tensor(tensor({true, false, true}).index_select(0, indices({1, 2})), DType::bool_, {2}, {0, 1});
}

TEST_CASE("index_select reports an out-of-range index with its value and the size") {
  const Tensor x = iota({3, 4});
  SUBCASE("past the end") {
    const Tensor index = indices({0, 4});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.index_select(1, index); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index_select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index 4 is out of range for dimension 1 of size 4 (shape [3, 4])"),
                         OpError);
  }
  SUBCASE("negative") {
    const Tensor index = indices({-1});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.index_select(0, index); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index_select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index -1 is out of range for dimension 0 of size 3"), OpError);
  }
}

TEST_CASE("index_select rejects an index that is not int64 or has more than one dim") {
  const Tensor x = iota({3, 4});
  SUBCASE("float index") {
    const Tensor index = tensor({0.f, 1.f});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.index_select(0, index); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index_select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index must be an int64 tensor, got float32 of shape [2]"), OpError);
  }
  SUBCASE("2-D index") {
    const Tensor index = tensor({0, 1, 2, 0}, {2, 2});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.index_select(0, index); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index_select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index must be 1-D or 0-dim, got shape [2, 2]"), OpError);
  }
  SUBCASE("dim out of range") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.index_select(2, indices({0})); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index_select").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 2 is out of range for a tensor of shape [3, 4]"),
                         OpError);
  }
}

// ---- slice_scatter -------------------------------------------------------------------------

TEST_CASE("slice_scatter returns a copy of self with the slice replaced by src") {
  const Tensor x = iota({2, 4});
  const Tensor out = slice_scatter(x, tensor({10.f, 11.f, 12.f, 13.f}, {2, 2}), 1, 1, 3);
  check_tensor(out, DType::float32, {2, 4}, {0, 10, 11, 3, 4, 12, 13, 7});
  CHECK_FALSE(out.shares_storage_with(x));
  check_tensor(x, DType::float32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});  // self is unchanged
  check_tensor(slice_scatter(x, tensor({-1.f, -2.f, -3.f, -4.f}, {1, 4}), 0, -1), DType::float32, {2, 4},
               {0, 1, 2, 3, -1, -2, -3, -4});
  check_tensor(slice_scatter(x, tensor({-1.f, -2.f, -3.f, -4.f}, {2, 2}), 1, std::nullopt, std::nullopt, 2),
               DType::float32, {2, 4}, {-1, 1, -2, 3, -3, 5, -4, 7});
}

TEST_CASE("slice_scatter equals slice assignment through copy_ on a clone") {
  const Tensor x = iota({3, 4}).transpose(0, 1);  // [4, 3], strided
  const Tensor src = tensor({1, 2, 3}, {1, 3});   // int64 src converts, as copy_ does
  const Tensor out = slice_scatter(x, src, 0, 2, 3);
  const Tensor expected = x.mul(1);  // a contiguous copy
  expected.slice(0, 2, 3).copy_(src);
  check_tensor(out, DType::float32, {4, 3}, expected.to_vector<double>());
  check_tensor(slice_scatter(x, iota({4, 0}), 1, 3, 7), DType::float32, {4, 3}, x.to_vector<double>());
}

TEST_CASE("slice_scatter rejects a src whose shape is not the slice's") {
  const Tensor x = iota({2, 4});
  SUBCASE("wrong size") {
    const Tensor src = iota({2, 3});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return slice_scatter(x, src, 1, 1, 3); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "slice_scatter").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("src of shape [2, 3] must have the shape [2, 2] of the slice it "
                                                  "replaces (self of shape [2, 4], dim 1, start 1, end 3, step 1)"),
                         OpError);
  }
  SUBCASE("broadcastable but not equal") {
    const Tensor src = iota({2});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return slice_scatter(x, src, 1, 0, 2); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "slice_scatter").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("src of shape [2] must have the shape [2, 2]"), OpError);
  }
  SUBCASE("bad slice arguments are reported as slice_scatter's") {
    const Tensor src = iota({2, 2});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return slice_scatter(x, src, 1, 0, 2, 0); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "slice_scatter").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("step must be positive, got 0 (shape [2, 4])"), OpError);
  }
}

// ---- Unknown dims --------------------------------------------------------------------------

TEST_CASE("indexing meta functions propagate unknown dims") {
  const Dim u = Dim::unknown();
  const Tensor x = symbolic(Shape{u, 4});
  CHECK(meta_shape("index_select", {x, 0, indices({1, 2, 3})}) == Shape{3, 4});
  CHECK(meta_shape("index_select", {x, 1, symbolic(Shape{u}, DType::int64, 2)}) == Shape{u, u});
  CHECK(meta_shape("index_select", {iota({2, 4}), 1, scalar_tensor(1)}) == Shape{2, 1});
  CHECK(meta_shape("slice_scatter", {x, symbolic(Shape{u, 2}, DType::float32, 2), 1, 0, 2}) == Shape{u, 4});
  CHECK_THROWS_WITH_AS(meta_shape("slice_scatter", {x, symbolic(Shape{u, 3}, DType::float32, 2), 1, 0, 2}),
                       doctest::Contains("src of shape [?, 3] must have the shape [?, 2]"), OpError);
}

// ---- Meta agrees with the kernel -----------------------------------------------------------

TEST_CASE("meta agrees with the kernel for index_select over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 0, 3, 0, 4), gen);
    const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
    const std::int64_t d = uniform_int(gen, 0, rank - 1);
    const std::int64_t n = x.dim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)].value();
    Tensor index;
    if (n > 0 && (x.dim() == 0 || gen.bits() % 4 == 0)) {
      index = scalar_tensor(uniform_int(gen, 0, n - 1));
    } else {
      IntList values;
      for (std::int64_t k = n == 0 ? 0 : uniform_int(gen, 0, 4); k > 0; --k) values.push_back(uniform_int(gen, 0, n - 1));
      index = indices(values);
    }
    check_meta_agrees("index_select", {x, maybe_negative(d, rank, gen), index}, {}, gen);
  }
}

TEST_CASE("meta agrees with the kernel for slice_scatter over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 1, 3, 0, 5), gen);
    const std::int64_t rank = x.dim();
    const std::int64_t d = maybe_negative(uniform_int(gen, 0, rank - 1), rank, gen);
    const auto bound = [&]() -> std::optional<std::int64_t> {
      if (gen.bits() % 4 == 0) return std::nullopt;
      return uniform_int(gen, -6, 6);
    };
    const std::optional<std::int64_t> start = bound();
    const std::optional<std::int64_t> end = bound();
    const std::int64_t step = uniform_int(gen, 1, 3);
    const Tensor src = randn(x.slice(d, start, end, step).shape().sizes(), gen);
    const Tensor out = check_meta_agrees("slice_scatter", {x, src, d, start, end, step}, {}, gen).to_tensor();
    const Tensor expected = x.mul(1);
    expected.slice(d, start, end, step).copy_(src);
    CHECK(out.to_vector<float>() == expected.to_vector<float>());
  }
}

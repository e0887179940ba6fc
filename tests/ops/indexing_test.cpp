#include "support/checks.hpp"

#include <numeric>

using namespace symtrace;
using testing::error_at;
using testing::uniform_int;
using testing::iota;
using testing::check_meta_agrees;
using testing::check_tensor;
using testing::random_shape;
using testing::range;

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

// ---- index, index_put_, nonzero ----------------------------------------------------------
// Expected values: PyTorch 1.13's torch.ops.aten.index.Tensor, index_put_ and nonzero.

TEST_CASE("index with int64 tensors broadcasts them and puts the result dims where PyTorch does") {
  const Tensor x = iota({2, 3, 4});
  const Tensor none;  // an undefined tensor: a whole dim, as None
  SUBCASE("adjacent indexed dims are replaced in place by the broadcast shape") {
    check_tensor(index(x, {none, tensor({2, 0}, {2, 1}), indices({1, 3, 0})}), DType::float32, {2, 2, 3},
                 {9, 11, 8, 1, 3, 0, 21, 23, 20, 13, 15, 12});
    check_tensor(index(x, {indices({1})}), DType::float32, {1, 3, 4}, range(12, 24));
    check_tensor(index(x, {scalar_tensor(1), scalar_tensor(2)}), DType::float32, {4}, {20, 21, 22, 23});
  }
  SUBCASE("indexed dims separated by None put the broadcast shape first") {
    check_tensor(index(x, {indices({1, 0}), none, indices({3, -1})}), DType::float32, {2, 3}, {15, 19, 23, 3, 7, 11});
  }
  SUBCASE("negative indices count from the end") {
    check_tensor(index(x, {indices({-1}), indices({-3})}), DType::float32, {1, 4}, {12, 13, 14, 15});
  }
  SUBCASE("a strided tensor and other dtypes") {
    check_tensor(index(x.transpose(0, 2), {indices({3, 0}), none, indices({1, 0})}), DType::float32, {2, 3},
                 {15, 19, 23, 0, 4, 8});
    check_tensor(index(tensor({1, 2, 3}), {indices({2, 0})}), DType::int64, {2}, {3, 1});
    check_tensor(index(tensor({true, false, true}), {indices({2, 1, 1})}), DType::bool_, {3}, {1, 0, 0});
  }
  const Tensor out = index(x, {indices({0})});
  CHECK_FALSE(out.shares_storage_with(x));
}

TEST_CASE("index with a bool mask selects where it is true, over as many dims as the mask has") {
  const Tensor x = iota({2, 3, 4});
  const Tensor none;
  check_tensor(index(x, {none, tensor({true, false, true})}), DType::float32, {2, 2, 4},
               {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23});
  const Tensor mask = tensor({true, false, true, true, true, false, true, true, true, false, true, true}, {3, 4});
  check_tensor(index(x, {none, mask}), DType::float32, {2, 9},
               {0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16, 18, 19, 20, 22, 23});
  check_tensor(index(x, {tensor({true, false}), indices({0, 2, 1})}), DType::float32, {3, 4},
               {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7});
  check_tensor(index(x, {x > 10}), DType::float32, {13}, range(11, 24));
  check_tensor(index(x, {zeros({2, 3}, DType::bool_)}), DType::float32, {0, 4}, {});
}

TEST_CASE("index reports bad indices with the index, the size and the shape") {
  const Tensor x = iota({2, 3, 4});
  const Tensor none;
  SUBCASE("past the end") {
    const Tensor i = indices({0, 2});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return index(x, {i}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("index 2 is out of range for dimension 0 of size 2 (shape [2, 3, 4]); "
                                                  "indices must be in [-2, 2)"),
                         OpError);
  }
  SUBCASE("before the start") {
    CHECK_THROWS_WITH_AS(index(x, {none, indices({-4})}),
                         doctest::Contains("index -4 is out of range for dimension 1 of size 3"), OpError);
  }
  SUBCASE("a float index") {
    CHECK_THROWS_WITH_AS(index(x, {none, tensor({0.f, 1.f})}),
                         doctest::Contains("indices must be int64 or bool tensors, but index 1 is float32 of shape [2]"),
                         OpError);
  }
  SUBCASE("index tensors that do not broadcast") {
    CHECK_THROWS_WITH_AS(index(x, {indices({0, 1}), indices({0, 1, 2})}),
                         doctest::Contains("shapes [2] and [3] cannot be broadcast"), OpError);
  }
  SUBCASE("a mask of the wrong shape") {
    CHECK_THROWS_WITH_AS(index(x, {none, tensor({true, false})}),
                         doctest::Contains("the bool mask of shape [2] (index 1) does not match the shape [2, 3, 4] of "
                                           "the tensor it indexes: its dim 0 is 2 where dim 1 of the tensor is 3"),
                         OpError);
  }
  SUBCASE("more indices than dims") {
    CHECK_THROWS_WITH_AS(index(x, {indices({0}), none, zeros({4, 1}, DType::bool_)}),
                         doctest::Contains("too many indices for a tensor of shape [2, 3, 4]: the 3 entries cover 4 dims"),
                         OpError);
  }
  SUBCASE("no index tensor") {
    CHECK_THROWS_WITH_AS(index(x, {none}), doctest::Contains("needs at least one index tensor"), OpError);
    CHECK_THROWS_WITH_AS(index(x, {}), doctest::Contains("needs at least one index tensor"), OpError);
  }
  SUBCASE("a 0-dim bool index") {
    CHECK_THROWS_WITH_AS(index(x, {scalar_tensor(true)}), doctest::Contains("index 0 is a 0-dim bool tensor"), OpError);
  }
}

TEST_CASE("index_put_ writes values broadcast to the indexed shape, in place, adding them with accumulate") {
  const Tensor none;
  SUBCASE("rows, with values broadcast along them") {
    const Tensor x = zeros({3, 4});
    const Tensor out = index_put_(x, {indices({0, 2})}, tensor({1.f, 2.f, 3.f, 4.f}));
    CHECK(out.shares_storage_with(x));
    check_tensor(x, DType::float32, {3, 4}, {1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4});
  }
  SUBCASE("a whole dim before the index") {
    const Tensor x = zeros({3, 4});
    index_put_(x, {none, indices({1, 3})}, tensor({7.f, 8.f}));
    check_tensor(x, DType::float32, {3, 4}, {0, 7, 0, 8, 0, 7, 0, 8, 0, 7, 0, 8});
  }
  SUBCASE("a bool mask") {
    const Tensor x = zeros({3, 4});
    const Tensor mask = tensor({true, false, false, true, true, false, false, true, true, false, false, true}, {3, 4});
    index_put_(x, {mask}, tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
    check_tensor(x, DType::float32, {3, 4}, {1, 0, 0, 2, 3, 0, 0, 4, 5, 0, 0, 6});
  }
  SUBCASE("repeated indices: the last value stays, or with accumulate they add up") {
    const Tensor x = zeros({3});
    index_put_(x, {indices({0, 0, 1})}, tensor({5.f, 6.f, 7.f}));
    check_tensor(x, DType::float32, {3}, {6, 7, 0});
    index_put_(x, {indices({0, 0, 1})}, tensor({5.f, 6.f, 7.f}), true);
    check_tensor(x, DType::float32, {3}, {17, 14, 0});
    const Tensor rows = zeros({3, 4});
    index_put_(rows, {indices({0, 0, 1})}, scalar_tensor(1.0f), true);
    check_tensor(rows, DType::float32, {3, 4}, {2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0});
    const Tensor ints = tensor({0, 1, 2, 3, 4, 5}, {2, 3});
    index_put_(ints, {indices({1, -2}), indices({0, 2})}, tensor({10, 20}), true);
    check_tensor(ints, DType::int64, {2, 3}, {0, 1, 22, 13, 4, 5});
    const Tensor flags = zeros({3}, DType::bool_);
    index_put_(flags, {indices({0, 0})}, tensor({true, true}), true);
    check_tensor(flags, DType::bool_, {3}, {1, 0, 0});
  }
  SUBCASE("through a view, into its base") {
    const Tensor x = zeros({2, 4});
    index_put_(x.slice(1, 1, 3), {indices({1})}, scalar_tensor(9.0f));
    check_tensor(x, DType::float32, {2, 4}, {0, 0, 0, 0, 0, 9, 9, 0});
  }
}

TEST_CASE("index_put_ rejects values of another dtype or shape, and an index out of range leaves self unchanged") {
  const Tensor x = zeros({3, 4});
  SUBCASE("another dtype") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return index_put_(x, {indices({0})}, tensor({1, 2, 3, 4})); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "index_put_").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("values must have the dtype of self (float32), got int64 of shape [4]"),
                         OpError);
  }
  SUBCASE("a shape that does not broadcast to the indexed result") {
    CHECK_THROWS_WITH_AS(index_put_(x, {indices({0, 2})}, tensor({1.f, 2.f})),
                         doctest::Contains("values of shape [2] cannot be broadcast to the indexed result of shape [2, 4]"),
                         OpError);
  }
  SUBCASE("an index out of range") {
    CHECK_THROWS_WITH_AS(index_put_(x, {indices({1, 3})}, scalar_tensor(1.0f)),
                         doctest::Contains("index 3 is out of range for dimension 0 of size 3"), OpError);
    check_tensor(x, DType::float32, {3, 4}, std::vector<double>(12, 0.0));
  }
}

TEST_CASE("nonzero lists the coordinates of nonzero elements in row-major order") {
  check_tensor(nonzero(tensor({0.f, 1.5f, 0.f, -2.f, std::nanf(""), -0.f}, {2, 3})), DType::int64, {3, 2},
               {0, 1, 1, 0, 1, 1});  // NaN is nonzero, -0.0 is zero
  check_tensor(nonzero(tensor({0, 7, 3, 0}, {2, 2})), DType::int64, {2, 2}, {0, 1, 1, 0});
  check_tensor(nonzero(tensor({false, true, true})), DType::int64, {2, 1}, {1, 2});
  check_tensor(nonzero(scalar_tensor(3.0)), DType::int64, {1, 0}, {});
  check_tensor(nonzero(scalar_tensor(0.0)), DType::int64, {0, 0}, {});
  check_tensor(nonzero(zeros({2, 0})), DType::int64, {0, 2}, {});
}

namespace {

/// Keeps the dim-1 slices whose sum is above 100: a bool mask made from data.
class KeepLargeColumns : public TypedModule<KeepLargeColumns> {
 public:
  KeepLargeColumns() { set_input_names({"x"}); }
  Tensor forward(const Tensor& x) {
    const Tensor keep = x.sum({0, 2}) > 100.0;
    return index(x, {Tensor(), keep}) * 2.0;
  }
};

}  // namespace

TEST_CASE("indexing with a bool mask traces as an unknown dim, and nonzero as an unknown count") {
  KeepLargeColumns model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{2, 3, 4})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%index : float32[2, ?, 4] [num_users=1] = call_function[target=index](args = (%x, [None, %") !=
        std::string::npos);
  CHECK(text.find("%mul : float32[2, ?, 4]") != std::string::npos);

  const Tensor x = iota({2, 3, 4});  // dim-1 sums 60, 92, 124: only slice 2 is kept
  const Tensor eager = model.call({x}).to_tensor();
  check_tensor(eager, DType::float32, {2, 1, 4}, {16, 18, 20, 22, 40, 42, 44, 46});
  const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  REQUIRE(traced.shape() == eager.shape());
  CHECK(traced.to_vector<float>() == eager.to_vector<float>());
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

TEST_CASE("advanced indexing meta functions give a mask's count and nonzero's count as unknown dims") {
  const Dim u = Dim::unknown();
  const Tensor x = symbolic(Shape{u, 4});
  const Value none;
  CHECK(meta_shape("index", {x, ValueList{none, indices({1, 2, 3})}}) == Shape{u, 3});
  const Tensor column = symbolic(Shape{2, 1}, DType::int64, 2);
  CHECK(meta_shape("index", {x, ValueList{column, symbolic(Shape{u}, DType::int64, 3)}}) == Shape{2, u});
  CHECK(meta_shape("index", {x, ValueList{symbolic(Shape{u, 4}, DType::bool_, 2)}}) == Shape{u});
  CHECK(meta_shape("index", {x, ValueList{none, tensor({true, false, true, true})}}) == Shape{u, u});
  CHECK(meta_shape("index", {iota({3, 4}), ValueList{tensor({true, false, true})}}) == Shape{u, 4});  // even concrete
  CHECK(meta_shape("index_put_", {x, ValueList{symbolic(Shape{u, 4}, DType::bool_, 2)}, scalar_tensor(1.0f)}) ==
        Shape{u, 4});
  CHECK(meta_shape("nonzero", {x}) == Shape{u, 2});
  CHECK(meta_shape("nonzero", {symbolic(Shape::unknown_rank())}) == Shape{u, u});
  CHECK_THROWS_WITH_AS(meta_shape("index", {x, ValueList{none, symbolic(Shape{5}, DType::bool_, 2)}}),
                       doctest::Contains("its dim 0 is 5 where dim 1 of the tensor is 4"), OpError);
}

TEST_CASE("schemas take a list of optional tensors, and the dispatcher finds symbolic tensors in it") {
  const OpSchema s = parse_schema("index(Tensor self, Tensor?[] indices) -> Tensor");
  REQUIRE(s.args.size() == 2);
  CHECK(s.args[1].is_list);
  CHECK(s.args[1].items_optional);
  CHECK_FALSE(s.args[1].is_optional);
  CHECK(to_string(s) == "index(Tensor self, Tensor?[] indices) -> Tensor");
  CHECK(OpSchema::accepts(s.args[1], ValueList{Value(), iota({2})}));
  CHECK_FALSE(OpSchema::accepts(s.args[1], Value()));
  const OpSchema cat_schema = parse_schema("cat(Tensor[] tensors) -> Tensor");
  CHECK_FALSE(OpSchema::accepts(cat_schema.args[0], ValueList{Value(), iota({2})}));
  // A symbolic tensor inside the list, with no trace active, is refused as symbolic.
  CHECK_THROWS_AS(index(iota({3}), {symbolic(Shape{2}, DType::int64)}), TraceError);
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

TEST_CASE("meta agrees with the kernel for index with int64 indices over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 1, 3, 1, 4), gen);
    const IntList broadcast = random_shape(gen, 0, 2, 1, 3);
    ValueList list;
    bool any = false;
    for (std::int64_t d = 0, entries = uniform_int(gen, 1, x.dim()); d < entries; ++d) {
      if (gen.bits() % 3 == 0) {
        list.emplace_back();
        continue;
      }
      IntList shape = broadcast;  // some dims 1: the index tensors broadcast together
      for (std::int64_t& s : shape)
        if (gen.bits() % 3 == 0) s = 1;
      std::int64_t n = 1;
      for (std::int64_t s : shape) n *= s;
      const std::int64_t size = x.shape()[static_cast<std::size_t>(d)].value();
      IntList values;
      for (std::int64_t k = 0; k < n; ++k) values.push_back(uniform_int(gen, -size, size - 1));
      list.emplace_back(tensor(values, shape));
      any = true;
    }
    if (!any) list[0] = indices({0});
    check_meta_agrees("index", {x, list}, {}, gen);
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

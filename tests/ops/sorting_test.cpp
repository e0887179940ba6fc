// Ordering ops: sort (stable, NaN the largest) and unique_sorted (aten::_unique2 with sorted=True),
// whose number of values only the run knows. Expected values: PyTorch 1.13 (CPU); topk's tests
// are with nms's in detection_test.cpp.
#include "support/checks.hpp"

#include <string>

using namespace symtrace;
using testing::check_meta_agrees;
using testing::check_tensor;
using testing::error_at;

namespace {

/// The distinct values of the input, expanded back through the inverse, then their counts:
/// every output of unique_sorted used, of a length the data decides.
class UniqueRoundTrip : public TypedModule<UniqueRoundTrip> {
 public:
  Tensor forward(const Tensor& x) {
    const auto [values, inverse, counts] = unique_sorted(x, true, true);
    return cat({index_select(values, 0, inverse.flatten()), counts.to(DType::float32)}, 0);
  }
};

}  // namespace

TEST_CASE("sort orders along a dim, stable for ties, with NaN the largest") {
  const Tensor v = tensor({3.f, 1.f, 2.f, 1.f, NAN, 3.f, -1.f});
  SUBCASE("ascending") {
    auto [values, indices] = sort(v);
    check_tensor(values, DType::float32, {7}, {-1, 1, 1, 2, 3, 3, NAN});
    check_tensor(indices, DType::int64, {7}, {6, 1, 3, 2, 0, 5, 4});
  }
  SUBCASE("descending") {
    auto [values, indices] = sort(v, -1, true);
    check_tensor(values, DType::float32, {7}, {NAN, 3, 3, 2, 1, 1, -1});
    check_tensor(indices, DType::int64, {7}, {4, 0, 5, 2, 1, 3, 6});
  }
}

TEST_CASE("sort of a matrix orders each row or each column") {
  const Tensor m = tensor({2, 1, 2, 0, 5, 0}, {2, 3});
  auto [v0, i0] = sort(m, 0, true);
  check_tensor(v0, DType::int64, {2, 3}, {2, 5, 2, 0, 1, 0});
  check_tensor(i0, DType::int64, {2, 3}, {0, 1, 0, 1, 0, 1});
  auto [v1, i1] = sort(m, 1);
  check_tensor(v1, DType::int64, {2, 3}, {1, 2, 2, 0, 0, 5});
  check_tensor(i1, DType::int64, {2, 3}, {1, 0, 2, 0, 2, 1});
  auto [vd, id] = sort(m, -1, true);
  check_tensor(vd, DType::int64, {2, 3}, {2, 2, 1, 5, 0, 0});
  check_tensor(id, DType::int64, {2, 3}, {0, 2, 1, 1, 0, 2});
  SUBCASE("bool, transposed and 0-dim inputs") {
    auto [vb, ib] = sort(tensor({true, false, true, false}));
    check_tensor(vb, DType::bool_, {4}, {0, 0, 1, 1});
    check_tensor(ib, DType::int64, {4}, {1, 3, 0, 2});
    auto [vt, it] = sort(testing::transposed(m.to(DType::float32)), 0);  // a strided view: m's rows as columns
    check_tensor(vt, DType::float32, {3, 2}, {1, 0, 2, 0, 2, 5});
    check_tensor(it, DType::int64, {3, 2}, {1, 0, 0, 2, 2, 1});
    auto [vs, is] = sort(scalar_tensor(2.5));
    check_tensor(vs, DType::float32, {}, {2.5});
    check_tensor(is, DType::int64, {}, {0});
  }
}

TEST_CASE("sort refuses a dim out of range, naming the shape") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(sort(zeros({2, 3}), 2), doctest::Contains(error_at(line, "sort").c_str()), OpError);
  CHECK_THROWS_WITH_AS(sort(zeros({2, 3}), 2),
                       doctest::Contains("dimension 2 is out of range for a tensor of shape [2, 3] (expected -2 to 1)"),
                       OpError);
}

TEST_CASE("sort meta agrees with the kernel over random shapes, dims and ties") {
  Generator gen(1234);
  for (int trial = 0; trial < 40; ++trial) {
    const IntList shape = testing::random_shape(gen, 0, 3, 0, 4);
    const Tensor x = (randn(shape, gen) * 2).to(trial % 2 ? DType::int64 : DType::float32);  // ints: many ties
    const std::int64_t rank = std::max<std::int64_t>(x.dim(), 1);
    check_meta_agrees("sort", {x, testing::uniform_int(gen, -rank, rank - 1), trial % 3 == 0}, {}, gen);
  }
}

TEST_CASE("unique_sorted gives the distinct values ascending, with the inverse and counts asked for") {
  const Tensor x = tensor({3, 1, 2, 1, 3, 3}, {2, 3});
  SUBCASE("values only: the inverse and counts are empty") {
    auto [values, inverse, counts] = unique_sorted(x);
    check_tensor(values, DType::int64, {3}, {1, 2, 3});
    check_tensor(inverse, DType::int64, {0}, {});
    check_tensor(counts, DType::int64, {0}, {});
  }
  SUBCASE("the inverse, shaped like the input") {
    auto [values, inverse, counts] = unique_sorted(x, true);
    check_tensor(values, DType::int64, {3}, {1, 2, 3});
    check_tensor(inverse, DType::int64, {2, 3}, {2, 0, 1, 0, 2, 2});
    check_tensor(counts, DType::int64, {0}, {});
  }
  SUBCASE("the counts, which PyTorch 1.13 gives with the inverse") {
    auto [values, inverse, counts] = unique_sorted(x, false, true);
    check_tensor(inverse, DType::int64, {2, 3}, {2, 0, 1, 0, 2, 2});
    check_tensor(counts, DType::int64, {3}, {2, 1, 3});
  }
  SUBCASE("both") {
    auto [values, inverse, counts] = unique_sorted(x, true, true);
    check_tensor(values, DType::int64, {3}, {1, 2, 3});
    check_tensor(inverse, DType::int64, {2, 3}, {2, 0, 1, 0, 2, 2});
    check_tensor(counts, DType::int64, {3}, {2, 1, 3});
  }
}

TEST_CASE("unique_sorted of floats merges -0.0 and 0.0 into the first seen; bool, 0-dim and empty inputs") {
  auto [values, inverse, counts] = unique_sorted(tensor({0.5f, -1.f, 0.5f, 2.f, -0.f, 0.f}), true, true);
  check_tensor(values, DType::float32, {4}, {-1, -0, 0.5, 2});
  CHECK(std::signbit(values.to_vector<float>()[1]));
  check_tensor(inverse, DType::int64, {6}, {2, 0, 2, 3, 1, 1});
  check_tensor(counts, DType::int64, {4}, {1, 2, 2, 1});
  auto [vb, ib, cb] = unique_sorted(tensor({true, false, true}), true, true);
  check_tensor(vb, DType::bool_, {2}, {0, 1});
  check_tensor(ib, DType::int64, {3}, {1, 0, 1});
  check_tensor(cb, DType::int64, {2}, {1, 2});
  auto [vs, is, cs] = unique_sorted(scalar_tensor(4), true, true);
  check_tensor(vs, DType::int64, {1}, {4});
  check_tensor(is, DType::int64, {}, {0});
  check_tensor(cs, DType::int64, {1}, {1});
  auto [ve, ie, ce] = unique_sorted(zeros({0}), true, true);
  check_tensor(ve, DType::float32, {0}, {});
  check_tensor(ie, DType::int64, {0}, {});
  check_tensor(ce, DType::int64, {0}, {});
}

TEST_CASE("the number of unique values is a size only the run knows: an unknown dim, whatever the input") {
  const OpDef& op = OpRegistry::instance().get("unique_sorted");
  const Tensor known = Tensor::symbolic(TensorMeta{DType::float32, Shape{2, 3}}, SymbolicRef{1, 1});
  const OutputMeta meta = infer_meta(op, ValueList{known, true, true});
  REQUIRE(meta.outputs.size() == 3);
  CHECK(meta.outputs[0] == TensorMeta{DType::float32, Shape{Dim::unknown()}});
  CHECK(meta.outputs[1] == TensorMeta{DType::int64, Shape{2, 3}});
  CHECK(meta.outputs[2] == TensorMeta{DType::int64, Shape{Dim::unknown()}});
  const Tensor unranked = Tensor::symbolic(TensorMeta{DType::int64, Shape::unknown_rank()}, SymbolicRef{1, 2});
  const OutputMeta none_asked = infer_meta(op, ValueList{unranked, false, false});
  CHECK(none_asked.outputs[0] == TensorMeta{DType::int64, Shape{Dim::unknown()}});
  CHECK(none_asked.outputs[1] == TensorMeta{DType::int64, Shape{0}});
  CHECK(none_asked.outputs[2] == TensorMeta{DType::int64, Shape{0}});

  UniqueRoundTrip model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("call_function[target=unique_sorted](args = (%x, True, True), kwargs = {})") != std::string::npos);
  CHECK(text.find("%getitem : float32[?]") != std::string::npos);
  CHECK(text.find("%getitem_1 : int64[?, 3]") != std::string::npos);
  CHECK(text.find("%getitem_2 : int64[?]") != std::string::npos);
  const Tensor x = tensor({3.f, 1.f, 2.f, 1.f, 3.f, 3.f}, {2, 3});
  const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  check_tensor(traced, DType::float32, {9}, {3, 1, 2, 1, 3, 3, 2, 1, 3});
  CHECK(testing::max_rel_error(traced, model.call({x}).to_tensor()) == 0.0);
}

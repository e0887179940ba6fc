// Data-dependent sizes: nms keeps a number of boxes only the run knows, and topk can take a
// count computed from it. Traced, such a count is an unknown dim and a proxy SymInt that flows
// on through reshape, cat and topk(sym_min(k, n)); only turning it into a C++ value fails,
// at that line. Expected values: torchvision 0.14's ops.nms and PyTorch 1.13's topk.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

using namespace symtrace;
using testing::check_tensor;
using testing::max_rel_error;

namespace {

Tensor example_boxes() {
  return tensor({0.f, 0.f, 10.f, 10.f, 1.f, 1.f, 11.f, 11.f, 20.f, 20.f, 30.f, 30.f,
                 0.f, 0.f, 10.f, 10.f, 21.f, 19.f, 29.f, 31.f, 5.f, 5.f, 6.f, 6.f},
                {6, 4});
}
Tensor example_scores() { return tensor({0.9f, 0.8f, 0.7f, 0.9f, 0.95f, 0.1f}); }

/// Proposals as a detector's post-processing makes them: nms, the kept scores as a column,
/// a second column, then the best min(3, 2n) of the lot.
class Proposals : public TypedModule<Proposals> {
 public:
  Proposals() { set_input_names({"boxes", "scores"}); }
  Tensor forward(const Tensor& boxes, const Tensor& scores) {
    const Tensor keep = nms(boxes, scores, 0.5);
    const SymInt n = keep.size(0);
    const Tensor kept = index_select(scores, 0, keep).reshape({n, 1});
    const Tensor both = cat({kept, kept * 2.0}, 1).reshape({-1});
    return topk(both, sym_min(3, n * 2)).first;
  }
};

/// nms, then the best two of the kept scores.
class NmsThenTopk : public TypedModule<NmsThenTopk> {
 public:
  Tensor forward(const Tensor& boxes, const Tensor& scores) {
    return topk(index_select(scores, 0, nms(boxes, scores, 0.5)), 2).first;
  }
};

/// Branches on how many boxes survive: data-dependent control flow.
class CountBranch : public TypedModule<CountBranch> {
 public:
  static constexpr int branch_line = __LINE__ + 3;
  Tensor forward(const Tensor& boxes, const Tensor& scores) {
    const Tensor keep = nms(boxes, scores, 0.5);
    if (keep.size(0) > 2) return keep;
    return keep * 2;
  }
};

}  // namespace

TEST_CASE("nms keeps the boxes torchvision keeps, best first, equal scores in index order") {
  const Tensor boxes = example_boxes();
  const Tensor scores = example_scores();
  check_tensor(nms(boxes, scores, 0.5), DType::int64, {3}, {4, 0, 5});
  check_tensor(nms(boxes, scores, 0.7), DType::int64, {5}, {4, 0, 1, 2, 5});
  check_tensor(nms(boxes, scores, 0.0), DType::int64, {2}, {4, 0});
  check_tensor(nms(zeros({0, 4}), zeros({0}), 0.5), DType::int64, {0}, {});
  // IoU 3/10 is 0.30000001 in float: above 0.3 as a double, where torchvision compares.
  check_tensor(nms(tensor({0.f, 0.f, 5.f, 1.f, 2.f, 0.f, 10.f, 1.f}, {2, 4}), tensor({0.9f, 0.8f}), 0.3), DType::int64,
               {1}, {0});
  // A NaN score sorts first, as in PyTorch's descending sort.
  check_tensor(nms(tensor({0.f, 0.f, 10.f, 10.f, 20.f, 20.f, 30.f, 30.f, 0.f, 0.f, 10.f, 10.f}, {3, 4}),
                   tensor({0.5f, std::nanf(""), 0.9f}), 0.5),
               DType::int64, {2}, {1, 2});
  CHECK_THROWS_WITH_AS(nms(zeros({3, 5}), zeros({3}), 0.5), doctest::Contains("boxes must have shape [N, 4]"), OpError);
  CHECK_THROWS_WITH_AS(nms(zeros({3, 4}), zeros({2}), 0.5), doctest::Contains("as many boxes"), OpError);
}

TEST_CASE("topk gives PyTorch's values and indices, largest or smallest, along any dim") {
  const Tensor x = tensor({3.f, 1.f, 4.f, 1.f, 5.f, 9.f, 2.f, 6.f, 5.f, 3.f}, {2, 5});
  auto [v, i] = topk(x, 3);
  check_tensor(v, DType::float32, {2, 3}, {5, 4, 3, 9, 6, 5});
  check_tensor(i, DType::int64, {2, 3}, {4, 2, 0, 0, 2, 3});
  auto [v0, i0] = topk(x, 1, 0, false);
  check_tensor(v0, DType::float32, {1, 5}, {3, 1, 4, 1, 3});
  check_tensor(i0, DType::int64, {1, 5}, {0, 0, 0, 0, 1});
  for (std::int64_t k : {0, 1}) {  // a 0-dim tensor gives itself at index 0, as in PyTorch
    auto [v00, i00] = topk(scalar_tensor(2.5), k);
    check_tensor(v00, DType::float32, {}, {2.5});
    check_tensor(i00, DType::int64, {}, {0});
  }
  CHECK_THROWS_WITH_AS(topk(x, 6), doctest::Contains("k (6) is out of range for dimension 1 of size 5"), OpError);
}

TEST_CASE("a count from nms traces as an unknown dim through reshape, cat and topk(sym_min(k, n))") {
  Proposals model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{6, 4}), InputSpec(Shape{6})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%nms : int64[?] [num_users=2] = call_function[target=nms](args = (%boxes, %scores, 0.5)") !=
        std::string::npos);
  CHECK(text.find("%size : int [num_users=2] = call_method[target=size](args = (%nms, 0)") != std::string::npos);
  CHECK(text.find("%reshape : float32[?, 1]") != std::string::npos);
  CHECK(text.find("%cat : float32[?, 2]") != std::string::npos);
  CHECK(text.find("%sym_min : int [num_users=1] = call_function[target=sym_min](args = (3, %mul_1)") !=
        std::string::npos);
  CHECK(text.find("%getitem : float32[?]") != std::string::npos);

  // The graph computes what the forward computes, for any count nms gives: three boxes kept
  // (k = min(3, 6) = 3), or one of six equal boxes (k = min(3, 2) = 2).
  const Tensor equal_boxes = zeros({6, 4}) + tensor({0.f, 0.f, 10.f, 10.f});
  for (const Tensor& boxes : {example_boxes(), equal_boxes}) {
    const Tensor eager = model.call({boxes, example_scores()}).to_tensor();
    const Tensor traced = Interpreter(model, g).run({boxes, example_scores()}).to_tensor();
    REQUIRE(traced.shape() == eager.shape());
    CHECK(max_rel_error(traced, eager) == 0);
  }
  check_tensor(model.call({equal_boxes, example_scores()}).to_tensor(), DType::float32, {2}, {1.9, 0.95});
  check_tensor(model.call({example_boxes(), example_scores()}).to_tensor(), DType::float32, {3}, {1.9, 1.8, 0.95});
}

TEST_CASE("branching on a count from nms is data-dependent control flow, reported at the branch") {
  CountBranch model;
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{6, 4}), InputSpec(Shape{6})}),
                       doctest::Contains(fmt::format(":{}:", CountBranch::branch_line).c_str()), TraceError);
  GraphCollection c = recursive_trace(model, {InputSpec(Shape{6, 4}), InputSpec(Shape{6})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].where.line() == static_cast<unsigned>(CountBranch::branch_line));
}

TEST_CASE("inputs of unknown rank still give nms's int64 indices of unknown count, and topk's two outputs") {
  NmsThenTopk model;
  Graph g = symbolic_trace(model, {InputSpec(Shape::unknown_rank()), InputSpec(Shape::unknown_rank())});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%nms : int64[?] [num_users=1]") != std::string::npos);
  CHECK(text.find("%getitem : float32 ") == std::string::npos);  // no rank made up
  const Tensor boxes = example_boxes();
  CHECK(max_rel_error(Interpreter(model, g).run({boxes, example_scores()}).to_tensor(),
                      model.call({boxes, example_scores()}).to_tensor()) == 0);
}

// Data-dependent sizes: nms keeps a number of boxes only the run knows, and topk can take a
// count computed from it. Traced, such a count is an unknown dim and a proxy SymInt that flows
// on through reshape, cat, topk(sym_min(k, n)) and roi_align; only turning it into a C++ value
// fails, at that line. Expected values: torchvision 0.14's ops.nms and ops.roi_align, and
// PyTorch 1.13's topk.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

using namespace symtrace;
using testing::check_tensor;
using testing::error_at;
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

/// Pools the features of the rois nms keeps: roi_align's K is nms's count.
class PoolKept : public TypedModule<PoolKept> {
 public:
  PoolKept() { set_input_names({"features", "rois", "scores"}); }
  Tensor forward(const Tensor& features, const Tensor& rois, const Tensor& scores) {
    const Tensor keep = nms(rois.slice(1, 1, 5), scores, 0.5);
    return roi_align(features, index_select(rois, 0, keep), 0.5, 2, 2, 2, true);
  }
};

/// Two images of two channels, 5 x 6: [2, 2, 5, 6] holding (37 i mod 17) / 4 at element i.
Tensor roi_features() {
  std::vector<float> values(2 * 2 * 5 * 6);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i * 37 % 17) / 4.0f;
  return tensor(values, {2, 2, 5, 6});
}

/// Rois (batch index, x1, y1, x2, y2) over roi_features(), in coordinates that `spatial_scale`
/// maps onto it: inside image 0, fractional on image 1, past the top-left corner, past the
/// bottom-right corner, and malformed (x2 < x1, y2 < y1).
Tensor roi_boxes(double spatial_scale) {
  const auto s = static_cast<float>(1.0 / spatial_scale);
  return tensor({0.f, 1.0f * s, 1.0f * s, 4.0f * s, 3.0f * s,
                 1.f, 0.5f * s, 0.2f * s, 5.5f * s, 4.7f * s,
                 0.f, -2.0f * s, -1.5f * s, 3.0f * s, 2.0f * s,
                 1.f, 4.0f * s, 3.0f * s, 9.0f * s, 8.0f * s,
                 0.f, 2.5f * s, 2.0f * s, 2.0f * s, 1.0f * s},
                {5, 5});
}

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

TEST_CASE("roi_align pools each roi as torchvision does, aligned or not, with fixed or adaptive sampling") {
  const Tensor features = roi_features();
  struct Case {
    double spatial_scale;
    std::int64_t sampling_ratio;
    bool aligned;
    std::vector<double> expected;  // torchvision.ops.roi_align(features, rois, (2, 3), ...)
  };
  const std::vector<Case> cases = {
      // clang-format off
      {1.0, 0, false,
       {1.5, 2.25, 3, 1.75, 2.5, 3.25, 2.75, 3.5, 2.125, 3, 2.6875, 1.3125, 2.463281, 0.9566839, 2.05, 1.471354,
        1.366667, 2.585417, 0.9301216, 2.08125, 3.3, 1.366667, 2.616667, 2.440885, 0, 0.1875, 0.8124999, 0.140625,
        0.65625, 1.90625, 0.3125, 0.8125, 1.4375, 0.765625, 1.90625, 3.15625, 1.805555, 0, 0, 0, 0, 0, 1.217303, 0, 0,
        0, 0, 0, 2.5625, 2.8125, 3.0625, 2.6875, 2.9375, 3.1875, 3.104167, 3, 2.1875, 1.8125, 1, 0.8958333}},
      {1.0, 2, true,
       {1, 1.75, 2.5, 1.25, 2, 2.75, 2.25, 3, 3.21875, 2.5, 3.183594, 3.070312, 2.995898, 1.114844, 1.58125, 2.572266,
        0.8937499, 2.14375, 1.330664, 1.58125, 2.83125, 0.89375, 2.14375, 2.998633, 0, 0.07812499, 0.625, 0, 0.3125,
        1.40625, 0, 0.703125, 1.25, 0, 1.5625, 2.65625, 2.390625, 1.445312, 0, 0, 0, 0, 2.744141, 0.875, 0, 0, 0, 0,
        1.75, 1.625, 1.5, 1.625, 1.5, 1.375, 3, 2.875, 2.75, 2.875, 2.75, 2.625}},
      // clang-format on
      // Adaptive and aligned: the malformed roi has a negative size, so no samples and zeros.
      // clang-format off
      {1.0, 0, true,
       {1, 1.75, 2.5, 1.25, 2, 2.75, 2.25, 3, 3.75, 2.5, 3.25, 4, 2.994792, 1.110417, 1.58125, 2.61875, 0.89375,
        2.14375, 1.333247, 1.58125, 2.83125, 0.89375, 2.14375, 3.021875, 0, 0.07812499, 0.625, 0, 0.3125, 1.40625, 0,
        0.703125, 1.25, 0, 1.5625, 2.65625, 2.388889, 1.444444, 0, 0, 0, 0, 2.709201, 0.8298612, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {0.5, 2, false,
       {1.5, 2.25, 3, 1.75, 2.5, 3.25, 2.75, 3.5, 2.125, 3, 2.6875, 1.3125, 2.426758, 0.9363932, 2.05, 1.527734,
        1.376562, 2.595313, 0.9297526, 2.08125, 3.3, 1.376562, 2.626563, 2.500586, 0, 0.1875, 0.8124999, 0.140625,
        0.65625, 1.90625, 0.3125, 0.8125, 1.4375, 0.765625, 1.90625, 3.15625, 2.734375, 0, 0, 0, 0, 0, 1.538412, 0, 0,
        0, 0, 0, 2.5625, 2.8125, 3.0625, 2.6875, 2.9375, 3.1875, 3.104167, 2.911458, 2.1875, 1.8125, 1.088542,
        0.8958334}},
      // clang-format on
  };
  for (const Case& c : cases) {
    CAPTURE(c.spatial_scale);
    CAPTURE(c.sampling_ratio);
    CAPTURE(c.aligned);
    check_tensor(roi_align(features, roi_boxes(c.spatial_scale), c.spatial_scale, 2, 3, c.sampling_ratio, c.aligned),
                 DType::float32, {5, 2, 2, 3}, c.expected);
  }
  check_tensor(roi_align(features, zeros({0, 5}), 1.0, 2, 2, 0, false), DType::float32, {0, 2, 2, 2}, {});
}

TEST_CASE("roi_align rejects a batch index outside the batch and rois or inputs of the wrong shape") {
  const Tensor features = roi_features();
  SUBCASE("batch index past the batch") {
    const Tensor rois = tensor({0.f, 1.f, 1.f, 2.f, 2.f, 2.f, 1.f, 1.f, 2.f, 2.f}, {2, 5});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return roi_align(features, rois, 1.0, 2, 2); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "roi_align").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(),
                         doctest::Contains("roi 1 has batch index 2, but input holds 2 images (shape [2, 2, 5, 6])"),
                         OpError);
  }
  SUBCASE("negative batch index") {
    const Tensor rois = tensor({-1.f, 1.f, 1.f, 2.f, 2.f}, {1, 5});
    CHECK_THROWS_WITH_AS(roi_align(features, rois, 1.0, 2, 2), doctest::Contains("roi 0 has batch index -1"), OpError);
  }
  SUBCASE("boxes without a batch index") {
    CHECK_THROWS_WITH_AS(roi_align(features, zeros({3, 4}), 1.0, 2, 2),
                         doctest::Contains("rois must have shape [K, 5] (batch index, x1, y1, x2, y2), got [3, 4]"),
                         OpError);
  }
  SUBCASE("an input that is not a batch of images") {
    CHECK_THROWS_WITH_AS(roi_align(zeros({2, 5, 6}), zeros({1, 5}), 1.0, 2, 2),
                         doctest::Contains("input must have shape [N, C, H, W], got [2, 5, 6]"), OpError);
  }
  SUBCASE("int64 rois") {
    CHECK_THROWS_WITH_AS(roi_align(features, zeros({1, 5}, DType::int64), 1.0, 2, 2),
                         doctest::Contains("input and rois must be float32, got float32 and int64"), OpError);
  }
}

TEST_CASE("roi_align of the rois nms keeps traces with nms's unknown count as its first dim") {
  PoolKept model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{2, 3, 8, 8}), InputSpec(Shape{6, 5}), InputSpec(Shape{6})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%nms : int64[?]") != std::string::npos);
  CHECK(text.find("%index_select : float32[?, 5]") != std::string::npos);
  CHECK(text.find("%roi_align : float32[?, 3, 2, 2] [num_users=1] = call_function[target=roi_align](args = "
                  "(%features, %index_select, 0.5, 2, 2, 2, True)") != std::string::npos);

  const Tensor features = testing::iota({2, 3, 8, 8});
  const Tensor rois = cat({tensor({0.f, 1.f, 0.f, 1.f, 0.f, 1.f}, {6, 1}), example_boxes()}, 1);
  const Tensor eager = model.call({features, rois, example_scores()}).to_tensor();
  const Tensor traced = Interpreter(model, g).run({features, rois, example_scores()}).to_tensor();
  CHECK(eager.shape() == Shape{3, 3, 2, 2});  // nms keeps boxes 4, 0 and 5
  REQUIRE(traced.shape() == eager.shape());
  CHECK(max_rel_error(traced, eager) == 0);
}

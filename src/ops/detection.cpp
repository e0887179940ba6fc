// torchvision's detection ops: nms. The kernels follow torchvision's CPU kernels
// (torchvision/csrc/ops/cpu/nms_kernel.cpp) step for step, in float, so that the boxes kept
// are the same boxes; the meta functions give the data-dependent count as an unknown dim.
#include "symtrace/ops/detection.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"

#include "symtrace/core/factories.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace symtrace {

namespace {

// ---- nms -----------------------------------------------------------------------------------

OutputMeta nms_meta(const OpCall& call) {
  const Tensor& boxes = call.tensor(0);
  const Tensor& scores = call.tensor(1);
  if (boxes.dtype() != DType::float32 || scores.dtype() != DType::float32)
    call.fail("boxes and scores must be float32, got {} and {}", boxes.dtype(), scores.dtype());
  if (boxes.shape().is_rank_known() && (boxes.dim() != 2 || (boxes.shape()[1].is_known() && boxes.shape()[1].raw() != 4)))
    call.fail("boxes must have shape [N, 4], got {}", boxes.shape());
  if (scores.shape().is_rank_known() && scores.dim() != 1) call.fail("scores must have shape [N], got {}", scores.shape());
  if (boxes.shape().is_rank_known() && scores.shape().is_rank_known() && boxes.shape()[0].is_known() &&
      scores.shape()[0].is_known() && boxes.shape()[0].raw() != scores.shape()[0].raw())
    call.fail("boxes and scores must hold as many boxes, got {} and {}", boxes.shape(), scores.shape());
  // How many boxes survive depends on their values: a size only the run knows.
  return OutputMeta::single(DType::int64, Shape{Dim::unknown()});
}

Value nms_kernel(const OpCall& call, const OutputMeta&) {
  const std::vector<float> b = call.tensor(0).to_vector<float>();
  const std::vector<float> s = call.tensor(1).to_vector<float>();
  const double threshold = call.arg(2).to_double();  // compared in double, as torchvision does
  const std::size_t n = s.size();
  std::vector<float> area(n);
  for (std::size_t i = 0; i < n; ++i) area[i] = (b[4 * i + 2] - b[4 * i]) * (b[4 * i + 3] - b[4 * i + 1]);
  // scores.sort(0, descending=True): NaN first, ties keep their order (std::stable_sort), as
  // PyTorch's CPU sort does.
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
    const float a = s[static_cast<std::size_t>(x)], b = s[static_cast<std::size_t>(y)];
    return std::isnan(a) ? !std::isnan(b) : a > b;
  });
  std::vector<char> suppressed(n, 0);
  std::vector<std::int64_t> keep;
  for (std::size_t oi = 0; oi < n; ++oi) {
    const auto i = static_cast<std::size_t>(order[oi]);
    if (suppressed[i]) continue;
    keep.push_back(static_cast<std::int64_t>(i));
    const float ix1 = b[4 * i], iy1 = b[4 * i + 1], ix2 = b[4 * i + 2], iy2 = b[4 * i + 3];
    for (std::size_t oj = oi + 1; oj < n; ++oj) {
      const auto j = static_cast<std::size_t>(order[oj]);
      if (suppressed[j]) continue;
      const float w = std::max(0.0f, std::min(ix2, b[4 * j + 2]) - std::max(ix1, b[4 * j]));
      const float h = std::max(0.0f, std::min(iy2, b[4 * j + 3]) - std::max(iy1, b[4 * j + 1]));
      const float inter = w * h;
      const float iou = inter / (area[i] + area[j] - inter);
      if (static_cast<double>(iou) > threshold) suppressed[j] = 1;
    }
  }
  const auto k = static_cast<std::int64_t>(keep.size());
  return detail::from_ints(keep, {k}, call.where);
}

}  // namespace

void detail::register_detection_ops(OpRegistry& r) {
  r.add("nms(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor", nms_meta, nms_kernel, OpFlags::unknown_rank);
}

// ---- Typed API ---------------------------------------------------------------------------

Tensor nms(const Tensor& boxes, const Tensor& scores, double iou_threshold, Where w) {
  return detail::invoke(SYMTRACE_OP("nms"), w, CallStyle::function, boxes, scores, iou_threshold);
}

}  // namespace symtrace

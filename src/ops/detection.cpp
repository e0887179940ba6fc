// torchvision's detection ops: nms and roi_align. The kernels follow torchvision's CPU kernels
// (torchvision/csrc/ops/cpu/nms_kernel.cpp, roi_align_kernel.cpp and roi_align_common.h) step
// for step, in float, so that the boxes kept are the same boxes and the pooled features the
// same numbers; the meta functions give the data-dependent count as an unknown dim.
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

// ---- roi_align -----------------------------------------------------------------------------

OutputMeta roi_align_meta(const OpCall& call) {
  const Tensor& input = call.tensor(0);
  const Tensor& rois = call.tensor(1);
  if (input.dtype() != DType::float32 || rois.dtype() != DType::float32)
    call.fail("input and rois must be float32, got {} and {}", input.dtype(), rois.dtype());
  const Shape& in = input.shape();
  const Shape& r = rois.shape();
  if (in.is_rank_known() && in.rank() != 4) call.fail("input must have shape [N, C, H, W], got {}", in);
  if (r.is_rank_known() && (r.rank() != 2 || (r[1].is_known() && r[1].raw() != 5)))
    call.fail("rois must have shape [K, 5] (batch index, x1, y1, x2, y2), got {}", r);
  const std::int64_t ph = call.integer(3), pw = call.integer(4);
  if (ph < 0 || pw < 0) call.fail("pooled_height and pooled_width must not be negative, got {} and {}", ph, pw);
  // One pooled map per roi: as many as rois has rows, a count only the run knows when the
  // rois come from nms (the Dim is copied, known or not).
  const Dim k = r.is_rank_known() ? r[0] : Dim::unknown();
  const Dim c = in.is_rank_known() ? in[1] : Dim::unknown();
  return OutputMeta::single(DType::float32, Shape{k, c, ph, pw});
}

/// One sampling point of a bin: the four pixels around it (offsets in one channel's H x W
/// map) and their bilinear weights (torchvision's PreCalc).
struct Sample {
  std::int64_t pos[4] = {0, 0, 0, 0};
  float w[4] = {0.0f, 0.0f, 0.0f, 0.0f};
};

/// torchvision's pre_calc_for_bilinear_interpolate for the point (y, x): a point more than one
/// pixel outside the map (or NaN) gets weight 0; one within a pixel of the border is clamped.
Sample bilinear_sample(float y, float x, std::int64_t height, std::int64_t width) {
  Sample s;
  if (!(y >= -1.0f && y <= static_cast<float>(height) && x >= -1.0f && x <= static_cast<float>(width))) return s;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  auto y_low = static_cast<std::int64_t>(y);
  auto x_low = static_cast<std::int64_t>(x);
  std::int64_t y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<float>(y_low);
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<float>(x_low);
  }
  const float ly = y - static_cast<float>(y_low), lx = x - static_cast<float>(x_low);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

/// Sampling points per bin along one axis: `sampling_ratio`, or when it is <= 0 torchvision's
/// adaptive `ceil(roi_size / pooled)`. A size that is NaN, infinite or negative (an aligned roi
/// with x2 < x1) gives no points, where torchvision's int conversion would be undefined.
std::int64_t grid_size(float roi_size, std::int64_t pooled, std::int64_t sampling_ratio) {
  if (sampling_ratio > 0) return sampling_ratio;
  const double g = std::ceil(roi_size / static_cast<float>(pooled));
  return g >= 1 && g <= 1e9 ? static_cast<std::int64_t>(g) : 0;
}

Value roi_align_kernel(const OpCall& call, const OutputMeta& meta) {
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const IntList out_sizes = out.shape().sizes();
  if (out_sizes[0] * out_sizes[1] * out_sizes[2] * out_sizes[3] == 0) return out;  // as torchvision: nothing read
  float* po = out.data_ptr<float>();

  const Tensor input = detail::contiguous_copy(call.tensor(0));
  const float* pi = input.data_ptr<float>();
  const std::vector<float> rois = call.tensor(1).to_vector<float>();
  const auto spatial_scale = static_cast<float>(call.real(2));
  const std::int64_t pooled_h = call.integer(3), pooled_w = call.integer(4);
  const std::int64_t sampling_ratio = call.integer(5);
  const bool aligned = call.boolean(6);
  const IntList sizes = input.shape().sizes();
  const std::int64_t batch = sizes[0], channels = sizes[1], height = sizes[2], width = sizes[3];
  const std::int64_t num_rois = out_sizes[0];

  std::vector<Sample> samples;
  for (std::int64_t n = 0; n < num_rois; ++n) {
    const float* roi = &rois[static_cast<std::size_t>(5 * n)];
    // torchvision converts the batch index with (int): truncated towards zero.
    if (!(roi[0] > -1.0f && roi[0] < static_cast<float>(batch)))
      call.fail("roi {} has batch index {}, but input holds {} images (shape {}); column 0 of rois must be in "
                "[0, {})",
                n, roi[0], batch, input.shape(), batch);
    const auto image = static_cast<std::int64_t>(roi[0]);
    // "Do not use rounding; this implementation detail is critical" (torchvision).
    const float offset = aligned ? 0.5f : 0.0f;
    const float start_w = roi[1] * spatial_scale - offset;
    const float start_h = roi[2] * spatial_scale - offset;
    const float end_w = roi[3] * spatial_scale - offset;
    const float end_h = roi[4] * spatial_scale - offset;
    float roi_w = end_w - start_w;
    float roi_h = end_h - start_h;
    if (!aligned) {  // malformed rois are forced to 1 x 1
      roi_w = std::max(roi_w, 1.0f);
      roi_h = std::max(roi_h, 1.0f);
    }
    const float bin_h = roi_h / static_cast<float>(pooled_h);
    const float bin_w = roi_w / static_cast<float>(pooled_w);
    const std::int64_t grid_h = grid_size(roi_h, pooled_h, sampling_ratio);
    const std::int64_t grid_w = grid_size(roi_w, pooled_w, sampling_ratio);
    const auto count = static_cast<float>(std::max<std::int64_t>(grid_h * grid_w, 1));  // empty grid: zeros

    // The sampling points are the same for every channel: computed once per roi.
    samples.clear();
    for (std::int64_t ph = 0; ph < pooled_h; ++ph) {
      for (std::int64_t pw = 0; pw < pooled_w; ++pw) {
        for (std::int64_t iy = 0; iy < grid_h; ++iy) {
          const float y = start_h + static_cast<float>(ph) * bin_h +
                          static_cast<float>(iy + 0.5f) * bin_h / static_cast<float>(grid_h);
          for (std::int64_t ix = 0; ix < grid_w; ++ix) {
            const float x = start_w + static_cast<float>(pw) * bin_w +
                            static_cast<float>(ix + 0.5f) * bin_w / static_cast<float>(grid_w);
            samples.push_back(bilinear_sample(y, x, height, width));
          }
        }
      }
    }
    for (std::int64_t c = 0; c < channels; ++c) {
      const float* map = pi + (image * channels + c) * height * width;
      float* o = po + (n * channels + c) * pooled_h * pooled_w;
      std::size_t next = 0;
      for (std::int64_t bin = 0; bin < pooled_h * pooled_w; ++bin) {
        float sum = 0.0f;
        for (std::int64_t k = 0; k < grid_h * grid_w; ++k) {
          const Sample& s = samples[next++];
          sum += s.w[0] * map[s.pos[0]] + s.w[1] * map[s.pos[1]] + s.w[2] * map[s.pos[2]] + s.w[3] * map[s.pos[3]];
        }
        o[bin] = sum / count;  // the average over the bin
      }
    }
  }
  return out;
}

}  // namespace

void detail::register_detection_ops(OpRegistry& r) {
  r.add("nms(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor", nms_meta, nms_kernel, OpFlags::unknown_rank);
  r.add("roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
        "int sampling_ratio, bool aligned) -> Tensor",
        roi_align_meta, roi_align_kernel, OpFlags::unknown_rank);
}

// ---- Typed API ---------------------------------------------------------------------------

Tensor nms(const Tensor& boxes, const Tensor& scores, double iou_threshold, Where w) {
  return detail::invoke(SYMTRACE_OP("nms"), w, CallStyle::function, boxes, scores, iou_threshold);
}

Tensor roi_align(const Tensor& input, const Tensor& rois, double spatial_scale, std::int64_t pooled_height,
                 std::int64_t pooled_width, std::int64_t sampling_ratio, bool aligned, Where w) {
  return detail::invoke(SYMTRACE_OP("roi_align"), w, CallStyle::function, input, rois, spatial_scale, pooled_height,
                        pooled_width, sampling_ratio, aligned);
}

}  // namespace symtrace

#pragma once
/// \file
/// torchvision's detection ops (`torchvision.ops`), with kernels equal to torchvision's CPU
/// kernels. Their output sizes depend on data: traced, such a size is an unknown dim (`?`),
/// and `size()` of it is a proxy SymInt that the trace carries on (as torch.export's unbacked
/// sizes); only turning it into a C++ value (`int64_t(n)`, a branch on it) fails, at that line.
///
/// Schemas:
/// - `nms(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor`: boxes [N, 4] as
///   (x1, y1, x2, y2), scores [N]; the int64 indices of the boxes kept, by decreasing score.
///   A box is dropped when its IoU with a kept box of higher score exceeds `iou_threshold`.
/// - `roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
///   int pooled_width, int sampling_ratio, bool aligned) -> Tensor`: input [N, C, H, W], rois
///   [K, 5] as (batch index, x1, y1, x2, y2); the float32 [K, C, pooled_height, pooled_width]
///   averages of bilinear samples in each bin. K is rois' dim 0, unknown when the rois come
///   from nms.

#include "symtrace/core/tensor.hpp"

#include <source_location>

namespace symtrace {

using Where = std::source_location;

/// Non-maximum suppression (torchvision.ops.nms): the indices of the boxes kept, int64 [K],
/// sorted by decreasing score; K is known only when run.
Tensor nms(const Tensor& boxes, const Tensor& scores, double iou_threshold, Where where = Where::current());

/// RoIAlign (torchvision.ops.roi_align): pools each roi of `rois` [K, 5] (batch index, x1, y1,
/// x2, y2, in input coordinates before `spatial_scale`) into a pooled_height x pooled_width grid
/// of bins of the image it names in `input` [N, C, H, W]; float32 [K, C, pooled_height,
/// pooled_width]. Each bin averages bilinear samples on a grid of `sampling_ratio` points per
/// axis (or, when `sampling_ratio` <= 0, ceil(roi size / pooled size)); samples more than a
/// pixel outside the image count as 0. `aligned` shifts the roi by -0.5 pixel (pixel centres at
/// .5); without it a roi is at least 1 x 1. Throws OpError for a batch index outside [0, N).
Tensor roi_align(const Tensor& input, const Tensor& rois, double spatial_scale, std::int64_t pooled_height,
                 std::int64_t pooled_width, std::int64_t sampling_ratio = -1, bool aligned = false,
                 Where where = Where::current());

}  // namespace symtrace

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

#include "symtrace/core/tensor.hpp"

#include <source_location>

namespace symtrace {

using Where = std::source_location;

/// Non-maximum suppression (torchvision.ops.nms): the indices of the boxes kept, int64 [K],
/// sorted by decreasing score; K is known only when run.
Tensor nms(const Tensor& boxes, const Tensor& scores, double iou_threshold, Where where = Where::current());

}  // namespace symtrace

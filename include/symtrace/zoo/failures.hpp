#pragma once
/// \file
/// `MixedFailures`: a small CNN whose forward calls, in turn, one child
/// per untraceable pattern users hit in practice. The parent's own forward is traceable; each
/// child's forward is the problem, so a robust tracer should trace the parent and report the
/// children:
///
/// | child    | type               | pattern                                                     |
/// |----------|--------------------|-------------------------------------------------------------|
/// | "gate"   | GatedConv          | `if` on tensor data: which conv runs depends on x.mean() > 0 |
/// | "repeat" | RepeatedConv       | loop bound read from tensor data (1 or 2 steps)             |
/// | "opaque" | OpaqueMedianCenter | call into an opaque library function reading the data      |
/// | "topk"   | PositiveChannelMask| a tensor whose size is read from data (k positive channels)  |
/// | "heads"  | ModuleList         | indexed by the parent, never called as a whole (not callable)|
/// | "unused" | Linear             | registered, never called (unvisited, not untraceable)       |
///
/// Every failing child keeps its input's shape, so the model runs eagerly end to end:
/// [B, 3, H, W] -> [B, 10].

#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/module_list.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>

namespace symtrace::zoo {

/// Stands for an opaque library routine (think OpenCV or a hand-written kernel): it reads the
/// tensor's data into a std::vector, finds the median in C++, and returns x - median.
/// Needs a concrete tensor (a symbolic one throws TraceError at the read).
[[nodiscard]] Tensor subtract_median(const Tensor& x);

/// conv_a(x) when x.mean() > 0, else conv_b(x): an `if` on tensor data.
class GatedConvImpl : public TypedModule<GatedConvImpl> {
 public:
  explicit GatedConvImpl(std::int64_t channels);
  virtual Tensor forward(const Tensor& x);
  /// The source line of the data-dependent branch in forward (where a symbolic trace fails).
  static const int data_branch_line;

  nn::Conv2d conv_a{nullptr};
  nn::Conv2d conv_b{nullptr};
};
SYMTRACE_MODULE(GatedConv);

/// relu(conv(x)) applied n times, n = 1 + (max |x| > 1): a loop bound read from tensor data.
class RepeatedConvImpl : public TypedModule<RepeatedConvImpl> {
 public:
  explicit RepeatedConvImpl(std::int64_t channels);
  virtual Tensor forward(const Tensor& x);

  nn::Conv2d conv{nullptr};
};
SYMTRACE_MODULE(RepeatedConv);

/// subtract_median(x): a call into an opaque library function.
class OpaqueMedianCenterImpl : public TypedModule<OpaqueMedianCenterImpl> {
 public:
  virtual Tensor forward(const Tensor& x);
};
SYMTRACE_MODULE(OpaqueMedianCenter);

/// Keeps the first k channels of x [B, C, H, W] and zeroes the rest, k = the number of channels
/// whose mean (over batch and space) is positive: the mask is built from ones({k}) and
/// zeros({C - k}), tensors whose sizes are read from data. The output shape is x's.
class PositiveChannelMaskImpl : public TypedModule<PositiveChannelMaskImpl> {
 public:
  virtual Tensor forward(const Tensor& x);
};
SYMTRACE_MODULE(PositiveChannelMask);

/// The model: stem -> gate -> repeat -> opaque -> topk -> global average pool -> mean of the
/// two `heads`; see the file comment.
class MixedFailuresImpl : public TypedModule<MixedFailuresImpl> {
 public:
  /// `num_classes` outputs (10 in the zoo).
  explicit MixedFailuresImpl(std::int64_t num_classes = 10);
  /// x: [B, 3, H, W] -> [B, num_classes].
  virtual Tensor forward(const Tensor& x);

  static constexpr std::int64_t width = 16;  ///< channels after the stem
  nn::Sequential stem{nullptr};              ///< Conv2d(3, 16, 3, padding 1), ReLU
  GatedConv gate{nullptr};
  RepeatedConv repeat{nullptr};
  OpaqueMedianCenter opaque{nullptr};
  PositiveChannelMask topk{nullptr};
  nn::ModuleList heads{nullptr};  ///< two Linear(16, num_classes)
  nn::Linear unused{nullptr};     ///< Linear(16, num_classes), never called
};
SYMTRACE_MODULE(MixedFailures);

/// The zoo's `mixed_failures` (10 classes).
[[nodiscard]] std::shared_ptr<Module> mixed_failures();

}  // namespace symtrace::zoo

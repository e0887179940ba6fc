#pragma once
/// \file
/// MobileNetV2 (Sandler et al., 2018) for the zoo, as bench/fx/models.py writes it in PyTorch
/// (the same module tree and parameter count as torchvision's mobilenet_v2: 3,504,872 at
/// width 1.0 with 1000 classes). `ConvBNReLU` is an nn::Sequential subclass, as in the Python,
/// so its children are named 0, 1, 2 and state_dict keys match a PyTorch checkpoint
/// ("features.1.conv.0.0.weight", "classifier.1.bias").
///
/// ```
/// auto model = symtrace::zoo::mobilenet_v2();
/// model->get_submodule("features.0").type_name();  // "ConvBNReLU"
/// ```

#include "symtrace/core/tensor.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>

namespace symtrace::zoo {

/// torchvision's `_make_divisible`: `value` rounded to the nearest multiple of `divisor`, at
/// least `min_value` (the divisor by default), and not less than 90% of `value`.
[[nodiscard]] std::int64_t make_divisible(double value, std::int64_t divisor = 8,
                                          std::optional<std::int64_t> min_value = std::nullopt);

/// Conv2d (no bias, "same" padding for odd kernels) -> BatchNorm2d -> ReLU6(inplace), as an
/// nn::Sequential whose children are 0, 1, 2. Its type name is "ConvBNReLU".
class ConvBNReLUImpl : public nn::SequentialImpl {
 public:
  ConvBNReLUImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel_size = 3,
                 std::int64_t stride = 1, std::int64_t groups = 1);
};
SYMTRACE_MODULE(ConvBNReLU);

/// The inverted residual block: [1x1 expand ConvBNReLU when expand_ratio != 1] -> 3x3
/// depthwise ConvBNReLU (with the stride) -> 1x1 linear projection Conv2d -> BatchNorm2d, all
/// in the Sequential `conv`; the input is added when the stride is 1 and the channel count is
/// unchanged (`use_res_connect`, fixed at construction, so the branch is traceable).
class InvertedResidualImpl : public TypedModule<InvertedResidualImpl> {
 public:
  InvertedResidualImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t stride,
                       std::int64_t expand_ratio);
  Tensor forward(const Tensor& x);

  nn::Sequential conv{nullptr};
  bool use_res_connect;
};
SYMTRACE_MODULE(InvertedResidual);

/// MobileNetV2's configuration (the defaults are torchvision's).
struct MobileNetV2Config {
  std::int64_t num_classes = 1000;
  double width_mult = 1.0;
};

/// MobileNetV2: `features` (a ConvBNReLU stem with stride 2, 17 inverted residuals, a 1x1
/// ConvBNReLU to 1280 channels), then F.adaptive_avg_pool2d to 1x1, torch.flatten and
/// `classifier` (Dropout(0.2), Linear). Takes [N, 3, H, W] (224x224 in the zoo) and
/// returns [N, num_classes].
class MobileNetV2Impl : public TypedModule<MobileNetV2Impl> {
 public:
  /// Throws std::invalid_argument for a non-positive class count or width multiplier.
  explicit MobileNetV2Impl(MobileNetV2Config config = {},
                           std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& x);

  nn::Sequential features{nullptr};
  nn::Sequential classifier{nullptr};
  std::int64_t last_channel;
};
SYMTRACE_MODULE(MobileNetV2);

/// MobileNetV2 at width 1.0: 3,504,872 parameters (bench/fx/models.py's mobilenet_v2).
[[nodiscard]] std::shared_ptr<Module> mobilenet_v2(MobileNetV2Config config = {});

}  // namespace symtrace::zoo

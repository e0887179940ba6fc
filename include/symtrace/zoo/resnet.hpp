#pragma once
/// \file
/// ResNets (He et al., 2015) for the zoo: torchvision's ResNet-18 (BasicBlock [2, 2, 2, 2]) and
/// ResNet-50 (Bottleneck [3, 4, 6, 3], stride on the 3x3 convolution as in torchvision's v1.5),
/// plus ResNet-50's failing variants, in which chosen bottlenecks are `FailingBottleneck`s
/// whose forward branches on tensor data. bench/fx/models.py writes the same models in PyTorch.
///
/// Attribute names are PyTorch's, so state_dict keys match a PyTorch checkpoint of the same
/// architecture ("layer1.0.downsample.1.running_mean"). Weights use the layers' default
/// initialisation (as bench/fx/models.py does; torchvision re-draws convolutions with
/// kaiming_normal_, which changes no shape), drawn from the thread's default generator.
///
/// ```
/// auto model = symtrace::zoo::resnet50(symtrace::zoo::resnet50_fail4_blocks);
/// model->get_submodule("layer2.0").type_name();  // "FailingBottleneck"
/// ```

#include "symtrace/core/tensor.hpp"
#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/pooling.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

namespace symtrace::zoo {

/// torchvision's BasicBlock: two 3x3 convolutions (the first with the block's stride), each
/// followed by BatchNorm, and a residual connection through `downsample` when the shape
/// changes. Output channels = planes (expansion 1).
class BasicBlockImpl : public TypedModule<BasicBlockImpl> {
 public:
  static constexpr std::int64_t expansion = 1;
  /// `downsample` may be empty (`nullptr`): the identity is added unchanged.
  BasicBlockImpl(std::int64_t inplanes, std::int64_t planes, std::int64_t stride = 1,
                 nn::Sequential downsample = nullptr);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::Conv2d conv2{nullptr};
  nn::BatchNorm2d bn2{nullptr};
  nn::Sequential downsample{nullptr};  ///< empty, or registered as "downsample"
  std::int64_t stride;
};
SYMTRACE_MODULE(BasicBlock);

/// The bottleneck block: 1x1 reduce, 3x3 (with the block's stride), 1x1 expand (x4), each
/// followed by BatchNorm, and a residual connection through `downsample` when the shape
/// changes.
class BottleneckImpl : public TypedModule<BottleneckImpl> {
 public:
  static constexpr std::int64_t expansion = 4;
  /// `downsample` may be empty (`nullptr`): the identity is added unchanged.
  BottleneckImpl(std::int64_t inplanes, std::int64_t planes, std::int64_t stride = 1,
                 nn::Sequential downsample = nullptr);
  virtual Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::Conv2d conv2{nullptr};
  nn::BatchNorm2d bn2{nullptr};
  nn::Conv2d conv3{nullptr};
  nn::BatchNorm2d bn3{nullptr};
  nn::ReLU relu{nullptr};
  nn::Sequential downsample{nullptr};  ///< empty, or registered as "downsample"
  std::int64_t stride;
};
SYMTRACE_MODULE(Bottleneck);

/// FailingBottleneck: a Bottleneck whose forward branches on `out.sum() > 0`
/// after bn3 (late in the block, so a symbolic tracer has recorded most of the block when it
/// reaches the branch). Eagerly: `relu(out + identity)` when the sum is positive, else
/// `relu(out * 0.5 + identity)`. A symbolic tracer cannot trace it (Tensor::to_bool throws
/// TraceError on a symbolic tensor).
class FailingBottleneckImpl : public BottleneckImpl {
 public:
  using BottleneckImpl::BottleneckImpl;
  Tensor forward(const Tensor& x) override;
  /// The source line of the data-dependent branch in forward (where a symbolic trace fails).
  static const int data_branch_line;
};
SYMTRACE_MODULE(FailingBottleneck);

/// Which residual block a ResNet stacks.
enum class ResNetBlock : std::uint8_t {
  basic,
  bottleneck
};

/// A ResNet's shape. The defaults are ResNet-50.
struct ResNetConfig {
  ResNetBlock block = ResNetBlock::bottleneck;
  std::array<std::int64_t, 4> layers = {3, 4, 6, 3};  ///< blocks per stage (layer1..layer4)
  std::int64_t num_classes = 1000;
  /// Global block indices (0-based, counting through layer1..layer4) built as
  /// FailingBottleneck; only with bottleneck blocks.
  std::vector<std::int64_t> failing = {};
};

/// A ResNet (the same module tree as torchvision's): conv1 7x7/2, bn1, relu,
/// maxpool 3x3/2, four stages layer1..layer4 (nn::Sequential of blocks, 64/128/256/512
/// planes, stride 2 from layer2 on), adaptive average pooling to 1x1, flatten, fc.
/// Takes [N, 3, H, W] (224x224 in the zoo; any size, as each stride-2 stage maps 1x1 to
/// 1x1) and returns [N, num_classes].
class ResNetImpl : public TypedModule<ResNetImpl> {
 public:
  /// Throws std::invalid_argument for a non-positive block count or class count, failing
  /// indices out of range or repeated, or failing indices with basic blocks.
  explicit ResNetImpl(ResNetConfig config = {},
                      std::source_location where = std::source_location::current());
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::MaxPool2d maxpool{nullptr};
  nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};
  ResNetConfig config;

 private:
  nn::Sequential make_layer(std::int64_t planes, std::int64_t blocks, std::int64_t stride);
  std::int64_t inplanes_ = 64;
  std::int64_t block_index_ = 0;
};
SYMTRACE_MODULE(ResNet);

/// The failing block sets of resnet50_fail1, _fail4 and _fail16 (RESNET50_FAIL* in
/// bench/fx/models.py): layer3.0; the first block of every stage; every block.
inline constexpr std::array<std::int64_t, 1> resnet50_fail1_blocks = {7};
inline constexpr std::array<std::int64_t, 4> resnet50_fail4_blocks = {0, 3, 7, 13};
inline constexpr std::array<std::int64_t, 16> resnet50_fail16_blocks = {0, 1, 2, 3, 4, 5, 6, 7,
                                                                        8, 9, 10, 11, 12, 13, 14, 15};

/// The module paths ("layer3.0") of the global block indices `blocks` in a ResNet whose stages
/// have `layers` blocks. Throws std::invalid_argument for an index out of range.
[[nodiscard]] std::vector<std::string> resnet_block_paths(
    std::span<const std::int64_t> blocks, const std::array<std::int64_t, 4>& layers = {3, 4, 6, 3},
    std::source_location where = std::source_location::current());

/// torchvision's resnet18: 11,689,512 parameters.
[[nodiscard]] std::shared_ptr<Module> resnet18(std::int64_t num_classes = 1000);
/// ResNet-50 (25,557,032 parameters), with the global blocks `failing` built as
/// FailingBottleneck (the zoo's resnet50_fail{1,4,16} use the *_blocks sets above).
[[nodiscard]] std::shared_ptr<Module> resnet50(std::span<const std::int64_t> failing = {},
                                               std::int64_t num_classes = 1000);

}  // namespace symtrace::zoo

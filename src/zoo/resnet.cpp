// ResNet-18 and ResNet-50 (with ResNet-50's failing variants), written exactly as the Python
// in bench/fx/models.py and torchvision: same attribute names, same registration
// order (so state_dict keys and their order match PyTorch's), same forward structure (so a
// trace has the node sequence torch.fx records).

#include "symtrace/zoo/resnet.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/ops/shape_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace symtrace::zoo {

// ---- Blocks -----------------------------------------------------------------------------------

BasicBlockImpl::BasicBlockImpl(std::int64_t inplanes, std::int64_t planes, std::int64_t stride,
                               nn::Sequential downsample)
    : stride(stride) {
  conv1 = register_module("conv1", nn::Conv2d(inplanes, planes, 3, {.stride = stride, .padding = 1, .bias = false}));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  relu = register_module("relu", nn::ReLU({.inplace = true}));
  conv2 = register_module("conv2", nn::Conv2d(planes, planes, 3, {.padding = 1, .bias = false}));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  if (downsample) this->downsample = register_module("downsample", std::move(downsample));
}

Tensor BasicBlockImpl::forward(const Tensor& x) {
  Tensor identity = x;
  Tensor out = relu(bn1(conv1(x)));
  out = bn2(conv2(out));
  if (downsample) identity = downsample(x);  // a static attribute check: traceable
  // torchvision writes `out += identity`; Python runs that as `out = out + identity` on a
  // proxy, so torch.fx records an out-of-place add, and so do we.
  out = out + identity;
  return relu(out);
}

BottleneckImpl::BottleneckImpl(std::int64_t inplanes, std::int64_t planes, std::int64_t stride,
                               nn::Sequential downsample)
    : stride(stride) {
  const std::int64_t width = planes;
  conv1 = register_module("conv1", nn::Conv2d(inplanes, width, 1, {.bias = false}));
  bn1 = register_module("bn1", nn::BatchNorm2d(width));
  conv2 = register_module("conv2", nn::Conv2d(width, width, 3, {.stride = stride, .padding = 1, .bias = false}));
  bn2 = register_module("bn2", nn::BatchNorm2d(width));
  conv3 = register_module("conv3", nn::Conv2d(width, planes * expansion, 1, {.bias = false}));
  bn3 = register_module("bn3", nn::BatchNorm2d(planes * expansion));
  relu = register_module("relu", nn::ReLU({.inplace = true}));
  if (downsample) this->downsample = register_module("downsample", std::move(downsample));
}

Tensor BottleneckImpl::forward(const Tensor& x) {
  Tensor identity = x;
  Tensor out = relu(bn1(conv1(x)));
  out = relu(bn2(conv2(out)));
  out = bn3(conv3(out));
  if (downsample) identity = downsample(x);  // a static attribute check: traceable
  out = out + identity;
  return relu(out);
}

const int FailingBottleneckImpl::data_branch_line = __LINE__ + 8;  // the `if` below

Tensor FailingBottleneckImpl::forward(const Tensor& x) {
  Tensor identity = x;
  Tensor out = relu(bn1(conv1(x)));
  out = relu(bn2(conv2(out)));
  out = bn3(conv3(out));
  if (downsample) identity = downsample(x);
  if ((out.sum() > 0).to_bool()) {  // data-dependent control flow: a symbolic trace fails here
    out = out + identity;
  } else {
    out = out * 0.5 + identity;
  }
  return relu(out);
}

// ---- ResNet -----------------------------------------------------------------------------------

namespace {

std::int64_t total_blocks(const std::array<std::int64_t, 4>& layers) {
  std::int64_t n = 0;
  for (std::int64_t b : layers) n += b;
  return n;
}

void check_config(const ResNetConfig& config, std::source_location where) {
  for (std::size_t i = 0; i < config.layers.size(); ++i)
    if (config.layers[i] <= 0)
      throw_invalid_argument(where, "ResNet: layer{} has {} blocks; every stage needs at least one block", i + 1,
                             config.layers[i]);
  if (config.num_classes <= 0)
    throw_invalid_argument(where, "ResNet: num_classes is {}; it must be positive", config.num_classes);
  if (!config.failing.empty() && config.block == ResNetBlock::basic)
    throw_invalid_argument(where,
                           "ResNet: failing blocks {} were requested with basic blocks; only bottleneck ResNets "
                           "have a failing variant (use ResNetBlock::bottleneck or leave `failing` empty)",
                           fmt::join(config.failing, ", "));
  const std::int64_t n = total_blocks(config.layers);
  std::vector<std::int64_t> seen;
  for (std::int64_t index : config.failing) {
    if (index < 0 || index >= n)
      throw_invalid_argument(where, "ResNet: failing block index {} is out of range; this ResNet has blocks 0..{}",
                             index, n - 1);
    if (std::find(seen.begin(), seen.end(), index) != seen.end())
      throw_invalid_argument(where, "ResNet: failing block index {} is listed twice", index);
    seen.push_back(index);
  }
}

}  // namespace

ResNetImpl::ResNetImpl(ResNetConfig config, std::source_location where) : config(std::move(config)) {
  check_config(this->config, where);
  conv1 = register_module("conv1", nn::Conv2d(3, 64, 7, {.stride = 2, .padding = 3, .bias = false}));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  relu = register_module("relu", nn::ReLU({.inplace = true}));
  maxpool = register_module("maxpool", nn::MaxPool2d(3, {.stride = 2, .padding = 1}));
  layer1 = register_module("layer1", make_layer(64, this->config.layers[0], 1));
  layer2 = register_module("layer2", make_layer(128, this->config.layers[1], 2));
  layer3 = register_module("layer3", make_layer(256, this->config.layers[2], 2));
  layer4 = register_module("layer4", make_layer(512, this->config.layers[3], 2));
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(1));
  const std::int64_t expansion =
      this->config.block == ResNetBlock::bottleneck ? BottleneckImpl::expansion : BasicBlockImpl::expansion;
  fc = register_module("fc", nn::Linear(512 * expansion, this->config.num_classes));
}

nn::Sequential ResNetImpl::make_layer(std::int64_t planes, std::int64_t blocks, std::int64_t stride) {
  const bool bottleneck = config.block == ResNetBlock::bottleneck;
  const std::int64_t expansion = bottleneck ? BottleneckImpl::expansion : BasicBlockImpl::expansion;
  nn::Sequential downsample{nullptr};
  if (stride != 1 || inplanes_ != planes * expansion)
    downsample = nn::Sequential(nn::Conv2d(inplanes_, planes * expansion, 1, {.stride = stride, .bias = false}),
                                nn::BatchNorm2d(planes * expansion));
  nn::Sequential layer;
  for (std::int64_t i = 0; i < blocks; ++i) {
    const std::int64_t block_stride = i == 0 ? stride : 1;
    nn::Sequential block_downsample = i == 0 ? downsample : nn::Sequential(nullptr);
    std::shared_ptr<Module> block;
    if (!bottleneck) {
      block = std::make_shared<BasicBlockImpl>(inplanes_, planes, block_stride, block_downsample);
    } else if (std::find(config.failing.begin(), config.failing.end(), block_index_) != config.failing.end()) {
      block = std::make_shared<FailingBottleneckImpl>(inplanes_, planes, block_stride, block_downsample);
    } else {
      block = std::make_shared<BottleneckImpl>(inplanes_, planes, block_stride, block_downsample);
    }
    layer->push_back(std::move(block));
    inplanes_ = planes * expansion;
    ++block_index_;
  }
  return layer;
}

Tensor ResNetImpl::forward(const Tensor& input) {
  Tensor x = maxpool(relu(bn1(conv1(input))));
  x = layer1(x);
  x = layer2(x);
  x = layer3(x);
  x = layer4(x);
  x = avgpool(x);
  x = flatten(x, 1);
  return fc(x);
}

// ---- Builders ---------------------------------------------------------------------------------

std::vector<std::string> resnet_block_paths(std::span<const std::int64_t> blocks,
                                            const std::array<std::int64_t, 4>& layers, std::source_location where) {
  const std::int64_t n = total_blocks(layers);
  std::vector<std::string> out;
  out.reserve(blocks.size());
  for (std::int64_t index : blocks) {
    if (index < 0 || index >= n)
      throw_invalid_argument(where, "resnet_block_paths: block index {} is out of range; the ResNet has blocks 0..{}",
                             index, n - 1);
    std::int64_t rest = index;
    std::size_t stage = 0;
    while (rest >= layers[stage]) rest -= layers[stage++];
    out.push_back(fmt::format("layer{}.{}", stage + 1, rest));
  }
  return out;
}

std::shared_ptr<Module> resnet18(std::int64_t num_classes) {
  return std::make_shared<ResNetImpl>(
      ResNetConfig{.block = ResNetBlock::basic, .layers = {2, 2, 2, 2}, .num_classes = num_classes});
}

std::shared_ptr<Module> resnet50(std::span<const std::int64_t> failing, std::int64_t num_classes) {
  return std::make_shared<ResNetImpl>(ResNetConfig{.block = ResNetBlock::bottleneck,
                                                   .layers = {3, 4, 6, 3},
                                                   .num_classes = num_classes,
                                                   .failing = {failing.begin(), failing.end()}});
}

}  // namespace symtrace::zoo

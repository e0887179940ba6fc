// The convolutional models' zoo entries: the ResNets (with ResNet-50's failing variants),
// MobileNetV2 and the small U-Net.

#include "symtrace/zoo/zoo.hpp"

#include "symtrace/zoo/mobilenet.hpp"
#include "symtrace/zoo/resnet.hpp"
#include "symtrace/zoo/unet.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace symtrace::zoo::detail {

namespace {
ExampleInput image(std::int64_t size) { return ExampleInput{"x", DType::float32, {1, 3, size, size}, 0}; }

ModelInfo failing_resnet50(std::string name, std::string description, std::span<const std::int64_t> blocks) {
  // clang-format off
  return ModelInfo{std::move(name), std::move(description), {image(224)}, resnet_block_paths(blocks), 25'557'032,
                   [blocks] { return resnet50(blocks); }};
  // clang-format on
}
}  // namespace

void add_cnn_models(std::vector<ModelInfo>& out) {
  // clang-format off
  out.push_back({"resnet18", "torchvision ResNet-18: BasicBlock [2, 2, 2, 2], 1000 classes", {image(224)}, {},
                 11'689'512, [] { return resnet18(); }});
  out.push_back({"resnet50", "ResNet-50: Bottleneck [3, 4, 6, 3], 1000 classes", {image(224)}, {},
                 25'557'032, [] { return resnet50(); }});
  // clang-format on
  out.push_back(failing_resnet50("resnet50_fail1", "ResNet-50 with a data-dependent branch in layer3.0",
                                 resnet50_fail1_blocks));
  out.push_back(failing_resnet50("resnet50_fail4",
                                 "ResNet-50 with a data-dependent branch in the first block of every stage",
                                 resnet50_fail4_blocks));
  out.push_back(failing_resnet50("resnet50_fail16", "ResNet-50 with a data-dependent branch in all 16 bottlenecks",
                                 resnet50_fail16_blocks));
  // clang-format off
  out.push_back({"mobilenet_v2", "MobileNetV2: width 1.0, 17 inverted residuals, 1000 classes", {image(224)}, {},
                 3'504'872, [] { return mobilenet_v2(); }});
  out.push_back({"unet_small", "small U-Net: 3 stages (16-32-64, bottleneck 128), 2 classes, 64x64 input",
                 {image(64)}, {}, 450'498, [] { return unet_small(); }});
  // clang-format on
}

}  // namespace symtrace::zoo::detail

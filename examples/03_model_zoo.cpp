// Lesson 3: the model zoo, and a real model run end to end.
//
// symtrace ships the reference models every capability is verified on: ResNets, MobileNetV2,
// ViTs, deep MLPs, a U-Net, a recurrent model, and variants with code no tracer can capture
// (data-dependent branches, loops bounded by data, opaque calls), all written against the
// public API like user code, with PyTorch's parameter counts and state-dict names. This lesson
// lists the zoo, checks the parameter counts against PyTorch's published figures, and runs
// ResNet-50 on a 224x224 image.

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>

using namespace symtrace;
using namespace lesson;

namespace {

// 25557032 -> "25,557,032".
std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

int main() {
  // 1. The zoo, with parameter counts. PyTorch's figures for the same architectures
  //    (torchvision and bench/fx/models.py) must come out exactly.
  const std::map<std::string, std::int64_t> pytorch = {
      // clang-format off
      {"resnet18", 11'689'512}, {"resnet50", 25'557'032},    {"mobilenet_v2", 3'504'872},
      {"vit_b16", 86'567'656},  {"deep_mlp_1000", 4'288'000}, {"resnet50_fail16", 25'557'032}};
  // clang-format on
  manual_seed(0);
  for (const zoo::ModelInfo& info : zoo::models()) {
    if (info.name == "deep_mlp_10000") continue;  // 40k modules: fine, but slow to build in a lesson
    const std::int64_t params = zoo::create(info.name)->num_parameters();
    fmt::print("{:<22} {:>12}  {}\n", info.name, with_commas(params), info.description);
    if (auto it = pytorch.find(info.name); it != pytorch.end())
      expect(params == it->second, fmt::format("{} has {} parameters, PyTorch's has {}", info.name, params, it->second));
  }

  // 2. ResNet-50 on one 224x224 image, eagerly.
  const auto resnet = zoo::create("resnet50");
  const Tensor image = zoo::example_inputs(zoo::info("resnet50"))[0];
  const auto start = std::chrono::steady_clock::now();
  const Tensor logits = resnet->call({image}).to_tensor();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("resnet50 on {}: {} in {:.2f} s\n", image.meta(), logits.meta(), seconds);
  expect(logits.shape() == Shape{1, 1000}, "resnet50 output shape");
  bool finite = true;
  for (float v : logits.to_vector<float>()) finite = finite && std::isfinite(v);
  expect(finite, "resnet50 outputs are finite");
  const Tensor top = logits.argmax(1);
  fmt::print("top class: {}\n", top.item<std::int64_t>());

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (the times depend on the machine):
//   resnet18                 11,689,512  ResNet-18 ...
//   resnet50                 25,557,032  ResNet-50 ...
//   ...
//   resnet50 on float32[1, 3, 224, 224]: float32[1, 1000] in N.NN s
//   top class: NNN
//   all checks passed

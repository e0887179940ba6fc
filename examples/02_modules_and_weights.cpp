// Lesson 2: writing modules, calling them, and saving and loading their weights.
//
// A model is a tree of modules, written as in LibTorch: derive from TypedModule, register
// children, parameters and buffers, write a natural forward, and call children as `conv1(x)`.
// Every such call passes one hook point -- the seam a tracer plugs into later -- and every
// module also has a type-erased entry point (Values in, a Value out) with declared input names,
// so a tool can call any module knowing only `Module&`. This lesson builds a small classifier,
// runs it, inspects it, saves its state dict as safetensors (the format PyTorch users exchange
// weights in) and loads it into a fresh copy, which must then give bit-identical outputs.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

using namespace symtrace;
using namespace lesson;

namespace {

// conv -> batch norm -> relu, with a residual connection when the shapes allow it.
struct ConvBlockImpl : TypedModule<ConvBlockImpl> {
  ConvBlockImpl(std::int64_t in, std::int64_t out) : residual(in == out) {
    conv = register_module("conv", nn::Conv2d(in, out, 3, {.padding = 1, .bias = false}));
    bn = register_module("bn", nn::BatchNorm2d(out));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = relu(bn(conv(x)));
    return residual ? y + x : y;
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  bool residual;
};
SYMTRACE_MODULE(ConvBlock);

struct ClassifierImpl : TypedModule<ClassifierImpl> {
  explicit ClassifierImpl(std::int64_t classes) : TypedModule({"image"}) {
    features = register_module("features", nn::Sequential(ConvBlock(3, 16), ConvBlock(16, 16), nn::MaxPool2d(2)));
    head = register_module("head", nn::Linear(16, classes));
  }
  Tensor forward(const Tensor& image) {
    return head(adaptive_avg_pool2d(features(image), {1, 1}).flatten(1));
  }
  nn::Sequential features{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(Classifier);

}  // namespace

int main() {
  // 1. Build and run. Weights come from the thread's default generator: same seed, same model.
  manual_seed(0);
  Classifier model(10);
  model->eval();
  fmt::print("{}\n", to_string(*model));
  const Tensor image = randn({2, 3, 16, 16});
  const Tensor logits = model(image);
  fmt::print("logits: {}\n", logits.meta());
  expect(logits.shape() == Shape{2, 10}, "logits shape");

  // 2. Inspect: qualified paths, parameter counts, the declared inputs.
  for (const NamedModule& m : model->named_modules())
    fmt::print("  {:<22} {}\n", m.path.empty() ? "(root)" : m.path, m.module->type_name());
  const std::int64_t expected_params = (16 * 3 * 9 + 2 * 16) + (16 * 16 * 9 + 2 * 16) + (16 * 10 + 10);
  fmt::print("{} parameters; inputs: {}\n", model->num_parameters(), fmt::join(model->input_names(), ", "));
  expect(model->num_parameters() == expected_params, "parameter count");
  expect(model->input_names() == std::vector<std::string>{"image"}, "declared input names");

  // 3. The type-erased entry point: what a tracer uses for any module.
  Module& erased = *model.ptr();
  const Tensor same = erased.call({image}).to_tensor();
  expect(same.to_vector<float>() == logits.to_vector<float>(), "type-erased call equals the typed call");

  // 4. Save the weights as safetensors and load them into a fresh model with other weights.
  const auto path = std::filesystem::temp_directory_path() / "symtrace_lesson2.safetensors";
  save_safetensors(*model, path);
  fmt::print("saved {} tensors ({} bytes) to {}\n", model->state_dict().size(), std::filesystem::file_size(path),
             path.string());
  manual_seed(123);
  Classifier copy(10);
  copy->eval();
  expect(copy(image).to_vector<float>() != logits.to_vector<float>(), "a fresh model differs before loading");
  load_safetensors(*copy, path);
  std::filesystem::remove(path);
  expect(copy(image).to_vector<float>() == logits.to_vector<float>(), "loaded model gives bit-identical outputs");

  // 5. Mistakes are reported with this file's line, the module and what to do.
  try {
    model->register_module("head", nn::Linear(16, 2));
    expect(false, "a duplicate name must be refused");
  } catch (const std::invalid_argument& e) {
    fmt::print("error, as expected: {}\n", e.what());
    expect(std::string(e.what()).find("duplicate name 'head' in Classifier") != std::string::npos, "duplicate");
  }

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output:
//   Classifier(
//     (features): Sequential(
//       (0): ConvBlock(
//         (conv): Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
//         (bn): BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
//       )
//       ...
//   logits: float32[2, 10]
//     (root)                 Classifier
//     features               Sequential
//     features.0             ConvBlock
//     ...
//   2970 parameters; inputs: image
//   saved 14 tensors (NNNNN bytes) to /tmp/symtrace_lesson2.safetensors
//   error, as expected: .../02_modules_and_weights.cpp:NN: duplicate name 'head' in Classifier: ...
//   all checks passed

#pragma once
// The files tests/torchscript/make_models.py writes for the torchscript suite, read back.

#include <symtrace/symtrace.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace symtrace::testing {

inline const std::filesystem::path models = SYMTRACE_TORCHSCRIPT_MODELS;

/// The torchvision classifiers make_models.py writes, scripted and traced.
inline const std::vector<std::string> classifiers = {
    "resnet18", "resnet50", "resnext50_32x4d", "mobilenet_v2", "mobilenet_v3_large",
    "efficientnet_b0", "convnext_tiny", "shufflenet_v2_x1_0", "squeezenet1_0", "vgg11",
    "alexnet", "googlenet", "inception_v3", "densenet121", "vit_b_16",
    "swin_t"};

/// NAME.json: the input shape, the parameter count, LibTorch's results.
inline nlohmann::json meta(const std::string& name) {
  std::ifstream in(models / (name + ".json"));
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

/// A float32 file (C order) as a tensor of `shape`.
inline Tensor read_floats(const std::filesystem::path& path, const IntList& shape) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<float> data(static_cast<std::size_t>(n));
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
  REQUIRE(in.gcount() == static_cast<std::streamsize>(data.size() * sizeof(float)));
  return tensor(data, shape);
}

}  // namespace symtrace::testing

// Note [Layer output metadata]: a built-in layer's output metadata, computed without running
// forward, is exactly what forward returns, and is given only for calls forward accepts. Every
// layer is checked against its eager forward on valid and invalid inputs, and a traced leaf
// gets what the layer traced through gives (or the same error), with known and unknown dims.

#include "support/checks.hpp"

#include <symtrace/nn.hpp>
#include <symtrace/symtrace.hpp>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// Calls `layer` (a leaf when traced) on its input.
class Wrap : public TypedModule<Wrap> {
 public:
  explicit Wrap(std::shared_ptr<Module> layer) { this->layer = register_module("layer", std::move(layer)); }
  Tensor forward(const Tensor& x) { return layer->call({x}).to_tensor(); }
  std::shared_ptr<Module> layer;
};

struct Case {
  std::string what;
  std::shared_ptr<Module> layer;
  std::vector<IntList> shapes;
};

std::vector<Case> cases() {
  auto training = [](std::shared_ptr<Module> m, bool on) {
    m->train(on);
    return m;
  };
  // clang-format off
  std::vector<IntList> images{{2, 3, 8, 8}, {1, 3, 7, 5}, {3, 8, 8}, {2, 4, 8, 8}, {2, 3, 1, 1}, {1, 3, 1, 1},
                              {2, 3, 8},    {2, 3, 0, 8}, {0, 3, 8, 8}, {2, 3, 2, 9}};
  // clang-format on
  std::vector<IntList> rows{{2, 8}, {8}, {3, 4, 8}, {2, 7}, {}, {2, 0, 8}, {0, 8}};
  return {
      {"Linear", nn::Linear(8, 5).ptr(), rows},
      {"Linear without bias", nn::Linear(8, 5, {.bias = false}).ptr(), rows},
      {"Conv2d", nn::Conv2d(3, 6, 3).ptr(), images},
      {"Conv2d strided, padded, dilated", nn::Conv2d(3, 4, {3, 2}, {.stride = {2, 1}, .padding = {1, 0}, .dilation = 2}).ptr(), images},
      {"Conv2d grouped", nn::Conv2d(4, 8, 1, {.groups = 2, .bias = false}).ptr(), images},
      {"Conv2d depthwise", nn::Conv2d(3, 3, 3, {.padding = 1, .groups = 3}).ptr(), images},
      {"BatchNorm2d training", training(nn::BatchNorm2d(3).ptr(), true), images},
      {"BatchNorm2d eval", training(nn::BatchNorm2d(3).ptr(), false), images},
      {"BatchNorm2d without running stats", training(nn::BatchNorm2d(3, {.track_running_stats = false}).ptr(), false), images},
      {"BatchNorm2d without affine", nn::BatchNorm2d(3, {.affine = false}).ptr(), images},
      {"LayerNorm", nn::LayerNorm(8).ptr(), rows},
      {"LayerNorm over two dims", nn::LayerNorm(IntList{4, 8}).ptr(), rows},
      {"LayerNorm without affine", nn::LayerNorm(8, {.elementwise_affine = false}).ptr(), rows},
      {"ReLU", nn::ReLU().ptr(), rows},
      {"ReLU inplace", nn::ReLU({.inplace = true}).ptr(), images},
      {"ReLU6", nn::ReLU6().ptr(), images},
      {"GELU", nn::GELU().ptr(), rows},
      {"GELU tanh", nn::GELU({.approximate = "tanh"}).ptr(), rows},
      {"SiLU", nn::SiLU().ptr(), images},
      {"Hardswish", nn::Hardswish().ptr(), images},
      {"Hardswish inplace", nn::Hardswish({.inplace = true}).ptr(), rows},
      {"Hardsigmoid", nn::Hardsigmoid().ptr(), rows},
      {"Sigmoid", nn::Sigmoid().ptr(), rows},
      {"Tanh", nn::Tanh().ptr(), rows},
      {"Dropout", nn::Dropout().ptr(), rows},
      {"Dropout eval", training(nn::Dropout({.p = 0.2}).ptr(), false), rows},
      {"MaxPool2d", nn::MaxPool2d(3, {.stride = 2, .padding = 1}).ptr(), images},
      {"MaxPool2d ceil, dilated", nn::MaxPool2d(2, {.dilation = 2, .ceil_mode = true}).ptr(), images},
      {"AvgPool2d", nn::AvgPool2d(2).ptr(), images},
      {"AvgPool2d ceil, padded", nn::AvgPool2d({3, 2}, {.stride = 2, .padding = 1, .ceil_mode = true}).ptr(), images},
      {"AdaptiveAvgPool2d", nn::AdaptiveAvgPool2d(1).ptr(), images},
      {"AdaptiveAvgPool2d 3x2", nn::AdaptiveAvgPool2d({3, 2}).ptr(), images},
      {"Flatten", nn::Flatten().ptr(), images},
      {"Flatten all", nn::Flatten({.start_dim = 0}).ptr(), rows},
      {"Flatten middle", nn::Flatten({.start_dim = -3, .end_dim = 2}).ptr(), images},
      {"Identity", nn::Identity().ptr(), rows},
  };
}

/// The metadata of forward's result on a concrete input of `shape`, or its error message.
struct Eager {
  std::optional<TensorMeta> meta;
  std::string error;
};

Eager run_eager(Module& layer, const Tensor& x) {
  try {
    return {layer.call({x}).to_tensor().meta(), {}};
  } catch (const std::exception& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace

TEST_CASE("a built-in layer's output metadata equals its eager forward's, and is given only for inputs forward accepts") {
  int answered = 0;
  for (const Case& c : cases()) {
    for (const IntList& shape : c.shapes) {
      for (DType dtype : {DType::float32, DType::int64}) {
        CAPTURE(c.what);
        CAPTURE(fmt::format("{} {}", dtype, fmt::join(shape, "x")));
        const Tensor x = zeros(shape, dtype);
        const std::optional<TensorMeta> fast = c.layer->layer_output_meta({x});
        const Eager eager = run_eager(*c.layer, x);
        if (!fast) continue;
        ++answered;
        REQUIRE(eager.meta.has_value());
        CHECK(*fast == *eager.meta);
      }
    }
  }
  CHECK(answered >= 150);  // the common calls are answered, not left to a run
}

namespace {

/// Traces built-in layers through: their op's node gives what forward returns symbolically,
/// the reference a leaf's metadata must equal.
class Through : public Tracer {
 public:
  bool is_leaf_module(const Module& module, std::string_view path) const override {
    return !module.is_builtin_layer() && Tracer::is_leaf_module(module, path);
  }
};

/// The metadata of what the graph returns (the node its output names).
TensorMeta result_meta(const Graph& g) {
  const Node* last = nullptr;
  for (const Node& node : g.nodes()) {
    if (node.op() != OpKind::output) last = &node;
  }
  REQUIRE(last != nullptr);
  REQUIRE(last->tensor_meta() != nullptr);
  return *last->tensor_meta();
}

/// `sizes` with the dims at `unknown` (indices) unknown.
Shape with_unknown(const IntList& sizes, std::initializer_list<std::size_t> unknown) {
  Shape shape(sizes);
  for (std::size_t d : unknown) {
    if (d < shape.rank()) shape[d] = Dim::unknown();
  }
  return shape;
}

}  // namespace

TEST_CASE("a traced built-in layer gets what its forward gives on symbolic tensors, with known and unknown dims, or its error") {
  for (const Case& c : cases()) {
    for (const IntList& sizes : c.shapes) {
      const std::size_t rank = sizes.size();
      for (const Shape& shape : {Shape(sizes), with_unknown(sizes, {0}), with_unknown(sizes, {rank - 1}),
                                 with_unknown(sizes, {0, 1, 2, 3})}) {
        for (DType dtype : {DType::float32, DType::int64}) {
          CAPTURE(c.what);
          CAPTURE(fmt::format("{} {}", dtype, shape));
          Wrap model(c.layer);
          const std::vector<InputSpec> spec{InputSpec(shape, dtype)};
          std::optional<TensorMeta> reference;
          std::string error;
          try {
            reference = result_meta(Through().trace(model, spec));
          } catch (const std::exception& e) {
            error = e.what();
          }
          if (!reference) {
            // The leaf reports what forward reported.
            CHECK_THROWS_WITH(symbolic_trace(model, spec), error.c_str());
            continue;
          }
          const Graph g = symbolic_trace(model, spec);
          const Node* leaf = g.find_node("layer");
          REQUIRE(leaf != nullptr);
          REQUIRE(leaf->tensor_meta() != nullptr);
          CHECK(*leaf->tensor_meta() == *reference);
        }
      }
    }
  }
}

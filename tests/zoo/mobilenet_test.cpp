// The zoo's MobileNetV2: parameter count, PyTorch state_dict keys, the module tree of
// bench/fx/models.py (ConvBNReLU as a Sequential subclass, InvertedResidual with `conv`), torchvision's
// channel rounding, eager runs at small inputs and seeding.

#include "support/checks.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/zoo/mobilenet.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace symtrace;
using testing::all_finite;
using testing::run;
using testing::same_state;

namespace {

std::vector<std::string> child_names(const Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, child] : m.named_children()) out.push_back(name + ":" + child->type_name());
  return out;
}

}  // namespace

TEST_CASE("mobilenet_v2 has torchvision's 3,504,872 parameters and PyTorch's state_dict keys") {
  manual_seed(0);
  const auto model = zoo::mobilenet_v2();
  CHECK(model->num_parameters() == 3'504'872);
  const StateDict state = model->state_dict();
  // stem 6 + first block (no expansion) 12 + 16 blocks x 18 + last ConvBNReLU 6 + classifier 2.
  CHECK(state.size() == 314);
  CHECK(state.keys().front() == "features.0.0.weight");
  CHECK(state.keys().back() == "classifier.1.bias");
  CHECK(state.at("features.0.0.weight").shape() == Shape{32, 3, 3, 3});
  CHECK(state.contains("features.0.1.running_mean"));
  CHECK(state.at("features.1.conv.0.0.weight").shape() == Shape{32, 1, 3, 3});  // depthwise
  CHECK(state.at("features.1.conv.1.weight").shape() == Shape{16, 32, 1, 1});   // linear projection
  CHECK(state.contains("features.1.conv.2.bias"));
  CHECK(state.at("features.2.conv.0.0.weight").shape() == Shape{96, 16, 1, 1});  // expansion x6
  CHECK(state.at("features.2.conv.1.0.weight").shape() == Shape{96, 1, 3, 3});
  CHECK(state.at("features.17.conv.2.weight").shape() == Shape{320, 960, 1, 1});
  CHECK(state.at("features.18.0.weight").shape() == Shape{1280, 320, 1, 1});
  CHECK(state.at("features.18.1.num_batches_tracked").dtype() == DType::int64);
  CHECK(state.at("classifier.1.weight").shape() == Shape{1000, 1280});
}

TEST_CASE("mobilenet_v2's module tree: ConvBNReLU Sequentials and InvertedResiduals with `conv`") {
  manual_seed(0);
  const auto model = zoo::mobilenet_v2();
  CHECK(model->type_name() == "MobileNetV2");
  CHECK(child_names(*model) == std::vector<std::string>{"features:Sequential", "classifier:Sequential"});
  const Module& features = model->get_submodule("features");
  CHECK(features.named_children().size() == 19);
  CHECK(child_names(model->get_submodule("features.0")) ==
        std::vector<std::string>{"0:Conv2d", "1:BatchNorm2d", "2:ReLU6"});
  CHECK(model->get_submodule("features.0").type_name() == "ConvBNReLU");
  CHECK(model->get_submodule("features.18").type_name() == "ConvBNReLU");
  CHECK(child_names(model->get_submodule("features.1")) == std::vector<std::string>{"conv:Sequential"});
  CHECK(child_names(model->get_submodule("features.1.conv")) ==
        std::vector<std::string>{"0:ConvBNReLU", "1:Conv2d", "2:BatchNorm2d"});
  CHECK(child_names(model->get_submodule("features.2.conv")) ==
        std::vector<std::string>{"0:ConvBNReLU", "1:ConvBNReLU", "2:Conv2d", "3:BatchNorm2d"});
  CHECK(child_names(model->get_submodule("classifier")) == std::vector<std::string>{"0:Dropout", "1:Linear"});
  const auto& depthwise = dynamic_cast<const nn::Conv2dImpl&>(model->get_submodule("features.2.conv.1.0"));
  CHECK(depthwise.options.groups == 96);
  CHECK(depthwise.options.stride == nn::Size2(2));
  // The residual add is used exactly where the stride is 1 and the channel count is unchanged.
  std::vector<int> residual;
  for (int i = 1; i <= 17; ++i)
    if (dynamic_cast<const zoo::InvertedResidualImpl&>(model->get_submodule(std::to_string(i).insert(0, "features.")))
            .use_res_connect)
      residual.push_back(i);
  CHECK(residual == std::vector<int>{3, 5, 6, 8, 9, 10, 12, 13, 15, 16});
}

TEST_CASE("make_divisible rounds channel counts as torchvision's _make_divisible") {
  CHECK(zoo::make_divisible(32) == 32);
  CHECK(zoo::make_divisible(1280) == 1280);
  CHECK(zoo::make_divisible(32 * 0.75) == 24);
  CHECK(zoo::make_divisible(16 * 0.35) == 8);   // never below the divisor
  CHECK(zoo::make_divisible(96 * 0.35) == 32);  // int(33.6 + 4) // 8 * 8
  CHECK(zoo::make_divisible(11.9) == 16);       // 8 would round down by more than 10%
  CHECK(zoo::make_divisible(1280 * 1.4) == 1792);
  CHECK(zoo::make_divisible(5, 8, 16) == 16);  // an explicit minimum
}

TEST_CASE("mobilenet_v2 runs eagerly on 1x3x32x32, gives finite scores, and its eval mode is deterministic") {
  manual_seed(1);
  const auto model = zoo::create("mobilenet_v2");
  const Tensor x = randn({1, 3, 32, 32});
  const Tensor y = run(*model, x);
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y));
  CHECK(run(*model, x).to_vector<float>() == y.to_vector<float>());  // Dropout is off in eval mode
}

TEST_CASE("an InvertedResidual adds its input only when it keeps the shape") {
  manual_seed(2);
  zoo::InvertedResidual same(24, 24, 1, 6);
  zoo::InvertedResidual strided(24, 32, 2, 6);
  same->eval();
  strided->eval();
  CHECK(same->use_res_connect);
  CHECK_FALSE(strided->use_res_connect);
  const Tensor x = randn({1, 24, 8, 8});
  CHECK(testing::max_abs_diff(same(x), x + same->conv(x)) == 0);
  const Tensor y = strided(x);
  CHECK(y.shape() == Shape{1, 32, 4, 4});
  CHECK(testing::max_abs_diff(y, strided->conv(x)) == 0);
}

TEST_CASE("the same seed gives bit-identical mobilenet_v2 weights and outputs") {
  manual_seed(3);
  const Tensor x = randn({1, 3, 32, 32});
  manual_seed(42);
  const auto a = zoo::mobilenet_v2();
  manual_seed(42);
  const auto b = zoo::mobilenet_v2();
  CHECK(same_state(*a, *b));
  a->eval();
  b->eval();
  CHECK(run(*a, x).to_vector<float>() == run(*b, x).to_vector<float>());
  manual_seed(43);
  CHECK_FALSE(same_state(*a, *zoo::mobilenet_v2()));
}

TEST_CASE("zoo::info(\"mobilenet_v2\") declares a 1x3x224x224 input named x and nothing untraceable") {
  const zoo::ModelInfo& info = zoo::info("mobilenet_v2");
  REQUIRE(info.inputs.size() == 1);
  CHECK(info.inputs[0].name == "x");
  CHECK(info.inputs[0].dtype == DType::float32);
  CHECK(info.inputs[0].shape == IntList{1, 3, 224, 224});
  CHECK(info.untraceable.empty());
  CHECK_FALSE(info.description.empty());
}

TEST_CASE("MobileNetV2's configuration sets the class count and width, and rejects bad values") {
  manual_seed(4);
  zoo::MobileNetV2 narrow(zoo::MobileNetV2Config{.num_classes = 10, .width_mult = 0.5});
  CHECK(narrow->last_channel == 1280);
  CHECK(narrow->get_tensor("features.0.0.weight").shape() == Shape{16, 3, 3, 3});
  CHECK(narrow->get_tensor("classifier.1.weight").shape() == Shape{10, 1280});
  CHECK_THROWS_WITH_AS(zoo::MobileNetV2Impl({.num_classes = 0, .width_mult = 1.0}),
                       doctest::Contains("MobileNetV2: num_classes is 0; it must be positive"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(zoo::MobileNetV2Impl({.num_classes = 10, .width_mult = -1.0}),
                       doctest::Contains("MobileNetV2: width_mult is -1; it must be positive"), std::invalid_argument);
}

// Traced with the example image, the graph knows every size; traced with a rank-4 input of
// unknown sizes, it has the same nodes (adaptive pooling and flatten need no size read) and
// runs on another batch and image size.
TEST_CASE("mobilenet_v2 traces with and without example shapes, lints, and its graph runs equal to eager") {
  manual_seed(30);
  const auto model = zoo::create("mobilenet_v2");
  model->eval();
  const zoo::ModelInfo& info = zoo::info("mobilenet_v2");
  Generator gen(31);
  const Tensor x = zoo::example_inputs(info, gen).at(0);  // 1x3x224x224
  const Tensor small = randn({2, 3, 64, 64}, gen);

  const Graph shaped = testing::trace_and_lint(*model, x);
  // placeholder; features.0 (3); features.1 (ConvBNReLU + conv + bn: 5); 16 expanding blocks
  // x 8 and 10 residual adds; features.18 (3); pool, flatten, dropout, linear; output.
  CHECK(shaped.size() == 1 + 3 + 5 + 16 * 8 + 10 + 3 + 4 + 1);
  CHECK(shaped.size() == 155);
  CHECK(testing::count_nodes(shaped, OpKind::call_function, "add") == 10);
  CHECK(testing::result_meta(shaped) == "float32[1, 1000]");
  const Graph unknown = testing::trace_and_lint(*model, InputSpec(Shape::unknown(4), info.inputs[0].dtype));
  CHECK(unknown.size() == shaped.size());
  CHECK(unknown.find_node("size") == nullptr);
  CHECK(testing::result_meta(unknown) == "float32[?, 1000]");

  testing::check_graph_runs_equal_to_eager(*model, shaped, x, run(*model, x));
  testing::check_graph_runs_equal_to_eager(*model, unknown, small, run(*model, small));
  CHECK_THROWS_AS(Interpreter(*model, shaped).run({small}), std::invalid_argument);  // it knew 1x3x224x224
}

// The zoo's ResNets: torchvision's ResNet-18, ResNet-50 and its failing variants
// (parameter counts, PyTorch state_dict keys, eager runs at small inputs, seeding, where the
// FailingBottlenecks sit and that their branch follows the data).

#include "support/checks.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/zoo/resnet.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace symtrace;
using testing::all_finite;
using testing::run;
using testing::same_state;

namespace {

std::vector<std::string> paths_of_type(const Module& root, std::string_view type) {
  std::vector<std::string> out;
  for (const NamedModule& nm : root.named_modules())
    if (nm.module->type_name() == type) out.push_back(nm.path);
  return out;
}

// Not all elements equal: the weights were drawn, so equal states are not trivially equal.
bool varies(const Tensor& t) {
  const auto v = t.to_vector<float>();
  return std::any_of(v.begin(), v.end(), [&](float e) { return e != v.front(); });
}

}  // namespace

TEST_CASE("resnet18 has torchvision's 11,689,512 parameters and PyTorch's state_dict keys") {
  manual_seed(0);
  const auto model = zoo::resnet18();
  CHECK(model->num_parameters() == 11'689'512);
  const StateDict state = model->state_dict();
  // 6 (stem) + 8 blocks x 12 + 3 downsamples x 6 + 2 (fc).
  CHECK(state.size() == 122);
  const std::vector<std::string> keys = state.keys();
  REQUIRE(keys.size() >= 6);
  CHECK(std::vector<std::string>(keys.begin(), keys.begin() + 6) ==
        std::vector<std::string>{"conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var",
                                 "bn1.num_batches_tracked"});
  CHECK(keys[6] == "layer1.0.conv1.weight");
  CHECK(keys.back() == "fc.bias");
  CHECK(state.at("layer1.0.conv2.weight").shape() == Shape{64, 64, 3, 3});
  CHECK(state.at("layer2.0.conv1.weight").shape() == Shape{128, 64, 3, 3});
  CHECK(state.at("layer2.0.downsample.0.weight").shape() == Shape{128, 64, 1, 1});
  CHECK(state.contains("layer4.0.downsample.1.running_var"));
  CHECK(state.contains("layer4.1.bn2.num_batches_tracked"));
  CHECK(state.at("fc.weight").shape() == Shape{1000, 512});
  CHECK_FALSE(state.contains("layer1.0.downsample.0.weight"));  // layer1 keeps 64 channels
  CHECK(model->get_submodule("layer3.1").type_name() == "BasicBlock");
}

TEST_CASE("zoo::create(\"resnet50\") gives ResNet-50 in eval mode, with PyTorch's state_dict keys") {
  const zoo::ModelInfo& info = zoo::info("resnet50");
  REQUIRE(info.inputs.size() == 1);
  CHECK(info.inputs[0].name == "x");
  CHECK(info.inputs[0].dtype == DType::float32);
  CHECK(info.inputs[0].shape == IntList{1, 3, 224, 224});
  CHECK(info.untraceable.empty());
  CHECK(zoo::info("resnet18").inputs[0].shape == IntList{1, 3, 224, 224});

  manual_seed(0);
  const auto model = zoo::create("resnet50");
  CHECK(model->type_name() == "ResNet");
  CHECK(model->input_names() == std::vector<std::string>{"x"});
  for (const NamedModule& nm : model->named_modules()) CHECK_FALSE(nm.module->is_training());
  CHECK(model->num_parameters() == 25'557'032);
  CHECK(zoo::info("resnet50").parameters == model->num_parameters());
  const StateDict state = model->state_dict();
  // 6 (stem) + 16 blocks x 18 + 4 downsamples x 6 + 2 (fc).
  CHECK(state.size() == 320);
  CHECK(state.keys().front() == "conv1.weight");
  CHECK(state.keys().back() == "fc.bias");
  CHECK(state.at("layer1.0.downsample.1.running_mean").shape() == Shape{256});
  CHECK(state.at("layer1.0.downsample.0.weight").shape() == Shape{256, 64, 1, 1});
  CHECK(state.at("layer3.5.conv2.weight").shape() == Shape{256, 256, 3, 3});
  CHECK(state.at("layer4.2.bn3.weight").shape() == Shape{2048});
  CHECK(state.at("fc.weight").shape() == Shape{1000, 2048});
  CHECK(state.at("layer2.1.bn1.num_batches_tracked").dtype() == DType::int64);
  CHECK_FALSE(state.contains("layer1.1.downsample.0.weight"));
  CHECK(paths_of_type(*model, "Bottleneck").size() == 16);
  CHECK(paths_of_type(*model, "FailingBottleneck").empty());
}

// Building a ResNet-50 dominates these tests' time (under ASan): each of the next two test
// cases builds each model twice, from the same seed, and runs both copies.
TEST_CASE("resnet18 runs eagerly on 1x3x32x32 to finite scores, bit-identically for the same seed") {
  manual_seed(1);
  const Tensor x = randn({1, 3, 32, 32});
  manual_seed(42);
  const auto a = zoo::resnet18();
  manual_seed(42);
  const auto b = zoo::resnet18();
  CHECK(same_state(*a, *b));
  CHECK(varies(a->get_tensor("layer1.0.conv1.weight")));
  a->eval();
  b->eval();
  const Tensor y = run(*a, x);
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y));
  CHECK(y.to_vector<float>() == run(*b, x).to_vector<float>());
  // Two images at once: each gets its own row of scores (eval-mode BatchNorm is per sample).
  const Tensor two = randn({2, 3, 32, 32});
  const Tensor y2 = run(*a, two);
  CHECK(y2.shape() == Shape{2, 1000});
  CHECK(testing::max_abs_diff(y2.select(0, 1).unsqueeze(0), run(*a, two.select(0, 1).unsqueeze(0))) < 1e-5);
}

TEST_CASE("resnet50 runs eagerly on 1x3x32x32 to finite scores, bit-identically for the same seed") {
  manual_seed(2);
  const Tensor x = randn({1, 3, 32, 32});
  manual_seed(42);
  const auto a = zoo::resnet50();
  manual_seed(42);
  const auto b = zoo::resnet50();
  CHECK(same_state(*a, *b));
  CHECK(varies(a->get_tensor("layer1.0.conv1.weight")));
  a->eval();
  b->eval();
  const Tensor y = run(*a, x);
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y));
  CHECK(y.to_vector<float>() == run(*b, x).to_vector<float>());
}

TEST_CASE("the failing variants put FailingBottleneck at the listed block indices") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"resnet50_fail1", {"layer3.0"}},
      {"resnet50_fail4", {"layer1.0", "layer2.0", "layer3.0", "layer4.0"}},
      // clang-format off
      {"resnet50_fail16", {"layer1.0", "layer1.1", "layer1.2", "layer2.0", "layer2.1", "layer2.2", "layer2.3",
                           "layer3.0", "layer3.1", "layer3.2", "layer3.3", "layer3.4", "layer3.5", "layer4.0",
                           "layer4.1", "layer4.2"}},
      // clang-format on
  };
  for (const auto& [name, paths] : expected) {
    CAPTURE(name);
    const zoo::ModelInfo& info = zoo::info(name);
    CHECK(info.untraceable == paths);
    CHECK(info.inputs[0].shape == IntList{1, 3, 224, 224});
    const auto model = zoo::create(name);
    CHECK(model->type_name() == "ResNet");
    CHECK(model->num_parameters() == 25'557'032);
    CHECK(info.parameters == model->num_parameters());
    CHECK(model->state_dict().size() == 320);
    for (const std::string& path : info.untraceable)
      CHECK(model->get_submodule(path).type_name() == "FailingBottleneck");
    CHECK(paths_of_type(*model, "FailingBottleneck") == paths);
    CHECK(paths_of_type(*model, "Bottleneck").size() == 16 - paths.size());
  }
}

TEST_CASE("a FailingBottleneck's branch follows the sign of its bn3 output, as the anchor's `if out.sum() > 0`") {
  manual_seed(3);
  // 64 -> 16 -> 64 channels, stride 1: no downsample, the identity is the input.
  zoo::FailingBottleneck failing(64, 16);
  zoo::Bottleneck plain(64, 16);
  plain->load_state_dict(failing->state_dict());
  failing->eval();
  plain->eval();
  CHECK(failing->type_name() == "FailingBottleneck");
  CHECK(failing->downsample.is_empty());
  const Tensor x = randn({1, 64, 4, 4});
  // bn3's output before the branch, computed from the block's own layers.
  const auto bn3_output = [&] {
    const auto& b = *failing;
    return b.bn3(b.conv3(b.relu(b.bn2(b.conv2(b.relu(b.bn1(b.conv1(x))))))));
  };

  SUBCASE("a positive sum takes the plain residual add") {
    failing->bn3->bias.fill_(5.0);
    plain->bn3->bias.fill_(5.0);
    REQUIRE(bn3_output().sum().item<float>() > 0);
    CHECK(run(*failing, x).to_vector<float>() == run(*plain, x).to_vector<float>());
  }
  SUBCASE("a non-positive sum halves the block's output before the add") {
    failing->bn3->bias.fill_(-5.0);
    plain->bn3->bias.fill_(-5.0);
    const Tensor out = bn3_output();
    REQUIRE(out.sum().item<float>() <= 0);
    const Tensor y = run(*failing, x);
    CHECK(testing::max_abs_diff(y, relu(out * 0.5 + x)) < 1e-6);
    CHECK(testing::max_abs_diff(y, run(*plain, x)) > 0.1);
    CHECK(testing::max_abs_diff(failing(x), y) == 0);  // the holder's typed call takes the override too
  }
}

TEST_CASE("resnet50_fail16 runs eagerly through all sixteen data-dependent branches") {
  manual_seed(4);
  const auto model = zoo::create("resnet50_fail16");
  const Tensor y = run(*model, randn({1, 3, 32, 32}));
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y));
}

TEST_CASE("resnet_block_paths maps global block indices to stage paths") {
  const std::vector<std::int64_t> blocks = {0, 2, 3, 6, 7, 12, 13, 15};
  CHECK(zoo::resnet_block_paths(blocks) == std::vector<std::string>{"layer1.0", "layer1.2", "layer2.0", "layer2.3",
                                                                    "layer3.0", "layer3.5", "layer4.0", "layer4.2"});
  CHECK(zoo::resnet_block_paths(std::vector<std::int64_t>{1, 2, 7}, {2, 2, 2, 2}) ==
        std::vector<std::string>{"layer1.1", "layer2.0", "layer4.1"});
  CHECK_THROWS_WITH_AS(zoo::resnet_block_paths(std::vector<std::int64_t>{16}),
                       doctest::Contains("resnet_block_paths: block index 16 is out of range; "
                                         "the ResNet has blocks 0..15"),
                       std::invalid_argument);
}

TEST_CASE("a bad ResNet configuration throws naming the problem and the caller's line") {
  SUBCASE("failing blocks with basic blocks") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(zoo::ResNetImpl({.block = zoo::ResNetBlock::basic, .layers = {2, 2, 2, 2}, .failing = {1}}),
                         doctest::Contains(fmt::format("resnet_test.cpp:{}: ResNet: failing blocks 1 were requested "
                                                       "with basic blocks; only bottleneck ResNets have a failing "
                                                       "variant",
                                                       line)
                                               .c_str()),
                         std::invalid_argument);
  }
  SUBCASE("failing indices out of range or repeated") {
    CHECK_THROWS_WITH_AS(zoo::ResNetImpl({.failing = {16}}),
                         doctest::Contains("ResNet: failing block index 16 is out of range; "
                                           "this ResNet has blocks 0..15"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(zoo::ResNetImpl({.failing = {3, 3}}),
                         doctest::Contains("ResNet: failing block index 3 is listed twice"), std::invalid_argument);
  }
  SUBCASE("empty stages and no classes") {
    CHECK_THROWS_WITH_AS(zoo::ResNetImpl({.layers = {3, 0, 6, 3}}),
                         doctest::Contains("ResNet: layer2 has 0 blocks; every stage needs at least one block"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(zoo::ResNetImpl({.num_classes = 0}),
                         doctest::Contains("ResNet: num_classes is 0; it must be positive"), std::invalid_argument);
  }
}

// Traced with the example image, the graph knows every size; traced with a rank-4 input of
// unknown sizes, it has the same nodes (every size reaches the layers as a module argument, so
// none is read into a `size` node) and runs on another batch and image size.
TEST_CASE("resnet18 traces with and without example shapes, lints, and its graph runs equal to eager") {
  manual_seed(30);
  const auto model = zoo::create("resnet18");
  model->eval();
  const zoo::ModelInfo& info = zoo::info("resnet18");
  Generator gen(31);
  const Tensor x = zoo::example_inputs(info, gen).at(0);  // 1x3x224x224
  const Tensor small = randn({2, 3, 64, 64}, gen);

  const Graph shaped = testing::trace_and_lint(*model, x);
  // placeholder, stem (conv1, bn1, relu, maxpool), 8 basic blocks x 7, 3 downsamples x 2,
  // avgpool, flatten, fc, output.
  CHECK(shaped.size() == 1 + 4 + 8 * 7 + 3 * 2 + 3 + 1);
  CHECK(testing::result_meta(shaped) == "float32[1, 1000]");
  const Graph unknown = testing::trace_and_lint(*model, InputSpec(Shape::unknown(4), info.inputs[0].dtype));
  CHECK(unknown.size() == shaped.size());
  CHECK(unknown.find_node("size") == nullptr);
  CHECK(testing::result_meta(unknown) == "float32[?, 1000]");

  testing::check_graph_runs_equal_to_eager(*model, shaped, x, run(*model, x));
  testing::check_graph_runs_equal_to_eager(*model, unknown, small, run(*model, small));
  CHECK_THROWS_AS(Interpreter(*model, shaped).run({small}), std::invalid_argument);  // it knew 1x3x224x224
}

TEST_CASE("resnet50 traces with and without example shapes, lints, and its graph runs equal to eager") {
  manual_seed(32);
  const auto model = zoo::create("resnet50");
  model->eval();
  const zoo::ModelInfo& info = zoo::info("resnet50");
  Generator gen(33);
  const Tensor x = zoo::example_inputs(info, gen).at(0);  // 1x3x224x224
  const Tensor small = randn({2, 3, 64, 64}, gen);

  const Graph shaped = testing::trace_and_lint(*model, x);
  // placeholder, stem (conv1, bn1, relu, maxpool), 16 bottlenecks x 10, 4 downsamples x 2,
  // avgpool, flatten, fc, output.
  CHECK(shaped.size() == 1 + 4 + 16 * 10 + 4 * 2 + 3 + 1);
  CHECK(shaped.size() == 177);
  CHECK(testing::result_meta(shaped) == "float32[1, 1000]");
  const Graph unknown = testing::trace_and_lint(*model, InputSpec(Shape::unknown(4), info.inputs[0].dtype));
  CHECK(unknown.size() == shaped.size());
  CHECK(unknown.find_node("size") == nullptr);
  CHECK(testing::result_meta(unknown) == "float32[?, 1000]");

  testing::check_graph_runs_equal_to_eager(*model, shaped, x, run(*model, x));
  testing::check_graph_runs_equal_to_eager(*model, unknown, small, run(*model, small));
  CHECK_THROWS_AS(Interpreter(*model, shaped).run({small}), std::invalid_argument);  // it knew 1x3x224x224
}

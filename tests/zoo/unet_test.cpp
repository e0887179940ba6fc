// The zoo's small U-Net: its parameter count from a per-layer formula, its state_dict keys,
// eager runs, the decoder's skip concatenation, seeding, and its zoo entry.

#include "support/checks.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/zoo/unet.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace symtrace;
using testing::all_finite;
using testing::run;
using testing::same_state;

namespace {

// Parameters of the layers, written out independently of the module code.
constexpr std::int64_t conv3x3_no_bias(std::int64_t in, std::int64_t out) { return 3 * 3 * in * out; }
constexpr std::int64_t conv1x1_with_bias(std::int64_t in, std::int64_t out) { return in * out + out; }
constexpr std::int64_t batch_norm(std::int64_t channels) { return 2 * channels; }  // weight and bias
constexpr std::int64_t double_conv(std::int64_t in, std::int64_t out) {
  return conv3x3_no_bias(in, out) + batch_norm(out) + conv3x3_no_bias(out, out) + batch_norm(out);
}

}  // namespace

TEST_CASE("unet_small's parameter count equals the per-layer formula (450,498)") {
  constexpr std::int64_t expected =
      double_conv(3, 16) +                                 // inc
      double_conv(16, 32) +                                // down1 (MaxPool2d has none)
      double_conv(32, 64) +                                // down2
      double_conv(64, 128) +                               // down3
      conv1x1_with_bias(128, 64) + double_conv(128, 64) +  // up1: reduce, conv (Upsample has none)
      conv1x1_with_bias(64, 32) + double_conv(64, 32) +    // up2
      conv1x1_with_bias(32, 16) + double_conv(32, 16) +    // up3
      conv1x1_with_bias(16, 2);                            // outc
  static_assert(expected == 450'498);
  manual_seed(0);
  CHECK(zoo::unet_small()->num_parameters() == expected);
}

TEST_CASE("unet_small's state_dict keys follow the milesial/Pytorch-UNet layout") {
  manual_seed(0);
  const auto model = zoo::unet_small();
  const StateDict state = model->state_dict();
  // 7 DoubleConvs x (2 convs + 2 BatchNorms x 5) + 3 reduce convs x 2 + outc 2.
  CHECK(state.size() == 92);
  CHECK(state.keys().front() == "inc.double_conv.0.weight");
  CHECK(state.keys().back() == "outc.bias");
  CHECK(state.at("inc.double_conv.0.weight").shape() == Shape{16, 3, 3, 3});
  CHECK(state.contains("inc.double_conv.4.running_var"));
  CHECK(state.at("down1.maxpool_conv.1.double_conv.0.weight").shape() == Shape{32, 16, 3, 3});
  CHECK(state.at("down3.maxpool_conv.1.double_conv.3.weight").shape() == Shape{128, 128, 3, 3});
  CHECK(state.at("up1.reduce.weight").shape() == Shape{64, 128, 1, 1});
  CHECK(state.at("up1.reduce.bias").shape() == Shape{64});
  CHECK(state.at("up1.conv.double_conv.0.weight").shape() == Shape{64, 128, 3, 3});
  CHECK(state.at("up3.conv.double_conv.3.weight").shape() == Shape{16, 16, 3, 3});
  CHECK(state.at("outc.weight").shape() == Shape{2, 16, 1, 1});
  CHECK_FALSE(state.contains("inc.double_conv.0.bias"));  // the 3x3 convolutions have no bias
  CHECK(model->get_submodule("down2").type_name() == "Down");
  CHECK(model->get_submodule("up2").type_name() == "Up");
  CHECK(model->get_submodule("up2.conv").type_name() == "DoubleConv");
  CHECK(model->get_submodule("up2.up").type_name() == "Upsample");
}

TEST_CASE("unet_small maps 1x3x64x64 to per-pixel scores 1x2x64x64, and any size divisible by 8 likewise") {
  manual_seed(1);
  const auto model = zoo::create("unet_small");
  const Tensor y = run(*model, randn({1, 3, 64, 64}));
  CHECK(y.shape() == Shape{1, 2, 64, 64});
  CHECK(all_finite(y));
  CHECK(run(*model, randn({1, 3, 16, 24})).shape() == Shape{1, 2, 16, 24});
}

TEST_CASE("an input whose size is not divisible by 8 fails where the decoder meets the skip") {
  manual_seed(2);
  const auto model = zoo::create("unet_small");
  // 36 -> 18 -> 9 -> 4, and 4 upsampled is 8, which does not meet the 9x9 skip.
  CHECK_THROWS_WITH_AS(run(*model, randn({1, 3, 36, 36})), doctest::Contains("cat()"), OpError);
}

TEST_CASE("an Up block concatenates the encoder's skip before the upsampled, halved input") {
  manual_seed(3);
  zoo::Up up(8, 4);
  up->eval();
  CHECK(up->input_names() == std::vector<std::string>{"x", "skip"});
  const Tensor x = randn({1, 8, 3, 3});
  const Tensor skip = randn({1, 4, 6, 6});
  const Tensor y = up(x, skip);
  CHECK(y.shape() == Shape{1, 4, 6, 6});
  const Tensor reduced = up->reduce(up->up(x));
  CHECK(reduced.shape() == Shape{1, 4, 6, 6});
  CHECK(testing::max_abs_diff(y, up->conv(cat({skip, reduced}, 1))) == 0);
  CHECK(testing::max_abs_diff(y, up->conv(cat({reduced, skip}, 1))) > 1e-3);
  CHECK_THROWS_WITH_AS(zoo::Up(7, 4), doctest::Contains("Up: in_channels is 7; it must be positive and even"),
                       std::invalid_argument);
}

TEST_CASE("the same seed gives bit-identical unet_small weights and outputs") {
  manual_seed(4);
  const Tensor x = randn({1, 3, 32, 32});
  manual_seed(42);
  const auto a = zoo::unet_small();
  manual_seed(42);
  const auto b = zoo::unet_small();
  CHECK(same_state(*a, *b));
  a->eval();
  b->eval();
  CHECK(run(*a, x).to_vector<float>() == run(*b, x).to_vector<float>());
  manual_seed(43);
  CHECK_FALSE(same_state(*a, *zoo::unet_small()));
}

TEST_CASE("zoo::create(\"unet_small\") gives a UNet in eval mode taking a 1x3x64x64 input named x") {
  const zoo::ModelInfo& info = zoo::info("unet_small");
  REQUIRE(info.inputs.size() == 1);
  CHECK(info.inputs[0].name == "x");
  CHECK(info.inputs[0].shape == IntList{1, 3, 64, 64});
  CHECK(info.untraceable.empty());
  const auto model = zoo::create("unet_small");
  CHECK(model->type_name() == "UNet");
  for (const NamedModule& nm : model->named_modules()) CHECK_FALSE(nm.module->is_training());
  CHECK_THROWS_WITH_AS(zoo::UNetImpl({.in_channels = 3, .num_classes = 0, .base_width = 16}),
                       doctest::Contains("UNet: in_channels 3, num_classes 0 and base_width 16 must all be positive"),
                       std::invalid_argument);
}

// Traced with the example image, the graph knows every size; traced with a rank-4 input of
// unknown sizes, it has the same nodes and runs on another batch and a non-square image
// (any side divisible by 8).
TEST_CASE("unet_small traces with and without example shapes, lints, and its graph runs equal to eager") {
  manual_seed(30);
  const auto model = zoo::create("unet_small");
  model->eval();
  const zoo::ModelInfo& info = zoo::info("unet_small");
  Generator gen(31);
  const Tensor x = zoo::example_inputs(info, gen).at(0);  // 1x3x64x64
  const Tensor other = randn({2, 3, 32, 48}, gen);

  const Graph shaped = testing::trace_and_lint(*model, x);
  // placeholder; inc (a DoubleConv: 6); 3 Downs (maxpool + DoubleConv: 7); 3 Ups (upsample,
  // reduce, cat + DoubleConv: 9); outc; output.
  CHECK(shaped.size() == 1 + 6 + 3 * 7 + 3 * 9 + 1 + 1);
  CHECK(testing::count_nodes(shaped, OpKind::call_function, "cat") == 3);
  CHECK(testing::result_meta(shaped) == "float32[1, 2, 64, 64]");
  const Graph unknown = testing::trace_and_lint(*model, InputSpec(Shape::unknown(4), info.inputs[0].dtype));
  CHECK(unknown.size() == shaped.size());
  CHECK(unknown.find_node("size") == nullptr);
  CHECK(testing::result_meta(unknown) == "float32[?, 2, ?, ?]");

  testing::check_graph_runs_equal_to_eager(*model, shaped, x, run(*model, x));
  testing::check_graph_runs_equal_to_eager(*model, unknown, other, run(*model, other));
  CHECK_THROWS_AS(Interpreter(*model, shaped).run({other}), std::invalid_argument);  // it knew 1x3x64x64
}

// DeepMLP (bench/fx/models.py): parameter counts at 100, 1000 and 10000 blocks, the
// block formula, the failing variant's placement and both of its branches, reproducibility.

#include "support/checks.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/zoo/mlp.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <chrono>
#include <cmath>

using namespace symtrace;
using testing::all_finite;

TEST_CASE("deep_mlp_100 has 100 x 4,288 parameters and PyTorch's keys, and runs eagerly") {
  const auto model = zoo::create("deep_mlp_100");
  CHECK(model->num_parameters() == 100 * 4'288);
  const auto keys = model->state_dict().keys();
  CHECK(keys.size() == 100 * 4);
  CHECK(std::vector<std::string>(keys.begin(), keys.begin() + 4) ==
        std::vector<std::string>{"blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.0.norm.weight",
                                 "blocks.0.norm.bias"});
  CHECK(keys.back() == "blocks.99.norm.bias");
  CHECK(model->get_submodule("blocks.42").type_name() == "MLPBlock");
  const Tensor y = model->call({randn({1, 64})}).to_tensor();
  CHECK(y.shape() == Shape{1, 64});
  CHECK(all_finite(y));
}

TEST_CASE("a block computes x + GELU(LayerNorm(fc(x)))") {
  manual_seed(5);
  zoo::DeepMLP model(3);
  const Tensor x = randn({2, 64});
  Tensor expected = x;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto block = model->blocks->ptr<zoo::MLPBlockImpl>(i);
    const Tensor h = linear(expected, block->fc->weight, block->fc->bias);
    expected = expected + gelu(layer_norm(h, {64}, block->norm->weight, block->norm->bias));
  }
  CHECK(testing::max_abs_diff(model(x), expected) < 1e-5);
}

TEST_CASE("deep_mlp_1000 and deep_mlp_10000 are built quickly with n x 4,288 parameters") {
  CHECK(zoo::create("deep_mlp_1000")->num_parameters() == 4'288'000);
  const auto start = std::chrono::steady_clock::now();
  const auto model = zoo::create("deep_mlp_10000");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(fmt::format("deep_mlp_10000 built in {:.2f} s", seconds));
  CHECK(model->num_parameters() == 42'880'000);
  CHECK(zoo::info("deep_mlp_10000").parameters == model->num_parameters());
  CHECK(model->named_modules().size() == 2 + 10000 * 4);
  CHECK(model->get_submodule("blocks.9999.act").type_name() == "GELU");
}

TEST_CASE("deep_mlp_1000_fail16 fails in every 64th block, which the zoo lists as untraceable") {
  const zoo::ModelInfo& info = zoo::info("deep_mlp_1000_fail16");
  REQUIRE(info.untraceable.size() == 16);
  CHECK(info.untraceable.front() == "blocks.0");
  CHECK(info.untraceable[1] == "blocks.64");
  CHECK(info.untraceable.back() == "blocks.960");
  const auto model = info.create();
  CHECK(model->num_parameters() == 4'288'000);
  std::size_t failing = 0;
  for (const NamedModule& m : model->named_modules())
    failing += m.module->type_name() == "FailingMLPBlock";
  CHECK(failing == 16);
  for (const std::string& path : info.untraceable) CHECK(model->get_submodule(path).type_name() == "FailingMLPBlock");
  CHECK(model->get_submodule("blocks.63").type_name() == "MLPBlock");
  CHECK(model->get_submodule("blocks.65").type_name() == "MLPBlock");
  const Tensor y = model->call({randn({1, 64})}).to_tensor();
  CHECK(y.shape() == Shape{1, 64});
  CHECK(all_finite(y));
}

TEST_CASE("a failing block adds h when h.sum() > 0 and subtracts it otherwise") {
  // With the norm's weight 0, h = GELU(norm.bias) whatever x is: positive for bias 1,
  // negative (GELU(-1) = -0.1587) for bias -1.
  zoo::FailingMLPBlock failing(4);
  zoo::MLPBlock plain(4);
  failing->norm->weight.fill_(0.0);
  plain->norm->weight.fill_(0.0);
  const Tensor x = tensor({1.0f, 2.0f, 3.0f, 4.0f}, {1, 4});
  const double gelu_1 = 0.8413447460685429, gelu_m1 = -0.15865525393145707;
  SUBCASE("positive h: both add it") {
    failing->norm->bias.fill_(1.0);
    plain->norm->bias.fill_(1.0);
    testing::check_tensor(failing(x), DType::float32, {1, 4}, {1 + gelu_1, 2 + gelu_1, 3 + gelu_1, 4 + gelu_1});
    CHECK(testing::max_abs_diff(failing(x), plain(x)) == 0);
  }
  SUBCASE("negative h: the failing block subtracts it") {
    failing->norm->bias.fill_(-1.0);
    plain->norm->bias.fill_(-1.0);
    testing::check_tensor(failing(x), DType::float32, {1, 4}, {1 - gelu_m1, 2 - gelu_m1, 3 - gelu_m1, 4 - gelu_m1});
    testing::check_tensor(plain(x), DType::float32, {1, 4}, {1 + gelu_m1, 2 + gelu_m1, 3 + gelu_m1, 4 + gelu_m1});
  }
}

TEST_CASE("the same seed gives bit-identical DeepMLP weights and outputs") {
  manual_seed(6);
  zoo::DeepMLP a(20, 64, 8);
  const Tensor x = randn({3, 64});
  manual_seed(6);
  zoo::DeepMLP b(20, 64, 8);
  const StateDict sa = a->state_dict(), sb = b->state_dict();
  REQUIRE(sa.size() == sb.size());
  for (const auto& [key, tensor] : sa) CHECK(tensor.to_vector<float>() == sb.at(key).to_vector<float>());
  CHECK(a(x).to_vector<float>() == b(x).to_vector<float>());
}

TEST_CASE("a DeepMLP with a negative block count or fail_every of 0 is rejected") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(zoo::deep_mlp(-1),
                       fmt::format("{}:{}: DeepMLP(n_blocks=-1, dim=64, fail_every=None): n_blocks must be >= 0, "
                                   "dim and fail_every positive",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(zoo::deep_mlp(10, 0), doctest::Contains("DeepMLP(n_blocks=10, dim=64, fail_every=0)"),
                       std::invalid_argument);
}

namespace {

// Traced with the example input, the graph is one placeholder, 4 nodes per block (fc, norm,
// act, the residual add) and the output. Traced with a rank-2 input of unknown sizes, the
// same nodes (no size is read) give [?, 64] (the first fc fixes the width, and the residual
// add broadcasts against it), and the graph runs on a batch of 3.
void check_deep_mlp_traces(std::string_view name, std::size_t blocks, std::uint64_t seed) {
  manual_seed(seed);
  const auto model = zoo::create(name);
  model->eval();
  const zoo::ModelInfo& info = zoo::info(name);
  Generator gen(seed + 1);
  const Tensor x = zoo::example_inputs(info, gen).at(0);  // 1x64
  const Tensor batch3 = randn({3, 64}, gen);

  const Graph shaped = testing::trace_and_lint(*model, x);
  CHECK(shaped.size() == 1 + 4 * blocks + 1);
  CHECK(testing::count_nodes(shaped, OpKind::call_function, "add") == blocks);
  CHECK(testing::result_meta(shaped) == "float32[1, 64]");
  const Graph unknown = testing::trace_and_lint(*model, InputSpec(Shape::unknown(2), info.inputs[0].dtype));
  CHECK(unknown.size() == shaped.size());
  CHECK(unknown.find_node("size") == nullptr);
  CHECK(testing::result_meta(unknown) == "float32[?, 64]");

  const Tensor eager = testing::run(*model, x);
  testing::check_graph_runs_equal_to_eager(*model, shaped, x, eager);
  testing::check_graph_runs_equal_to_eager(*model, unknown, x, eager);
  testing::check_graph_runs_equal_to_eager(*model, unknown, batch3, testing::run(*model, batch3));
  CHECK_THROWS_AS(Interpreter(*model, shaped).run({batch3}), std::invalid_argument);  // it knew 1x64
}

}  // namespace

TEST_CASE("deep_mlp_100 traces with and without example shapes, lints, and its graph runs equal to eager") {
  check_deep_mlp_traces("deep_mlp_100", 100, 30);
}

TEST_CASE("deep_mlp_1000 traces with and without example shapes, lints, and its graph runs equal to eager") {
  check_deep_mlp_traces("deep_mlp_1000", 1000, 32);
}

TEST_CASE("deep_mlp_10000 traces with and without example shapes, lints, and its graph runs equal to eager") {
  check_deep_mlp_traces("deep_mlp_10000", 10000, 34);
}

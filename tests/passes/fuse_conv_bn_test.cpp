// fuse_conv_bn: conv + batch norm pairs folded into one conv2d on resnet18 and mobilenet_v2,
// the numerics of the fused graph against the eager forward, and pairs that must stay.
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

using namespace symtrace;

TEST_CASE("conv + batch norm pairs of resnet18 and mobilenet_v2 fold into one conv2d each, same numerics") {
  for (const auto& [name, pairs] : {std::pair<std::string, std::size_t>{"resnet18", 20}, {"mobilenet_v2", 52}}) {
    CAPTURE(name);
    manual_seed(0);
    const auto model = zoo::create(name);
    const Tensor x = randn({2, 3, 32, 32});
    const Tensor eager = testing::run(*model, x);
    Graph g = testing::trace_and_lint(*model, InputSpec(Shape{2, 3, 32, 32}));
    const std::size_t before = g.size();
    CHECK(fuse_conv_bn(g, *model) == pairs);
    CHECK_NOTHROW(g.lint());
    // Each pair: two call_module nodes out, a conv2d and two get_attr constants in.
    CHECK(g.size() == before + pairs);
    CHECK(g.num_constants() == 2 * pairs);
    CHECK(testing::count_nodes(g, OpKind::call_function, "conv2d") == pairs);
    testing::check_graph_runs_equal_to_eager(*model, g, x, eager);
    CHECK(fuse_conv_bn(g, *model) == 0);
  }
}

TEST_CASE("a batch norm in training mode, or a conv used elsewhere, is not fused") {
  struct NetImpl : TypedModule<NetImpl> {
    NetImpl() {
      conv = register_module("conv", nn::Conv2d(3, 4, 3));
      bn = register_module("bn", nn::BatchNorm2d(4));
    }
    Tensor forward(const Tensor& x) {
      Tensor c = conv(x);
      return bn(c).add(c);
    }
    nn::Conv2d conv{nullptr};
    nn::BatchNorm2d bn{nullptr};
  };
  auto m = std::make_shared<NetImpl>();
  m->eval();
  Graph g = symbolic_trace(*m, {InputSpec(Shape{1, 3, 8, 8})});
  CHECK(fuse_conv_bn(g, *m) == 0);  // the conv's result is also added

  auto model = zoo::create("resnet18");
  model->train();
  Graph t = symbolic_trace(*model, {InputSpec(Shape{2, 3, 32, 32})});
  CHECK(fuse_conv_bn(t, *model) == 0);
}

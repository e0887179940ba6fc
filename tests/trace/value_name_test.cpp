// Node names from the model's own variable names (core/value_name.hpp): a ValueName names the
// next op's node, once, in the module whose code gave it; fx's names otherwise.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

using namespace symtrace;

namespace {

/// An inner module whose own ops must not take its caller's name.
struct InnerImpl : TypedModule<InnerImpl> {
  Tensor forward(const Tensor& x) { return x.exp().neg(); }
};

struct NamedImpl : TypedModule<NamedImpl> {
  NamedImpl() {
    fc = register_module("fc", nn::Linear(4, 4));
    inner = register_module("inner", std::make_shared<InnerImpl>());
  }
  Tensor forward(const Tensor& x) {
    Tensor hidden, scaled, again;
    {
      const ValueName name("hidden");
      hidden = relu(fc(x));  // fc's call_module keeps its path's name; relu takes "hidden"
    }
    {
      const ValueName name("scaled");
      scaled = (*inner)(hidden).mul(2.0);  // inner's exp and neg keep fx's names
    }
    {
      const ValueName name("hidden");
      again = scaled.add(hidden);  // a taken name gets the next suffix
    }
    return again.sigmoid();  // no name: fx's
  }
  nn::Linear fc{nullptr};
  std::shared_ptr<InnerImpl> inner;
};

}  // namespace

TEST_CASE("a ValueName names the next op's node, once, in its own module's code; fx's names otherwise") {
  auto model = std::make_shared<NamedImpl>();
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{2, 4})});
  std::vector<std::string> names;
  for (const Node& n : g.nodes()) names.push_back(n.name());
  CHECK(names == std::vector<std::string>{"x", "fc", "hidden", "exp", "neg", "scaled", "hidden_1", "sigmoid", "output"});
  const Tensor x = randn({2, 4});
  CHECK(testing::max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), model->call({x}).to_tensor()) <= 1e-6);
  CHECK(detail::t_value_name.empty());  // nothing left for a later op

  SUBCASE("outside a trace a name changes nothing") {
    const ValueName name("unused");
    CHECK(testing::max_rel_error(model->call({x}).to_tensor(), Interpreter(*model, g).run({x}).to_tensor()) <= 1e-6);
  }
}

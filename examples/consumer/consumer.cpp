// Lesson 9: a program outside the symtrace tree, built against the installed library
// (meson's dependency('symtrace'), found through pkg-config). It traces a model of its own,
// runs the graph, and traces a zoo model robustly: everything a linking tool needs.

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

using namespace symtrace;

namespace {

class Scale : public TypedModule<Scale> {
 public:
  Scale() {
    fc = register_module("fc", nn::Linear(4, 4));
    act = register_module("act", nn::GELU());
  }
  Tensor forward(const Tensor& x) { return act(fc(x)) * 2 + x; }
  nn::Linear fc{nullptr};
  nn::GELU act{nullptr};
};

}  // namespace

int main() {
  manual_seed(0);
  Scale model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{3, 4})});
  g.lint();
  fmt::print("{}", to_string(g));
  const Tensor x = randn({3, 4});
  const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  const Tensor eager = model.call({x}).to_tensor();
  double error = 0;
  const auto a = traced.to_vector<float>();
  const auto b = eager.to_vector<float>();
  for (std::size_t i = 0; i < a.size(); ++i) error = std::max(error, static_cast<double>(std::abs(a[i] - b[i])));

  const auto zoo_model = zoo::create("mixed_failures");
  const GraphCollection c = recursive_trace(*zoo_model, {InputSpec(Shape{1, 3, 32, 32})});
  fmt::print("mixed_failures: {} graphs, {} failed modules\n", c.size(), c.failures().size());

  const bool ok = g.size() == 6 && error < 1e-6 && c.failures().size() == 4;
  fmt::print("{}: graph {} nodes, max error {}\n", ok ? "ok" : "MISMATCH", g.size(), error);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

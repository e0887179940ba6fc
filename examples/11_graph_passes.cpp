// Lesson 11: graph passes, making a traced graph pure and small before it is exported.
//
// A traced graph records what the forward did, in-place writes included: `y[:, :2] = ...`
// is a slice and a copy_ into it, and every later read of y depends on the order of the nodes.
// An exporter (ONNX has no in-place ops) wants a pure graph. remove_inplace rewrites each
// in-place op into the functional op computing the same value, a write into a slice into
// slice_scatter, and points the later reads at the new values. Then common subexpression
// elimination merges repeated work and dead code elimination drops what nothing reads. A
// PassManager runs them in order, lints after each, and says what each changed. Last, an
// inference rewrite: each batch norm after a convolution folded into the convolution's weights.

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace symtrace;
using namespace lesson;

namespace {

struct BlendImpl : TypedModule<BlendImpl> {
  Tensor forward(const Tensor& x) {
    Tensor y = x.exp();
    y.slice(1, 0, 2).copy_(x.slice(1, 2, 4));  // y[:, 0:2] = x[:, 2:4]
    y.relu_();                                 // in place
    return y.add(x.exp());                     // exp(x) computed twice
  }
};
SYMTRACE_MODULE(Blend);

}  // namespace

int main() {
  manual_seed(0);
  Blend model;
  Graph g = symbolic_trace(*model.ptr(), {InputSpec(Shape{2, 4})});
  fmt::print("traced:\n{}\n", to_string(g));

  // One pass at a time: each returns what it changed.
  const std::size_t removed = remove_inplace(g);
  fmt::print("remove_inplace rewrote {} in-place ops:\n{}\n", removed, to_string(g));
  expect(removed == 2, "remove_inplace rewrites the copy_ and the relu_");

  // The rest through a pass manager, which lints the graph after each pass.
  PassManager pm;
  pm.add("cse", eliminate_common_subexpressions)
      .add("dead_code", static_cast<std::size_t (*)(Graph&)>(eliminate_dead_code))
      .lint_after_each(true);
  for (const PassResult& r : pm.run(g)) fmt::print("{}: {} nodes removed\n", r.pass, r.changes);
  fmt::print("\n{}\n", to_string(g));
  expect_lints(g, "the graph after the passes");
  for (const Node& n : g.nodes()) {
    expect(!has_side_effects(n) || n.op() == OpKind::placeholder || n.op() == OpKind::output,
           fmt::format("%{} still has side effects", n.name()));
  }

  // The pure graph computes what the model computes.
  const Tensor x = randn({2, 4});
  const double error = max_abs_error(Interpreter(*model.ptr(), g).run({x}).to_tensor(), model(x));
  fmt::print("max |graph - eager| = {}\n", error);
  expect(error <= 1e-6, "the graph after the passes computes the model's forward");

  // A write the rewrite cannot carry is refused, and the graph stays as it was.
  Graph h;
  Node& input = h.placeholder("x");
  h.call_method("add_", {input, 1.0});
  h.output(input);
  const std::string before = to_string(h);
  try {
    (void)remove_inplace(h);
    expect(false, "a write into a graph input is refused");
  } catch (const std::invalid_argument& e) {
    fmt::print("refused: {}\n", e.what());
  }
  expect(to_string(h) == before, "a refused rewrite leaves the graph unchanged");

  // ResNet-18 in eval mode: 20 conv + batch norm pairs become 20 conv2d calls on folded
  // constants (the model itself is not changed), and the graph still computes the model.
  auto resnet = zoo::create("resnet18");
  Graph r = symbolic_trace(*resnet, {InputSpec(Shape{1, 3, 32, 32})});
  const std::size_t nodes = r.size();
  const std::size_t fused = fuse_conv_bn(r, *resnet);
  fmt::print("resnet18: {} conv + batch norm pairs fused, {} -> {} nodes\n", fused, nodes, r.size());
  expect(fused == 20, "resnet18 has 20 conv + batch norm pairs");
  expect_lints(r, "resnet18 after fuse_conv_bn");
  const Tensor image = randn({1, 3, 32, 32});
  const Tensor expected = resnet->call({image}).to_tensor();
  const double fused_error = max_abs_error(Interpreter(*resnet, r).run({image}).to_tensor(), expected);
  double largest = 0;
  for (double v : expected.to_vector<double>()) largest = std::max(largest, std::abs(v));
  fmt::print("max |fused - eager| = {:.2g} (largest |eager| {:.2g})\n", fused_error, largest);
  expect(fused_error <= 1e-5 * std::max(1.0, largest), "the fused graph computes resnet18's forward");
  return failures == 0 ? 0 : 1;
}

// Expected output (abridged):
//   remove_inplace rewrote 2 in-place ops:
//   ...
//       %slice_scatter : float32[2, 4] [num_users=1] = call_function[target=slice_scatter](args = (%exp, %slice_1, 1, 0, 2, 1), kwargs = {})
//       %relu : float32[2, 4] [num_users=1] = call_method[target=relu](args = (%slice_scatter,), kwargs = {})
//   ...
//   cse: 1 nodes removed
//   dead_code: 1 nodes removed
//   ...
//   max |graph - eager| = 0
//   refused: examples/11_graph_passes.cpp:...: remove_inplace: %add_ (add_ at ...) writes into the graph input %x: ...
//   resnet18: 20 conv + batch norm pairs fused, 71 -> 91 nodes
//   max |fused - eager| = ... (largest |eager| ...)

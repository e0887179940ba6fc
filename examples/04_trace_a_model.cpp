// Lesson 4: tracing a model you wrote, and checking the graph against the model.
//
// symbolic_trace runs a module's forward on symbolic tensors: every op records a node instead
// of computing, built-in layers (Linear, LayerNorm, GELU, ...) become one `call_module` node
// each, and your own modules are traced through, so their ops land in the graph under their
// path (`block.fc1` gives the node `block_fc1`). The inputs are either specs (a dtype and a
// shape whose dims may be unknown) or example tensors. This lesson traces a small residual
// model both ways, prints the graph in torch.fx's text form, lints it, and checks what every
// traced model must satisfy: the graph run by the Interpreter equals the eager forward.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace symtrace;
using namespace lesson;

namespace {

// A user module: fc1 -> gelu -> fc2, added back to its input, then normalised.
// Nothing marks it as special: the tracer walks into its forward.
struct ResidualBlockImpl : TypedModule<ResidualBlockImpl> {
  explicit ResidualBlockImpl(std::int64_t dim) {
    fc1 = register_module("fc1", nn::Linear(dim, dim));
    act = register_module("act", nn::GELU());
    fc2 = register_module("fc2", nn::Linear(dim, dim));
    norm = register_module("norm", nn::LayerNorm(dim));
  }
  Tensor forward(const Tensor& x) { return norm(x + fc2(act(fc1(x)))); }
  nn::Linear fc1{nullptr};
  nn::GELU act{nullptr};
  nn::Linear fc2{nullptr};
  nn::LayerNorm norm{nullptr};
};
SYMTRACE_MODULE(ResidualBlock);

// The model: a stem, the block, a head. Its input is declared as "features".
struct TinyNetImpl : TypedModule<TinyNetImpl> {
  TinyNetImpl() : TypedModule({"features"}) {
    stem = register_module("stem", nn::Linear(8, 16));
    block = register_module("block", ResidualBlock(16));
    head = register_module("head", nn::Linear(16, 4));
  }
  Tensor forward(const Tensor& features) { return head(block(relu(stem(features)))).softmax(-1); }
  nn::Linear stem{nullptr};
  ResidualBlock block{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(TinyNet);

}  // namespace

int main() {
  manual_seed(0);
  TinyNet model;
  model->eval();

  // 1. Trace with an input spec: float32, batch unknown (`?`), 8 features.
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim::unknown(), 8})});
  fmt::print("traced with InputSpec(Shape{{?, 8}}):\n{}", to_string(g));
  // Read it as fx's: `%relu` has two users (block.fc1 and the residual add); the block's
  // own ops are named after its path; `?` is the unknown batch, propagated by every op.
  expect(to_string(g) == R"(graph():
    %features : float32[?, 8] [num_users=1] = placeholder[target=features]
    %stem : float32[?, 16] [num_users=1] = call_module[target=stem](args = (%features,), kwargs = {})
    %relu : float32[?, 16] [num_users=2] = call_function[target=relu](args = (%stem,), kwargs = {})
    %block_fc1 : float32[?, 16] [num_users=1] = call_module[target=block.fc1](args = (%relu,), kwargs = {})
    %block_act : float32[?, 16] [num_users=1] = call_module[target=block.act](args = (%block_fc1,), kwargs = {})
    %block_fc2 : float32[?, 16] [num_users=1] = call_module[target=block.fc2](args = (%block_act,), kwargs = {})
    %add : float32[?, 16] [num_users=1] = call_function[target=add](args = (%relu, %block_fc2), kwargs = {})
    %block_norm : float32[?, 16] [num_users=1] = call_module[target=block.norm](args = (%add,), kwargs = {})
    %head : float32[?, 4] [num_users=1] = call_module[target=head](args = (%block_norm,), kwargs = {})
    %softmax : float32[?, 4] [num_users=1] = call_method[target=softmax](args = (%head, -1), kwargs = {})
    return softmax
)",
         "the graph's text form");
  expect(g.size() == 11, fmt::format("11 nodes, got {}", g.size()));

  // 2. lint() checks every invariant (topological order, users, unique names, one output).
  try {
    g.lint();
    fmt::print("lint: ok\n");
  } catch (const LintError& e) {
    expect(false, fmt::format("lint failed: {}", e.what()));
  }
  // The residual add was recorded inside the block: its scope says so.
  expect(g.find_node("add") != nullptr && g.find_node("add")->scope() == "block", "add is in scope 'block'");

  // 3. The graph equals the model: same weights, any batch size (the batch dim is unknown).
  for (std::int64_t batch : {1, 3, 5}) {
    const Tensor x = randn({batch, 8});
    const Tensor eager = model(x);
    const Tensor traced = Interpreter(*model, g).run({x}).to_tensor();
    const double err = max_abs_error(traced, eager);
    fmt::print("batch {}: eager {} vs interpreter {}: max abs error {:.3g}\n", batch, eager.meta(), traced.meta(), err);
    expect(err <= 1e-5, fmt::format("batch {}: interpreter differs from eager by {}", batch, err));
  }

  // 4. Trace with an example tensor instead: its dtype and shape become the placeholder's, so
  //    every shape in the graph is known, and the graph accepts only that shape.
  const Tensor example = randn({2, 8});
  const Graph fixed = symbolic_trace(*model, {example});
  const Node* out = fixed.find_node("softmax");
  fmt::print("traced with an example tensor: %softmax is {}\n", out ? to_string(*out->tensor_meta()) : "missing");
  expect(out != nullptr && out->tensor_meta() != nullptr && out->tensor_meta()->shape == Shape{2, 4},
         "the example trace knows every shape");
  expect(fixed.size() == g.size(), "both traces record the same nodes");
  const double err = max_abs_error(Interpreter(*model, fixed).run({example}).to_tensor(), model(example));
  fmt::print("example trace: max abs error {:.3g}\n", err);
  expect(err <= 1e-5, "the example trace equals eager");

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (the errors depend only on the seed):
//   traced with InputSpec(Shape{?, 8}):
//   graph():
//       %features : float32[?, 8] [num_users=1] = placeholder[target=features]
//       %stem : float32[?, 16] [num_users=1] = call_module[target=stem](args = (%features,), kwargs = {})
//       ...
//       return softmax
//   lint: ok
//   batch 1: eager float32[1, 4] vs interpreter float32[1, 4]: max abs error N
//   batch 3: ...
//   batch 5: ...
//   traced with an example tensor: %softmax is float32[2, 4]
//   example trace: max abs error N
//   all checks passed

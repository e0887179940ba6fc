// Lesson 7: choosing what the graph does not look inside: leaf modules and opaque callables.
//
// By default a trace records built-in layers as one `call_module` node each and walks into
// your own modules. A tool often wants coarser nodes (a fused block, a module a pruner must
// treat as one unit), and some code cannot be walked into at all (it reads tensor data, or
// calls an external library). Two switches, both fx's:
//   - Tracer::register_leaf<T>() records every call of a T as one `call_module` node. Its
//     output shape is found by running its forward on the side; a leaf whose forward reads
//     data gets a LeafMetaFn that says what it returns instead.
//   - register_callable (fx's `wrap`) makes a function one `call_function` node, with its
//     output metadata from a meta function; eagerly and in the Interpreter the function runs.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

using namespace symtrace;
using namespace lesson;

namespace {

// An opaque function: it sorts the data, so no trace can see through it. Counted, to show when it runs.
int median_calls = 0;
Tensor subtract_median(const Tensor& x) {
  ++median_calls;
  std::vector<float> v = x.contiguous().to_vector<float>();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return x - static_cast<double>(v[v.size() / 2]);
}
// Registered once, at namespace scope: a schema, the function, and its meta function.
const Callable median_center = register_callable(
    "lesson.median_center(Tensor x) -> Tensor",
    [](const OpCall& call) -> Value { return subtract_median(call.tensor(0)); }, Callable::same_as_argument(0));

// Traceable, but we want it as one node.
struct SmoothImpl : TypedModule<SmoothImpl> {
  SmoothImpl() { fc = register_module("fc", nn::Linear(4, 4)); }
  Tensor forward(const Tensor& x) { return (x + fc(x).tanh()) * 0.5; }
  nn::Linear fc{nullptr};
};
SYMTRACE_MODULE(Smooth);

// Reads tensor data (its peak): a leaf only with a LeafMetaFn.
struct PeakNormImpl : TypedModule<PeakNormImpl> {
  Tensor forward(const Tensor& x) { return x / (x.abs().amax().item<float>() + 1e-6); }
};
SYMTRACE_MODULE(PeakNorm);

struct NetImpl : TypedModule<NetImpl> {
  NetImpl() {
    stem = register_module("stem", nn::Linear(4, 4));
    smooth = register_module("smooth", Smooth());
    peak = register_module("peak", PeakNorm());
    head = register_module("head", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return head(median_center({peak(smooth(stem(x)))}).to_tensor()); }
  nn::Linear stem{nullptr};
  Smooth smooth{nullptr};
  PeakNorm peak{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(Net);

}  // namespace

int main() {
  manual_seed(0);
  Net model;
  const InputSpec input(Shape{Dim::unknown(), 4});

  // 1. Without registration, PeakNorm's item() stops the trace.
  try {
    (void)symbolic_trace(*model, {input});
    expect(false, "a plain trace must fail in 'peak'");
  } catch (const TraceError& e) {
    fmt::print("plain trace: {}\n", e.what());
    expect(e.module_path() == "peak", "the error names 'peak'");
  }

  // 2. A leaf whose forward reads data cannot be run on the side to find its output shape.
  Tracer tracer;
  tracer.register_leaf<SmoothImpl>();
  tracer.register_leaf<PeakNormImpl>();
  try {
    (void)tracer.trace(*model, {input});
    expect(false, "PeakNorm as a leaf without a LeafMetaFn must fail");
  } catch (const TraceError& e) {
    fmt::print("leaf without a LeafMetaFn: {}\n", e.what());
    expect(std::string(e.what()).find("the output shapes of the leaf 'peak' (PeakNorm) cannot be found by running its "
                                      "forward symbolically") != std::string::npos,
           "the error says the leaf's output shapes cannot be found");
  }

  // 3. Say what PeakNorm returns: a tensor like its input. Now the trace succeeds.
  tracer.register_leaf<PeakNormImpl>([](const Module&, const ValueList& args) {
    const Tensor& x = args.at(0).to_tensor();
    return OutputMeta::single(x.dtype(), x.shape());
  });
  const int calls_before_trace = median_calls;
  const Graph g = tracer.trace(*model, {input});
  fmt::print("\n{}", to_string(g));
  expect_lints(g, "the traced graph");
  expect(to_string(g) == R"(graph():
    %x : float32[?, 4] [num_users=1] = placeholder[target=x]
    %stem : float32[?, 4] [num_users=1] = call_module[target=stem](args = (%x,), kwargs = {})
    %smooth : float32[?, 4] [num_users=1] = call_module[target=smooth](args = (%stem,), kwargs = {})
    %peak : float32[?, 4] [num_users=1] = call_module[target=peak](args = (%smooth,), kwargs = {})
    %median_center : float32[?, 4] [num_users=1] = call_function[target=lesson.median_center](args = (%peak,), kwargs = {})
    %head : float32[?, 2] [num_users=1] = call_module[target=head](args = (%median_center,), kwargs = {})
    return head
)",
         "the graph: smooth and peak are leaves, median_center one call_function node");
  std::map<OpKind, int> per_op;
  for (const Node& n : g.nodes()) {
    ++per_op[n.op()];
    expect(n.scope().empty(), fmt::format("%{} was recorded inside a leaf (scope '{}')", n.name(), n.scope()));
  }
  expect(per_op[OpKind::call_module] == 4 && per_op[OpKind::call_function] == 1 && per_op[OpKind::call_method] == 0,
         "4 call_module nodes, 1 call_function node, no call_method node");
  expect(median_calls == calls_before_trace, "tracing does not run the callable");

  // 4. Run it: the Interpreter calls the leaf modules and finds the callable by its target.
  Generator gen(3);
  const Tensor x = randn({5, 4}, gen);
  const Tensor eager = model(x);
  const Tensor traced = Interpreter(*model, g).run({x}).to_tensor();
  const bool same = traced.shape() == eager.shape() && traced.to_vector<float>() == eager.to_vector<float>();
  fmt::print("interpreter on {}: {}; the callable ran {} times\n", x.meta(), same ? "bit-identical to eager" : "DIFFERS",
             median_calls - calls_before_trace);
  expect(same, "the interpreter's output equals eager");
  expect(median_calls == calls_before_trace + 2, "the callable ran once eagerly and once in the Interpreter");

  // 5. Unregister Smooth: the tracer walks into it again (its fc, tanh, add and mul appear).
  tracer.unregister_leaf<SmoothImpl>();
  const Graph open = tracer.trace(*model, {input});
  expect(open.find_node("smooth") == nullptr && open.find_node("smooth_fc") != nullptr &&
             open.find_node("smooth_fc")->scope() == "smooth",
         "without the registration smooth is traced through");
  fmt::print("with smooth traced through: {} nodes instead of {}\n", open.size(), g.size());
  expect(open.size() == g.size() + 3, "smooth's four nodes replace its one node");

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (paths and line numbers depend on where this file is):
//   plain trace: .../07_leaves_and_callables.cpp:NN: a symbolic tensor was read as data (item()) in 'peak' (PeakNorm): ...
//   leaf without a LeafMetaFn: ...: the output shapes of the leaf 'peak' (PeakNorm) cannot be found by running its forward symbolically ...
//
//   graph():
//       %x : float32[?, 4] [num_users=1] = placeholder[target=x]
//       ...
//       return head
//   interpreter on float32[5, 4]: bit-identical to eager; the callable ran 2 times
//   with smooth traced through: 10 nodes instead of 7
//   all checks passed

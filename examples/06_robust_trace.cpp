// Lesson 6: robust tracing of a model that a plain trace cannot capture.
//
// Code that branches on tensor data (`if (x.sum().item<float>() > 0)`) cannot be traced: the
// trace has no data, so symbolic_trace stops with a TraceError naming your file:line and the
// module. recursive_trace does not stop: the module that failed is rolled back and recorded as
// one `call_module` leaf in its parent's graph, the trace goes on, and then every child of the
// failed module is traced as a root of its own (ModelOpt's semantics). The GraphCollection
// holds the graphs, a failure record per failed module and a status per module. The root
// graph still runs: the Interpreter calls the failed module eagerly, as it would any leaf.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace symtrace;
using namespace lesson;

namespace {

// The dtype and shape of node `name` as text, or "missing".
std::string meta_of(const Graph& g, std::string_view name) {
  const Node* n = g.find_node(name);
  return n != nullptr && n->tensor_meta() != nullptr ? to_string(*n->tensor_meta()) : "missing";
}

// Branches on tensor data: fine eagerly, untraceable symbolically.
struct GateImpl : TypedModule<GateImpl> {
  GateImpl() {
    fc_a = register_module("fc_a", nn::Linear(4, 4));
    fc_b = register_module("fc_b", nn::Linear(4, 4));
  }
  static constexpr int data_line = __LINE__ + 3;
  Tensor forward(const Tensor& x) {
    const Tensor h = fc_a(x);
    if (h.sum().item<float>() > 0) return fc_b(h);  // the data-dependent branch
    return -h;
  }
  nn::Linear fc_a{nullptr};
  nn::Linear fc_b{nullptr};
};
SYMTRACE_MODULE(Gate);

struct NetImpl : TypedModule<NetImpl> {
  NetImpl() {
    stem = register_module("stem", nn::Linear(4, 4));
    gate = register_module("gate", Gate());
    head = register_module("head", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) {
    const Tensor h = stem(x).relu();
    return head(h + gate(h));
  }
  nn::Linear stem{nullptr};
  Gate gate{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(Net);

}  // namespace

int main() {
  manual_seed(0);
  Net model;
  const InputSpec input(Shape{2, 4});

  // 1. A plain trace stops at the branch, naming this file's line and the module.
  try {
    (void)symbolic_trace(*model, {input});
    expect(false, "symbolic_trace must throw a TraceError");
  } catch (const TraceError& e) {
    fmt::print("symbolic_trace: TraceError, as expected:\n  {}\n", e.what());
    const std::string message = e.what();
    expect(message.find(fmt::format("06_robust_trace.cpp:{}: ", GateImpl::data_line)) != std::string::npos,
           "the message names this file and the branch's line");
    expect(message.find("read as data (item()) in 'gate' (Gate)") != std::string::npos, "message names the module");
    expect(e.module_path() == "gate" && e.where().line() == GateImpl::data_line, "module_path() and where()");
  }

  // 2. recursive_trace: the model's graph with gate as a leaf, and a graph per child of gate.
  const GraphCollection c = recursive_trace(*model, {input});
  fmt::print("\nrecursive_trace made {} graphs:\n", c.size());
  for (const GraphCollection::Entry& entry : c) {
    fmt::print("  '{}': {} nodes\n", entry.path, entry.graph.size());
    expect_lints(entry.graph, fmt::format("the graph of '{}'", entry.path));
  }
  if (c.size() != 3 || !c.find("") || !c.find("gate.fc_a") || !c.find("gate.fc_b") || c.find("gate")) {
    fmt::print(stderr, "MISMATCH: expected graphs for the model, gate.fc_a and gate.fc_b, none for the failed gate\n");
    return EXIT_FAILURE;
  }
  fmt::print("\n{}\n", coverage_report(c, "net"));

  // 3. The statuses: traced, leaf, failed (unvisited would be a module never called).
  expect(c.is_failed(*model->gate) && !c.is_failed(*model->stem), "gate failed, stem did not");
  expect(c.failure_msg(*model->gate).value_or("").starts_with("TraceError: "), "failure_msg is ModelOpt's");
  const ModuleFailure* f = c.failure(*model->gate);
  expect(f && f->module == "gate" && f->type == "Gate" && f->kind == "TraceError" && f->where.line() == GateImpl::data_line,
         "the failure record: path, type, kind, line");
  std::vector<std::string> statuses;
  for (const ModuleRecord& r : c.hierarchy()) statuses.push_back(fmt::format("{}={}", c.hierarchy().path(r.index), r.status));
  fmt::print("statuses: {}\n", fmt::join(statuses, ", "));
  expect(statuses == std::vector<std::string>{"=traced", "stem=leaf", "gate=failed", "gate.fc_a=leaf", "gate.fc_b=leaf",
                                              "head=leaf"},
         "the hierarchy's statuses");

  // 4. The root graph: gate is one call_module node taking the call's argument. Its output's
  //    shape comes from running it (twice, on inputs of its call's shape: "shape by
  //    execution" in the report), so what is computed from it has known shapes too.
  const Graph& root = *c.find("");
  fmt::print("\nthe model's graph:\n{}", to_string(root));
  const Node* gate = root.find_node("gate");
  expect(gate && gate->op() == OpKind::call_module && gate->target() == "gate" && gate->args().size() == 1,
         "%gate is a call_module leaf taking the call's real argument");
  expect(meta_of(root, "gate") == "float32[2, 4]", "the failed module's result has the shape it really has");
  expect(f != nullptr && f->result_by_execution, "found by running it");
  const Argument* why = gate != nullptr ? gate->meta(meta_keys::failure) : nullptr;
  expect(why != nullptr && why->get_if<std::string>() != nullptr && *why->get_if<std::string>() == to_string(*f),
         "%gate carries its failure in its metadata");
  expect(to_dot(root).find("TraceError") != std::string::npos, "and DOT draws it as failed");
  expect(meta_of(root, "head") == "float32[2, 2]", "and so has what is computed from it");
  expect(meta_of(root, "stem") == "float32[2, 4]", "shapes before the gate are known");
  // fc_a was called before gate failed: its graph has the input shape seen there. fc_b never was.
  expect(meta_of(*c.find("gate.fc_a"), "x") == "float32[2, 4]", "fc_a's input: the shape seen at its call");
  expect(meta_of(*c.find("gate.fc_b"), "x") == "float32[...]", "fc_b's input: unknown, it was never called");

  // 5. Run the root graph: gate runs eagerly, taking whichever branch the data picks.
  Generator gen(1);
  int positive = 0;
  for (int trial = 0; trial < 4; ++trial) {
    const Tensor x = randn({2, 4}, gen) * 3.0;
    const bool takes_fc_b = model->gate->fc_a(model->stem(x).relu()).sum().item<float>() > 0;
    positive += takes_fc_b ? 1 : 0;
    const double err = max_abs_error(Interpreter(*model, root).run({x}).to_tensor(), model(x));
    fmt::print("input {} ({} branch): interpreter vs eager max abs error {:.3g}\n", trial, takes_fc_b ? "fc_b" : "-h",
               err);
    expect(err <= 1e-5, fmt::format("input {}: the root graph differs from eager by {}", trial, err));
  }
  expect(positive > 0 && positive < 4, "the inputs exercise both branches of gate");

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (paths and line numbers depend on where this file is):
//   symbolic_trace: TraceError, as expected:
//     .../06_robust_trace.cpp:NN: a symbolic tensor was read as data (item()) in 'gate' (Gate): ...
//   recursive_trace made 3 graphs:
//     '': N nodes
//     'gate.fc_a': 3 nodes
//     'gate.fc_b': 3 nodes
//   coverage of net (Net)
//     modules: 6 (1 traced, 4 leaf, 1 failed, 0 unvisited)
//   ...
//   statuses: =traced, stem=leaf, gate=failed, gate.fc_a=leaf, gate.fc_b=leaf, head=leaf
//   the model's graph:
//   graph():
//       ...
//       %gate : float32[2, 4] [num_users=1] = call_module[target=gate](args = (%relu,), kwargs = {})
//       ...
//   input 0 (fc_b branch): interpreter vs eager max abs error 0
//   input 1 (-h branch): interpreter vs eager max abs error 0
//   ...
//   all checks passed

// Lesson 10: tracing by execution, torch.jit.trace's way, and where it silently specialises.
//
// A symbolic trace refuses a forward that branches on tensor data: it cannot know which way
// the branch goes. Tracing by execution runs the forward on real inputs instead and records
// the ops it called, so it captures anything, but only the path those inputs took. symtrace
// says where that happened (a warning with the file:line and module of each data read) and,
// given other inputs to check with, whether the recorded graph still computes what the model
// computes. Last, a GraphCollection uses it as a fallback for the modules it could not trace.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

using namespace symtrace;
using namespace lesson;

namespace {

// Doubles positive activations or halves the rest, by the sign of their mean: a branch on data.
struct GateImpl : TypedModule<GateImpl> {
  static constexpr int branch_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    if (x.mean().gt(0.0).to_bool()) return x * 2.0;
    return x * 0.5;
  }
};
SYMTRACE_MODULE(Gate);

struct NetImpl : TypedModule<NetImpl> {
  NetImpl() {
    fc = register_module("fc", nn::Linear(4, 4));
    gate = register_module("gate", Gate());
  }
  Tensor forward(const Tensor& x) { return gate(fc(x)).relu(); }
  nn::Linear fc{nullptr};
  Gate gate{nullptr};
};
SYMTRACE_MODULE(Net);

}  // namespace

int main() {
  manual_seed(0);
  Net model;
  model->fc->weight.fill_(0.1);  // positive inputs give a positive mean: the doubling branch
  model->fc->bias.fill_(0.0);
  const Tensor x = ones({2, 4});

  // 1. The symbolic trace refuses the branch.
  try {
    (void)symbolic_trace(*model, {x});
    expect(false, "the symbolic trace refuses the data-dependent branch");
  } catch (const TraceError& e) {
    fmt::print("symbolic trace: {}\n\n", e.what());
  }

  // 2. Traced by execution: the graph of the doubling branch, and a warning at the `if`.
  ExecutionTraceOptions options;
  options.check_inputs = {{full({2, 4}, 3.0)}, {full({2, 4}, -1.0)}};
  const ExecutionTrace t = trace_by_execution(*model, {x}, options);
  fmt::print("{}\n", to_string(t.graph));
  expect_lints(t.graph, "the traced graph");
  expect(t.warnings.size() == 1 && t.warnings[0].where.line() == GateImpl::branch_line &&
             t.warnings[0].module_path == "gate",
         "one warning, at the branch, in 'gate'");
  for (const TraceWarning& w : t.warnings) fmt::print("warning: {}\n\n", w.message);
  const double err = max_abs_error(Interpreter(*model, t.graph).run({x}).to_tensor(), model(x));
  fmt::print("the graph on the example input: max abs error {:.3g}\n", err);
  expect(err == 0, "the graph computes the model on the example input");

  // 3. check_inputs: the input of mean 3 takes the same branch; the negative one does not.
  for (const std::string& d : t.divergences) fmt::print("divergence: {}\n\n", d);
  expect(t.divergences.size() == 1 && t.divergences[0].starts_with("check input 1:"),
         "check_inputs reports the negative input, only");

  // 4. The collection's fallback: the gate fails symbolically and is captured by execution.
  GraphCollection c;
  c.capture_failed_by_execution();
  c.recursive_trace(*model, {InputSpec(Shape{2, 4})});
  const std::string report = coverage_report(c, "net");
  fmt::print("{}", report.substr(report.find("failures (")));
  const ModuleFailure* failure = c.failure(*model->gate);
  expect(failure != nullptr && failure->by_execution && failure->by_execution->graph &&
             failure->by_execution->warnings.size() == 1,
         "the failed gate is captured by execution, with its warning");
  return failures == 0 ? 0 : 1;
}

// Expected output (abridged):
//   symbolic trace: examples/10_trace_by_execution.cpp:25: a symbolic tensor was read as data (to_bool()) in 'gate' (Gate): ...
//   graph():
//       %x : float32[2, 4] [num_users=1] = placeholder[target=x]
//       ...
//       %gt : bool[] [num_users=0] = call_method[target=gt](args = (%mean, 0.0), kwargs = {})
//       %mul : float32[2, 4] [num_users=1] = call_function[target=mul](args = (%linear, 2.0), kwargs = {})
//       %relu : float32[2, 4] [num_users=1] = call_method[target=relu](args = (%mul,), kwargs = {})
//       return relu
//   warning: examples/10_trace_by_execution.cpp:25: a tensor was converted to bool (to_bool()) in 'gate' (Gate) while tracing by execution: ...
//   the graph on the example input: max abs error 0
//   divergence: check input 1: the forward made other calls than with the example inputs, from node 6: call_function[target=mul](%3, 2.0) with the example inputs, ...
//   failures (1)
//     gate (Gate) at examples/10_trace_by_execution.cpp:25
//       TraceError: ...
//       captured by execution on float32[2, 4]: 5 nodes, specialised (1 place reads tensor data)
//         examples/10_trace_by_execution.cpp:25 branch (1 time)
//   ...

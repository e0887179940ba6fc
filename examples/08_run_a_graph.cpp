// Lesson 8: running graphs: the Interpreter, GraphModule, guards, and a graph edited by hand.
//
// A graph is a program: the Interpreter runs it node by node on real tensors, against the
// module it was traced from (call_module nodes call its submodules, get_attr nodes read its
// weights). GraphModule packages a graph with those modules as a Module you can call, nest and
// trace again. A graph is only valid for what the trace assumed: the dtype and known dims of
// its inputs, and the values given as concrete_args, which it records as guards; the
// Interpreter refuses anything else with a message saying what to do. Finally, a graph is
// data: this lesson inserts a relu by hand, as a pass would, and runs the result.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

using namespace symtrace;
using namespace lesson;

namespace {

// Calls `f`, which must throw std::invalid_argument containing `expected`; prints the message.
template <class F>
void expect_refused(F&& f, const std::string& expected) {
  try {
    f();
    expect(false, fmt::format("expected an error containing \"{}\"", expected));
  } catch (const std::invalid_argument& e) {
    fmt::print("refused, as expected: {}\n", e.what());
    expect(std::string(e.what()).find(expected) != std::string::npos, fmt::format("message has \"{}\"", expected));
  }
}

struct NetImpl : TypedModule<NetImpl> {
  NetImpl() {
    fc = register_module("fc", nn::Linear(4, 4));
    head = register_module("head", nn::Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return head(fc(x) + x); }
  nn::Linear fc{nullptr};
  nn::Linear head{nullptr};
};
SYMTRACE_MODULE(Net);

// A branch on a plain C++ flag: traceable once the flag is fixed by concrete_args.
struct SwitchImpl : TypedModule<SwitchImpl> {
  SwitchImpl() : TypedModule({"x", "negate"}) {}
  Tensor forward(const Tensor& x, bool negate) { return negate ? x.neg() : x.relu(); }
};
SYMTRACE_MODULE(Switch);

}  // namespace

int main() {
  manual_seed(0);
  Net model;
  Generator gen(8);
  const Tensor x = randn({2, 4}, gen);
  const Tensor eager = model(x);

  // 1. The Interpreter. The trace knew the shape [2, 4]: another shape is refused.
  Graph g = symbolic_trace(*model, {x});
  const double err = max_abs_error(Interpreter(*model, g).run({x}).to_tensor(), eager);
  fmt::print("Interpreter: max abs error {:.3g}\n", err);
  expect(err <= 1e-5, "the Interpreter equals eager");
  expect_refused([&] { (void)Interpreter(*model, g).run({randn({3, 4}, gen)}); },
                 "input 'x' was traced as float32[2, 4], got float32[3, 4]");
  expect_refused([&] { (void)Interpreter(*model, g).run({}); }, "the graph takes 1 inputs, got 0");

  // 2. GraphModule: the graph as a module. It shares the model's submodules and weights.
  auto gm = std::make_shared<GraphModule>(model.ptr(), g);
  const double gm_err = max_abs_error(gm->call({x}).to_tensor(), eager);
  fmt::print("GraphModule ({}, inputs: {}, {} parameters): max abs error {:.3g}\n", gm->type_name(),
             fmt::join(gm->input_names(), ", "), gm->num_parameters(), gm_err);
  expect(gm_err <= 1e-5 && gm->num_parameters() == model->num_parameters(), "the GraphModule behaves as the model");
  //    Tracing a GraphModule records the graph's operations again: the same graph.
  const Graph again = symbolic_trace(*gm, {x});
  expect(to_string(again) == to_string(g), "tracing the GraphModule gives the graph it runs");

  // 3. Guards: concrete_args fix `negate`, each value giving its own graph.
  Switch sw;
  const Graph negating = symbolic_trace(*sw, {InputSpec(Shape{3})}, {{"negate", true}});
  const Graph rectifying = symbolic_trace(*sw, {InputSpec(Shape{3})}, {{"negate", false}});
  fmt::print("\nnegate=true:\n{}", to_string(negating));
  expect(negating.guards().size() == 1 && negating.guards()[0] == Graph::Guard{"negate", true}, "one guard");
  expect(negating.find_node("neg") && !negating.find_node("relu") && rectifying.find_node("relu"),
         "each graph holds only the branch its guard chose");
  const Tensor v = tensor({1.0F, -2.0F, 3.0F});
  expect(Interpreter(*sw, negating).run({v, true}).to_tensor().to_vector<float>() == std::vector<float>{-1, 2, -3},
         "the negating graph negates");
  expect_refused([&] { (void)Interpreter(*sw, negating).run({v, false}); },
                 "input 'negate' was specialised on True when the graph was traced (concrete_args), got False; trace "
                 "again with this value");

  // 4. Edit by hand: head(fc(x) + x) becomes head(relu(fc(x) + x)). New nodes go before the
  //    anchor while the insertion point lives; replace_input_with rewires head's argument.
  Node* add = g.find_node("add");
  Node* head = g.find_node("head");
  if (add == nullptr || head == nullptr) {
    fmt::print(stderr, "MISMATCH: the traced graph has no %add or %head\n");
    return EXIT_FAILURE;
  }
  {
    auto point = g.inserting_before(*head);
    Node& relu = g.call_function("relu", {*add});
    relu.set_tensor_meta(*add->tensor_meta());
    head->replace_input_with(*add, relu);
  }
  expect_lints(g, "the edited graph");
  fmt::print("\nedited:\n{}", to_string(g));
  expect(to_string(g) == R"(graph():
    %x : float32[2, 4] [num_users=2] = placeholder[target=x]
    %fc : float32[2, 4] [num_users=1] = call_module[target=fc](args = (%x,), kwargs = {})
    %add : float32[2, 4] [num_users=1] = call_function[target=add](args = (%fc, %x), kwargs = {})
    %relu : float32[2, 4] [num_users=1] = call_function[target=relu](args = (%add,), kwargs = {})
    %head : float32[2, 2] [num_users=1] = call_module[target=head](args = (%relu,), kwargs = {})
    return head
)",
         "the edited graph");
  const Tensor expected = model->head(relu(model->fc(x) + x));
  const Tensor edited = Interpreter(*model, g).run({x}).to_tensor();
  const double edit_err = max_abs_error(edited, expected);
  fmt::print("edited graph vs head(relu(fc(x) + x)): max abs error {:.3g}; vs the model: {:.3g}\n", edit_err,
             max_abs_error(edited, eager));
  expect(edit_err <= 1e-5, "the edited graph computes head(relu(fc(x) + x))");
  expect(max_abs_error(edited, eager) > 1e-3, "the inserted relu changes the result");
  expect(max_abs_error(gm->call({x}).to_tensor(), eager) <= 1e-5, "the GraphModule kept its own copy of the graph");

  fmt::print("{}\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (paths and line numbers depend on where this file is):
//   Interpreter: max abs error 0
//   refused, as expected: .../08_run_a_graph.cpp:NN: input 'x' was traced as float32[2, 4], got float32[3, 4]; ...
//   refused, as expected: ...: the graph takes 1 inputs, got 0 ...
//   GraphModule (GraphModule, inputs: x, 30 parameters): max abs error 0
//
//   negate=true:
//   graph():
//       %x : float32[3] [num_users=1] = placeholder[target=x]
//       %negate : [num_users=0] = placeholder[target=negate]
//       %neg : float32[3] [num_users=1] = call_method[target=neg](args = (%x,), kwargs = {})
//       return neg
//   refused, as expected: ...: input 'negate' was specialised on True when the graph was traced (concrete_args), ...
//
//   edited:
//   graph():
//       ...
//   edited graph vs head(relu(fc(x) + x)): max abs error 0; vs the model: N.NN
//   all checks passed

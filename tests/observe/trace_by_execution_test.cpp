// trace_by_execution: eager runs recorded into graphs that the Interpreter runs equal to eager,
// a warning at the user's line wherever the trace specialised on data, check_inputs catching
// the divergence, and nothing left installed on the thread.
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/failures.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;
using testing::max_rel_error;

namespace {

struct ScaledReluImpl : TypedModule<ScaledReluImpl> {
  ScaledReluImpl() { fc = register_module("fc", nn::Linear(4, 3)); }
  Tensor forward(const Tensor& x) { return relu(fc(x)) + x.sum({1}, true); }
  nn::Linear fc{nullptr};
};
SYMTRACE_MODULE(ScaledRelu);

/// Takes one branch or the other depending on the data.
struct SignGateImpl : TypedModule<SignGateImpl> {
  static constexpr int branch_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    if (x.sum().gt(0.0).to_bool()) return x.relu();
    return x.neg();
  }
};
SYMTRACE_MODULE(SignGate);

/// Scales by a number read from the data.
struct MaxScaleImpl : TypedModule<MaxScaleImpl> {
  static constexpr int read_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return x * x.amax().item<double>(); }
};
SYMTRACE_MODULE(MaxScale);

struct WrapperImpl : TypedModule<WrapperImpl> {
  WrapperImpl() {
    pre = register_module("pre", nn::Linear(4, 4));
    gate = register_module("gate", SignGate());
  }
  Tensor forward(const Tensor& x) { return gate(pre(x)); }
  nn::Linear pre{nullptr};
  SignGate gate{nullptr};
};
SYMTRACE_MODULE(Wrapper);

struct ThrowingImpl : TypedModule<ThrowingImpl> {
  Tensor forward(const Tensor& x) {
    (void)x.relu();
    throw std::runtime_error("the forward gave up");
  }
};
SYMTRACE_MODULE(Throwing);

const Callable double_plus_one = register_callable(
    "test.exec_double_plus_one(Tensor x) -> Tensor",
    [](const OpCall& call) -> Value { return call.tensor(0).mul(2.0).add(1.0); }, Callable::same_as_argument(0));

Tensor run_graph(Module& model, const Graph& graph, const ValueList& inputs) {
  return Interpreter(model, graph).run(inputs).to_tensor();
}

}  // namespace

TEST_CASE("a module traced by execution gives fx's graph of the ops it ran, with parameters as get_attr") {
  ScaledRelu model;
  const Tensor x = randn({2, 4});
  const ExecutionTrace t = trace_by_execution(*model, {x});
  CHECK_NOTHROW(t.graph.lint());
  CHECK(to_string(t.graph) == R"(graph():
    %x : float32[2, 4] [num_users=2] = placeholder[target=x]
    %sum : float32[2, 1] [num_users=1] = call_method[target=sum](args = (%x, [1], True), kwargs = {})
    %fc_weight : float32[3, 4] [num_users=1] = get_attr[target=fc.weight]
    %fc_bias : float32[3] [num_users=1] = get_attr[target=fc.bias]
    %linear : float32[2, 3] [num_users=1] = call_function[target=linear](args = (%x, %fc_weight, %fc_bias), kwargs = {})
    %relu : float32[2, 3] [num_users=1] = call_function[target=relu](args = (%linear,), kwargs = {})
    %add : float32[2, 3] [num_users=1] = call_function[target=add](args = (%relu, %sum), kwargs = {})
    return add
)");
  CHECK(t.warnings.empty());
  CHECK(t.divergences.empty());
  // The graph holds the calls in the order they ran (here the right operand of + first), and
  // node scopes follow the module calls: the linear ran inside `fc`.
  CHECK(t.graph.find_node("linear")->scope() == "fc");
  CHECK(t.graph.find_node("relu")->scope() == "");
  const Tensor eager = model(x);
  CHECK(max_rel_error(t.outputs.to_tensor(), eager) == 0);
  CHECK(max_rel_error(run_graph(*model, t.graph, {x}), eager) == 0);
}

TEST_CASE("zoo models traced by execution run in the interpreter equal to eager") {
  for (const char* name : {"resnet18", "mobilenet_v2", "vit_tiny", "unet_small", "rnn", "deep_mlp_100", "mixed_failures"}) {
    const std::string model_name = name;
    CAPTURE(model_name);
    const std::shared_ptr<Module> model = zoo::create(name);
    ValueList inputs;
    for (const zoo::ExampleInput& input : zoo::info(name).inputs) {
      const IntList& shape = input.shape;  // the zoo's example inputs, as torch.jit.trace would be given
      inputs.emplace_back(input.dtype == DType::int64 ? (rand(shape) * static_cast<double>(input.high)).to(DType::int64)
                                                      : randn(shape));
    }
    const ExecutionTrace t = trace_by_execution(*model, inputs);
    CHECK_NOTHROW(t.graph.lint());
    const Value eager = model->call(inputs);
    const Tensor traced = Interpreter(*model, t.graph).run(inputs).to_tensor();
    REQUIRE(traced.shape() == eager.to_tensor().shape());
    CHECK(max_rel_error(traced, eager.to_tensor()) <= 1e-5);
    // Kernels read their operands' data; only the model's own reads are warnings.
    if (model_name != "mixed_failures") {
      CHECK_MESSAGE(t.warnings.empty(), t.warnings.front().message);
    }
  }
}

TEST_CASE("every place mixed_failures reads tensor data is a warning at its line, in its module") {
  const std::shared_ptr<Module> model = zoo::create("mixed_failures");
  const Tensor x = randn({1, 3, 16, 16});
  const ExecutionTrace t = trace_by_execution(*model, {x});
  std::string messages;
  for (const TraceWarning& w : t.warnings) messages += w.message + "\n";
  INFO(messages);
  REQUIRE(t.warnings.size() == 4);
  const auto where = [](const TraceWarning& w) {
    // clang-format off
    return fmt::format("{}:{} {} {} ({})", std::string_view(w.where.file_name()).substr(
                                               std::string_view(w.where.file_name()).rfind('/') + 1),
                       // clang-format on
                       w.where.line(), to_string(w.kind), w.module_path, w.module_type);
  };
  CHECK(where(t.warnings[0]) == fmt::format("failures.cpp:{} branch gate (GatedConv)", zoo::GatedConvImpl::data_branch_line));
  CHECK(where(t.warnings[1]) == "failures.cpp:42 value_read repeat (RepeatedConv)");
  CHECK(where(t.warnings[2]) == "failures.cpp:17 value_read opaque (OpaqueMedianCenter)");
  CHECK(where(t.warnings[3]) == "failures.cpp:52 value_read topk (PositiveChannelMask)");
  CHECK(t.warnings[0].message ==
        fmt::format("{}:{}: a tensor was converted to bool (to_bool()) in 'gate' (GatedConv) while tracing by "
                    "execution: the graph follows the branch the example inputs took and other inputs may take the "
                    "other; keep the choice in the graph with where() or cond(), or check the trace with "
                    "check_inputs",
                    t.warnings[0].where.file_name(), zoo::GatedConvImpl::data_branch_line));
}

TEST_CASE("a data-dependent branch gives a warning at the user's line and check_inputs catches the divergence") {
  Wrapper model;
  // Positive inputs through a positive-weight linear take the relu branch.
  model->pre->weight.fill_(0.25);
  model->pre->bias.fill_(0.0);
  const Tensor positive = ones({2, 4});
  const Tensor negative = full({2, 4}, -1.0);

  SUBCASE("the warning") {
    const ExecutionTrace t = trace_by_execution(*model, {positive});
    REQUIRE(t.warnings.size() == 1);
    const TraceWarning& w = t.warnings[0];
    CHECK(w.kind == TraceWarning::Kind::branch);
    CHECK(w.where.line() == SignGateImpl::branch_line);
    CHECK(w.module_path == "gate");
    CHECK(w.module_type == "SignGate");
    CHECK(w.count == 1);
    CHECK(w.message.find(fmt::format(":{}: a tensor was converted to bool (to_bool()) in 'gate' (SignGate)",
                                     SignGateImpl::branch_line)) != std::string::npos);
    CHECK(t.graph.find_node("relu") != nullptr);
    CHECK(t.graph.find_node("neg") == nullptr);
  }
  SUBCASE("check inputs that take the same branch agree") {
    ExecutionTraceOptions options;
    options.check_inputs = {{full({2, 4}, 3.0)}, {ones({5, 4})}};
    const ExecutionTrace t = trace_by_execution(*model, {positive}, options);
    CHECK(t.divergences.empty());
  }
  SUBCASE("a check input that takes the other branch is reported") {
    ExecutionTraceOptions options;
    options.check_inputs = {{full({2, 4}, 3.0)}, {negative}};
    const ExecutionTrace t = trace_by_execution(*model, {positive}, options);
    REQUIRE(t.divergences.size() == 1);
    CHECK(t.divergences[0] ==
          "check input 1: the forward made other calls than with the example inputs, from node 6: "
          "call_method[target=relu](%3) with the example inputs, call_method[target=neg](%3) with the check input; "
          "the trace is specialised on data (see its warnings)");
  }
}

TEST_CASE("a value read from the data is a warning, and check_inputs finds where the graph computes otherwise") {
  MaxScale model;
  const Tensor x = tensor<float>({1, 2, 3, 4}, {2, 2});
  ExecutionTraceOptions options;
  options.check_inputs = {{tensor<float>({1, 2, 3, 4}, {2, 2}).mul(0.5)}, {x}};
  const ExecutionTrace t = trace_by_execution(*model, {x}, options);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].kind == TraceWarning::Kind::value_read);
  CHECK(t.warnings[0].where.line() == MaxScaleImpl::read_line);
  CHECK(t.warnings[0].module_path == "");
  CHECK(t.warnings[0].message.find(fmt::format(":{}: a tensor was read as a C++ value (item()) in the root module "
                                               "(MaxScale) while tracing by execution",
                                               MaxScaleImpl::read_line)) != std::string::npos);
  // The scale 4 is an argument of the recorded mul: the first check input (max 2) records 2.
  REQUIRE(t.divergences.size() == 1);
  CHECK(t.divergences[0] ==
        "check input 0: the forward made other calls than with the example inputs, from node 2: "
        "call_function[target=mul](%0, 4.0) with the example inputs, call_function[target=mul](%0, 2.0) with the "
        "check input; the trace is specialised on data (see its warnings)");
}

TEST_CASE("check_inputs finds a graph that makes the same calls but computes otherwise") {
  // The data-derived value hides in a tensor made outside the ops: a graph constant.
  const auto shift_by_max = [](const ValueList& in) -> Value {
    const Tensor& x = in[0].to_tensor();
    return x - tensor<float>({static_cast<float>(x.amax().item<double>())});
  };
  ExecutionTraceOptions options;
  options.check_inputs = {{tensor<float>({1, 2, 3})}, {tensor<float>({0, 1, 2})}};
  const ExecutionTrace t = trace_by_execution(shift_by_max, {tensor<float>({1, 2, 3})}, options);
  REQUIRE(t.divergences.size() == 1);
  CHECK(t.divergences[0] ==
        "check input 1: the graph does not compute what the forward computes: output differs at element 0: -3 from "
        "the graph, -2 from the forward; the trace is specialised on data (see its warnings)");
}

TEST_CASE("a warning in a loop is one warning with a count") {
  const ExecutionTrace t = trace_by_execution(
      [](const ValueList& in) -> Value {
        Tensor x = in[0].to_tensor();
        for (int i = 0; i < 3; ++i) {
          if (x.sum().gt(100.0).to_bool()) break;
          x = x + 1;
        }
        return x;
      },
      {zeros({2})});
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].count == 3);
  CHECK(t.warnings[0].module_type == "");
  CHECK(t.warnings[0].message.find("a tensor was converted to bool (to_bool()) while tracing by execution") !=
        std::string::npos);
}

TEST_CASE("a traced function's placeholders are input_0, input_1, ...; a composite op is one node") {
  const ExecutionTrace t = trace_by_execution(
      [](const ValueList& in) -> Value {
        return double_plus_one({in[0].to_tensor() + in[1].to_tensor()}).to_tensor();
      },
      {ones({3}), full({3}, 2.0)});
  CHECK(to_string(t.graph) == R"(graph():
    %input_0 : float32[3] [num_users=1] = placeholder[target=input_0]
    %input_1 : float32[3] [num_users=1] = placeholder[target=input_1]
    %add : float32[3] [num_users=1] = call_function[target=add](args = (%input_0, %input_1), kwargs = {})
    %exec_double_plus_one : float32[3] [num_users=1] = call_function[target=test.exec_double_plus_one](args = (%add,), kwargs = {})
    return exec_double_plus_one
)");
  nn::Identity any;
  CHECK(run_graph(*any, t.graph, {ones({3}), ones({3})}).to_vector<float>() == std::vector<float>{5, 5, 5});
}

TEST_CASE("tensors made outside the ops are graph constants; non-tensor inputs are guards") {
  const Tensor offset = tensor<float>({10, 20}, {2});
  const ExecutionTrace t = trace_by_execution(
      [&](const ValueList& in) -> Value { return in[0].to_tensor().mul(static_cast<double>(in[1].to_int())) + offset; },
      {ones({2}), Value(std::int64_t{3})});
  CHECK(t.graph.num_constants() == 1);
  REQUIRE(t.graph.guards().size() == 1);
  CHECK(t.graph.guards()[0] == Graph::Guard{"input_1", Argument(std::int64_t{3})});
  nn::Identity any;
  CHECK(run_graph(*any, t.graph, {full({2}, 2.0), Value(std::int64_t{3})}).to_vector<float>() ==
        std::vector<float>{16, 26});
  CHECK_THROWS_AS((void)Interpreter(*any, t.graph).run({ones({2}), Value(std::int64_t{4})}), std::invalid_argument);
}

TEST_CASE("tracing something that returns nothing is an error, as in torch.jit.trace") {
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)trace_by_execution([](const ValueList&) -> Value { return {}; }, {ones({2})}),
                       doctest::Contains(fmt::format("trace_by_execution_test.cpp:{}: trace_by_execution: the function "
                                                     "returned nothing (None) and there is nothing to trace: a traced "
                                                     "module or function must return a tensor or a list of tensors",
                                                     line)
                                             .c_str()),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)trace_by_execution([](const ValueList&) -> Value { return std::int64_t{3}; }, {ones({2})}),
                       doctest::Contains("the function returned int (3) and there is nothing to trace"),
                       std::invalid_argument);
  CHECK_FALSE(has_callbacks());
}

TEST_CASE("an exception in the forward propagates unchanged and leaves nothing installed") {
  Throwing model;
  CHECK_THROWS_WITH_AS((void)trace_by_execution(*model, {ones({2})}), "the forward gave up", std::runtime_error);
  CHECK_FALSE(has_callbacks());
  // Data reads on this thread are no longer reported anywhere, and ops run unobserved.
  CHECK(ones({1}).to_bool());
  const ExecutionTrace t = trace_by_execution(*ScaledRelu(), {ones({1, 4})});
  CHECK(t.warnings.empty());
}

TEST_CASE("in-place ops and views are recorded in order, so the graph mutates what the forward mutated") {
  const ExecutionTrace t = trace_by_execution(
      [](const ValueList& in) -> Value {
        Tensor x = in[0].to_tensor() * 1.0;
        x.slice(1, 0, 2).copy_(in[1].to_tensor());
        x.relu_();
        return x * 2;
      },
      {randn({3, 4}), randn({3, 2})});
  CHECK_NOTHROW(t.graph.lint());
  const Tensor a = randn({3, 4}), b = randn({3, 2});
  Tensor expected = a * 1.0;
  expected.slice(1, 0, 2).copy_(b);
  expected = expected.relu() * 2;
  nn::Identity any;
  CHECK(max_rel_error(run_graph(*any, t.graph, {a, b}), expected) == 0);
}

TEST_CASE("ops another thread runs meanwhile are not recorded, and several threads trace at once") {
  std::atomic<bool> tracing{false};
  std::atomic<bool> done{false};
  std::thread other([&] {
    while (!tracing.load()) std::this_thread::yield();
    // Runs ops (and data reads) until the trace on the main thread is over.
    while (!done.load()) (void)ones({2}).mul(3.0).sum().to_bool();
  });
  const ExecutionTrace t = trace_by_execution(
      [&](const ValueList& in) -> Value {
        tracing = true;
        Tensor x = in[0].to_tensor();
        for (int i = 0; i < 200; ++i) x = x.add(1.0);
        return x;
      },
      {zeros({2})});
  done = true;
  other.join();
  CHECK(t.graph.size() == 202);  // the placeholder, 200 adds, the output
  CHECK(t.warnings.empty());

  std::vector<std::size_t> sizes(4);
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < sizes.size(); ++w) {
    workers.emplace_back([&sizes, w] {
      const ExecutionTrace mine = trace_by_execution(
          [w](const ValueList& in) -> Value {
            Tensor x = in[0].to_tensor();
            for (std::size_t i = 0; i <= w; ++i) x = x.relu();
            return x;
          },
          {ones({3})});
      sizes[w] = mine.graph.size();
    });
  }
  for (std::thread& t2 : workers) t2.join();
  CHECK(sizes == std::vector<std::size_t>{3, 4, 5, 6});
}

namespace {
/// Traces its child by execution, on concrete inputs, in the middle of its own forward.
class TracesChildByExecution : public TypedModule<TracesChildByExecution> {
 public:
  TracesChildByExecution() { fc = register_module("fc", nn::Linear(2, 3)); }
  Tensor forward(const Tensor& x) {
    inner = trace_by_execution(*fc, {probe});
    return fc(x).relu();
  }
  nn::Linear fc{nullptr};
  Tensor probe = tensor({1.0f, -2.0f}, {1, 2});
  ExecutionTrace inner;
};
}  // namespace

TEST_CASE("a trace by execution inside a symbolic trace is a run of its own: nothing of it reaches the enclosing graph") {
  manual_seed(3);
  TracesChildByExecution model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{4, 2})});
  // Only the forward's own calls: the child's run by execution, on the model's own weights,
  // recorded nothing in the symbolic graph, though the symbolic trace sees those weights.
  CHECK(to_string(g) == R"(graph():
    %x : float32[4, 2] [num_users=1] = placeholder[target=x]
    %fc : float32[4, 3] [num_users=1] = call_module[target=fc](args = (%x,), kwargs = {})
    %relu : float32[4, 3] [num_users=1] = call_method[target=relu](args = (%fc,), kwargs = {})
    return relu
)");
  CHECK(current_interposer() == nullptr);
  // The run by execution is the child's, on concrete tensors: its graph runs equal to eager.
  REQUIRE(model.inner.outputs.is_tensor());
  CHECK(model.inner.outputs.to_tensor().is_concrete());
  CHECK(model.inner.warnings.empty());
  const Tensor eager = model.fc(model.probe);
  CHECK(max_rel_error(model.inner.outputs.to_tensor(), eager) == 0.0);
  CHECK(max_rel_error(Interpreter(*model.fc, model.inner.graph).run({model.probe}).to_tensor(), eager) == 0.0);
}

namespace {

/// Writes in place: into temporaries (add_, relu_, fill_, copy_ with a cast), through a view
/// (mul_ on a slice, which its base is read after), and into its input.
struct WritesInPlaceImpl : TypedModule<WritesInPlaceImpl> {
  Tensor forward(const Tensor& x, const Tensor& ids) {
    Tensor y = x.mul(2.0);
    y.add_(x);
    y.relu_();
    Tensor z = x.neg();
    z.fill_(0.5);
    Tensor c = x.sigmoid();
    c.copy_(ids);  // int64 [2, 3] into float32 [2, 3]
    Tensor v = x.exp();
    v.slice(1, 0, 2).mul_(3.0);  // v sees the write: recorded in place
    Tensor out = y.add(z).add(c).add(v);
    x.add_(1.0);  // the caller's input changes; the graph's does not
    return out;
  }
};

std::vector<std::string> targets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_function || n.op() == OpKind::call_method) out.emplace_back(n.target());
  return out;
}

}  // namespace

TEST_CASE("force_outplace records in-place ops as their out-of-place forms, and the graph computes what eager does") {
  auto model = std::make_shared<WritesInPlaceImpl>();
  const Tensor ids = tensor(std::vector<std::int64_t>{1, 0, 2, 3, 1, 0}, {2, 3});
  const auto input = [] { return tensor(std::vector<float>{-1.0f, 0.5f, 2.0f, -0.25f, 1.5f, 0.0f}, {2, 3}); };
  const Tensor expected = model->call({input(), ids}).to_tensor();

  ExecutionTraceOptions options;
  options.force_outplace = true;
  const ExecutionTrace t = trace_by_execution(*model, {input(), ids}, options);
  CHECK_NOTHROW(t.graph.lint());
  CHECK(targets(t.graph) == std::vector<std::string>{"mul", "add", "relu", "neg", "full_like", "sigmoid", "to", "expand",
                                                     "exp", "slice", "mul_", "add", "add", "add", "add"});
  // The graph leaves its input as it was and returns what the forward returned.
  const Tensor x = input();
  CHECK(max_rel_error(Interpreter(*model, t.graph).run({x, ids}).to_tensor(), expected) <= 1e-6);
  CHECK(x.to_vector<float>() == input().to_vector<float>());

  SUBCASE("without it, the graph holds the in-place ops as they ran") {
    const ExecutionTrace plain = trace_by_execution(*model, {input(), ids});
    CHECK(targets(plain.graph) == std::vector<std::string>{"mul", "add_", "relu_", "neg", "fill_", "sigmoid", "copy_",
                                                           "exp", "slice", "mul_", "add", "add", "add", "add_"});
  }
}

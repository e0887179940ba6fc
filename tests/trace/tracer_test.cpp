// Tracer: graphs recorded from forward code, the fx leaf rule, leaf registration, parameters
// as get_attr nodes, and what happens to symbolic tensors outside their trace.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/failures.hpp"
#include "symtrace/zoo/mlp.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/zoo/resnet.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

using namespace symtrace;

namespace {

/// Linear -> ReLU with a residual add and a scale by its own parameter.
class Block : public TypedModule<Block> {
 public:
  Block() {
    fc = register_module("fc", nn::Linear(4, 4));
    act = register_module("act", nn::ReLU());
    scale = register_parameter("scale", ones({4}));
  }
  static constexpr int forward_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return (x + act(fc(x))) * scale; }
  nn::Linear fc{nullptr};
  nn::ReLU act{nullptr};
  Tensor scale;
};

class Net : public TypedModule<Net> {
 public:
  Net() {
    block = register_module("block", std::make_shared<Block>());
    head = register_module("head", nn::Linear(4, 2));
    set_input_names({"features"});
  }
  Tensor forward(const Tensor& x) { return head((*block)(x)).relu(); }  // a shared_ptr child
  std::shared_ptr<Block> block;
  nn::Linear head{nullptr};
};

}  // namespace

TEST_CASE("tracing records built-in layers as leaves, traces user modules through, and reads parameters with get_attr") {
  Net net;
  Graph g = symbolic_trace(net, {InputSpec(Shape{2, 4})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %features : float32[2, 4] [num_users=2] = placeholder[target=features]
    %block_fc : float32[2, 4] [num_users=1] = call_module[target=block.fc](args = (%features,), kwargs = {})
    %block_act : float32[2, 4] [num_users=1] = call_module[target=block.act](args = (%block_fc,), kwargs = {})
    %add : float32[2, 4] [num_users=1] = call_function[target=add](args = (%features, %block_act), kwargs = {})
    %block_scale : float32[4] [num_users=1] = get_attr[target=block.scale]
    %mul : float32[2, 4] [num_users=1] = call_function[target=mul](args = (%add, %block_scale), kwargs = {})
    %head : float32[2, 2] [num_users=1] = call_module[target=head](args = (%mul,), kwargs = {})
    %relu : float32[2, 2] [num_users=1] = call_method[target=relu](args = (%head,), kwargs = {})
    return relu
)");
  // Nodes made inside the block carry its scope and the file:line of the code that made them.
  CHECK(g.find_node("add")->scope() == "block");
  CHECK(g.find_node("relu")->scope() == "");
  CHECK(std::string_view(g.find_node("add")->where().file_name()).ends_with("tracer_test.cpp"));
  CHECK(g.find_node("add")->where().line() == Block::forward_line);
}

TEST_CASE("a registered leaf type is recorded as one call_module node with its output shape") {
  Net net;
  Tracer tracer;
  tracer.register_leaf<Block>();
  CHECK(tracer.is_registered_leaf<Block>());
  Graph g = tracer.trace(net, {InputSpec(Shape{Dim::unknown(), 4})});
  CHECK(to_string(g) == R"(graph():
    %features : float32[?, 4] [num_users=1] = placeholder[target=features]
    %block : float32[?, 4] [num_users=1] = call_module[target=block](args = (%features,), kwargs = {})
    %head : float32[?, 2] [num_users=1] = call_module[target=head](args = (%block,), kwargs = {})
    %relu : float32[?, 2] [num_users=1] = call_method[target=relu](args = (%head,), kwargs = {})
    return relu
)");
  tracer.unregister_leaf<Block>();
  CHECK_FALSE(tracer.is_registered_leaf<Block>());
  CHECK(tracer.trace(net, {InputSpec(Shape{2, 4})}).size() == 9);
}

TEST_CASE("tracing with an example tensor takes its dtype and shape") {
  Net net;
  Graph g = symbolic_trace(net, {randn({3, 4})});
  CHECK(g.find_node("relu")->tensor_meta()->shape == Shape{3, 2});
}

namespace {

/// Keeps a symbolic tensor of its trace, to misuse it later.
class Leaky : public TypedModule<Leaky> {
 public:
  Tensor forward(const Tensor& x) {
    kept = x;
    return x.relu();
  }
  Tensor kept;
};

/// Uses a tensor that is not registered, and one it makes in forward.
class UsesStranger : public TypedModule<UsesStranger> {
 public:
  Tensor forward(const Tensor& x) { return x + stranger + full({4}, 2.0); }
  Tensor stranger = ones({4});
};

/// Reads tensor data: untraceable.
class ReadsData : public TypedModule<ReadsData> {
 public:
  static constexpr int bad_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return x.sum().to_bool() ? x : -x; }
};

/// Traces another model inside its own forward (a trace inside a trace).
class TracesInside : public TypedModule<TracesInside> {
 public:
  Tensor forward(const Tensor& x) {
    Net inner;
    inner_graph = symbolic_trace(inner, {InputSpec(Shape{2, 4})});
    return x.relu();
  }
  Graph inner_graph;
};

/// Uses its outer trace's tensor inside an inner trace.
class MixesTraces : public TypedModule<MixesTraces> {
 public:
  class Inner : public TypedModule<Inner> {
   public:
    Tensor forward(const Tensor& x) { return x + outer; }
    Tensor outer;
  };
  Tensor forward(const Tensor& x) {
    Inner inner;
    inner.outer = x;
    symbolic_trace(inner, {InputSpec(Shape{4})});
    return x;
  }
};

}  // namespace

TEST_CASE("a symbolic tensor used after its trace ended raises TraceError") {
  Leaky leaky;
  symbolic_trace(leaky, {InputSpec(Shape{4})});
  REQUIRE(leaky.kept.is_symbolic());
  CHECK_THROWS_WITH_AS((void)leaky.kept.relu(), doctest::Contains("no trace is active on this thread"), TraceError);
  CHECK_THROWS_AS((void)leaky.kept.item<float>(), TraceError);
}

TEST_CASE("concrete tensors that are not the model's own become graph constants, as in fx") {
  UsesStranger m;
  Graph g = symbolic_trace(m, {InputSpec(Shape{4})});
  CHECK(to_string(g) == R"(graph():
    %x : float32[4] [num_users=1] = placeholder[target=x]
    %_tensor_constant0 : float32[4] [num_users=1] = get_attr[target=_tensor_constant0]
    %add : float32[4] [num_users=1] = call_function[target=add](args = (%x, %_tensor_constant0), kwargs = {})
    %_tensor_constant1 : float32[4] [num_users=1] = get_attr[target=_tensor_constant1]
    %add_1 : float32[4] [num_users=1] = call_function[target=add](args = (%add, %_tensor_constant1), kwargs = {})
    return add_1
)");
  REQUIRE(g.num_constants() == 2);
  CHECK(g.find_constant("_tensor_constant0")->impl_ptr() == m.stranger.impl_ptr());  // the same tensor, not a copy
  CHECK(g.find_constant("_tensor_constant2") == nullptr);
  CHECK(g.find_constant("_tensor_constant01") == nullptr);
  Tensor x = randn({4});
  CHECK(Interpreter(m, g).run({x}).to_tensor().to_vector<float>() == m.call({x}).to_tensor().to_vector<float>());
  Graph copy = g;
  CHECK(copy.find_constant("_tensor_constant1") != nullptr);
  {
    auto checkpoint = g.checkpoint();
    (void)g.add_constant(ones({1}));
    CHECK(g.num_constants() == 3);
  }
  CHECK(g.num_constants() == 2);  // rolled back with the checkpoint
}

TEST_CASE("reading tensor data raises TraceError at the user's line") {
  ReadsData m;
  CHECK_THROWS_WITH_AS(symbolic_trace(m, {InputSpec(Shape{4})}),
                       doctest::Contains(fmt::format(":{}: ", ReadsData::bad_line).c_str()), TraceError);
}

TEST_CASE("a trace inside a trace works, and mixing their tensors raises TraceError") {
  TracesInside outer;
  Graph g = symbolic_trace(outer, {InputSpec(Shape{2})});
  CHECK(g.size() == 3);
  CHECK(outer.inner_graph.size() == 9);
  CHECK_NOTHROW(outer.inner_graph.lint());

  MixesTraces mixes;
  CHECK_THROWS_WITH_AS(symbolic_trace(mixes, {InputSpec(Shape{4})}), doctest::Contains("a symbolic tensor of another trace"),
                       TraceError);
}

TEST_CASE("after a failed trace the thread's tracing state and interposer are as before") {
  ReadsData m;
  CHECK_THROWS_AS(symbolic_trace(m, {InputSpec(Shape{4})}), TraceError);
  CHECK(TracingState::current() == nullptr);
  CHECK(current_interposer() == nullptr);
  // Eager calls work as before.
  Net net;
  CHECK(net.call({ones({2, 4})}).to_tensor().is_concrete());
}

TEST_CASE("data-dependent control flow raises TraceError at the user's line") {
  auto model = zoo::create("deep_mlp_1000_fail16");
  CHECK_THROWS_AS(symbolic_trace(*model, {InputSpec(Shape{1, 64})}), TraceError);
}

TEST_CASE("wrong inputs are refused with the declared input names") {
  Net net;
  CHECK_THROWS_WITH_AS(symbolic_trace(net, {}),
                       doctest::Contains("Net.forward takes 1 inputs (features), got 0 input specs and 0 concrete_args"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(symbolic_trace(net, {InputSpec(Shape{1}), InputSpec(Shape{1})}),
                       doctest::Contains("got 2 input specs"), std::invalid_argument);
  nn::ModuleList list;
  CHECK_THROWS_WITH_AS(symbolic_trace(*list.ptr(), {InputSpec(Shape{1})}), doctest::Contains("has no forward"),
                       std::invalid_argument);
}

TEST_CASE("two threads tracing at once get the graphs one thread gets") {
  auto resnet = zoo::create("resnet18");
  auto mlp = zoo::create("deep_mlp_1000");
  std::string resnet_alone = to_string(symbolic_trace(*resnet, {InputSpec(Shape{1, 3, 64, 64})}));
  std::string mlp_alone = to_string(symbolic_trace(*mlp, {InputSpec(Shape{1, 64})}));
  std::string resnet_threaded;
  std::string mlp_threaded;
  std::thread a([&] {
    for (int i = 0; i < 3; ++i) resnet_threaded = to_string(symbolic_trace(*resnet, {InputSpec(Shape{1, 3, 64, 64})}));
  });
  std::thread b([&] {
    for (int i = 0; i < 3; ++i) mlp_threaded = to_string(symbolic_trace(*mlp, {InputSpec(Shape{1, 64})}));
  });
  a.join();
  b.join();
  CHECK(resnet_threaded == resnet_alone);
  CHECK(mlp_threaded == mlp_alone);
}

TEST_CASE("each untraceable zoo model fails with a TraceError naming the module, its type and the line") {
  struct Expected {
    const char* model;
    const char* path;
    const char* type;
    int line;
    const char* file;
  };
  for (const Expected& e : {Expected{"resnet50_fail1", "layer3.0", "FailingBottleneck",
                                     zoo::FailingBottleneckImpl::data_branch_line, "resnet.cpp"},
                            Expected{"resnet50_fail4", "layer1.0", "FailingBottleneck",
                                     zoo::FailingBottleneckImpl::data_branch_line, "resnet.cpp"},
                            Expected{"resnet50_fail16", "layer1.0", "FailingBottleneck",
                                     zoo::FailingBottleneckImpl::data_branch_line, "resnet.cpp"},
                            Expected{"deep_mlp_1000_fail16", "blocks.0", "FailingMLPBlock",
                                     zoo::FailingMLPBlockImpl::data_branch_line, "mlp.cpp"},
                            Expected{"mixed_failures", "gate", "GatedConv", zoo::GatedConvImpl::data_branch_line,
                                     "failures.cpp"}}) {
    CAPTURE(e.model);
    auto model = zoo::create(e.model);
    std::vector<InputSpec> inputs;
    for (const zoo::ExampleInput& input : zoo::info(e.model).inputs) inputs.emplace_back(Shape(input.shape), input.dtype);
    try {
      symbolic_trace(*model, inputs);
      FAIL("expected a TraceError");
    } catch (const TraceError& error) {
      std::string message = error.what();
      CHECK(message.find(fmt::format("{}:{}: a symbolic tensor was read as data (to_bool()) in '{}' ({}): ", e.file,
                                     e.line, e.path, e.type)) != std::string::npos);
      CHECK(message.find("make the module a leaf (Tracer::register_leaf) or use where() or cond()") != std::string::npos);
      CHECK(error.module_path() == e.path);
      CHECK(error.where().line() == static_cast<std::uint_least32_t>(e.line));
    }
  }
}

TEST_CASE("a TraceError raised in the root's own forward says so") {
  ReadsData m;
  CHECK_THROWS_WITH_AS(symbolic_trace(m, {InputSpec(Shape{4})}),
                       doctest::Contains("(to_bool()) in the root module (ReadsData): "), TraceError);
}

namespace {

/// A branch on a plain C++ flag: traceable once the flag is fixed.
class Switch : public TypedModule<Switch> {
 public:
  Switch() { set_input_names({"x", "negate", "times"}); }
  Tensor forward(const Tensor& x, bool negate, std::int64_t times) {
    Tensor y = negate ? x.neg() : x.relu();
    for (std::int64_t i = 1; i < times; ++i) y = y + x;
    return y;
  }
};

}  // namespace

TEST_CASE("concrete_args specialise inputs, are recorded as guards, and the graph refuses other values") {
  Switch m;
  Graph g = symbolic_trace(m, {InputSpec(Shape{3})}, {{"times", std::int64_t{2}}, {"negate", true}});
  CHECK(to_string(g) == R"(graph():
    %x : float32[3] [num_users=2] = placeholder[target=x]
    %negate : [num_users=0] = placeholder[target=negate]
    %times : [num_users=0] = placeholder[target=times]
    %neg : float32[3] [num_users=1] = call_method[target=neg](args = (%x,), kwargs = {})
    %add : float32[3] [num_users=1] = call_function[target=add](args = (%neg, %x), kwargs = {})
    return add
)");
  REQUIRE(g.guards().size() == 2);
  CHECK(g.guards()[0] == Graph::Guard{"negate", true});
  CHECK(g.guards()[1] == Graph::Guard{"times", std::int64_t{2}});
  CHECK(Graph(g).guards() == g.guards());

  Tensor x = tensor({1.0F, -2.0F, 3.0F});
  CHECK(Interpreter(m, g).run({x, true, std::int64_t{2}}).to_tensor().to_vector<float>() ==
        m.call({x, true, std::int64_t{2}}).to_tensor().to_vector<float>());
  CHECK_THROWS_WITH_AS(Interpreter(m, g).run({x, false, std::int64_t{2}}),
                       doctest::Contains("input 'negate' was specialised on True when the graph was traced "
                                         "(concrete_args), got False; trace again with this value"),
                       std::invalid_argument);

  CHECK_THROWS_WITH_AS(symbolic_trace(m, {InputSpec(Shape{3})}, {{"negate", true}}),
                       doctest::Contains("input 'times' is int, not a Tensor: give it a value in concrete_args"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(symbolic_trace(m, {InputSpec(Shape{3})}, {{"flag", true}}),
                       doctest::Contains("concrete_args names 'flag', which is not an input of Switch.forward (its "
                                         "inputs are x, negate, times)"),
                       std::invalid_argument);
}

TEST_CASE("a graph refuses inputs whose dtype or known dims differ from the trace's") {
  Net net;
  Graph fixed = symbolic_trace(net, {InputSpec(Shape{2, 4})});
  CHECK_THROWS_WITH_AS(Interpreter(net, fixed).run({randn({3, 4})}),
                       doctest::Contains("input 'features' was traced as float32[2, 4], got float32[3, 4]; trace with "
                                         "this shape, or with unknown dims"),
                       std::invalid_argument);
  Graph any_batch = symbolic_trace(net, {InputSpec(Shape{Dim::unknown(), 4})});
  CHECK(Interpreter(net, any_batch).run({randn({3, 4})}).to_tensor().shape() == Shape{3, 2});
  CHECK_THROWS_WITH_AS(Interpreter(net, any_batch).run({randn({3, 5})}), doctest::Contains("got float32[3, 5]"),
                       std::invalid_argument);
}

namespace {

/// A leaf that keeps a tensor it made, and a parent that reads it (the "store the attention
/// map" pattern).
class Keeps : public TypedModule<Keeps> {
 public:
  Tensor forward(const Tensor& x) {
    cached = x.sigmoid();
    return x.tanh();
  }
  Tensor cached;
};

class ReadsCache : public TypedModule<ReadsCache> {
 public:
  ReadsCache() { keeps = register_module("keeps", std::make_shared<Keeps>()); }
  Tensor forward(const Tensor& x) {
    Tensor y = keeps->call({x}).to_tensor();
    return y + keeps->cached;
  }
  std::shared_ptr<Keeps> keeps;
};

/// Holds ReadsData as a child, and swallows errors of a second child to go on.
class Parent : public TypedModule<Parent> {
 public:
  Parent() {
    reads = register_module("reads", std::make_shared<ReadsData>());
    number = register_module("number", std::make_shared<ReturnsNumber>());
  }
  class ReturnsNumber : public TypedModule<ReturnsNumber> {
   public:
    std::int64_t forward(const Tensor&) { return 3; }
  };
  Tensor forward(const Tensor& x) {
    try {
      (void)number->call({x});
    } catch (const TraceError&) {
      // the refused leaf call must leave no node behind
    }
    return reads->call({x.relu()}).to_tensor();
  }
  std::shared_ptr<ReadsData> reads;
  std::shared_ptr<ReturnsNumber> number;
};

}  // namespace

TEST_CASE("a tensor made while a leaf ran for its output shapes cannot be used afterwards") {
  ReadsCache m;
  Tracer tracer;
  tracer.register_leaf<Keeps>();
  CHECK_THROWS_WITH_AS(tracer.trace(m, {InputSpec(Shape{4})}),
                       doctest::Contains("a symbolic tensor of another trace was used"), TraceError);
}

TEST_CASE("a leaf that reads tensor data is recorded with a registered metadata function") {
  Parent m;
  Tracer tracer;
  tracer.register_leaf<ReadsData>();
  CHECK_THROWS_WITH_AS(tracer.trace(m, {InputSpec(Shape{4})}),
                       doctest::Contains("the output shapes of the leaf 'reads' (ReadsData) cannot be found by running "
                                         "its forward symbolically"),
                       TraceError);
  tracer.register_leaf<ReadsData>([](const Module&, const ValueList& args) {
    OutputMeta meta;
    meta.outputs.push_back(args.at(0).to_tensor().meta());  // same shape as its input
    return meta;
  });
  tracer.register_leaf<Parent::ReturnsNumber>();
  Graph g = tracer.trace(m, {InputSpec(Shape{4})});
  // The refused leaf call (it returns a number) left no node behind.
  CHECK(to_string(g) == R"(graph():
    %x : float32[4] [num_users=1] = placeholder[target=x]
    %relu : float32[4] [num_users=1] = call_method[target=relu](args = (%x,), kwargs = {})
    %reads : float32[4] [num_users=1] = call_module[target=reads](args = (%relu,), kwargs = {})
    return reads
)");
  Tensor x = tensor({1.0F, -2.0F, 3.0F, 0.5F});
  CHECK(Interpreter(m, g).run({x}).to_tensor().to_vector<float>() == m.call({x}).to_tensor().to_vector<float>());
}

namespace {

/// Uses its weight through ops that see no input: fx records them on a get_attr node.
class ParameterOps : public TypedModule<ParameterOps> {
 public:
  ParameterOps() { weight = register_parameter("weight", randn({3, 2})); }
  Tensor forward(const Tensor& x) { return matmul(x, weight.transpose(0, 1) * 2.0); }
  Tensor weight;
};

}  // namespace

TEST_CASE("ops on parameters alone are recorded, not folded into constants") {
  ParameterOps model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{4, 2})});
  CHECK(to_string(g) == R"(graph():
    %x : float32[4, 2] [num_users=1] = placeholder[target=x]
    %weight : float32[3, 2] [num_users=1] = get_attr[target=weight]
    %transpose : float32[2, 3] [num_users=1] = call_method[target=transpose](args = (%weight, 0, 1), kwargs = {})
    %mul : float32[2, 3] [num_users=1] = call_function[target=mul](args = (%transpose, 2.0), kwargs = {})
    %matmul : float32[4, 3] [num_users=1] = call_function[target=matmul](args = (%x, %mul), kwargs = {})
    return matmul
)");
  CHECK(g.num_constants() == 0);
  // Outside a trace the same ops compute, and the graph follows a changed weight.
  const Tensor x = randn({4, 2});
  model.weight.fill_(0.5);
  const Tensor eager = model.call({x}).to_tensor();
  CHECK(eager.is_concrete());
  CHECK(testing::max_rel_error(Interpreter(model, g).run({x}).to_tensor(), eager) == 0.0);
}

namespace {

/// In-place ops on an intermediate, written as a user would.
class InPlace : public TypedModule<InPlace> {
 public:
  Tensor forward(const Tensor& x) {
    Tensor h = x * 2.0;
    h.add_(x);
    h.relu_();
    return h;
  }
};

}  // namespace

TEST_CASE("in-place ops are recorded as call_method nodes that keep their trailing underscore") {
  InPlace model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{3})});
  // As in fx, `h` keeps naming %mul: the in-place nodes mutate it, the graph returns it, and
  // running the graph in order gives the eager result (passes may make it functional).
  CHECK(to_string(g) == R"(graph():
    %x : float32[3] [num_users=2] = placeholder[target=x]
    %mul : float32[3] [num_users=3] = call_function[target=mul](args = (%x, 2.0), kwargs = {})
    %add_ : float32[3] [num_users=0] = call_method[target=add_](args = (%mul, %x), kwargs = {})
    %relu_ : float32[3] [num_users=0] = call_method[target=relu_](args = (%mul,), kwargs = {})
    return mul
)");
  const Tensor x = tensor({-3.f, 1.f, 2.f});
  CHECK(Interpreter(model, g).run({x}).to_tensor().to_vector<float>() == std::vector<float>{0, 3, 6});
  CHECK(model.call({x}).to_tensor().to_vector<float>() == std::vector<float>{0, 3, 6});
}

namespace {

/// Overrides fx's hooks: a leaf by path, a tag on every node, counts of proxies and get_attrs.
class HookTracer : public Tracer {
 public:
  bool is_leaf_module(const Module& module, std::string_view qualified_name) const override {
    return qualified_name == "block" || Tracer::is_leaf_module(module, qualified_name);
  }
  Node& create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                    std::source_location where) override {
    Node& node = Tracer::create_node(op, target, std::move(args), std::move(kwargs), where);
    node.set_meta("tracer", std::string("hooked"));
    ++nodes;
    return node;
  }
  Value create_proxy(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                     const OutputMeta& meta, std::source_location where) override {
    ++proxies;
    return Tracer::create_proxy(op, target, std::move(args), std::move(kwargs), meta, where);
  }
  Argument getattr(std::string_view qualified_name, const Tensor& tensor, std::source_location where) override {
    attributes.emplace_back(qualified_name);
    return Tracer::getattr(qualified_name, tensor, where);
  }
  int nodes = 0;
  int proxies = 0;
  std::vector<std::string> attributes;
};

}  // namespace

TEST_CASE("a Tracer subclass changes what is a leaf and sees every node, proxy and parameter read") {
  Net net;
  HookTracer tracer;
  Graph g = tracer.trace(net, {InputSpec(Shape{2, 4})});
  CHECK(to_string(g) == R"(graph():
    %features : float32[2, 4] [num_users=1] = placeholder[target=features]
    %block : float32[2, 4] [num_users=1] = call_module[target=block](args = (%features,), kwargs = {})
    %head : float32[2, 2] [num_users=1] = call_module[target=head](args = (%block,), kwargs = {})
    %relu : float32[2, 2] [num_users=1] = call_method[target=relu](args = (%head,), kwargs = {})
    return relu
)");
  CHECK(tracer.nodes == 4);          // the output node is made by the graph
  CHECK(tracer.proxies == 3);        // block, head, relu
  CHECK(tracer.attributes.empty());  // the block's scale is read inside the leaf
  for (const Node& node : g.nodes()) {
    if (node.op() != OpKind::output) CHECK(node.meta("tracer") != nullptr);
  }
  // Traced through, the block's parameter read goes through getattr.
  HookTracer plain;
  plain.register_leaf<Net>();  // the root is traced into even when it is a leaf type
  (void)plain.trace(*std::make_shared<Block>(), {InputSpec(Shape{2, 4})});
  CHECK(plain.attributes == std::vector<std::string>{"scale"});
}

namespace {

/// Records whether the trace built the index of the model's modules.
class IndexProbe : public Tracer {
 public:
  bool indexed = true;

 protected:
  Value trace_root(Module& root, const ValueList& args, std::source_location where) override {
    Value result = Tracer::trace_root(root, args, where);
    indexed = state().has_module_index();
    return result;
  }
};

/// Calls its children in an order unlike their registration, a grandchild directly, and a
/// module shared with another parent, for Note [Paths of called modules].
class Caller : public TypedModule<Caller> {
 public:
  Caller() {
    for (int i = 0; i < 8; ++i) layers.push_back(register_module(fmt::format("l{}", i), nn::Linear(4, 4)));
    inner = register_module("inner", nn::Sequential(nn::Linear(4, 4), nn::ReLU()));
    shared = std::make_shared<nn::ReLUImpl>();
    first = register_module("first", nn::Sequential());
    first->push_back(shared);  // first path: first.0
    second = register_module("second", nn::Sequential());
    second->push_back(shared);
  }
  Tensor forward(const Tensor& x) {
    Tensor y = x;
    for (int i : {7, 0, 3, 3, 6, 1, 2, 5, 4}) y = layers[static_cast<std::size_t>(i)](y);
    y = inner->ptr(0)->call({y}).to_tensor();  // a grandchild, called by the root
    y = inner(y);
    y = second(y);                         // the shared module, called by its second parent
    return shared->call({y}).to_tensor();  // and by the root
  }
  std::vector<nn::Linear> layers;
  nn::Sequential inner{nullptr}, first{nullptr}, second{nullptr};
  std::shared_ptr<nn::ReLUImpl> shared;
};

}  // namespace

TEST_CASE("a called module gets its first path in named_modules order, however and wherever it is called") {
  Caller model;
  CHECK(model.shared->num_registrations() == 2);
  CHECK(model.layers[0]->num_registrations() == 1);
  IndexProbe tracer;
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 4})});
  CHECK(tracer.indexed);  // inner.0 is called by the root, not by its parent: the index answers
  std::vector<std::string> targets;
  for (const Node& node : g.nodes()) {
    if (node.op() == OpKind::call_module) targets.push_back(std::string(node.target()));
  }
  CHECK(targets == std::vector<std::string>{"l7", "l0", "l3", "l3", "l6", "l1", "l2", "l5", "l4", "inner.0", "inner.0",
                                            "inner.1", "first.0", "first.0"});
  // Every path is the index's.
  const ModuleIndex index(model);
  for (const std::string& target : targets) CHECK(*index.path_of(model.get_submodule(target)) == target);
  CHECK(testing::max_rel_error(Interpreter(model, g).run({ones({2, 4})}).to_tensor(), model.call({ones({2, 4})}).to_tensor()) == 0.0);
}

TEST_CASE("registrations are counted as parents register, replace and drop a module") {
  auto shared = nn::ReLU().ptr();
  CHECK(shared->num_registrations() == 0);
  {
    nn::Sequential a;
    a->push_back(shared);
    CHECK(shared->num_registrations() == 1);
    a->register_module("again", shared);
    CHECK(shared->num_registrations() == 2);
    (void)a->replace_module("again", nn::ReLU());
    CHECK(shared->num_registrations() == 1);
  }
  CHECK(shared->num_registrations() == 0);  // its parent is gone
  // Replaced, a module is no longer in the model: calling it is refused.
  Caller model;
  auto old = model.layers[3].ptr();
  model.layers[3] = model.replace_module("l3", nn::Linear(4, 4));
  CHECK(old->num_registrations() == 0);
  CHECK(model.layers[3]->num_registrations() == 1);
  const Graph g = symbolic_trace(model, {InputSpec(Shape{2, 4})});
  CHECK(g.find_node("l3") != nullptr);
}

namespace {

/// Reads its own parameter and calls its children in order, one of them twice.
class InOrder : public TypedModule<InOrder> {
 public:
  InOrder() {
    body = register_module("body", zoo::deep_mlp(3));
    head = register_module("head", nn::Linear(64, 4));
    scale = register_parameter("scale", ones({64}));
  }
  Tensor forward(const Tensor& x) { return head(body->call({body->call({x * scale}).to_tensor()}).to_tensor()); }
  std::shared_ptr<Module> body;
  nn::Linear head{nullptr};
  Tensor scale;
};

/// Calls a module shared by two children through the second one first.
class SharedSecond : public TypedModule<SharedSecond> {
 public:
  SharedSecond() {
    shared = std::make_shared<nn::ReLUImpl>();
    first = register_module("first", nn::Sequential());
    first->push_back(shared);
    second = register_module("second", nn::Sequential());
    second->push_back(shared);
  }
  Tensor forward(const Tensor& x) { return second(x); }
  nn::Sequential first{nullptr}, second{nullptr};
  std::shared_ptr<nn::ReLUImpl> shared;
};

/// Calls a child it replaced, which is no longer in the model.
class CallsStale : public TypedModule<CallsStale> {
 public:
  CallsStale() {
    fc = register_module("fc", nn::Linear(4, 4));
    stale = fc.ptr();
    fc = replace_module("fc", nn::Linear(4, 4));
  }
  static constexpr int stale_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return fc(stale->call({x}).to_tensor()); }
  nn::Linear fc{nullptr};
  std::shared_ptr<Module> stale;
};

std::vector<std::string> call_targets(const Graph& g) {
  std::vector<std::string> targets;
  for (const Node& node : g.nodes()) {
    if (node.op() == OpKind::call_module) targets.push_back(std::string(node.target()));
  }
  return targets;
}

}  // namespace

TEST_CASE("Note [Paths of called modules]: children called in order get their paths without indexing the model") {
  InOrder model;
  IndexProbe tracer;
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 64})});
  CHECK_FALSE(tracer.indexed);
  const std::vector<std::string> targets = call_targets(g);
  CHECK(targets == std::vector<std::string>{"body.blocks.0.fc", "body.blocks.0.norm", "body.blocks.0.act",
                                            "body.blocks.1.fc", "body.blocks.1.norm", "body.blocks.1.act",
                                            "body.blocks.2.fc", "body.blocks.2.norm", "body.blocks.2.act",
                                            "body.blocks.0.fc", "body.blocks.0.norm", "body.blocks.0.act",
                                            "body.blocks.1.fc", "body.blocks.1.norm", "body.blocks.1.act",
                                            "body.blocks.2.fc", "body.blocks.2.norm", "body.blocks.2.act", "head"});
  const ModuleIndex index(model);
  for (const std::string& target : targets) CHECK(*index.path_of(model.get_submodule(target)) == target);
  REQUIRE(g.find_node("scale") != nullptr);
  CHECK(g.find_node("scale")->target() == "scale");  // its own parameter, without the index
  const Tensor x = randn({2, 64});
  CHECK(testing::max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) <= 1e-6);
}

TEST_CASE("a model whose modules call their own children, in any order, is traced without indexing it") {
  for (const char* name : {"resnet18", "mobilenet_v2", "vit_tiny"}) {
    CAPTURE(name);
    auto model = zoo::create(name);
    IndexProbe tracer;
    std::vector<InputSpec> specs;
    for (const zoo::ExampleInput& input : zoo::info(name).inputs) specs.emplace_back(Shape(input.shape), input.dtype);
    const Graph g = tracer.trace(*model, specs);
    CHECK_FALSE(tracer.indexed);  // a Bottleneck calls its relu three times, after conv3 too
    const std::vector<std::string> targets = call_targets(g);
    CHECK(targets.size() > 20);
    const ModuleIndex index(*model);
    for (const std::string& target : targets) CHECK(*index.path_of(model->get_submodule(target)) == target);
  }
}

TEST_CASE("a shared module called through its second parent gets its first path; a replaced one is refused") {
  SharedSecond shared;
  const Graph g = symbolic_trace(shared, {InputSpec(Shape{2, 4})});
  CHECK(call_targets(g) == std::vector<std::string>{"first.0"});

  CallsStale stale;
  CHECK_THROWS_WITH_AS(symbolic_trace(stale, {InputSpec(Shape{2, 4})}),
                       doctest::Contains("a Linear that is not a submodule of the traced model was called"), TraceError);
  CHECK_THROWS_WITH_AS(symbolic_trace(stale, {InputSpec(Shape{2, 4})}),
                       doctest::Contains(fmt::format(":{}: ", CallsStale::stale_line).c_str()), TraceError);
}

namespace {

/// Reads parameters held once by itself, a child's parameter, one shared by two children, and
/// a tensor held by a module outside the model.
class Reader : public TypedModule<Reader> {
 public:
  explicit Reader(Tensor outside) : outside(std::move(outside)) {
    own = register_parameter("own", ones({4}));
    shared = ones({4});
    a = register_module("a", nn::Linear(4, 4));
    b = register_module("b", std::make_shared<Holder>(shared));
    c = register_module("c", std::make_shared<Holder>(shared));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = x * own;  // first: read with no index built yet
    y = y + a->weight.sum();
    y = y + shared;
    y = y + b->t * c->t;
    return y + outside;
  }

  struct Holder : TypedModule<Holder> {
    explicit Holder(Tensor tensor) { t = register_buffer("t", std::move(tensor)); }
    Tensor forward(const Tensor& x) { return x; }
    Tensor t;
  };
  Tensor own, shared, outside;
  nn::Linear a{nullptr};
  std::shared_ptr<Holder> b, c;
};

}  // namespace

TEST_CASE("a parameter or buffer read in forward is a get_attr of its first name; anything else is a constant") {
  auto other = nn::Linear(4, 4);
  Reader model(other->bias);
  CHECK(model.own.impl_ptr()->registrations.get() == 1);
  CHECK(model.shared.impl_ptr()->registrations.get() == 2);
  CHECK(other->bias.impl_ptr()->registrations.get() == 1);
  const Graph g = symbolic_trace(model, {InputSpec(Shape{2, 4})});
  std::vector<std::string> attributes;
  for (const Node& node : g.nodes()) {
    if (node.op() == OpKind::get_attr) attributes.push_back(std::string(node.target()));
  }
  // `shared` is read through the model first, where no module holds it as `shared`: b.t is its
  // first name; the tensor of another model is a constant.
  std::sort(attributes.begin(), attributes.end());  // C++ leaves the order of operands open
  CHECK(attributes == std::vector<std::string>{"_tensor_constant0", "a.weight", "b.t", "b.t", "b.t", "own"});
  // set_ swaps data, not registrations.
  model.own.set_(zeros({4}));
  CHECK(model.own.impl_ptr()->registrations.get() == 1);
}

namespace {

class Peeks : public TypedModule<Peeks> {
 public:
  Tensor forward(const Tensor& x) { return x; }
};

class PeekPair : public TypedModule<PeekPair> {
 public:
  PeekPair() {
    a = register_module("a", std::make_shared<Peeks>());
    b = register_module("b", nn::ReLU());
  }
  Tensor forward(const Tensor& x) { return a->call({x}).to_tensor(); }
  std::shared_ptr<Peeks> a;
  nn::ReLU b{nullptr};
};

}  // namespace

TEST_CASE("a leaf's metadata function that calls another module does not change the leaf's path") {
  PeekPair model;
  Tracer tracer;
  tracer.register_leaf<Peeks>([&](const Module&, const ValueList& args) {
    (void)model.b->call(args);  // a sibling, called through the tracer
    return OutputMeta::single(DType::float32, args.at(0).to_tensor().shape());
  });
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 4})});
  CHECK(call_targets(g) == std::vector<std::string>{"b", "a"});
}

namespace {
/// A user module and its parent, which holds it three ways and calls it from known lines.
class Scale2 : public TypedModule<Scale2> {
 public:
  Tensor forward(const Tensor& x) { return x * 2.0; }
};
class Owner : public TypedModule<Owner> {
 public:
  Owner() {
    shared = register_module("shared", std::make_shared<Scale2>());
    held = register_module("held", ModuleHolder<Scale2>(std::make_shared<Scale2>()));
  }
  static constexpr int shared_line = __LINE__ + 3;
  static constexpr int held_line = __LINE__ + 3;
  Tensor forward(const Tensor& x) {
    const Tensor a = (*shared)(x);  // a std::shared_ptr child
    Tensor b = held(a);             // a ModuleHolder child: block(x)
    return b;
  }
  std::shared_ptr<Scale2> shared;
  ModuleHolder<Scale2> held{nullptr};
};
}  // namespace

TEST_CASE("a child held as a shared_ptr or a ModuleHolder records its caller's line and returns a Tensor") {
  Owner owner;
  Tracer tracer;
  tracer.register_leaf<Scale2>();
  const Graph g = tracer.trace(owner, {InputSpec(Shape{2})});
  const Node* shared = g.find_node("shared");
  const Node* held = g.find_node("held");
  REQUIRE(shared != nullptr);
  REQUIRE(held != nullptr);
  CHECK(shared->where().line() == static_cast<unsigned>(Owner::shared_line));
  CHECK(held->where().line() == static_cast<unsigned>(Owner::held_line));
  CHECK(std::string_view(shared->where().file_name()).ends_with("tracer_test.cpp"));
  static_assert(std::is_same_v<decltype((*owner.shared)(std::declval<Tensor>())), Tensor>);
  CHECK(testing::max_abs_diff(owner(tensor({1.0f, 2.0f})), tensor({4.0f, 8.0f})) == 0);
}

TEST_CASE("a node's node arguments are reachable from the node") {
  Owner owner;
  const Graph g = symbolic_trace(owner, {InputSpec(Shape{2})});
  const Node* mul = g.find_node("mul_1");
  REQUIRE(mul != nullptr);
  REQUIRE(mul->arg_node(0) != nullptr);
  CHECK(mul->arg_node(0)->name() == "mul");
  CHECK(mul->arg_node(1) == nullptr);  // 2.0
  CHECK(mul->arg_node(2) == nullptr);  // there is none
  CHECK(mul->kwarg_node("alpha") == nullptr);
}

/// Writes its input into a tensor it makes from known sizes (Note [In-place writes into
/// untraced tensors]), and into one made from its input.
class WritesIntoMadeTensor : public TypedModule<WritesIntoMadeTensor> {
 public:
  static constexpr int bad_line = __LINE__ + 4;
  explicit WritesIntoMadeTensor(bool from_input) : from_input_(from_input) {}
  Tensor forward(const Tensor& x) {
    Tensor z = from_input_ ? new_empty(x, {4}) : zeros({4});
    z.slice(0, 1, 3).copy_(x.slice(0, 0, 2));
    return z * 2.0;
  }

 private:
  bool from_input_;
};

TEST_CASE("an in-place write of a traced value into a tensor made from known sizes is refused, not a constant") {
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f});
  SUBCASE("made from known sizes: a TraceError at the write, and the graph is not made") {
    WritesIntoMadeTensor m(false);
    CHECK_THROWS_WITH_AS(symbolic_trace(m, {InputSpec(Shape{4})}),
                         doctest::Contains(fmt::format(":{}: copy_() writes a traced value into a tensor the trace "
                                                       "does not follow",
                                                       WritesIntoMadeTensor::bad_line)
                                               .c_str()),
                         TraceError);
  }
  SUBCASE("in a leaf, whose forward runs only for its output's metadata: no error, one call_module node") {
    auto model = nn::Sequential(std::make_shared<WritesIntoMadeTensor>(false));
    Tracer tracer;
    tracer.register_leaf<WritesIntoMadeTensor>();
    const Graph g = tracer.trace(*model, {InputSpec(Shape{4})});
    CHECK(to_string(g) == R"(graph():
    %x : float32[4] [num_users=1] = placeholder[target=x]
    %_0 : float32[4] [num_users=1] = call_module[target=0](args = (%x,), kwargs = {})
    return _0
)");
  }
  SUBCASE("made from the input: traced, and the interpreter computes what eager does") {
    WritesIntoMadeTensor m(true);
    const Graph g = symbolic_trace(m, {InputSpec(Shape{4})});
    CHECK_NOTHROW(g.lint());
    const Tensor eager = m(x);
    testing::check_tensor(eager, DType::float32, {4}, {0, 2, 4, 0});
    testing::check_tensor(Interpreter(m, g).run({x}).to_tensor(), DType::float32, {4}, {0, 2, 4, 0});
    testing::check_tensor(Interpreter(m, g).run({tensor({5.f, 6.f, 7.f, 8.f})}).to_tensor(), DType::float32, {4}, {0, 10, 12, 0});
  }
}

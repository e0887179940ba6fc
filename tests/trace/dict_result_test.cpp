// Dicts through forward: a module that returns a dict (as torchvision's segmentation and
// detection models do) is traced to a `dict` node that the output returns, the interpreter
// gives the dict back, and the graph's JSON keeps it.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// {"out": relu(fc(x)), "aux": x + 1}
class TwoHeads : public TypedModule<TwoHeads> {
 public:
  TwoHeads() { fc = register_module("fc", nn::Linear(4, 3)); }
  Value forward(const Tensor& x) {
    ValueDict d;
    d.insert_or_assign("out", relu(fc(x)));
    d.insert_or_assign("aux", x + 1.0);
    return d;
  }
  nn::Linear fc{nullptr};
};

/// {0: x}: a key no graph can hold.
class IntKeys : public TypedModule<IntKeys> {
 public:
  Value forward(const Tensor& x) { return ValueDict{{Value(0)}, {Value(x * 2.0)}}; }
};

/// d["a"] + d["b"]: a dict of tensors as input.
class DictIn : public TypedModule<DictIn> {
 public:
  Tensor forward(const Value& d) { return d.to_dict().find("a")->to_tensor() + d.to_dict().find("b")->to_tensor(); }
};

}  // namespace

TEST_CASE("a trace by execution reads a dict input by key, and the graph runs on other dicts") {
  DictIn model;
  ValueDict in;
  in.insert_or_assign("a", randn({2, 3}));
  in.insert_or_assign("b", randn({2, 3}));
  ExecutionTrace t = trace_by_execution(model, {Value(in)});
  CHECK_NOTHROW(t.graph.lint());
  const std::string text = to_string(t.graph);
  CAPTURE(text);
  CHECK(text.find("call_function[target=getitem](args = (%x, 'a'), kwargs = {})") != std::string::npos);
  CHECK(text.find("call_function[target=getitem](args = (%x, 'b'), kwargs = {})") != std::string::npos);
  ValueDict other;
  other.insert_or_assign("a", randn({2, 3}));
  other.insert_or_assign("b", randn({2, 3}));
  const Tensor expected = model.call({Value(other)}).to_tensor();
  CHECK(max_rel_error(Interpreter(model, t.graph).run({Value(other)}).to_tensor(), expected) == 0);
}

TEST_CASE("a ValueDict keeps insertion order, replaces a key in place, and tells 1 from '1'") {
  ValueDict d;
  d.insert_or_assign("b", 1);
  d.insert_or_assign("a", 2);
  d.insert_or_assign("b", 3);
  d.insert_or_assign(1, 4);
  REQUIRE(d.size() == 3);
  CHECK(to_string(Value(d)) == "{'b': 3, 'a': 2, 1: 4}");
  CHECK(d.find("a")->to_int() == 2);
  CHECK(d.find(1)->to_int() == 4);
  CHECK(d.find("1") == nullptr);
  CHECK(Value(d).type_name() == "dict");
  CHECK_THROWS_WITH_AS((void)Value(1).to_dict(), doctest::Contains("dict"), std::invalid_argument);
}

TEST_CASE("a forward that returns a dict is traced to a dict node, run back into a dict, and kept by JSON") {
  TwoHeads model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{2, 4})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[2, 4] [num_users=2] = placeholder[target=x]
    %fc : float32[2, 3] [num_users=1] = call_module[target=fc](args = (%x,), kwargs = {})
    %relu : float32[2, 3] [num_users=1] = call_function[target=relu](args = (%fc,), kwargs = {})
    %add : float32[2, 4] [num_users=1] = call_function[target=add](args = (%x, 1.0), kwargs = {})
    %dict : [num_users=1] = call_function[target=dict](args = (), kwargs = {out: %relu, aux: %add})
    return dict
)");

  const Tensor x = randn({2, 4});
  const Value eager = model.call({x});
  REQUIRE(eager.is_dict());
  for (const Graph& graph : {g, graph_from_json(graph_to_json(g))}) {
    const Value traced = Interpreter(model, graph).run({x});
    REQUIRE(traced.is_dict());
    REQUIRE(traced.to_dict().size() == 2);
    CHECK(traced.to_dict().keys[0].to_string_ref() == "out");
    CHECK(traced.to_dict().keys[1].to_string_ref() == "aux");
    CHECK(max_rel_error(traced.to_dict().find("out")->to_tensor(), eager.to_dict().find("out")->to_tensor()) == 0);
    CHECK(max_rel_error(traced.to_dict().find("aux")->to_tensor(), eager.to_dict().find("aux")->to_tensor()) == 0);
  }
}

TEST_CASE("a trace by execution of a forward that returns a dict ends in the same dict node") {
  TwoHeads model;
  const Tensor x = randn({2, 4});
  ExecutionTrace t = trace_by_execution(model, {x});
  const Node* out = t.graph.output_node();
  REQUIRE(out != nullptr);
  const NodeId* id = out->args().at(0).get_if<NodeId>();
  REQUIRE(id != nullptr);
  const Node& dict = t.graph.node(*id);
  CHECK(dict.target() == "dict");
  REQUIRE(dict.kwargs().size() == 2);
  CHECK(dict.kwargs()[0].first == "out");
  CHECK(dict.kwargs()[1].first == "aux");
  const Value again = Interpreter(model, t.graph).run({x});
  REQUIRE(again.is_dict());
  CHECK(max_rel_error(again.to_dict().find("out")->to_tensor(), t.outputs.to_dict().find("out")->to_tensor()) == 0);
}

TEST_CASE("a dict whose keys are not strings cannot be recorded, and the trace says so at the forward's line") {
  IntKeys model;
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2})}),
                       doctest::Contains("a dict whose keys are int values cannot be recorded in a graph"), TraceError);
}

namespace {

/// The sum of a list of images, each scaled by its position: a List[Tensor] input.
class ListIn : public TypedModule<ListIn> {
 public:
  ListIn() { set_input_names({"images"}); }
  Tensor forward(const std::vector<Tensor>& images) { return images[0] + images[1] * 2.0; }
};

}  // namespace

TEST_CASE("InputSpec::list traces a List[Tensor] input as a placeholder read by getitem nodes") {
  ListIn model;
  Graph g = symbolic_trace(model, {InputSpec::list({Shape{3, 4}, Shape{3, 4}})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %images : [num_users=2] = placeholder[target=images]
    %getitem : float32[3, 4] [num_users=1] = call_function[target=getitem](args = (%images, 0), kwargs = {})
    %getitem_1 : float32[3, 4] [num_users=1] = call_function[target=getitem](args = (%images, 1), kwargs = {})
    %mul : float32[3, 4] [num_users=1] = call_function[target=mul](args = (%getitem_1, 2.0), kwargs = {})
    %add : float32[3, 4] [num_users=1] = call_function[target=add](args = (%getitem, %mul), kwargs = {})
    return add
)");
  const ValueList images{Value(randn({3, 4})), Value(randn({3, 4}))};
  CHECK(max_rel_error(Interpreter(model, g).run({Value(images)}).to_tensor(), model.call({Value(images)}).to_tensor()) == 0);
  CHECK(to_string(InputSpec::list({Shape{3, 4}, InputSpec(Shape{2}, DType::int64)})) == "[float32[3, 4], int64[2]]");
  CHECK_THROWS_WITH_AS((void)InputSpec::list({InputSpec::symbolic_int()}),
                       doctest::Contains("InputSpec::list: element 0 is a symbolic int, which a list input cannot hold"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{3, 4})}), doctest::Contains("not a Tensor"),
                       std::invalid_argument);
  GraphCollection c = recursive_trace(model, {InputSpec::list({Shape{3, 4}, Shape{3, 4}})});
  CHECK(c.failures().empty());
  REQUIRE(c.size() == 1);
}

namespace {

/// images["tensors"] scaled by the first image's height: an object of a TorchScript class
/// (torchvision's ImageList), a dict of its attributes, whose sizes are plain ints.
class ObjectIn : public TypedModule<ObjectIn> {
 public:
  ObjectIn() { set_input_names({"images"}); }
  Tensor forward(const Value& images) {
    const ValueDict& d = images.to_dict();
    const std::int64_t height = d.find("image_sizes")->to_list()[0].to_list()[0].to_int();
    return d.find("tensors")->to_tensor() * static_cast<double>(height);
  }
};

Value image_list(const Tensor& tensors, std::int64_t height) {
  ValueDict d;
  d.insert_or_assign("tensors", tensors);
  d.insert_or_assign("image_sizes", ValueList{Value(ValueList{Value(height), Value(4)})});
  return d;
}

}  // namespace

TEST_CASE("InputSpec::dict traces a dict or an object input: a getitem per traced value, its constants guards") {
  ObjectIn model;
  const Tensor x = randn({2, 3, 4});
  const std::optional<InputSpec> spec = InputSpec::of(image_list(x, 3));
  REQUIRE(spec.has_value());
  CHECK(to_string(*spec) == "{'tensors': float32[2, 3, 4], 'image_sizes': [[3, 4]]}");
  Graph g = symbolic_trace(model, {*spec});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %images : [num_users=1] = placeholder[target=images]
    %getitem : float32[2, 3, 4] [num_users=1] = call_function[target=getitem](args = (%images, 'tensors'), kwargs = {})
    %mul : float32[2, 3, 4] [num_users=1] = call_function[target=mul](args = (%getitem, 3.0), kwargs = {})
    return mul
)");
  REQUIRE(g.guards().size() == 1);
  CHECK(g.guards()[0].input == "images.image_sizes");
  CHECK(to_string(g.guards()[0].value) == "[[3, 4]]");

  SUBCASE("the interpreter runs it on another object of the same sizes") {
    const Tensor y = randn({2, 3, 4});
    CHECK(max_rel_error(Interpreter(model, g).run({image_list(y, 3)}).to_tensor(), model.call({image_list(y, 3)}).to_tensor()) == 0);
  }
  SUBCASE("the interpreter refuses an object whose constant parts differ, naming the part") {
    CHECK_THROWS_WITH_AS(Interpreter(model, g).run({image_list(x, 5)}),
                         doctest::Contains("input 'images' was traced with images.image_sizes = [[3, 4]], got [[5, 4]]"),
                         std::invalid_argument);
    ValueDict without;
    without.insert_or_assign("tensors", x);
    CHECK_THROWS_WITH_AS(Interpreter(model, g).run({Value(without)}),
                         doctest::Contains("input 'images' was traced with a dict of keys tensors, image_sizes at images, "
                                           "got {'tensors': "),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(Interpreter(model, g).run({image_list(randn({2, 3, 5}), 3)}),
                         doctest::Contains("input 'images' was traced with a float32 tensor of shape [2, 3, 4] at "
                                           "images.tensors, got tensor("),
                         std::invalid_argument);
  }
  SUBCASE("a trace by execution reads the object the same way: a getitem for its tensor, a guard for its sizes") {
    ExecutionTrace t = trace_by_execution(model, {image_list(x, 3)});
    REQUIRE(t.graph.guards().size() == 1);
    CHECK(t.graph.guards()[0].input == "images.image_sizes");
    const Tensor y = randn({2, 3, 4});
    CHECK(max_rel_error(Interpreter(model, t.graph).run({image_list(y, 3)}).to_tensor(), model.call({image_list(y, 3)}).to_tensor()) == 0);
    CHECK_THROWS_WITH_AS(Interpreter(model, t.graph).run({image_list(y, 4)}),
                         doctest::Contains("images.image_sizes = [[3, 4]], got [[4, 4]]"), std::invalid_argument);
  }
  SUBCASE("a JSON round trip keeps the guard") {
    const Graph back = graph_from_json(graph_to_json(g));
    REQUIRE(back.guards().size() == 1);
    CHECK(back.guards()[0].input == "images.image_sizes");
    CHECK(back.guards()[0].value == g.guards()[0].value);
  }
  SUBCASE("specs that cannot be inputs are refused, saying why") {
    CHECK_FALSE(InputSpec::of(Value(3)).has_value());
    CHECK_FALSE(InputSpec::of(Value(ValueList{Value(1), Value(2)})).has_value());
    CHECK_FALSE(InputSpec::of(Value(ValueList{Value(Tensor())})).has_value());
    CHECK(to_string(*InputSpec::of(Value(ValueList{Value(x), Value("a")}))) == "[float32[2, 3, 4], 'a']");
    CHECK_THROWS_WITH_AS((void)InputSpec::dict({{"a", InputSpec(Shape{1})}, {"a", InputSpec(Shape{2})}}),
                         doctest::Contains("InputSpec::dict: key 'a' is given twice"), std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)InputSpec::constant(Value(ValueDict{{Value("k")}, {Value(1)}})),
                         doctest::Contains("InputSpec::constant: {'k': 1} holds a dict; describe a dict with InputSpec::dict"),
                         std::invalid_argument);
    ListIn lists;
    CHECK_THROWS_WITH_AS(symbolic_trace(lists, {InputSpec::list({Shape{3, 4}, InputSpec::constant(Value(2))})}),
                         doctest::Contains("ListIn.forward's input 'images' is List[Tensor], but element 1 of its spec is 2"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)InputSpec::constant(Value(ValueList{Value(x)})),
                         doctest::Contains("InputSpec::constant: [tensor(dtype=float32, shape=[2, 3, 4])] holds a tensor"),
                         std::invalid_argument);
    ListIn takes_list;
    CHECK_THROWS_WITH_AS(symbolic_trace(takes_list, {*spec}),
                         doctest::Contains("ListIn.forward's input 'images' is List[Tensor], not a dict or an object"),
                         std::invalid_argument);
  }
}

namespace {

/// d["x.y"] * d["cfg"]["k"]: a key that is no identifier, and a dict of ints beside the tensor.
class OddKeys : public TypedModule<OddKeys> {
 public:
  OddKeys() { set_input_names({"d"}); }
  Tensor forward(const Value& d) {
    const ValueDict& dict = d.to_dict();
    return dict.find("x.y")->to_tensor() * static_cast<double>(dict.find("cfg")->to_dict().find("k")->to_int());
  }
};

Value odd_keys(const Tensor& x, std::int64_t k, std::int64_t also) {
  ValueDict cfg;
  cfg.insert_or_assign("k", k);
  ValueDict d;
  d.insert_or_assign("cfg", cfg);
  d.insert_or_assign("x.y", x);
  d.insert_or_assign("cfg.k", also);
  return d;
}

}  // namespace

TEST_CASE("a dict input's dicts of constants are read part by part, and keys that are no identifiers are quoted in paths") {
  OddKeys model;
  const Tensor x = randn({2, 2});
  const std::optional<InputSpec> spec = InputSpec::of(odd_keys(x, 3, 7));
  REQUIRE(spec.has_value());
  CHECK(to_string(*spec) == "{'cfg': {'k': 3}, 'x.y': float32[2, 2], 'cfg.k': 7}");
  for (const bool by_execution : {false, true}) {
    CAPTURE(by_execution);
    const Graph g = by_execution ? trace_by_execution(model, {odd_keys(x, 3, 7)}).graph : symbolic_trace(model, {*spec});
    CHECK_NOTHROW(g.lint());
    std::vector<std::string> guards;
    for (const Graph::Guard& guard : g.guards()) guards.push_back(fmt::format("{} = {}", guard.input, guard.value));
    CHECK(guards == std::vector<std::string>{"d.cfg.k = 3", "d['cfg.k'] = 7"});
    const Tensor y = randn({2, 2});
    CHECK(max_rel_error(Interpreter(model, g).run({odd_keys(y, 3, 7)}).to_tensor(), model.call({odd_keys(y, 3, 7)}).to_tensor()) == 0);
    CHECK_THROWS_WITH_AS(Interpreter(model, g).run({odd_keys(y, 3, 8)}), doctest::Contains("d['cfg.k'] = 7, got 8"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(Interpreter(model, g).run({odd_keys(y, 4, 7)}), doctest::Contains("d.cfg.k = 3, got 4"),
                         std::invalid_argument);
  }
}

TEST_CASE("the interpreter refuses a list input of another length than the one traced") {
  ListIn model;
  const Graph g = symbolic_trace(model, {InputSpec::list({Shape{3, 4}, Shape{3, 4}})});
  const ValueList three{Value(randn({3, 4})), Value(randn({3, 4})), Value(randn({3, 4}))};
  CHECK_THROWS_WITH_AS(Interpreter(model, g).run({Value(three)}),
                       doctest::Contains("input 'images' was traced with a list of 2 at images, got ["),
                       std::invalid_argument);
}

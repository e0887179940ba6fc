// The graph JSON document: exact round trips (every argument kind, metadata, guards, constants,
// subgraphs; every zoo graph, a robust root graph, a graph traced by execution, a graph with
// cond), and a suite of malformed documents, each with its pinned error.
#include "support/cond_modules.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <fmt/format.h>

#include <limits>

using namespace symtrace;
using testing::Gated;

namespace {

/// Exports, imports, and checks the import prints, exports and lints as the original.
Graph round_trip(const Graph& g) {
  const std::string doc = graph_to_json(g);
  Graph back = graph_from_json(doc);
  CHECK(to_string(back) == to_string(g));
  CHECK(graph_to_json(back) == doc);
  CHECK(back.guards() == g.guards());
  CHECK(back.num_constants() == g.num_constants());
  CHECK(back.subgraphs().size() == g.subgraphs().size());
  CHECK_NOTHROW(back.lint());
  return back;
}

/// The error graph_from_json gives for `doc`.
std::string error_of(const std::string& doc) {
  try {
    (void)graph_from_json(doc);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

/// A one-node document around `node` (a JSON object), with an output returning it.
std::string document_with(const std::string& nodes, const std::string& extra = "") {
  return R"({"format": "symtrace.graph", "version": 1, "nodes": [)" + nodes +
         R"(], "guards": [], "constants": [], "subgraphs": [])" + extra + "}";
}

const std::string x_node = R"({"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}})";
const std::string out_node = R"({"name": "output", "op": "output", "target": "output", "args": [{"node": "x"}], "kwargs": {}})";

}  // namespace

TEST_CASE("every kind of argument, metadata, guards, constants and subgraphs round trip exactly") {
  Graph g;
  Node& x = g.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{Dim(), Dim(3)}});
  Node& flag = g.placeholder("flag");
  g.add_guard("flag", true);
  const double inf = std::numeric_limits<double>::infinity();
  // clang-format off
  Node& c = g.call_function("op", {x, Argument(), true, std::int64_t{-7}, 2.0, -0.0, std::nan(""), inf, -inf, "text",
                                   DType::int64, Argument::list({1, Argument::list({x, 2.5}), DType::bool_})},
                            // clang-format on
                            {{"z", 1}, {"a", Argument()}});
  c.set_tensor_meta(TensorMeta{DType::bool_, Shape::unknown_rank()});
  c.set_scope("layer1.0");
  c.set_meta(meta_keys::failure, "why");
  Node& size = g.call_function("size", {x, 0});
  size.set_meta(meta_keys::type, "int");
  Node& marked = g.call_method("exp", {x});
  marked.set_impure();
  Node& w = g.get_attr(g.add_constant(tensor({1.5f, NAN, -INFINITY, 0.f}, {2, 2})));
  Node& ids = g.get_attr(g.add_constant(tensor(std::vector<std::int64_t>{3, -4}, {2})));
  Node& mask = g.get_attr(g.add_constant(tensor(std::vector<bool>{true, false, true}, {3})));
  Node& scalar = g.get_attr(g.add_constant(scalar_tensor(2.5)));
  Graph branch;
  branch.output(branch.placeholder("in"));
  Node& sub = g.get_attr(g.add_subgraph("true_graph", std::move(branch)));
  g.output(Argument::list({c, size, marked, w, ids, mask, scalar, sub, flag}));
  const Graph back = round_trip(g);
  const Node* bc = back.find_node("op");
  REQUIRE(bc != nullptr);
  CHECK(bc->kwargs().front().first == "z");  // keyword order kept
  CHECK(std::signbit(*bc->args()[5].get_if<double>()));
  CHECK(std::isnan(*bc->args()[6].get_if<double>()));
  CHECK(bc->scope() == "layer1.0");
  CHECK(bc->meta("source") != nullptr);  // the original's file:line, as text
  CHECK(back.find_node("exp")->is_impure());
  CHECK(back.find_constant("_tensor_constant1")->to_vector<std::int64_t>() == std::vector<std::int64_t>{3, -4});
  CHECK(back.find_constant("_tensor_constant3")->shape() == Shape::unknown(0));
  CHECK(back.find_subgraph("true_graph_0") != nullptr);
}

TEST_CASE("every zoo graph, a robust root graph, a graph traced by execution and one with cond round trip") {
  for (const std::string name : {"resnet18", "resnet50", "mobilenet_v2", "unet_small", "vit_tiny", "deep_mlp_100", "rnn"}) {
    CAPTURE(name);
    const auto model = zoo::create(name);
    std::vector<InputSpec> specs;
    for (const zoo::ExampleInput& input : zoo::info(name).inputs) specs.emplace_back(Shape(input.shape), input.dtype);
    (void)round_trip(symbolic_trace(*model, specs));
  }
  const auto mixed = zoo::create("mixed_failures");
  const GraphCollection collection = recursive_trace(*mixed, {InputSpec(Shape{1, 3, 32, 32})});
  for (const auto& entry : collection) (void)round_trip(entry.graph);

  manual_seed(0);
  const auto mlp = zoo::create("deep_mlp_100");
  const Tensor x = randn({2, 64});
  const ExecutionTrace t = trace_by_execution(*mlp, {x});
  const Graph back = round_trip(t.graph);
  testing::check_graph_runs_equal_to_eager(*mlp, back, x, testing::run(*mlp, x));

  auto gated = std::make_shared<Gated>();
  const Graph with_cond = symbolic_trace(*gated, {InputSpec(Shape{2, 3})});
  const Graph cond_back = round_trip(with_cond);
  for (const Tensor& input : {ones({2, 3}), ones({2, 3}).neg()}) {
    testing::check_tensor(Interpreter(*gated, cond_back).run({input}).to_tensor(), DType::float32, {2, 3},
                          gated->call({input}).to_tensor().to_vector<double>());
  }
}

TEST_CASE("malformed documents are refused with an error naming the place and the fix") {
  struct Case {
    std::string doc;
    std::string error;  // the start of the message
  };
  const std::string resnet = graph_to_json(symbolic_trace(*zoo::create("resnet18"), {InputSpec(Shape{1, 3, 8, 8})}));
  std::string deep = "1";
  for (int i = 0; i < 100; ++i) deep = "[" + deep + "]";
  const auto shaped = [](const std::string& shape, const std::string& extra) {
    return document_with(R"({"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}, "dtype": "float32", "shape": )" +
                             shape + "}, " + out_node,
                         extra);
  };
  const std::string nested = std::string(300, '(') + "N" + std::string(300, ')');
  std::string product = "N";  // (N + N + ... + N)^k in a string: a runaway polynomial
  for (int i = 0; i < 13; ++i) product += fmt::format(" * (N + H{} + W{})", i, i);
  std::string product_dims = R"(, "dims": {"N": [1, null])";
  for (int i = 0; i < 13; ++i) product_dims += fmt::format(R"(, "H{}": [1, null], "W{}": [1, null])", i, i);
  product_dims += "}";
  const std::vector<Case> cases{
      {shaped(R"(["N", 3])", ""),
       "graph_from_json: document.nodes[0] (%x).shape[0]: 'N' names the dim 'N', which the document's \"dims\" does not declare"},
      {shaped(R"(["N", 3])", R"(, "dims": {"N": [5, 2]})"),
       "graph_from_json: document.dims.N: dim 'N' has the empty range 5..2: give lo <= hi"},
      {shaped(R"(["N", 3])", R"(, "dims": {"N": "big"})"), "graph_from_json: document.dims.N: is \"big\", not [lo, hi]"},
      {shaped(R"(["N", 3])", R"(, "dims": {"2N": [1, 2]})"), "graph_from_json: document.dims.2N: '2N' cannot name a dim"},
      {shaped(R"(["-N", 3])", R"(, "dims": {"N": [1, null]})"),
       "graph_from_json: document.nodes[0] (%x).shape[0]: is \"-N\", a size that is negative for every value of its dims"},
      {shaped(R"(["N +", 3])", R"(, "dims": {"N": [1, null]})"),
       "graph_from_json: document.nodes[0] (%x).shape[0]: bad size expression 'N +': at position 4"},
      {shaped("[\"" + nested + "\"]", R"(, "dims": {"N": [1, null]})"),
       "graph_from_json: document.nodes[0] (%x).shape[0]: bad size expression"},
      {shaped("[\"" + product + "\"]", product_dims),
       "graph_from_json: document.nodes[0] (%x).shape[0]: a size expression would have more than 4096 terms"},
      {shaped(R"(["N", 3])", R"(, "dims": {"N": [1, null]}, "size_guards": [{"fact": "N"}])"),
       "graph_from_json: document.size_guards[0].fact: bad size fact 'N'"},
      {shaped(R"(["N", 3])", R"(, "dims": {"N": [1, null]}, "size_guards": [{"fact": "M == 1"}])"),
       "graph_from_json: document.size_guards[0].fact: names the dim 'M', which the document's \"dims\" does not declare"},
      {shaped(R"(["N", 3])", R"(, "dims": {"N": [1, null]}, "size_guards": [{"fact": "N == 2", "source": "here"}])"),
       "graph_from_json: document.size_guards[0].source: is \"here\", not \"file:line\" or null"},
      {"", "graph_from_json: the document is not JSON: [json.exception.parse_error.101]"},
      {resnet.substr(0, resnet.size() / 2), "graph_from_json: the document is not JSON: "},
      // Found by the fuzz target: a number too large to read is nlohmann's out_of_range, not a parse error.
      {R"({"format": "symtrace.graph", "version": 1, "nodes": [2222222222222222222E222222222222]})",
       "graph_from_json: the document is not JSON: [json.exception.out_of_range.406] number overflow parsing"},
      {R"({"format": "symtrace.graph", "version": 18446744073709551617})",
       "graph_from_json: document.version: is number, not an integer"},
      {R"({"format": "symtrace.graph", "version": 18446744073709551615})",
       "graph_from_json: document.version: is 18446744073709551615; this build reads version 1"},
      {"[1, 2]", "graph_from_json: document: the document is array, not an object"},
      {R"({"format": "onnx", "version": 1})",
       "graph_from_json: document.format: is 'onnx'; a graph document has \"format\": \"symtrace.graph\""},
      {R"({"format": "symtrace.graph", "version": 2})",
       "graph_from_json: document.version: is 2; this build reads version 1"},
      {R"({"format": "symtrace.graph", "version": "1"})",
       "graph_from_json: document.version: is string, not an integer"},
      {R"({"format": "symtrace.graph", "version": 1, "constants": [], "subgraphs": []})",
       "graph_from_json: document: has no \"nodes\""},
      {document_with(R"({"name": "y", "op": "call_function", "target": "relu", "args": [{"node": "x"}], "kwargs": {}}, )" +
                     x_node),
       "graph_from_json: document.nodes[0] (%y).args[0]: refers to 'x', which no earlier node is called"},
      {document_with(x_node + ", " + x_node),
       "graph_from_json: document.nodes[1] (%x): the name 'x' is used by an earlier node; names are unique"},
      {document_with(R"({"name": "x", "op": "call_everything", "target": "x", "args": [], "kwargs": {}})"),
       "graph_from_json: document.nodes[0] (%x).op: 'call_everything' is not an opcode"},
      {document_with(R"({"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}, "dtype": "float16"})"),
       "graph_from_json: document.nodes[0] (%x).dtype: 'float16' is not a dtype; use float32, int64 or bool"},
      {document_with(R"({"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}, "dtype": "float32", "shape": [2, -1]})"),
       "graph_from_json: document.nodes[0] (%x).shape[1]: is -1; a size is an integer >= 0, an expression over named dims as a string, or null when unknown"},
      {document_with(R"({"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": []})"),
       "graph_from_json: document.nodes[0] (%x).kwargs: is array, not an object"},
      {document_with(R"({"name": "y", "op": "call_function", "target": "f", "args": [)" + deep + R"(], "kwargs": {}})"),
       "graph_from_json: document.nodes[0] (%y).args[0]"},
      {document_with(R"({"name": "y", "op": "call_function", "target": "f", "args": [{"tensor": 1}], "kwargs": {}})"),
       "graph_from_json: document.nodes[0] (%y).args[0]: is an object that is not an argument"},
      {document_with(R"({"name": "y", "op": "call_function", "target": "f", "args": [18446744073709551615], "kwargs": {}})"),
       "graph_from_json: document.nodes[0] (%y).args[0]: 18446744073709551615 does not fit a 64-bit signed integer"},
      {document_with(x_node), "graph_from_json: document: describes a malformed graph: "},
      {document_with(x_node + ", " + out_node + R"(, {"name": "output2", "op": "output", "target": "output", "args": [{"node": "x"}], "kwargs": {}})"),
       "graph_from_json: document.nodes[2] (%output2): cannot be made: "},
      {document_with(x_node + ", " + out_node, R"(, "constants": [{"name": "_tensor_constant0", "dtype": "float32", "shape": [2, 2], "data": [1, 2, 3]}])"),
       "graph_from_json: document.constants[0].data: has 3 values for shape [2, 2], which holds 4"},
      {document_with(x_node + ", " + out_node, R"(, "constants": [{"name": "_tensor_constant0", "dtype": "float32", "shape": [1000000000, 1000000000], "data": []}])"),
       "graph_from_json: document.constants[0].shape: holds more than 268435456 elements"},
      {document_with(x_node + ", " + out_node, R"(, "constants": [{"name": "weights", "dtype": "int64", "shape": [1], "data": [1]}])"),
       "graph_from_json: document.constants[0].name: is 'weights', but constants are named in order: this one is "
       "'_tensor_constant0'"},
      {document_with(x_node + ", " + out_node, R"(, "subgraphs": [{"name": "true_graph_0", "graph": {"format": "symtrace.graph", "version": 3}}])"),
       "graph_from_json: document.subgraphs[0].graph.version: is 3; this build reads version 1"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.doc.substr(0, 300));
    const std::string error = error_of(c.doc);
    CAPTURE(error);
    CHECK(error.starts_with(c.error));
  }
  // Duplicate keys in the document object are JSON; the later "nodes" wins, and still lints.
  CHECK_NOTHROW((void)graph_from_json(document_with(x_node + ", " + out_node)));
}

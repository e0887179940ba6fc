// Printing: argument values as Python prints them, fx's text form of graphs and nodes (golden
// text), the print_tabular table, and Graphviz DOT (fragments, and `dot -Tsvg` when installed).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <symtrace/graph/argument.hpp>
#include <symtrace/graph/dot_escape.hpp>
#include <symtrace/graph/graph.hpp>
#include <symtrace/graph/node.hpp>
#include <symtrace/graph/op_kind.hpp>
#include <symtrace/graph/printer.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <unistd.h>

using namespace symtrace;

namespace {

std::string quoted(std::string_view text) {
  std::string out;
  detail::append_quoted(out, text);
  return out;
}

std::string python_float(double value) {
  std::string out;
  detail::append_float(out, value);
  return out;
}

}  // namespace

TEST_CASE("opcodes print and parse with fx's spelling") {
  CHECK(name(OpKind::call_function) == "call_function");
  CHECK(to_string(OpKind::get_attr) == "get_attr");
  CHECK(fmt::format("{}", OpKind::placeholder) == "placeholder");
  CHECK(fmt::format("{:>13}", OpKind::output) == "       output");
  for (OpKind kind : {OpKind::placeholder, OpKind::get_attr, OpKind::call_function, OpKind::call_method,
                      OpKind::call_module, OpKind::output}) {
    CHECK(parse_op_kind(name(kind)) == kind);
  }
  CHECK_FALSE(parse_op_kind("call").has_value());
  CHECK_FALSE(parse_op_kind("").has_value());
}

TEST_CASE("arguments print as Python would, with node references by id") {
  CHECK(fmt::format("{}", Argument::list({1, NodeId(3), DType::float32, "x", {}})) ==
        "[1, %3, symtrace.float32, 'x', None]");
  CHECK(to_string(Argument()) == "None");
  CHECK(to_string(Argument(true)) == "True");
  CHECK(to_string(Argument(false)) == "False");
  CHECK(to_string(Argument(-42)) == "-42");
  CHECK(to_string(Argument(DType::bool_)) == "symtrace.bool");
  CHECK(to_string(Argument(ArgumentList{})) == "[]");
  CHECK(to_string(Argument::list({Argument::list({1, 2}), Argument::list({})})) == "[[1, 2], []]");
  CHECK(fmt::format("{:>6}", Argument(true)) == "  True");
}

TEST_CASE("node ids print with a percent sign, and an invalid id says so") {
  CHECK(fmt::format("{}", NodeId(7)) == "%7");
  CHECK(fmt::format("{}", NodeId()) == "%<invalid>");
  CHECK(fmt::format("{:<4}|", NodeId(1)) == "%1  |");
}

TEST_CASE("floats print as Python's repr") {
  CHECK(python_float(1.0) == "1.0");
  CHECK(python_float(1e-05) == "1e-05");
  CHECK(python_float(0.1) == "0.1");
  CHECK(python_float(-2.5) == "-2.5");
  CHECK(python_float(0.0001) == "0.0001");
  CHECK(python_float(1e15) == "1000000000000000.0");
  CHECK(python_float(1e16) == "1e+16");
  CHECK(python_float(-0.0) == "-0.0");
  CHECK(python_float(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(python_float(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(python_float(std::nan("")) == "nan");
  CHECK(python_float(-std::nan("")) == "nan");
  CHECK(to_string(Argument(2.0f)) == "2.0");
}

TEST_CASE("strings print single-quoted with Python's escapes") {
  CHECK(quoted("fast") == "'fast'");
  CHECK(quoted("") == "''");
  CHECK(quoted("it's") == R"('it\'s')");
  CHECK(quoted(R"(say "hi")") == R"('say "hi"')");
  CHECK(quoted("a\\b") == R"('a\\b')");
  CHECK(quoted("1\n2\t3\r") == R"('1\n2\t3\r')");
  CHECK(quoted(std::string_view("\x01\x1f\x7f\0", 4)) == R"('\x01\x1f\x7f\x00')");
  CHECK(quoted("caf\xc3\xa9") == "'caf\xc3\xa9'");
}

TEST_CASE("an argument made from a node refers to it by id, and contains_node finds it in lists") {
  Graph graph;
  Node& x = graph.placeholder("x");
  const Argument direct = x;
  REQUIRE(direct.get_if<NodeId>() != nullptr);
  CHECK(*direct.get_if<NodeId>() == x.id());
  CHECK(contains_node(direct));
  CHECK(contains_node(Argument::list({1, Argument::list({2, x})})));
  CHECK_FALSE(contains_node(Argument::list({1, Argument::list({2.0, "x"})})));
  CHECK_FALSE(contains_node(Argument()));
}

TEST_CASE("a tensor meta prints as dtype then shape") {
  CHECK(to_string(TensorMeta{DType::float32, Shape{1, 3, Dim::unknown()}}) == "float32[1, 3, ?]");
  CHECK(to_string(TensorMeta{DType::int64, Shape{}}) == "int64[]");
  CHECK(fmt::format("{}", TensorMeta{DType::float32, Shape{2}}) == "float32[2]");
}

TEST_CASE("a graph prints in fx's text form") {
  Graph graph;
  Node& x = graph.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 3}});
  graph.create_node(OpKind::get_attr, "lin.weight", {}, {}, "w");
  Node& add = graph.call_function("add", {x, 1});
  Node& relu = graph.call_method("relu", {add}, {{"alpha", 1.0}, {"mode", "fast"}});
  graph.output(relu);

  CHECK(to_string(graph) == R"(graph():
    %x : float32[1, 3] [num_users=1] = placeholder[target=x]
    %w : [num_users=0] = get_attr[target=lin.weight]
    %add : [num_users=1] = call_function[target=add](args = (%x, 1), kwargs = {})
    %relu : [num_users=1] = call_method[target=relu](args = (%add,), kwargs = {alpha: 1.0, mode: 'fast'})
    return relu
)");
  CHECK(fmt::format("{}", graph) == to_string(graph));
}

TEST_CASE("an empty graph prints only its header") { CHECK(to_string(Graph()) == "graph():\n"); }

TEST_CASE("a placeholder with a default prints it after the target") {
  Graph graph;
  graph.create_node(OpKind::placeholder, "scale", {2.5});
  graph.create_node(OpKind::placeholder, "mode", {"mean"});
  CHECK(to_string(graph) == R"(graph():
    %scale : [num_users=0] = placeholder[target=scale](default=2.5)
    %mode : [num_users=0] = placeholder[target=mode](default='mean')
)");
}

TEST_CASE("positional arguments print as a tuple, with a trailing comma for one element") {
  Graph graph;
  Node& x = graph.placeholder("x");
  graph.call_function("rand", {});
  graph.call_function("neg", {x});
  graph.call_function("cat", {Argument::list({x})});
  graph.call_module("layer1.0.conv1", {x}, {{"bias", Argument()}});
  CHECK(to_string(graph) == R"(graph():
    %x : [num_users=3] = placeholder[target=x]
    %rand : [num_users=0] = call_function[target=rand](args = (), kwargs = {})
    %neg : [num_users=0] = call_function[target=neg](args = (%x,), kwargs = {})
    %cat : [num_users=0] = call_function[target=cat](args = ([%x],), kwargs = {})
    %layer1_0_conv1 : [num_users=0] = call_module[target=layer1.0.conv1](args = (%x,), kwargs = {bias: None})
)");
}

TEST_CASE("every argument kind prints inside a node, nested lists included") {
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& y = graph.placeholder("y");
  graph.call_function("f",
                      {Argument::list({x, Argument::list({y, 1, Argument::list({})})}), Argument(), true, false,
                       -3, 1.0, 1e-05, 0.1, -2.5, R"(it's "q")", "a\\b\n", DType::int64},
                      {{"dims", Argument::list({0, -1})}, {"other", y}});
  CHECK(to_string(graph) == R"txt(graph():
    %x : [num_users=1] = placeholder[target=x]
    %y : [num_users=1] = placeholder[target=y]
    %f : [num_users=0] = call_function[target=f](args = ([%x, [%y, 1, []]], None, True, False, -3, 1.0, 1e-05, 0.1, -2.5, 'it\'s "q"', 'a\\b\n', symtrace.int64), kwargs = {dims: [0, -1], other: %y})
)txt");
}

TEST_CASE("a list output prints as a tuple of bare names") {
  Graph graph;
  Node& a = graph.placeholder("a");
  Node& b = graph.placeholder("b");

  SUBCASE("two results") {
    graph.output(Argument::list({a, b}));
    CHECK(to_string(graph) == R"(graph():
    %a : [num_users=1] = placeholder[target=a]
    %b : [num_users=1] = placeholder[target=b]
    return (a, b)
)");
  }
  SUBCASE("one result keeps the trailing comma") {
    graph.output(Argument::list({a}));
    CHECK(to_string(*graph.output_node()) == "return (a,)");
  }
  SUBCASE("nested lists inside the tuple stay lists") {
    graph.output(Argument::list({a, Argument::list({b, 1})}));
    CHECK(to_string(*graph.output_node()) == "return (a, [b, 1])");
  }
  SUBCASE("None") {
    graph.output(Argument());
    CHECK(to_string(*graph.output_node()) == "return None");
  }
}

TEST_CASE("a node prints as its line without indentation, and fmt prints its name") {
  Graph graph;
  Node& x = graph.placeholder("x");
  Node& add = graph.call_function("add", {x, x});
  Node& out = graph.output(add);
  add.set_tensor_meta(TensorMeta{DType::int64, Shape{}});

  CHECK(to_string(x) == "%x : [num_users=1] = placeholder[target=x]");
  CHECK(to_string(add) == "%add : int64[] [num_users=1] = call_function[target=add](args = (%x, %x), kwargs = {})");
  CHECK(to_string(out) == "return add");
  CHECK(fmt::format("{}", add) == "add");
  CHECK(fmt::format("[{:>5}]", x) == "[    x]");
}

TEST_CASE("the table has fx's print_tabular columns plus the tensor meta") {
  Graph graph;
  Node& x = graph.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 3}});
  Node& w = graph.get_attr("linear.weight");
  Node& add = graph.call_function("add", {x, w});
  Node& mul = graph.call_function("mul", {add, 2.0}, {{"alpha", 1}});
  graph.output(mul);

  CHECK(to_tabular(graph) == R"(opcode         name           target         args                kwargs      meta
-------------  -------------  -------------  ------------------  ----------  -------------
placeholder    x              x              ()                  {}          float32[1, 3]
get_attr       linear_weight  linear.weight  ()                  {}
call_function  add            add            (x, linear_weight)  {}
call_function  mul            mul            (add, 2.0)          {alpha: 1}
output         output         output         (mul,)              {}
)");
}

TEST_CASE("the table of an empty graph is its header and dashes") {
  CHECK(to_tabular(Graph()) == "opcode  name  target  args  kwargs  meta\n------  ----  ------  ----  ------  ----\n");
}

TEST_CASE("DOT text labels and styles each node and has one edge per use") {
  Graph graph;
  Node& x = graph.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 3}});
  Node& w = graph.get_attr("conv.weight");
  Node& conv = graph.call_module("layer1.conv", {x, w});
  Node& gate = graph.call_module("layer1.gate", {conv});
  gate.set_meta(meta_keys::failure,
                "a symbolic tensor was converted to bool: control flow that depends on tensor data cannot be "
                "traced");
  Node& relu = graph.call_function("relu", {gate});
  graph.output(relu);

  const std::string dot = to_dot(graph);
  CHECK(dot.starts_with("digraph \"graph\" {\n"));
  CHECK(dot.ends_with("}\n"));
  CHECK(dot.find("rankdir=TB;") != std::string::npos);
  CHECK(dot.find(R"(node [fontname="Helvetica"];)") != std::string::npos);
  CHECK(dot.find(R"([label="x\nplaceholder[x]\nfloat32[1, 3]", shape=ellipse, style="filled", fillcolor="#d5f5d5"])") !=
        std::string::npos);
  CHECK(dot.find(R"([label="conv_weight\nget_attr[conv.weight]", shape=note, style="filled", fillcolor="#fff4c2"])") !=
        std::string::npos);
  CHECK(dot.find(
            R"([label="layer1_conv\ncall_module[layer1.conv]", shape=box3d, style="filled", fillcolor="#cfe2ff"])") !=
        std::string::npos);
  CHECK(dot.find(
            R"(\nfailed: a symbolic tensor was converted to bool: control flow tha...", shape=box3d, style="filled", fillcolor="#f8c8c8", color="#c00000"])") !=
        std::string::npos);
  CHECK(dot.find(R"(shape=box, style="rounded,filled", fillcolor="#ffffff")") != std::string::npos);
  CHECK(dot.find(R"(shape=doubleoctagon, style="filled", fillcolor="#e0e0e0")") != std::string::npos);
  CHECK(dot.find(fmt::format("{}->{} ;", x.id().value, conv.id().value)) != std::string::npos);
  CHECK(dot.find(fmt::format("{}->{} ;", w.id().value, conv.id().value)) != std::string::npos);
  CHECK(dot.find(fmt::format("{}->{} ;", relu.id().value, graph.output_node()->id().value)) != std::string::npos);
  CHECK(dot.find("label=\"relu") != std::string::npos);

  SUBCASE("options name the graph, quoted and escaped, and turn it left to right") {
    const std::string named = to_dot(graph, {.name = R"(my "net" \)", .left_to_right = true});
    CHECK(named.starts_with(R"(digraph "my \"net\" \\" {)"));
    CHECK(named.find("rankdir=LR;") != std::string::npos);
  }
  SUBCASE("a short failure message is shown whole and escaped") {
    gate.set_meta(meta_keys::failure, R"(bad "x")");
    CHECK(to_dot(graph).find(R"(\nfailed: bad \"x\"")") != std::string::npos);
  }
  SUBCASE("an erased node has no vertex") {
    Node& unused = graph.call_function("sigmoid", {x});
    CHECK(to_dot(graph).find("label=\"sigmoid") != std::string::npos);
    graph.erase_node(unused);
    CHECK(to_dot(graph).find("label=\"sigmoid") == std::string::npos);
  }
  SUBCASE("Graphviz accepts the text") {
    if (std::system("which dot > /dev/null 2>&1") != 0) {
      MESSAGE("Graphviz's dot is not installed; skipping the parse check");
      return;
    }
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / fmt::format("symtrace_printer_test_{}.dot", ::getpid());
    std::ofstream(path) << to_dot(graph, {.name = "net \"v2\"", .left_to_right = true});
    const int status = std::system(fmt::format("dot -Tsvg '{}' -o /dev/null", path.string()).c_str());
    std::filesystem::remove(path);
    CHECK(status == 0);
  }
}

TEST_CASE("dot_escape makes any text safe inside a quoted DOT string") {
  CHECK(dot_escape("plain") == "plain");
  CHECK(dot_escape("say \"hi\"") == R"(say \"hi\")");
  CHECK(dot_escape(R"(C:\path)") == R"(C:\\path)");
  CHECK(dot_escape("two\nlines") == R"(two\nlines)");
  CHECK(dot_escape("tab\there\r") == "tab here ");
  std::string out = "label=";
  append_dot_escaped(out, "<a&b>");
  CHECK(out == "label=<a&b>");
}

// The report document: exact round trips of whole collections (every zoo model, failures
// captured by execution), the coverage report of a report read back, and a suite of malformed
// documents, each with its pinned error.
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace symtrace;
using testing::example_specs;

namespace {

/// Exports the report of `c`, reads it back, and checks the report read back is the same
/// report: the same document, the same coverage report (text and JSON), the same graphs.
CollectionReport round_trip(const GraphCollection& c, const std::string& model) {
  const std::string doc = report_to_json(make_report(c, model));
  CollectionReport back = report_from_json(doc);
  CHECK(report_to_json(back) == doc);
  CHECK(coverage_report(back, ReportFormat::text) == coverage_report(c, model, ReportFormat::text));
  CHECK(coverage_report(back, ReportFormat::json) == coverage_report(c, model, ReportFormat::json));
  REQUIRE(back.graphs.size() == c.size());
  std::size_t i = 0;
  for (const GraphCollection::Entry& e : c) {
    CHECK(back.graphs[i].module == e.path);
    CHECK(back.graphs[i].type == e.module->type_name());
    CHECK(to_string(back.graphs[i].graph) == to_string(e.graph));
    ++i;
  }
  REQUIRE(back.modules.size() == c.hierarchy().size());
  for (std::size_t m = 0; m < back.modules.size(); ++m) {
    CHECK(back.modules[m].path == c.hierarchy().path(m));
    CHECK(back.modules[m].status == c.hierarchy()[m].status);
    CHECK(back.modules[m].children.size() == c.hierarchy()[m].module->named_children().size());
  }
  REQUIRE(back.failures.size() == c.failures().size());
  for (std::size_t f = 0; f < back.failures.size(); ++f) {
    CHECK(back.failures[f].module == c.failures()[f].module);
    CHECK(back.failures[f].message == c.failures()[f].message);
  }
  return back;
}

std::string error_of(const std::string& doc) {
  try {
    (void)report_from_json(doc);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

/// A report document with `modules`, `failed` and `graphs` (JSON arrays' contents).
std::string report_with(const std::string& modules, const std::string& failed = "", const std::string& graphs = "") {
  return R"({"format": "symtrace.report", "version": 1, "model": "m", "modules": [)" + modules + R"(], "failed": [)" +
         failed + R"(], "graphs": [)" + graphs + "]}";
}

const std::string root_module = R"({"module": "", "type": "Net", "status": "traced", "children": []})";

}  // namespace

TEST_CASE("the report of every zoo model round trips exactly, and prints the collection's coverage report") {
  for (const std::string& name : zoo::names()) {
    CAPTURE(name);
    const auto model = zoo::create(name);
    const GraphCollection c = recursive_trace(*model, example_specs(name));
    const CollectionReport back = round_trip(c, name);
    CHECK(back.model == name);
  }
}

TEST_CASE("failures captured by execution round trip with their graphs, inputs and warnings") {
  for (const std::string name : {"mixed_failures", "resnet50_fail1"}) {
    CAPTURE(name);
    const auto model = zoo::create(name);
    GraphCollection c;
    c.capture_failed_by_execution();
    c.recursive_trace(*model, example_specs(name));
    const CollectionReport back = round_trip(c, name);
    std::size_t captured = 0;
    for (std::size_t f = 0; f < back.failures.size(); ++f) {
      const auto& x = back.failures[f].by_execution;
      REQUIRE(x.has_value());
      const ExecutionCapture& original = *c.failures()[f].by_execution;
      CHECK(x->graph.has_value() == (original.graph != nullptr));
      if (x->graph) {
        ++captured;
        CHECK(to_string(*x->graph) == to_string(*original.graph));
        CHECK(x->warnings.size() == original.warnings.size());
        CHECK(x->inputs.size() == original.inputs.size());
      } else {
        CHECK(x->error == original.error);
      }
    }
    CHECK(captured > 0);
  }
}

namespace {

/// Reads d["a"]'s data: fails when traced; a dict with an int list beside its tensor.
class ReadsDict : public TypedModule<ReadsDict> {
 public:
  ReadsDict() { set_input_names({"d"}); }
  Tensor forward(const Value& d) {
    const Tensor a = d.to_dict().find("a")->to_tensor();
    return a.sum().to_bool() ? a : -a;
  }
};

class CallsWithDict : public TypedModule<CallsWithDict> {
 public:
  CallsWithDict() { reads = register_module("reads", std::make_shared<ReadsDict>()); }
  Tensor forward(const Tensor& x) {
    ValueDict d;
    d.insert_or_assign("a", x);
    d.insert_or_assign("n", ValueList{Value(2), Value(3)});
    return reads->call({Value(d)}).to_tensor() + 1.0;
  }
  std::shared_ptr<ReadsDict> reads;
};

}  // namespace

TEST_CASE("a capture whose input is a dict of a tensor and constants round trips its input's spec") {
  CallsWithDict model;
  GraphCollection c;
  c.capture_failed_by_execution();
  c.recursive_trace(model, {InputSpec(Shape{2, 4})});
  REQUIRE(c.failures().size() == 1);
  REQUIRE(c.failures()[0].by_execution != nullptr);
  const ExecutionCapture& original = *c.failures()[0].by_execution;
  CAPTURE(original.error);
  REQUIRE(original.graph != nullptr);
  REQUIRE(original.inputs.size() == 1);
  CHECK(to_string(original.inputs[0]) == "{'a': float32[2, 4], 'n': [2, 3]}");
  CHECK(report_to_json(make_report(c, "calls_with_dict"), -1)
            .find(R"("inputs":[{"dict":{"a":{"dtype":"float32","shape":[2,4]},"n":{"value":[2,3]}}}])") != std::string::npos);
  const CollectionReport back = round_trip(c, "calls_with_dict");
  REQUIRE(back.failures.size() == 1);
  REQUIRE(back.failures[0].by_execution.has_value());
  REQUIRE(back.failures[0].by_execution->inputs.size() == 1);
  CHECK(to_string(back.failures[0].by_execution->inputs[0]) == to_string(original.inputs[0]));
}

TEST_CASE("a report read back prints the coverage report of its document") {
  const std::string doc = report_with(
      R"({"module": "", "type": "Net", "status": "traced", "children": [{"name": "body", "index": 1}, {"name": "alias", "index": 1}]},
         {"module": "body", "type": "Block", "status": "failed", "children": []})",
      R"({"module": "body", "type": "Block", "kind": "TraceError", "message": "net.cpp:7: the branch", "source": "net.cpp:7", "op": null, "by_execution": null})",
      R"({"module": "", "type": "Net", "graph": {"format": "symtrace.graph", "version": 1, "nodes": [
            {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
            {"name": "body", "op": "call_module", "target": "body", "args": [{"node": "x"}], "kwargs": {}},
            {"name": "output", "op": "output", "target": "output", "args": [{"node": "body"}], "kwargs": {}}],
          "guards": [], "constants": [], "subgraphs": []}})");
  const CollectionReport r = report_from_json(doc);
  CHECK(coverage_report(r) == R"(coverage of m (Net)
  modules: 2 (1 traced, 0 leaf, 1 failed, 0 unvisited)
  graphs: 1 (3 nodes)

module tree
<model> (Net)  traced  [graph: 3 nodes]
├── body (Block)  failed: TraceError at net.cpp:7
└── alias (Block)  the module at 'body'

failures (1)
  body (Block) at net.cpp:7
    TraceError: the branch

graphs (1)
  <model> (Net): 3 nodes

unvisited (0)
  none
)");
  CHECK(report_from_json(report_to_json(r, -1)).graphs.size() == 1);
  CHECK_THROWS_WITH_AS(coverage_report(CollectionReport{}), doctest::Contains("a CollectionReport without modules"),
                       std::invalid_argument);
}

TEST_CASE("malformed report documents are refused with an error naming the place and the fix") {
  struct Case {
    std::string doc;
    std::string error;
  };
  std::string deep_path = "a";
  for (int i = 0; i < 65536; ++i) deep_path += ".a";
  const std::string child = R"({"module": "a", "type": "A", "status": "leaf", "children": []})";
  const std::vector<Case> cases{
      {"{", "report_from_json: the document is not JSON: [json.exception.parse_error.101]"},
      {"[]", "report_from_json: document: is array, not an object"},
      {R"({"format": "symtrace.graph", "version": 1})",
       "report_from_json: document.format: is 'symtrace.graph'; a report document has \"format\": \"symtrace.report\""},
      {R"({"format": "symtrace.report", "version": 2})", "report_from_json: document.version: is 2; this build reads version 1"},
      {R"({"format": "symtrace.report", "version": 1, "model": "m"})", "report_from_json: document: has no \"modules\""},
      {report_with(""), "report_from_json: document.modules: is empty; the model itself is modules[0]"},
      {report_with(child), "report_from_json: document.modules[0].module: is 'a'; modules[0] is the model, whose path is \"\""},
      {report_with(root_module + "," + child + "," + child),
       "report_from_json: document.modules[2].module: 'a' is the path of an earlier module; paths are unique"},
      {report_with(R"({"module": "", "type": "Net", "status": "broken", "children": []})"),
       "report_from_json: document.modules[0].status: 'broken' is not a status; use traced, leaf, failed or unvisited"},
      {report_with(R"({"module": "", "type": "Net", "status": "traced", "children": [{"name": "a", "index": 5}]})"),
       "report_from_json: document.modules[0].children[0].index: is 5; it must be an integer from 0 to 0"},
      {report_with(R"({"module": "", "type": "Net", "status": "traced", "children": [{"name": "a", "index": -1}]},)" + child),
       "report_from_json: document.modules[0].children[0].index: is -1; it must be an integer from 0 to 1"},
      {report_with(R"({"module": "", "type": "Net", "status": "traced", "children": [{"name": "a", "index": 0}]})"),
       "report_from_json: document.modules[0].children[0].index: is 0, which is the model; a child is another module"},
      {report_with(R"({"module": "", "type": "Net", "status": "traced", "children": [{"name": "a", "index": 1}, {"name": "a", "index": 1}]},)" + child),
       "report_from_json: document.modules[0].children[1].name: 'a' names an earlier child too; names are unique"},
      {report_with(root_module + R"(, {"module": ")" + deep_path + R"(", "type": "A", "status": "leaf", "children": []})"),
       "report_from_json: document.modules[1].module: nests modules deeper than 65536 levels"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [], "warnings": [], "error": null}})"),
       "report_from_json: document.failed[0].by_execution: has neither a graph nor an error; a capture has one of them"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": "", "op": null, "by_execution": null})"),
       "report_from_json: document.failed[0].source: is empty; write null for none"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [], "warnings": [{"kind": "guess", "source": "a:1", "module": "", "count": 1, "message": ""}], "error": "e"}})"),
       "report_from_json: document.failed[0].by_execution.warnings[0].kind: 'guess' is not a warning kind; use value_read or branch"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [{"dict": {"a": {"list": [{"value": {"x": 1}}]}}}], "warnings": [], "error": "e"}})"),
       "report_from_json: document.failed[0].by_execution.inputs[0].dict.a.list[0].value: is object; a constant is null, a bool, a number, a string or an array of them"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [{"list": 3}], "warnings": [], "error": "e"}})"),
       "report_from_json: document.failed[0].by_execution.inputs[0].list: is number, not an array"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [{"value": 3}], "warnings": [], "error": "e"}})"),
       "report_from_json: document.failed[0].by_execution.inputs[0]: is a constant, which only a part of a list or dict input is"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [{"list": [], "shape": [2]}], "warnings": [], "error": "e"}})"),
       "report_from_json: document.failed[0].by_execution.inputs[0]: mixes the keys of two kinds of spec"},
      {report_with(root_module, R"({"module": "", "type": "Net", "kind": "K", "message": "m", "source": null, "op": null, "by_execution": {"graph": null, "inputs": [{"list": [{"value": )" + std::string(20, '[') + std::string(20, ']') + R"(}]}], "warnings": [], "error": "e"}})"),
       "report_from_json: document.failed[0].by_execution.inputs[0].list[0].value"},
      {report_with(root_module, "", R"({"module": "", "type": "Net", "graph": {"format": "symtrace.graph", "version": 1, "nodes": [{"name": "x", "op": "jump", "target": "x", "args": [], "kwargs": {}}], "guards": [], "constants": [], "subgraphs": []}})"),
       "report_from_json: document.graphs[0].graph.nodes[0] (%x).op: 'jump' is not an opcode"},
      {report_with(root_module, "", R"({"module": "", "type": "Net", "graph": {"format": "symtrace.graph", "version": 1, "nodes": [{"name": "output", "op": "output", "target": "output", "args": [null], "kwargs": {}}], "guards": [], "constants": [], "subgraphs": []}}, {"module": "", "type": "Net", "graph": {}})"),
       "report_from_json: document.graphs[1].module: '' has an earlier graph; a module is traced as a root once"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.doc);
    const std::string error = error_of(c.doc);
    CHECK_MESSAGE(error.starts_with(c.error), error);
  }
}

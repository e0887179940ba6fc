// The HTML report's page: the data it holds (modules, failures with their source lines,
// graphs laid out by graphviz with every node boxed and every use drawn, call_module links),
// the escaping of text that holds markup, and its errors. tests/browser/ checks the page as a
// browser draws it.
#include "support/zoo_checks.hpp"

#include <symtrace/export/graphviz.hpp>
#include <symtrace/export/report_html.hpp>
#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <unistd.h>

using namespace symtrace;
using testing::example_specs;

namespace {

using Json = nlohmann::json;

/// The project's root: the zoo's failures name their files relative to it.
const std::string source_root = std::filesystem::path(SYMTRACE_TEST_DATA).parent_path().parent_path().string();

HtmlReportOptions options_here() {
  HtmlReportOptions options;
  options.source_roots = {source_root};
  return options;
}

/// False, with a message, when graphviz's dot (optional at run time) is missing: the page
/// cannot be made then. tools/install-deps installs it.
bool have_dot() {
  if (!find_dot_program().empty()) return true;
  MESSAGE("graphviz's dot is not on PATH: the HTML report's cases are skipped");
  return false;
}

/// The data a page holds: the JSON in its data element.
Json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const std::size_t begin = page.find(open);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = page.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return Json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

/// Line `line` (from 1) of `file` under the project's root.
std::string source_line(const std::string& file, std::size_t line) {
  std::ifstream in(std::filesystem::path(source_root) / file);
  std::string text;
  for (std::size_t i = 0; i < line && std::getline(in, text); ++i) {
  }
  return text;
}

/// The module index of `path` in `report`.
std::size_t index_of(const CollectionReport& report, const std::string& path) {
  for (std::size_t i = 0; i < report.modules.size(); ++i)
    if (report.modules[i].path == path) return i;
  FAIL("no module ", path);
  return 0;
}

/// A module whose type name holds markup: `Box<int&>`. Its forward reads data, so it fails.
template <class T>
class Box : public TypedModule<Box<T>> {
 public:
  Tensor forward(const Tensor& x) { return x.sum().template item<float>() > 0 ? x : -x; }
};

class HoldsABox : public TypedModule<HoldsABox> {
 public:
  HoldsABox() { box = this->register_module("box", std::make_shared<Box<int&>>()); }
  Tensor forward(const Tensor& x) { return box->call({relu(x)}).to_tensor(); }
  std::shared_ptr<Box<int&>> box;
};

}  // namespace

TEST_CASE("the page of a collection holds its modules, failures with their source lines, and every graph laid out") {
  if (!have_dot()) return;
  for (const char* name : {"mixed_failures", "resnet50_fail4"}) {
    CAPTURE(name);
    const std::shared_ptr<Module> model = zoo::create(name);
    const GraphCollection c = recursive_trace(*model, example_specs(name));
    const CollectionReport report = make_report(c, name);
    const Json data = page_data(report_to_html(c, name, options_here()));

    CHECK(data["model"] == name);
    const Json& totals = data["totals"];
    CHECK(totals["modules"] == report.modules.size());
    CHECK(totals["traced"] == report.count(ModuleStatus::traced));
    CHECK(totals["leaf"] == report.count(ModuleStatus::leaf));
    CHECK(totals["failed"] == report.count(ModuleStatus::failed));
    CHECK(totals["unvisited"] == report.count(ModuleStatus::unvisited));
    CHECK(totals["graphs"] == report.graphs.size());
    CHECK(totals["nodes"] == report.total_nodes());
    CHECK_FALSE(totals.contains("parameters"));  // no summary given

    REQUIRE(data["modules"].size() == report.modules.size());
    for (std::size_t i = 0; i < report.modules.size(); ++i) {
      const Json& m = data["modules"][i];
      CHECK(m["path"] == report.modules[i].path);
      CHECK(m["type"] == report.modules[i].type);
      CHECK(m["status"] == to_string(report.modules[i].status));
      REQUIRE(m["children"].size() == report.modules[i].children.size());
      for (std::size_t k = 0; k < report.modules[i].children.size(); ++k) {
        CHECK(m["children"][k] == report.modules[i].children[k].index);
        CHECK(m["names"][k] == report.modules[i].children[k].name);
      }
    }

    // Each failure names its module and file:line, and embeds that line of the file.
    REQUIRE(data["failures"].size() == report.failures.size());
    REQUIRE_FALSE(report.failures.empty());
    for (std::size_t f = 0; f < report.failures.size(); ++f) {
      const CollectionReport::Failure& r = report.failures[f];
      const Json& j = data["failures"][f];
      CHECK(j["module"] == index_of(report, r.module));
      CHECK(data["modules"][index_of(report, r.module)]["failure"] == f);
      CHECK(j["source"] == r.source);
      CHECK(j["kind"] == r.kind);
      CHECK(j["message"] == r.message);
      const std::size_t colon = r.source.rfind(':');
      const std::string file = r.source.substr(0, colon);
      const std::size_t line = std::stoul(r.source.substr(colon + 1));
      const Json& snippet = j["snippet"];
      REQUIRE(snippet.is_object());
      CHECK(snippet["file"] == file);
      CHECK(snippet["line"] == line);
      CHECK(snippet["first"] == line - 4);
      REQUIRE(snippet["lines"].size() == 9);
      CHECK(snippet["lines"][4] == source_line(file, line));
      CHECK(snippet["lines"][0] == source_line(file, line - 4));
    }

    // Each graph: one box per node, inside the drawing; one spline per use.
    REQUIRE(data["graphs"].size() == report.graphs.size());
    for (std::size_t g = 0; g < report.graphs.size(); ++g) {
      const Graph& graph = report.graphs[g].graph;
      const Json& j = data["graphs"][g];
      const std::size_t owner = index_of(report, report.graphs[g].module);
      CHECK(j["module"] == owner);
      CHECK(data["modules"][owner]["graph"] == g);
      CHECK(data["modules"][owner]["nodes"] == graph.size());
      REQUIRE(j["nodes"].size() == graph.size());
      const double width = j["width"], height = j["height"];
      std::size_t uses = 0;
      std::size_t i = 0;
      for (const Node& n : graph.nodes()) {
        const Json& box = j["nodes"][i++];
        const double x = box[0], y = box[1], w = box[2], h = box[3];
        CHECK(w > 0);
        CHECK(h > 0);
        CHECK(x - w / 2 >= -0.5);
        CHECK(x + w / 2 <= width + 0.5);
        CHECK(y - h / 2 >= -0.5);
        CHECK(y + h / 2 <= height + 0.5);
        CHECK(box[4] == fmt::format("{}", n.op()));
        CHECK(box[5] == n.name());
        CHECK(box[6] == fmt::format("{}[{}]", n.op(), n.target()));
        if (n.tensor_meta() != nullptr) CHECK(box[7] == to_string(*n.tensor_meta()));
        uses += n.input_nodes().size();
        // A call_module node links to the module it calls when that module has a graph or a
        // failure to show.
        std::ptrdiff_t link = -1;
        if (n.op() == OpKind::call_module && !n.target().empty()) {  // "": a leaf traced as a root
          const std::string path = report.graphs[g].module.empty()
                                       ? std::string(n.target())
                                       : report.graphs[g].module + "." + std::string(n.target());
          const std::size_t called = index_of(report, path);
          if (data["modules"][called].contains("graph") || data["modules"][called].contains("failure"))
            link = static_cast<std::ptrdiff_t>(called);
        }
        CHECK(box[8] == link);
        CHECK(box[9] == (n.meta(meta_keys::failure) != nullptr ? 1 : 0));
      }
      REQUIRE(j["edges"].size() == uses);
      for (const Json& e : j["edges"]) CHECK(e.size() % 6 == 2);  // a start point and cubic Béziers
    }
  }
}

TEST_CASE("the page links the model's graph to each failed module and to each child traced as a root") {
  if (!have_dot()) return;
  const std::shared_ptr<Module> model = zoo::create("mixed_failures");
  const GraphCollection c = recursive_trace(*model, example_specs("mixed_failures"));
  const CollectionReport report = make_report(c, "mixed_failures");
  const Json data = page_data(report_to_html(report, options_here()));
  std::vector<std::string> linked;
  for (const Json& n : data["graphs"][0]["nodes"])
    if (n[8] != -1) linked.push_back(data["modules"][n[8].get<std::size_t>()]["path"]);
  CHECK(linked == std::vector<std::string>{"gate", "repeat", "opaque", "topk"});
}

TEST_CASE("a saved report renders as the collection it was saved from") {
  if (!have_dot()) return;
  const std::shared_ptr<Module> model = zoo::create("resnet50_fail1");
  GraphCollection c;
  c.capture_failed_by_execution(true);
  c.recursive_trace(*model, example_specs("resnet50_fail1"));
  const CollectionReport report = make_report(c, "resnet50_fail1");
  const std::string page = report_to_html(report, options_here());
  CHECK(report_to_html(report_from_json(report_to_json(report)), options_here()) == page);
  // The failed block's capture by execution is drawn too: one box per node. (A capture by
  // execution records ops, not module calls, so none of its nodes links.)
  const Json data = page_data(page);
  REQUIRE(data["failures"].size() == 1);
  const Json& by_execution = data["failures"][0]["by_execution"];
  REQUIRE(by_execution["graph"].is_number());
  const Json& captured = data["graphs"][by_execution["graph"].get<std::size_t>()];
  CHECK(captured["by_execution"] == true);
  const Graph& graph = *report.failures[0].by_execution->graph;
  REQUIRE(captured["nodes"].size() == graph.size());
  CHECK(graph.size() > 10);
  std::size_t i = 0;
  for (const Node& n : graph.nodes()) {
    const Json& box = captured["nodes"][i++];
    CHECK(box[5] == n.name());
    CHECK(box[8] == -1);
  }
  CHECK(by_execution["inputs"] == Json::array({"float32[1, 512, 28, 28]"}));  // layer3.0's input
  CHECK(report.failures[0].module == "layer3.0");
}

TEST_CASE("a summary adds each module's parameters and MACs, as analyze counts them") {
  if (!have_dot()) return;
  const std::shared_ptr<Module> model = zoo::create("resnet50_fail1");
  const std::vector<InputSpec> specs = example_specs("resnet50_fail1");
  const ModelSummary summary = summarize(*model, trace_for_analysis(*model, specs), "resnet50_fail1");
  HtmlReportOptions options = options_here();
  options.summary = &summary;
  const Json data = page_data(report_to_html(recursive_trace(*model, specs), "resnet50_fail1", options));
  CHECK(data["totals"]["parameters"] == "25,557,032");
  CHECK(data["totals"]["macs"] == "≥ " + format_count(summary.macs));
  std::size_t with_macs = 0;
  for (const ModuleSummary& s : summary.modules) {
    for (const Json& m : data["modules"]) {
      if (m["path"] != s.path) continue;
      CHECK(m["parameters"] == format_count(SymExpr(s.parameters)));
      if (s.macs) {
        CHECK(m["macs"] == (s.complete ? "" : "≥ ") + format_count(*s.macs));
        ++with_macs;
      } else {
        CHECK_FALSE(m.contains("macs"));
      }
    }
  }
  CHECK(with_macs > 100);
}

TEST_CASE("text holding markup stays text: the data escapes <, > and &, and the title is escaped") {
  if (!have_dot()) return;
  HoldsABox model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 3}, DType::float32)});
  const std::string name = "<b>\"quoted\" & 'single'</b></script><!--";
  const std::string page = report_to_html(c, name, options_here());
  // The only markup is the page's own: the model's text never appears raw.
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("Box<int&>") == std::string::npos);
  CHECK(page.find("<!--") == std::string::npos);
  CHECK(page.find("<title>&lt;b&gt;&quot;quoted&quot; &amp; &#39;single&#39;&lt;/b&gt;&lt;/script&gt;&lt;!-- · symtrace "
                  "report</title>") != std::string::npos);
  std::size_t scripts = 0;
  for (std::size_t at = page.find("</script>"); at != std::string::npos; at = page.find("</script>", at + 1)) ++scripts;
  CHECK(scripts == 2);  // the data's element and the script's
  // Read back, the data holds the text exactly.
  const Json data = page_data(page);
  CHECK(data["model"] == name);
  CHECK(data["modules"][1]["type"] == "Box<int&>");
  CHECK(data["failures"][0]["message"].get<std::string>().find("'box' (Box<int&>)") != std::string::npos);
}

TEST_CASE("the page's errors: no modules, no dot, a dot that fails") {
  const std::shared_ptr<Module> model = zoo::create("mixed_failures");
  const CollectionReport report = make_report(recursive_trace(*model, example_specs("mixed_failures")), "m");
  CHECK_THROWS_WITH_AS((void)report_to_html(CollectionReport{}), "report_to_html: the report has no modules",
                       std::invalid_argument);
  HtmlReportOptions missing;
  missing.dot_program = "/nonexistent/dot";
  CHECK_THROWS_WITH_AS((void)report_to_html(report, missing),
                       "running '/nonexistent/dot' failed: No such file or directory", std::runtime_error);
  HtmlReportOptions failing;
  failing.dot_program = "/bin/false";
  CHECK_THROWS_WITH_AS((void)report_to_html(report, failing),
                       doctest::Contains("graphviz's dot could not lay out the graph (exit code 1)"), std::runtime_error);
}

TEST_CASE("a graph beyond 300 nodes is laid out in pieces stacked without overlap, every use drawn") {
  if (!have_dot()) return;
  const std::shared_ptr<Module> model = zoo::create("deep_mlp_1000");
  const GraphCollection c = recursive_trace(*model, example_specs("deep_mlp_1000"));
  const Graph& graph = c.begin()->graph;
  REQUIRE(graph.size() == 4002);
  const Json data = page_data(report_to_html(c, "deep_mlp_1000", options_here()));
  const Json& g = data["graphs"][0];
  REQUIRE(g["nodes"].size() == 4002);
  const double width = g["width"], height = g["height"];
  // Pieces of 300 nodes in graph order: each piece lies wholly below the one before.
  const std::size_t count = 4002, pieces = (count + 299) / 300;
  std::vector<std::pair<double, double>> span(pieces, {height, 0.0});  // top and bottom of each piece
  for (std::size_t i = 0; i < count; ++i) {
    const Json& box = g["nodes"][i];
    const double x = box[0], y = box[1], w = box[2], h = box[3];
    CHECK(x - w / 2 >= -0.5);
    CHECK(x + w / 2 <= width + 0.5);
    span[i / 300].first = std::min(span[i / 300].first, y - h / 2);
    span[i / 300].second = std::max(span[i / 300].second, y + h / 2);
  }
  for (std::size_t p = 1; p < pieces; ++p) CHECK(span[p].first > span[p - 1].second);
  CHECK(span.back().second <= height + 0.5);
  // One spline per use; a use across pieces starts in its input's piece and ends in its user's.
  std::size_t uses = 0;
  std::vector<std::size_t> across(pieces, 0);  // uses from each piece into a later one
  std::vector<std::size_t> drawn(pieces, 0);
  std::unordered_map<NodeId, std::size_t> position;
  for (const Node& n : graph.nodes()) {
    position.emplace(n.id(), position.size());
    for (const Node* input : n.input_nodes()) {
      ++uses;
      if (position.at(input->id()) / 300 != position.at(n.id()) / 300) ++across[position.at(input->id()) / 300];
    }
  }
  CHECK(g["edges"].size() == uses);
  const auto piece_at = [&](double y) {
    for (std::size_t p = 0; p < pieces; ++p)
      if (y >= span[p].first - 1 && y <= span[p].second + 1) return p;
    return pieces;
  };
  for (const Json& e : g["edges"]) {
    CHECK(e.size() % 6 == 2);
    const double y0 = e[1], y1 = e[e.size() - 1];
    CHECK(y1 > y0);
    const std::size_t from = piece_at(y0), to = piece_at(y1 + 10);  // the arrowhead's 10 points end on the box
    REQUIRE(from < pieces);
    REQUIRE(to < pieces);
    if (from != to) ++drawn[from];
  }
  CHECK(drawn == across);
  CHECK(across[0] > 0);
}

TEST_CASE("source lines are embedded from program source only: readable files, lines that exist, CRLF trimmed") {
  if (!have_dot()) return;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("symtrace-html-{}", ::getpid());
  fs::create_directories(dir);
  { std::ofstream(dir / "model.py", std::ios::binary) << "a = 1\r\nb = 2\r\nc = 3\r\n"; }
  { std::ofstream(dir / "secret.txt", std::ios::binary) << "a\nb\nc\n"; }
  const std::shared_ptr<Module> model = zoo::create("mixed_failures");
  CollectionReport report = make_report(recursive_trace(*model, example_specs("mixed_failures")), "m");
  REQUIRE(report.failures.size() == 4);
  report.failures[0].source = "model.py:2";                          // relative, found under the root given
  report.failures[1].source = "model.py:9";                          // past the end
  report.failures[2].source = (dir / "secret.txt").string() + ":2";  // not program source
  report.failures[3].source = "missing.py:1";                        // no such file
  HtmlReportOptions options;
  options.source_roots = {"/nonexistent", dir.string()};
  options.source_context = 1;
  const Json data = page_data(report_to_html(report, options));
  CHECK(data["failures"][0]["snippet"] ==
        Json{{"file", "model.py"}, {"line", 2}, {"first", 1}, {"lines", {"a = 1", "b = 2", "c = 3"}}});
  CHECK(data["failures"][1]["snippet"].is_null());
  CHECK(data["failures"][2]["snippet"].is_null());
  CHECK(data["failures"][3]["snippet"].is_null());
  fs::remove_all(dir);
}

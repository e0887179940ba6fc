// The symtrace program, run in-process: each command's text and JSON output on small models
// (JSON parsed and checked), exit codes, and every bad-usage case.
#include "support/run_cli.hpp"
#include "compare.hpp"
#include "options.hpp"
#include "progress.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;
using Json = nlohmann::json;

namespace {

using Run = testing::CliRun;
Run run(const std::vector<std::string>& args) { return testing::run_cli(args); }

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

/// A path in a fresh temporary directory, removed with it.
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               fmt::format("symtrace-cli-test-{}", std::chrono::steady_clock::now().time_since_epoch().count());
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool dot_installed() { return std::system("command -v dot > /dev/null 2>&1") == 0; }

const std::vector<InputSpec> small_image{InputSpec(Shape{1, 3, 32, 32})};

}  // namespace

TEST_CASE("zoo lists every model with its parameter count, as text and as JSON") {
  const Run text = run({"zoo"});
  CHECK(text.code == 0);
  CHECK(text.err.empty());
  CHECK(first_line(text.out) == fmt::format("{:<20}  {:>11}  description", "model", "parameters"));
  CHECK(text.out.find("\nresnet18               11,689,512  torchvision ResNet-18") != std::string::npos);
  CHECK(text.out.find("\nvit_b16                86,567,656  ViT-B/16") != std::string::npos);
  CHECK(std::count(text.out.begin(), text.out.end(), '\n') == zoo::models().size() + 1);

  const Run json = run({"zoo", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json list = Json::parse(json.out);
  REQUIRE(list.is_array());
  REQUIRE(list.size() == zoo::models().size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const zoo::ModelInfo& m = zoo::models()[i];
    CAPTURE(m.name);
    CHECK(list[i].size() == 3);
    CHECK(list[i]["name"] == m.name);
    CHECK(list[i]["parameters"] == m.parameters);
    CHECK(list[i]["description"] == m.description);
  }
  CHECK(list[0]["parameters"] == 11'689'512);
}

TEST_CASE("trace prints the graph symbolic_trace gives, in each format") {
  manual_seed(0);
  const auto model = zoo::create("resnet18");
  const Graph expected = symbolic_trace(*model, small_image);

  const Run text = run({"trace", "resnet18", "--input", "1x3x32x32"});
  CHECK(text.code == 0);
  CHECK(text.out == to_string(expected));
  const Run tabular = run({"trace", "resnet18", "--input=1x3x32x32", "--format", "tabular"});
  CHECK(tabular.code == 0);
  CHECK(tabular.out == to_tabular(expected));
  const Run dot = run({"trace", "resnet18", "--input", "1x3x32x32", "--format=dot"});
  CHECK(dot.code == 0);
  CHECK(dot.out == to_dot(expected, DotOptions{.name = "resnet18"}));

  const Run json = run({"trace", "resnet18", "--input", "1x3x32x32", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j["model"] == "resnet18");
  CHECK(j["guards"] == Json::array());
  // It is the library's graph document with the model's name: it reads back as the graph.
  CHECK(j["format"] == "symtrace.graph");
  CHECK(to_string(graph_from_json(json.out)) == to_string(expected));
  const Json& nodes = j["nodes"];
  REQUIRE(nodes.size() == expected.size());
  std::size_t i = 0;
  for (const Node& n : expected.nodes()) {
    const Json& jn = nodes[i++];
    CAPTURE(n.name());
    for (const char* key : {"name", "op", "target", "args", "kwargs", "shape", "dtype", "source"}) CHECK(jn.contains(key));
    CHECK(jn["name"] == n.name());
    CHECK(jn["op"] == fmt::format("{}", n.op()));
    CHECK(jn["target"] == std::string(n.target()));
    CHECK(jn["args"].size() == n.args().size());
    CHECK(jn["kwargs"].size() == n.kwargs().size());
    if (n.op() == OpKind::placeholder || n.op() == OpKind::output) {  // made where the program traced
      CHECK(jn["source"].get<std::string>().find("tools/symtrace/trace_command.cpp:") != std::string::npos);
    } else {
      CHECK(jn["source"] == fmt::format("{}:{}", n.where().file_name(), n.where().line()));
    }
  }
  const Json& x = nodes.front();
  CHECK(x["op"] == "placeholder");
  CHECK(x["shape"] == Json::array({1, 3, 32, 32}));
  CHECK(x["dtype"] == "float32");
  const Json& conv1 = nodes[1];
  CHECK(conv1["name"] == "conv1");
  CHECK(conv1["op"] == "call_module");
  CHECK(conv1["args"] == Json::parse(R"([{"node": "x"}])"));
  CHECK(conv1["shape"] == Json::array({1, 64, 16, 16}));
  CHECK(nodes.back()["op"] == "output");
  CHECK(nodes.back()["args"] == Json::parse(R"([{"node": "fc"}])"));
}

TEST_CASE("trace JSON shows unknown sizes as null and keyword arguments and lists as JSON") {
  const Run json = run({"trace", "resnet18", "--input", "?x3x32x32", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j["nodes"][0]["shape"] == Json::parse("[null, 3, 32, 32]"));
  bool saw_flatten = false;
  for (const Json& n : j["nodes"]) {
    if (n["target"] == "flatten") {
      saw_flatten = true;
      CHECK(n["args"] == Json::parse(R"([{"node": "avgpool"}, 1, -1])"));
      CHECK(n["shape"] == Json::parse("[null, 512]"));
    }
  }
  CHECK(saw_flatten);
}

TEST_CASE("trace of a model that cannot be traced whole prints its graph with the failed modules as leaves, and says which") {
  const Run r = run({"trace", "mixed_failures"});
  CHECK(r.code == 0);
  const auto model = zoo::create("mixed_failures");
  RobustTracer tracer;
  const Graph g = tracer.trace(*model, small_image);
  CHECK(r.out == to_string(g));
  CHECK(r.err.starts_with(fmt::format("symtrace trace: {} modules of mixed_failures could not be traced and are leaves of "
                                      "the graph:\n",
                                      tracer.failures().size())));
  for (const ModuleFailure& f : tracer.failures()) CHECK(r.err.find(fmt::format("  '{}' ({}): ", f.module, f.type)) != std::string::npos);
  CHECK(r.err.find("failures.cpp:") != std::string::npos);
  CHECK(r.err.ends_with("`symtrace report mixed_failures` traces what is inside them and shows the whole model's coverage.\n"));
}

TEST_CASE("report prints the coverage report of recursive_trace, as text, JSON and DOT") {
  manual_seed(0);
  const auto model = zoo::create("mixed_failures");
  const GraphCollection c = recursive_trace(*model, small_image);

  const Run text = run({"report", "mixed_failures"});
  CHECK(text.code == 0);
  CHECK(text.out == coverage_report(c, "mixed_failures"));

  const Run json = run({"report", "mixed_failures", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j == Json::parse(coverage_report(c, "mixed_failures", ReportFormat::json)));
  std::set<std::string> failed;
  for (const Json& f : j["failed"]) failed.insert(f["module"].get<std::string>());
  CHECK(failed == std::set<std::string>{"gate", "repeat", "opaque", "topk"});
  CHECK(j["unvisited"] == Json::parse(R"(["unused"])"));
  CHECK(j["graphs"].size() == c.size());

  const Run dot = run({"report", "mixed_failures", "--format", "dot"});
  REQUIRE(dot.code == 0);
  CHECK(dot.out.starts_with("digraph G {\n"));
  CHECK(dot.out.find("label=\"mixed_failures\\nMixedFailures\\ntraced\\ngraph: ") != std::string::npos);
  CHECK(dot.out.find("label=\"gate\\nGatedConv\\nfailed at ") != std::string::npos);
  CHECK(dot.out.find("label=\"unused\\nLinear\\nunvisited\", fillcolor=\"#e0e0e0\"]") != std::string::npos);
  // One box per module, one edge per parent-child pair.
  std::size_t boxes = 0;
  std::size_t edges = 0;
  for (std::size_t at = 0; (at = dot.out.find("[label=", at)) != std::string::npos; ++at) ++boxes;
  for (std::size_t at = 0; (at = dot.out.find("->", at)) != std::string::npos; ++at) ++edges;
  CHECK(boxes == c.hierarchy().size());
  CHECK(edges + 1 == c.hierarchy().size());  // a tree: no module is shared

  if (dot_installed()) {
    const Run svg = run({"report", "mixed_failures", "--format", "svg"});
    CHECK(svg.code == 0);
    CHECK(svg.out.starts_with("<?xml"));
    CHECK(svg.out.find("<svg") != std::string::npos);
    CHECK(svg.out.ends_with("</svg>\n"));
    CHECK(svg.out.find("mixed_failures") != std::string::npos);
  }
}

TEST_CASE("report --format html writes report_to_html's page; --format document saves a report that renders later") {
  manual_seed(0);
  const auto model = zoo::create("mixed_failures");
  const GraphCollection c = recursive_trace(*model, small_image);
  TempDir dir;
  const std::string saved = (dir.path / "saved.json").string();
  const Run doc = run({"report", "mixed_failures", "--format", "document", "-o", saved});
  REQUIRE(doc.code == 0);
  const CollectionReport back = report_from_json(read_file(saved));
  CHECK(back.graphs.size() == c.size());
  CHECK(back.failures.size() == c.failures().size());
  // The saved report prints as the model's does.
  CHECK(run({"report", saved}).out == coverage_report(c, "mixed_failures"));
  CHECK(run({"report", saved, "--format", "json"}).out == coverage_report(c, "mixed_failures", ReportFormat::json));
  CHECK(run({"report", saved, "--format", "document"}).out == read_file(saved));
  if (dot_installed()) {
    const Run html = run({"report", "mixed_failures", "--format", "html"});
    REQUIRE(html.code == 0);
    const ModelSummary summary = summarize(*model, trace_for_analysis(*model, small_image), "mixed_failures");
    HtmlReportOptions options;
    options.summary = &summary;
    CHECK(html.out == report_to_html(c, "mixed_failures", options));
    CHECK(run({"report", saved, "--format", "html"}).out == report_to_html(make_report(c, "mixed_failures")));
  }

  // What a saved report cannot do, and documents that cannot be read.
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  { std::ofstream(dir.path / "bad.json") << R"({"format": "symtrace.report", "version": 1})"; }
  const std::string bad = (dir.path / "bad.json").string();
  const std::string missing = (dir.path / "missing.json").string();
  const std::vector<Case> cases = {
      {{"report", saved, "--input", "1x3x32x32"}, fmt::format("{} is a saved report: it takes no --input", saved)},
      {{"report", saved, "--by-execution"},
       fmt::format("{} is a saved report: --by-execution needs the model, which it does not hold", saved)},
      {{"report", saved, "--format", "dot"}, "a saved report prints as text, json, html or document, not dot"},
      {{"report", missing}, fmt::format("cannot read the report document '{}'", missing)},
      {{"report", bad}, fmt::format("{}: report_from_json: document: has no \"model\"", bad)},
  };
  for (const Case& k : cases) {
    CAPTURE(fmt::format("{}", fmt::join(k.args, " ")));
    const Run r = run(k.args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with("symtrace report: error: " + k.error));
  }
}

TEST_CASE("report --by-execution records each failed module by execution on its call shapes") {
  const Run plain = run({"report", "resnet50_fail1", "--input", "1x3x32x32", "--format", "json"});
  REQUIRE(plain.code == 0);
  const Json p = Json::parse(plain.out);
  REQUIRE(p["failed"].size() == 1);
  CHECK(p["failed"][0]["by_execution"].is_null());

  const Run json = run({"report", "resnet50_fail1", "--input", "1x3x32x32", "--by-execution", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  REQUIRE(j["failed"].size() == 1);
  const Json& failure = j["failed"][0];
  CHECK(failure["module"] == "layer3.0");
  const Json& capture = failure["by_execution"];
  REQUIRE(capture.is_object());
  CHECK(capture["error"].is_null());
  CHECK(capture["inputs"] == Json::parse(R"([{"dtype": "float32", "shape": "[1, 512, 4, 4]"}])"));
  CHECK(capture["nodes"].get<int>() > 0);
  REQUIRE(capture["warnings"].size() == 1);
  CHECK(capture["warnings"][0]["kind"] == "branch");
  CHECK(capture["warnings"][0]["source"] == "src/zoo/resnet.cpp:74");
  // Everything else is the plain report.
  Json rest = j;
  rest["failed"][0].erase("by_execution");
  Json plain_rest = p;
  plain_rest["failed"][0].erase("by_execution");
  rest.erase("graphs");
  plain_rest.erase("graphs");
  CHECK(rest == plain_rest);

  const Run text = run({"report", "resnet50_fail1", "--input", "1x3x32x32", "--by-execution"});
  REQUIRE(text.code == 0);
  CHECK(text.out.find(fmt::format("    captured by execution on float32[1, 512, 4, 4]: {} nodes, specialised (1 place "
                                  "reads tensor data)\n      src/zoo/resnet.cpp:74 branch (1 time)\n",
                                  capture["nodes"].get<int>())) != std::string::npos);
}

TEST_CASE("ops lists exactly the ops a model calls, and with --training what training adds") {
  const Run text = run({"ops", "resnet50", "--input", "2x3x32x32"});
  REQUIRE(text.code == 0);
  CHECK(text.out ==
        "ops of resnet50 on 2x3x32x32: 8 in inference\n"
        "op                     calls   nested  training path\n"
        "adaptive_avg_pool2d        1        0              0\n"
        "add                       16        0              0\n"
        "batch_norm                53        0              0\n"
        "conv2d                    53        0              0\n"
        "flatten                    1        0              0\n"
        "linear                     1        0              0\n"
        "max_pool2d                 1        0              0\n"
        "relu_                     49        0              0\n");

  const Run json = run({"ops", "resnet50", "--input", "2x3x32x32", "--training", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j["model"] == "resnet50");
  CHECK(j["inputs"] == Json::parse(R"(["2x3x32x32"])"));
  CHECK(j["ops"] == Json::parse(R"(["adaptive_avg_pool2d", "add", "add_", "batch_norm", "conv2d", "flatten",
                                    "linear", "max_pool2d", "relu_"])"));
  // Training updates batch_norm's batch counter in place and takes batch_norm's training path.
  CHECK(j["training_only"] == Json::parse(R"(["add_"])"));
  std::vector<std::string> inference;
  for (const Json& u : j["modes"]["inference"]) inference.push_back(u["op"].get<std::string>());
  CHECK(inference == std::vector<std::string>{"adaptive_avg_pool2d", "add", "batch_norm", "conv2d", "flatten", "linear",
                                              "max_pool2d", "relu_"});
  const auto use = [&](const char* mode, const char* op) {
    for (const Json& u : j["modes"][mode])
      if (u["op"] == op) return u;
    return Json();
  };
  CHECK(use("inference", "batch_norm") ==
        Json::parse(R"({"op": "batch_norm", "calls": 53, "nested_calls": 0, "training_calls": 0})"));
  CHECK(use("training", "batch_norm") ==
        Json::parse(R"({"op": "batch_norm", "calls": 53, "nested_calls": 0, "training_calls": 53})"));
  CHECK(use("training", "add_") == Json::parse(R"({"op": "add_", "calls": 53, "nested_calls": 0, "training_calls": 0})"));
  CHECK(use("inference", "add_").is_null());

  const Run both = run({"ops", "resnet50", "--input", "2x3x32x32", "--training"});
  REQUIRE(both.code == 0);
  CHECK(first_line(both.out) == "ops of resnet50 on 2x3x32x32: 8 in inference, 9 in training");
  CHECK(both.out.find("\nadd_                         -         53              0\n") != std::string::npos);
  CHECK(both.out.find("\nbatch_norm                  53         53             53\n") != std::string::npos);
  CHECK(both.out.ends_with("\nonly in training: add_\n"));

  // A batch of one cannot be normalised in training: the model refuses the input.
  const Run one = run({"ops", "resnet50", "--input", "1x3x32x32", "--training"});
  CHECK(one.code == 2);
  CHECK(one.out.empty());
  CHECK(one.err.find("batch_norm(): Expected more than 1 value per channel when training") != std::string::npos);
}

TEST_CASE("check runs the graph against the eager forward and reports the errors") {
  const Run text = run({"check", "resnet18", "--input", "1x3x32x32"});
  CHECK(text.code == 0);
  CHECK(first_line(text.out) == "check resnet18: inputs float32[1, 3, 32, 32]");
  CHECK(text.out.find("  graph: 71 nodes, 0 failed modules run eagerly as leaves\n") != std::string::npos);
  CHECK(text.out.ends_with("  ok: the graph computes what the eager forward computes\n"));

  const Run json = run({"check", "mixed_failures", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j.size() == 4);
  CHECK(j["model"] == "mixed_failures");
  CHECK(j["ok"] == true);
  CHECK(j["max_abs_error"].get<double>() <= 1e-5);
  CHECK(j["max_rel_error"].get<double>() <= 1e-5);
}

TEST_CASE("check's comparison finds a difference in values, shapes, dtypes and output count") {
  const Tensor a = tensor({1.0F, -4.0F, 2.0F}, {3});
  const Tensor b = tensor({1.0F, -4.0F, 2.5F}, {3});
  cli::OutputComparison same = cli::compare_outputs(Value(a), Value(a));
  CHECK(same.max_abs_error == 0);
  CHECK(same.max_rel_error == 0);
  CHECK(same.mismatch.empty());
  cli::OutputComparison differ = cli::compare_outputs(Value(b), Value(a));
  CHECK(differ.max_abs_error == doctest::Approx(0.5));
  CHECK(differ.max_rel_error == doctest::Approx(0.5 / 4.0));
  CHECK(cli::compare_outputs(Value(a.reshape({1, 3})), Value(a)).mismatch ==
        "output 0 is float32[1, 3] from the graph but float32[3] from the eager forward");
  CHECK(cli::compare_outputs(Value(ValueList{Value(a), Value(a)}), Value(a)).mismatch ==
        "the graph returns 2 tensors, the eager forward 1");
  const Tensor nan = tensor({1.0F, NAN, 2.0F}, {3});
  CHECK(cli::compare_outputs(Value(nan), Value(nan)).max_abs_error == 0);
  CHECK(std::isinf(cli::compare_outputs(Value(nan), Value(a)).max_abs_error));
  const Tensor inf = tensor({1.0F, INFINITY, -INFINITY}, {3});
  CHECK(cli::compare_outputs(Value(inf), Value(inf)).max_abs_error == 0);
  CHECK(std::isinf(cli::compare_outputs(Value(inf), Value(a)).max_abs_error));
}

TEST_CASE("named dims: --input Nx3xHxW with --dim ranges traces formulas, and analyze --at evaluates them") {
  const Run json = run({"trace", "resnet18", "--input", "Nx3xHxW", "--dim", "H=32..1024", "--dim", "W=32..", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j["dims"] == Json::parse(R"({"H": [32, 1024], "N": [1, null], "W": [32, null]})"));
  CHECK(j["nodes"][0]["shape"] == Json::parse(R"(["N", 3, "H", "W"])"));
  CHECK(j["nodes"].back()["op"] == "output");
  const Run text = run({"trace", "resnet18", "--input", "Nx3xHxW"});
  REQUIRE(text.code == 0);
  CHECK(text.out.find("float32[N, 64, (H + 3)//4, (W + 3)//4]") != std::string::npos);

  const Run formulas = run({"analyze", "resnet18", "--input", "Nx3x224x224"});
  REQUIRE(formulas.code == 0);
  CHECK(formulas.out.find("\nMACs: 1,814,073,344·N\n") != std::string::npos);
  const Run at = run({"analyze", "resnet18", "--input", "Nx3xHxW", "--at", "N=2,H=64,W=48"});
  const Run known = run({"analyze", "resnet18", "--input", "2x3x64x48"});
  REQUIRE(at.code == 0);
  REQUIRE(known.code == 0);
  CHECK(at.out.substr(0, at.out.find("Pruning groups")) == known.out.substr(0, known.out.find("Pruning groups")));
}

TEST_CASE("analyze prints the summary table and the pruning groups the library finds, as text and JSON") {
  const auto model = zoo::create("resnet50_fail1");
  const GraphCollection c = trace_for_analysis(*model, small_image);
  const ModelSummary summary = summarize(*model, c, "resnet50_fail1");
  const ChannelGroups groups = channel_groups(*model, c);

  const Run text = run({"analyze", "resnet50_fail1", "--input", "1x3x32x32"});
  CHECK(text.code == 0);
  CHECK(text.err.empty());
  CHECK(text.out == to_string(summary) + "\n" + to_string(groups));
  CHECK(text.out.find("    0 (FailingBottleneck)") != std::string::npos);
  CHECK(text.out.find("Layers hidden in failed modules (their channels cannot be followed):\n"
                      "  layer3.0 (FailingBottleneck): layer3.0.conv1, layer3.0.conv2, layer3.0.conv3, "
                      "layer3.0.downsample.0\n") != std::string::npos);

  const Run json = run({"analyze", "resnet50_fail1", "--input", "1x3x32x32", "--format", "json"});
  REQUIRE(json.code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j["model"] == "resnet50_fail1");
  CHECK(j["summary"]["parameters"] == 25'557'032);
  CHECK(j["summary"]["macs"] == *summary.macs.constant_value());
  CHECK(j["summary"]["complete"] == false);
  CHECK(j["summary"]["unknown"] == Json::parse(R"(["layer3.0"])"));
  CHECK(j["summary"]["modules"].size() == summary.modules.size());
  CHECK(j["pruning"] == Json::parse(to_string(groups, ReportFormat::json)));
  std::size_t prunable = 0;
  for (const Json& g : j["pruning"]["groups"]) prunable += g["prunable"].get<bool>() ? 1 : 0;
  CHECK(prunable == groups.num_prunable());
  CHECK(prunable > 0);
}

TEST_CASE("no arguments run the report of a model with failing blocks") {
  const Run r = run({});
  CHECK(r.code == 0);
  CHECK(r.err.starts_with("symtrace: no command given, so here is `symtrace report mixed_failures`"));
  CHECK(r.out == run({"report", "mixed_failures"}).out);
  CHECK(r.out.find("failed: TraceError at ") != std::string::npos);
}

TEST_CASE("--help on the program and on every command, and --version") {
  for (const std::string command : {"", "zoo", "trace", "report", "check", "ops", "analyze"}) {
    CAPTURE(command);
    std::vector<std::string> args;
    if (!command.empty()) args.push_back(command);
    args.emplace_back("--help");
    const Run r = run(args);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == cli::help_text(command));
    CHECK(r.out.starts_with(command.empty() ? "usage: symtrace [COMMAND]" : "usage: symtrace " + command));
  }
  CHECK(run({"trace", "-h"}).out == cli::help_text("trace"));
  const Run version = run({"--version"});
  CHECK(version.code == 0);
  CHECK(version.out.starts_with("symtrace "));
}

TEST_CASE("-o writes the result to a file, checked before the job") {
  TempDir dir;
  const auto path = dir.path / "zoo.json";
  const Run r = run({"zoo", "--format", "json", "-o", path.string()});
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  CHECK(Json::parse(read_file(path)).size() == zoo::models().size());

  // A failing job leaves no file behind.
  const auto failed = dir.path / "check.txt";
  CHECK(run({"check", "resnet18", "--input", "1x4x32x32", "-o", failed.string()}).code == 2);
  CHECK_FALSE(std::filesystem::exists(failed));
}

TEST_CASE("trace --format onnx -o FILE writes the model export_onnx makes, or says the build lacks ONNX") {
  TempDir dir;
  const auto path = dir.path / "resnet18.onnx";
  manual_seed(0);
  const Run r = run({"trace", "resnet18", "--input", "1x3x32x32", "--format", "onnx", "-o", path.string()});
  CHECK(r.out.empty());
  if (!onnx_export_available()) {
    CHECK(r.code == 2);
    CHECK(first_line(r.err) ==
          "symtrace trace: error: --format onnx: this symtrace was built without ONNX support; install libonnx-dev "
          "and libprotobuf-dev (tools/install-deps) and reconfigure the build");
    CHECK_FALSE(std::filesystem::exists(path));
    return;
  }
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  manual_seed(0);
  const auto model = zoo::create("resnet18");
  const std::string expected = export_onnx(symbolic_trace(*model, small_image), *model);
  CHECK(read_file(path) == expected);
  CHECK(expected.size() > static_cast<std::size_t>(model->num_parameters()) * sizeof(float));
}

TEST_CASE("trace --format onnx of an unknown or named batch computes the sizes in the model, and names N dim_param") {
  if (!onnx_export_available()) return;  // the case above covers such a build
  TempDir dir;
  // The class token is expanded to a size read from the input at run time.
  const std::vector<std::pair<std::string, Shape>> inputs{{"?x3x224x224", Shape{Dim::unknown(), 3, 224, 224}},
                                                          {"Nx3x224x224", Shape{Dim("N"), 3, 224, 224}}};
  for (const auto& [input, shape] : inputs) {
    CAPTURE(input);
    const auto path = dir.path / "vit_tiny.onnx";
    manual_seed(0);
    const Run r = run({"trace", "vit_tiny", "--input", input, "--format", "onnx", "-o", path.string()});
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    manual_seed(0);
    const auto model = zoo::create("vit_tiny");
    CHECK(read_file(path) == export_onnx(symbolic_trace(*model, {InputSpec(shape)}), *model));
  }
}

TEST_CASE("an option given twice takes its last value, and --version is read after a command too") {
  const Run twice = run({"zoo", "--format", "text", "--format", "json"});
  CHECK(twice.code == 0);
  CHECK(twice.out == run({"zoo", "--format", "json"}).out);
  CHECK(Json::parse(twice.out).is_array());
  const Run version = run({"zoo", "--version"});
  CHECK(version.code == 0);
  CHECK(version.out == run({"--version"}).out);
}

TEST_CASE("bad usage: a one-line error with the fix, the help text, exit 2") {
  struct Case {
    std::vector<std::string> args;
    std::string error;  // the first line on stderr
    std::string help;   // whose help follows
  };
  const std::vector<Case> cases{
      {{"trace", "resnet5"},
       "symtrace trace: error: unknown zoo model 'resnet5': did you mean 'resnet50'? the models are resnet18, ",
       "trace"},
      {{"report", "resnet18", "--input", "1x3x4.5x4"},
       "symtrace report: error: --input '1x3x4.5x4': '4.5' is not a size; write sizes separated by x, e.g. --input "
       "1x3x224x224 (? for an unknown size, a name such as N for a named dim)",
       "report"},
      {{"trace", "resnet18", "--input", "1x3x"},
       "symtrace trace: error: --input '1x3x': a size is missing; write sizes separated by x, e.g. --input "
       "1x3x224x224 (? for an unknown size, a name such as N for a named dim)",
       "trace"},
      {{"trace", "resnet18", "--input", "Nx3x$x32"},
       "symtrace trace: error: --input 'Nx3x$x32': '$' cannot name a dim: a dim's name is an identifier "
       "(letters, digits and _, not first a digit, not min or max), such as N or H; write sizes separated by x, e.g. "
       "--input 1x3x224x224 (? for an unknown size, a name such as N for a named dim)",
       "trace"},
      {{"trace", "resnet18", "--input", "Nx3x32x32", "--dim", "H=1..4"},
       "symtrace trace: error: --dim names H, which no --input shape names; write it in a shape, e.g. --input "
       "Hx3x224x224",
       "trace"},
      {{"trace", "resnet18", "--input", "Nx3x32x32", "--dim", "N=5..2"},
       "symtrace trace: error: --dim 'N=5..2': dim 'N' has the empty range 5..2: give lo <= hi; write NAME=LO..HI or "
       "NAME=LO.., e.g. --dim H=32..1024",
       "trace"},
      {{"trace", "resnet18", "--input", "Nx3x32x32", "--dim", "N:5"},
       "symtrace trace: error: --dim 'N:5': it is not NAME=LO..HI; write NAME=LO..HI or NAME=LO.., e.g. --dim "
       "H=32..1024",
       "trace"},
      {{"zoo", "--dim", "N=1..2"}, "symtrace zoo: error: zoo takes no --dim", "zoo"},
      {{"trace", "resnet18", "--input", "Nx3x32x32", "--dim", "max_len=1..4"},
       "symtrace trace: error: --dim 'max_len=1..4': the name 'max_len' holds an x, which --input reads as the "
       "separator of sizes; write NAME=LO..HI or NAME=LO.., e.g. --dim H=32..1024",
       "trace"},
      {{"trace", "resnet18", "--at", "N=1"}, "symtrace trace: error: trace takes no --at (analyze does)", "trace"},
      {{"analyze", "resnet18", "--input", "Nx3x32x32", "--at", "N=0"},
       "symtrace analyze: error: --at gives N = 0, outside its range 1..",
       "analyze"},
      {{"analyze", "resnet18", "--input", "Nx3xHx32", "--at", "N=2"},
       "symtrace analyze: error: --at gives no size for H; give every named dim, e.g. --at H=8",
       "analyze"},
      {{"analyze", "resnet18", "--input", "Nx3x32x32", "--at", "N=two"},
       "symtrace analyze: error: --at 'N=two': 'N=two' is not NAME=SIZE; write e.g. --at N=8,H=224,W=224",
       "analyze"},
      {{"trace", "resnet18", "--format", "pdf"},
       "symtrace trace: error: trace has no format 'pdf'; use one of text, tabular, json, dot, svg, onnx",
       "trace"},
      {{"trace", "resnet18", "--format", "onnx"},
       "symtrace trace: error: --format onnx writes a binary model: give it a file with -o, e.g. -o model.onnx",
       "trace"},
      {{"report", "resnet18", "--format", "onnx"},
       "symtrace report: error: report has no format 'onnx'; use one of text, json, dot, svg, html, document",
       "report"},
      {{"check", "resnet18", "--format", "dot"},
       "symtrace check: error: check has no format 'dot'; use one of text, json",
       "check"},
      {{"zoo", "-o", "/nonexistent-dir/zoo.txt"},
       "symtrace zoo: error: cannot write '/nonexistent-dir/zoo.txt': No such file or directory; give -o a path in "
       "a writable directory",
       "zoo"},
      {{"trace", "resnet18", "-o", "/tmp"},
       "symtrace trace: error: cannot write '/tmp': it is a directory; give a file name with -o",
       "trace"},
      {{"compile", "resnet18"},
       "symtrace: error: unknown command 'compile'; the commands are zoo, trace, report, check, ops, analyze and prune",
       ""},
      {{"trace", "resnet18", "--verbose"}, "symtrace trace: error: unknown option '--verbose'; see --help for the options", "trace"},
      {{"trace"}, "symtrace trace: error: trace needs a MODEL; `symtrace zoo` lists them", "trace"},
      {{"trace", "resnet18", "vit_b16"}, "symtrace trace: error: trace takes one MODEL, got 2 ('resnet18' and 'vit_b16')", "trace"},
      {{"zoo", "resnet18"}, "symtrace zoo: error: zoo takes no argument, got 'resnet18'", "zoo"},
      {{"zoo", "--input", "1x3"}, "symtrace zoo: error: zoo takes no --input", "zoo"},
      {{"trace", "resnet18", "--input"}, "symtrace trace: error: --input needs a value", "trace"},
      {{"trace", "resnet18", "--input", "1x3x32x32", "--input", "1x3x32x32"},
       "symtrace trace: error: resnet18 takes 1 input (x), got 2 --input; give one --input per input",
       "trace"},
      {{"check", "resnet18", "--input", "?x3x32x32"},
       "symtrace check: error: --input '?x3x32x32': check runs the model, so every size must be known",
       "check"},
      {{"check", "resnet18", "--tolerance", "lots"},
       "symtrace check: error: --tolerance 'lots' is not a number >= 0; write e.g. --tolerance 1e-4",
       "check"},
      {{"report", "resnet18", "--tolerance", "1e-3"}, "symtrace report: error: report takes no --tolerance (check does)", "report"},
      {{"report", "resnet18", "--training"}, "symtrace report: error: report takes no --training (ops does)", "report"},
      {{"ops", "resnet18", "--by-execution"}, "symtrace ops: error: ops takes no --by-execution (report does)", "ops"},
      {{"ops"}, "symtrace ops: error: ops needs a MODEL; `symtrace zoo` lists them", "ops"},
      {{"ops", "resnet18", "--format", "dot"}, "symtrace ops: error: ops has no format 'dot'; use one of text, json, yaml", "ops"},
      {{"analyze", "resnet18", "--format", "dot"},
       "symtrace analyze: error: analyze has no format 'dot'; use one of text, json",
       "analyze"},
      {{"analyze", "resnet18", "--training"}, "symtrace analyze: error: analyze takes no --training (ops does)", "analyze"},
      {{"ops", "resnet18", "--input", "?x3x32x32"},
       "symtrace ops: error: --input '?x3x32x32': ops runs the model, so every size must be known",
       "ops"},
      {{"--training"},
       "symtrace: error: options need a command first, e.g. symtrace report resnet50_fail4 --format json",
       ""},
      {{"--format", "json"},
       "symtrace: error: options need a command first, e.g. symtrace report resnet50_fail4 --format json",
       ""},
      // One command per line: a second command's name is an argument of the first.
      {{"trace", "zoo"}, "symtrace trace: error: unknown zoo model 'zoo': did you mean 'rnn'? the models are resnet18, ", "trace"},
      {{"trace", "resnet18", "report"}, "symtrace trace: error: trace takes one MODEL, got 2 ('resnet18' and 'report')", "trace"},
      {{"-o", "out.txt", "zoo"}, "symtrace zoo: error: options go after the command: symtrace zoo -o out.txt", "zoo"},
      {{"ops", "resnet18", "--training=false"},
       "symtrace ops: error: --training takes no value; write --training alone",
       "ops"},
  };
  for (const Case& c : cases) {
    CAPTURE(fmt::format("{}", fmt::join(c.args, " ")));
    const Run r = run(c.args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    if (c.error.ends_with(", ")) {
      CHECK(first_line(r.err).starts_with(c.error));
      CHECK(first_line(r.err).ends_with("; `symtrace zoo` describes them"));
    } else {
      CHECK(first_line(r.err) == c.error);
    }
    CHECK(r.err == first_line(r.err) + "\n\n" + cli::help_text(c.help));
  }
}

TEST_CASE("input the model refuses: trace, report and analyze show the failing model; the commands that run it exit 2") {
  // Issue 49: the report is never lost. The model's first layer refuses the input: the root
  // fails, its children are traced as roots, and what there is is printed.
  const std::string refused = "conv2d(): input of shape [1, 4, 32, 32] has 4 channels";
  {
    const Run r = run({"trace", "resnet18", "--input", "1x4x32x32"});
    CHECK(r.code == 0);
    CHECK(r.out.find("call_module[target=]") != std::string::npos);  // the model, a leaf of its own graph
    CHECK(r.err.starts_with("symtrace trace: 1 module of resnet18 could not be traced and is a leaf of the graph:\n"
                            "  the model (ResNet): "));
    CHECK(r.err.find(refused) != std::string::npos);
  }
  {
    const Run r = run({"report", "resnet18", "--input", "1x4x32x32", "--format", "json"});
    CHECK(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j["failed"].size() >= 1);
    CHECK(j["failed"][0]["module"] == "");
    CHECK(j["failed"][0]["message"].get<std::string>().find(refused) != std::string::npos);
    CHECK(j["graphs"].size() > 1);  // the children, traced as roots
  }
  {
    const Run r = run({"analyze", "resnet18", "--input", "1x4x32x32"});
    CHECK(r.code == 0);
    CHECK(r.out.find("?") != std::string::npos);  // the model's cost is unknown, not guessed
  }
  for (const std::string command : {"ops", "check"}) {
    CAPTURE(command);
    const Run r = run({command, "resnet18", "--input", "1x4x32x32"});
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with("symtrace " + command + ": error: "));
    CHECK(r.err.find("conv2d") != std::string::npos);
  }
}

TEST_CASE("progress: silent for a short job, stage by stage once the quiet time has passed") {
  std::ostringstream quick;
  {
    cli::Progress p(quick, "job");  // a second of quiet: the job ends long before
    p.stage("tracing");
  }
  CHECK(quick.str().empty());

  std::ostringstream slow;
  {
    cli::Progress p(slow, "symtrace check m", std::chrono::milliseconds(0));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!p.speaking() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    REQUIRE(p.speaking());
    p.stage("tracing");
    p.stage("running the graph");
  }
  std::vector<std::string> lines;
  std::istringstream in(slow.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].starts_with("symtrace check m: tracing ("));
  CHECK(lines[0].ends_with(" s)"));
  CHECK(lines[1].starts_with("symtrace check m: running the graph ("));
  CHECK(lines[2].starts_with("symtrace check m: done in "));
}

TEST_CASE("an input too large for this machine is a usage error naming it, its shape and its bytes, exit 2") {
  // 1x3x100000x100000 float32 is 120,000,000,000 bytes: more than any memory this runs on.
  const Run r = run({"check", "resnet18", "--input", "1x3x100000x100000"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  CHECK(r.err.starts_with("symtrace check: error: input 'x' (float32[1, 3, 100000, 100000]) needs 120000000000 bytes "
                          "(111.8 GiB), more than the "));
  CHECK(r.err.find(" of memory this machine has; give it smaller sizes") != std::string::npos);
}

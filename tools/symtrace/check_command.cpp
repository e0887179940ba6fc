// `symtrace check MODEL`: trace, run the graph with the interpreter, compare with eager.
#include "commands.hpp"
#include "compare.hpp"
#include "model_inputs.hpp"
#include "progress.hpp"

#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <symtrace/torchscript/load.hpp>

#include <optional>
#include <ostream>
#include <utility>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace::cli {
int check_command(const Options& options, Output& output, std::ostream& err) {
  if (options.against_torch && !is_torchscript_file(options.model))
    throw UsageError(options.command, fmt::format("--against-torch compares with LibTorch's forward of a TorchScript "
                                                  "file; '{}' is a zoo model",
                                                  options.model));
  const zoo::ModelInfo info = find_model(options);
  const ValueList args = example_values(info, options);
  const std::vector<InputSpec> specs = specs_of(args);
  OutputComparison result;
  std::optional<OutputComparison> eager_vs_torch, graph_vs_torch;
  std::size_t nodes = 0;
  std::size_t failed = 0;
  {
    Progress progress(err, fmt::format("symtrace check {}", info.name));
    progress.stage("building the model");
    const std::shared_ptr<Module> model = info.create();
    progress.stage("tracing");
    RobustTracer tracer;
    const Graph graph = tracer.trace(*model, specs);
    nodes = graph.size();
    std::set<std::string_view> failed_modules;  // a failed module called twice counts once
    for (const Node& n : graph.nodes()) {
      if (n.meta(meta_keys::failure) != nullptr) failed_modules.insert(n.target());
    }
    failed = failed_modules.size();
    // Eagerly first: input the model refuses is reported as the model's error, not the graph's.
    progress.stage("running eagerly");
    const Value eager = model->call(args);
    progress.stage("running the graph");
    const Value traced = Interpreter(*model, graph).run(args);
    progress.stage("comparing");
    result = compare_outputs(traced, eager);
    if (options.against_torch) {
      progress.stage("running in LibTorch");
      const Value reference = torchscript::run_in_libtorch(options.model, args);
      eager_vs_torch = compare_outputs(eager, reference);
      graph_vs_torch = compare_outputs(traced, reference);
    }
  }
  auto passes = [&](const std::optional<OutputComparison>& c) {
    return !c || (c->mismatch.empty() && c->max_rel_error <= options.tolerance);
  };
  const bool ok = passes(result) && passes(eager_vs_torch) && passes(graph_vs_torch);
  if (options.format == "json") {
    nlohmann::ordered_json j{{"model", info.name},
                             {"max_abs_error", result.max_abs_error},
                             {"max_rel_error", result.max_rel_error},
                             {"ok", ok}};
    if (eager_vs_torch) {
      j["against_torch"] = {{"eager_max_rel_error", eager_vs_torch->max_rel_error},
                            {"graph_max_rel_error", graph_vs_torch->max_rel_error}};
    }
    output.write(j.dump(2) + "\n");
  } else {
    std::vector<std::string> shapes;
    for (const Value& v : args) shapes.push_back(value_text(v));
    std::string text = fmt::format("check {}: inputs {}\n", info.name, fmt::join(shapes, ", "));
    text += fmt::format("  graph: {} nodes, {} failed module{} run eagerly as leaves\n", nodes, failed,
                        failed == 1 ? "" : "s");
    if (!result.mismatch.empty()) {
      text += fmt::format("  mismatch: {}\n", result.mismatch);
    } else {
      text += fmt::format("  max abs error {:.3g}, max rel error {:.3g} (tolerance {:.3g})\n", result.max_abs_error,
                          result.max_rel_error, options.tolerance);
    }
    if (eager_vs_torch) {
      for (const auto& [what, c] : {std::pair{"eager", &*eager_vs_torch}, std::pair{"graph", &*graph_vs_torch}}) {
        text += c->mismatch.empty()
                    ? fmt::format("  {} vs LibTorch: max abs error {:.3g}, max rel error {:.3g}\n", what,
                                  c->max_abs_error, c->max_rel_error)
                    : fmt::format("  {} vs LibTorch: mismatch: {}\n", what, c->mismatch);
      }
    }
    text += ok                ? (eager_vs_torch ? "  ok: the graph and the eager forward compute what LibTorch computes\n"
                                                : "  ok: the graph computes what the eager forward computes\n")
            : !passes(result) ? "  MISMATCH: the graph does not compute what the eager forward computes\n"
                              : "  MISMATCH: symtrace does not compute what LibTorch computes\n";
    output.write(text);
  }
  return ok ? exit_ok : exit_problem;
}

}  // namespace symtrace::cli

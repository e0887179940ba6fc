// `symtrace check MODEL`: trace, run the graph with the interpreter, compare with eager.
#include "commands.hpp"
#include "compare.hpp"
#include "model_inputs.hpp"
#include "progress.hpp"

#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace::cli {
int check_command(const Options& options, Output& output, std::ostream& err) {
  const zoo::ModelInfo& info = find_model(options);
  const std::vector<Tensor> inputs = example_tensors(info, options);
  std::vector<InputSpec> specs(inputs.begin(), inputs.end());
  OutputComparison result;
  std::size_t nodes = 0;
  std::size_t failed = 0;
  {
    Progress progress(err, fmt::format("symtrace check {}", info.name));
    progress.stage("building the model");
    const std::shared_ptr<Module> model = zoo::create(info.name);
    progress.stage("tracing");
    RobustTracer tracer;
    const Graph graph = tracer.trace(*model, specs);
    nodes = graph.size();
    std::set<std::string_view> failed_modules;  // a failed module called twice counts once
    for (const Node& n : graph.nodes()) {
      if (n.meta(meta_keys::failure) != nullptr) failed_modules.insert(n.target());
    }
    failed = failed_modules.size();
    const ValueList args(inputs.begin(), inputs.end());
    // Eagerly first: input the model refuses is reported as the model's error, not the graph's.
    progress.stage("running eagerly");
    const Value eager = model->call(args);
    progress.stage("running the graph");
    const Value traced = Interpreter(*model, graph).run(args);
    progress.stage("comparing");
    result = compare_outputs(traced, eager);
  }
  const bool ok = result.mismatch.empty() && result.max_rel_error <= options.tolerance;
  if (options.format == "json") {
    nlohmann::ordered_json j{{"model", info.name},
                             {"max_abs_error", result.max_abs_error},
                             {"max_rel_error", result.max_rel_error},
                             {"ok", ok}};
    output.write(j.dump(2) + "\n");
  } else {
    std::vector<std::string> shapes;
    for (const Tensor& t : inputs) shapes.push_back(fmt::format("{}{}", t.dtype(), t.shape()));
    std::string text = fmt::format("check {}: inputs {}\n", info.name, fmt::join(shapes, ", "));
    text += fmt::format("  graph: {} nodes, {} failed module{} run eagerly as leaves\n", nodes, failed,
                        failed == 1 ? "" : "s");
    if (!result.mismatch.empty()) {
      text += fmt::format("  mismatch: {}\n", result.mismatch);
    } else {
      text += fmt::format("  max abs error {:.3g}, max rel error {:.3g} (tolerance {:.3g})\n", result.max_abs_error,
                          result.max_rel_error, options.tolerance);
    }
    text += ok ? "  ok: the graph computes what the eager forward computes\n"
               : "  MISMATCH: the graph does not compute what the eager forward computes\n";
    output.write(text);
  }
  return ok ? exit_ok : exit_problem;
}

}  // namespace symtrace::cli

// `symtrace trace MODEL`.
#include "commands.hpp"
#include "model_inputs.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fmt/ostream.h>

#include <exception>
#include <ostream>
#include <stdexcept>

namespace symtrace::cli {

int trace_command(const Options& options, Output& output, std::ostream& err) {
  const zoo::ModelInfo info = find_model(options);
  const std::vector<InputSpec> specs = input_specs(info, options);
  const std::shared_ptr<Module> model = info.create();
  // Robustly: a module that cannot be traced is a leaf of the graph (the root itself, when its
  // own code fails), said on stderr; the graph is printed whatever failed.
  RobustTracer tracer;
  const Graph graph = tracer.trace(*model, specs);
  if (!tracer.failures().empty()) {
    const bool one = tracer.failures().size() == 1;
    fmt::print(err, "symtrace trace: {} module{} of {} could not be traced and {} of the graph:\n",
               tracer.failures().size(), one ? "" : "s", info.name, one ? "is a leaf" : "are leaves");
    for (const ModuleFailure& f : tracer.failures())
      fmt::print(err, "  {} ({}): {}\n", f.module.empty() ? "the model" : fmt::format("'{}'", f.module), f.type, to_string(f));
    fmt::print(err, "`symtrace report {}` traces what is inside them and shows the whole model's coverage.\n", info.name);
  }
  if (options.format == "text") {
    output.write(to_string(graph));
  } else if (options.format == "tabular") {
    output.write(to_tabular(graph));
  } else if (options.format == "onnx") {
    output.write(export_onnx(graph, *model));  // a node without a mapping: std::invalid_argument, exit 2
  } else if (options.format == "json") {
    // The library's graph document (export/graph_json.hpp), the model's name first: graph_from_json
    // reads it back.
    nlohmann::ordered_json document{{"model", info.name}};
    nlohmann::ordered_json graph_document = nlohmann::ordered_json::parse(graph_to_json(graph, -1));
    for (auto& [key, value] : graph_document.items()) document[key] = std::move(value);
    output.write(document.dump(2) + "\n");
  } else {
    std::string dot = to_dot(graph, DotOptions{.name = info.name});
    if (options.format == "svg") {
      output.write_svg(dot);
    } else {
      output.write(dot);
    }
  }
  return exit_ok;
}

}  // namespace symtrace::cli

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
  Graph graph;
  try {
    graph = symbolic_trace(*model, specs);
  } catch (const std::invalid_argument&) {
    throw;  // input the model refuses (an --input shape its layers do not take): exit 2
  } catch (const std::exception& e) {
    fmt::print(err,
               "symtrace trace: {} cannot be traced whole: {}\n"
               "`symtrace report {}` traces it robustly and shows what failed, where and why.\n",
               info.name, e.what(), info.name);
    return exit_problem;
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

// `symtrace analyze MODEL`: the summary table and the pruning groups of a trace for analysis.
#include "commands.hpp"
#include "model_inputs.hpp"

#include <symtrace/graph/dim_bindings.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace symtrace::cli {

namespace {

// The summary for the sizes --at gives: each within its dim's range, every guard of the
// collection's graphs holding, every named dim given.
ModelSummary at_sizes(const ModelSummary& summary, const GraphCollection& collection, const Options& options) {
  const Graph& root = collection.begin()->graph;
  std::vector<std::pair<std::string, SymRange>> dims;
  for (const Node& n : root.nodes()) {
    if (n.op() != OpKind::placeholder || n.tensor_meta() == nullptr) continue;
    for (Dim d : n.tensor_meta()->shape)
      if (d.is_symbolic())
        for (auto& r : d.expr()->symbol_ranges()) dims.push_back(std::move(r));
  }
  for (const auto& [name, value] : options.at_values) {
    const auto it = std::find_if(dims.begin(), dims.end(), [&](const auto& d) { return d.first == name; });
    if (it == dims.end())
      throw UsageError(options.command, fmt::format("--at gives {}, which no --input shape names", name));
    if (!it->second.contains(value))
      throw UsageError(options.command, fmt::format("--at gives {} = {}, outside its range {}", name, value, to_string(it->second)));
  }
  for (const auto& [name, range] : dims) {
    if (std::none_of(options.at_values.begin(), options.at_values.end(), [&](const auto& b) { return b.first == name; }))
      throw UsageError(options.command, fmt::format("--at gives no size for {}; give every named dim, e.g. --at {}=8", name, name));
  }
  try {
    for (const GraphCollection::Entry& e : collection) check_size_guards(e.graph, options.at_values);
  } catch (const std::invalid_argument& e) {
    throw UsageError(options.command, fmt::format("--at '{}': {}", options.at, e.what()));
  }
  return evaluate(summary, options.at_values);
}

}  // namespace

int analyze_command(const Options& options, Output& output, std::ostream& /*err*/) {
  const zoo::ModelInfo info = find_model(options);
  const std::vector<InputSpec> specs = input_specs(info, options);
  const std::shared_ptr<Module> model = info.create();
  // What failed (the model's own code, or input a layer refuses) has an unknown cost: the
  // summary says so, and counts the rest.
  const GraphCollection collection = trace_for_analysis(*model, specs);
  ModelSummary summary = summarize(*model, collection, info.name);
  if (!options.at.empty()) summary = at_sizes(summary, collection, options);
  const ChannelGroups groups = channel_groups(*model, collection);
  if (options.format == "json") {
    nlohmann::ordered_json doc{{"model", info.name}};
    nlohmann::ordered_json s = nlohmann::ordered_json::parse(to_string(summary, ReportFormat::json));
    s.erase("model");
    doc["summary"] = std::move(s);
    doc["pruning"] = nlohmann::ordered_json::parse(to_string(groups, ReportFormat::json));
    output.write(doc.dump(2) + "\n");
  } else {
    output.write(to_string(summary) + "\n" + to_string(groups));
  }
  return exit_ok;
}

}  // namespace symtrace::cli

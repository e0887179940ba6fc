// `symtrace analyze MODEL`: the summary table and the pruning groups of a trace for analysis.
#include "commands.hpp"
#include "model_inputs.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <stdexcept>

namespace symtrace::cli {

int analyze_command(const Options& options, Output& output, std::ostream& /*err*/) {
  const zoo::ModelInfo info = find_model(options);
  const std::vector<InputSpec> specs = input_specs(info, options);
  const std::shared_ptr<Module> model = info.create();
  const GraphCollection collection = trace_for_analysis(*model, specs);
  // The model or one of its built-in layers (traced through here) refusing the shapes it is
  // given is bad input, not a finding.
  for (const ModuleFailure& f : collection.failures()) {
    const bool refused = f.kind == "OpError" || f.kind == "std::invalid_argument";
    if (refused && (f.module.empty() || model->get_submodule(f.module).is_builtin_layer())) {
      throw std::invalid_argument(f.message);
    }
  }
  const ModelSummary summary = summarize(*model, collection, info.name);
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

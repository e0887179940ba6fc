// `symtrace report MODEL`.
#include "commands.hpp"
#include "hierarchy_dot.hpp"
#include "model_inputs.hpp"

#include <memory>
#include <stdexcept>

namespace symtrace::cli {

int report_command(const Options& options, Output& output, std::ostream& /*err*/) {
  const zoo::ModelInfo info = find_model(options);
  const std::vector<InputSpec> specs = input_specs(info, options);
  const std::shared_ptr<Module> model = info.create();
  GraphCollection collection;
  collection.capture_failed_by_execution(options.by_execution);
  collection.recursive_trace(*model, specs);
  // The model's own forward refusing its input is bad input, not a finding.
  for (const ModuleFailure& f : collection.failures()) {
    if (f.module.empty() && (f.kind == "OpError" || f.kind == "std::invalid_argument")) {
      throw std::invalid_argument(f.message);
    }
  }
  if (options.format == "text") {
    output.write(coverage_report(collection, info.name));
  } else if (options.format == "json") {
    output.write(coverage_report(collection, info.name, ReportFormat::json));
  } else if (options.format == "svg") {
    output.write_svg(hierarchy_dot(collection, info.name));
  } else {
    output.write(hierarchy_dot(collection, info.name));
  }
  return exit_ok;
}

}  // namespace symtrace::cli

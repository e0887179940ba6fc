// `symtrace ops MODEL`: the ops a run of the model calls (OperatorCallTracer), per mode; for a
// TorchScript file, the operator lists of a selective build of LibTorch (operator_lists.hpp).
#include "commands.hpp"
#include "model_inputs.hpp"

#include <symtrace/torchscript/operator_lists.hpp>

#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace symtrace::cli {
namespace {

/// The ops one run of `model` on `args` calls, in training mode or not.
std::vector<OperatorUse> uses_of_run(Module& model, const ValueList& args, bool training) {
  model.train(training);
  OperatorCallTracer tracer;
  (void)model.call(args);
  return tracer.uses();
}

const OperatorUse* find(const std::vector<OperatorUse>& uses, const std::string& op) {
  auto it = std::lower_bound(uses.begin(), uses.end(), op,
                             [](const OperatorUse& u, const std::string& name) { return u.name < name; });
  return it != uses.end() && it->name == op ? &*it : nullptr;
}

nlohmann::ordered_json uses_json(const std::vector<OperatorUse>& uses) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const OperatorUse& u : uses) {
    out.push_back({{"op", u.name}, {"calls", u.calls}, {"nested_calls", u.nested_calls}, {"training_calls", u.training_calls}});
  }
  return out;
}

/// Each input as `--input` writes it: a tensor's shape, another value's text.
std::vector<std::string> input_texts(const ValueList& args) {
  std::vector<std::string> out;
  for (const Value& v : args) out.push_back(v.is_tensor() ? shape_text(v.to_tensor().shape()) : value_text(v));
  return out;
}

/// `ops FILE.pt`: LibTorch's operators, in the lists a selective build reads.
int file_ops(const Options& options, Output& output) {
  if (options.training) {
    throw UsageError("ops", "--training runs a zoo model in each mode; a TorchScript file's root operators already "
                            "hold its training paths (both branches of every if are listed)");
  }
  const zoo::ModelInfo info = find_model(options);
  const ValueList args = example_values(info, options);
  const torchscript::OperatorLists lists = torchscript::operator_lists(options.model, args);
  const std::vector<std::string> shapes = input_texts(args);
  if (options.format == "yaml") {
    output.write(torchscript::selective_build_yaml(lists));
    return exit_ok;
  }
  if (options.format == "json") {
    const nlohmann::ordered_json j{{"model", info.name},
                                   {"inputs", shapes},
                                   {"root_operators", lists.root_operators},
                                   {"traced_operators", lists.traced_operators},
                                   {"load_operators", lists.load_operators},
                                   {"custom_classes", lists.custom_classes}};
    output.write(j.dump(2) + "\n");
    return exit_ok;
  }
  std::string text = fmt::format("LibTorch operators of {} on {}\n", info.name, fmt::join(shapes, ", "));
  const auto section = [&](std::string_view title, const std::vector<std::string>& items) {
    fmt::format_to(std::back_inserter(text), "{} ({}){}\n", title, items.size(), items.empty() ? "" : ":");
    for (const std::string& item : items) fmt::format_to(std::back_inserter(text), "  {}\n", item);
  };
  section("root operators, called by the model's code", lists.root_operators);
  section("traced operators, run by those in turn", lists.traced_operators);
  section("operators run while loading the file", lists.load_operators);
  section("custom classes", lists.custom_classes);
  output.write(text);
  return exit_ok;
}

}  // namespace

int ops_command(const Options& options, Output& output, std::ostream& /*err*/) {
  if (is_torchscript_file(options.model)) return file_ops(options, output);
  if (options.format == "yaml") {
    throw UsageError("ops", "--format yaml lists LibTorch's operators, which a TorchScript file has; a zoo model's "
                            "ops are symtrace's (use text or json)");
  }
  const zoo::ModelInfo info = find_model(options);
  const ValueList args = example_values(info, options);
  const std::shared_ptr<Module> model = info.create();
  const std::vector<OperatorUse> inference = uses_of_run(*model, args, false);
  std::vector<OperatorUse> training;
  if (options.training) training = uses_of_run(*model, args, true);
  model->eval();

  std::vector<std::string> ops;  // the union, sorted
  std::vector<std::string> training_only;
  for (const OperatorUse& u : inference) ops.push_back(u.name);
  for (const OperatorUse& u : training) {
    if (find(inference, u.name) == nullptr) training_only.push_back(u.name);
  }
  ops.insert(ops.end(), training_only.begin(), training_only.end());
  std::sort(ops.begin(), ops.end());
  const std::vector<std::string> shapes = input_texts(args);

  if (options.format == "json") {
    nlohmann::ordered_json modes{{"inference", uses_json(inference)}};
    if (options.training) modes["training"] = uses_json(training);
    nlohmann::ordered_json j{{"model", info.name}, {"inputs", shapes}, {"modes", std::move(modes)}, {"ops", ops}};
    if (options.training) j["training_only"] = training_only;
    output.write(j.dump(2) + "\n");
    return exit_ok;
  }
  std::size_t width = 2;
  for (const std::string& op : ops) width = std::max(width, op.size());
  std::string text;
  if (!options.training) {
    fmt::format_to(std::back_inserter(text), "ops of {} on {}: {} in inference\n", info.name, fmt::join(shapes, ", "),
                   inference.size());
    fmt::format_to(std::back_inserter(text), "{:<{}}  {:>7}  {:>7}  {:>13}\n", "op", width, "calls", "nested",
                   "training path");
    for (const OperatorUse& u : inference) {
      fmt::format_to(std::back_inserter(text), "{:<{}}  {:>7}  {:>7}  {:>13}\n", u.name, width, u.calls, u.nested_calls,
                     u.training_calls);
    }
  } else {
    fmt::format_to(std::back_inserter(text), "ops of {} on {}: {} in inference, {} in training\n", info.name,
                   fmt::join(shapes, ", "), inference.size(), training.size());
    fmt::format_to(std::back_inserter(text), "{:<{}}  {:>9}  {:>9}  {:>13}\n", "op", width, "inference", "training",
                   "training path");
    for (const std::string& op : ops) {
      const OperatorUse* i = find(inference, op);
      const OperatorUse* t = find(training, op);
      fmt::format_to(std::back_inserter(text), "{:<{}}  {:>9}  {:>9}  {:>13}\n", op, width,
                     i ? fmt::format("{}", i->calls) : std::string("-"), t ? fmt::format("{}", t->calls) : std::string("-"),
                     t ? t->training_calls : 0);
    }
    fmt::format_to(std::back_inserter(text), "only in training: {}\n",
                   training_only.empty() ? std::string("none") : fmt::format("{}", fmt::join(training_only, ", ")));
  }
  output.write(text);
  return exit_ok;
}

}  // namespace symtrace::cli

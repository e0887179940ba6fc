// `symtrace prune MODEL --amount A`: channel groups, the channels each keeps, the pruned model's
// parameters and MACs, and for a TorchScript file the pruned file (-o), checked by LibTorch.
#include "commands.hpp"
#include "compare.hpp"
#include "model_inputs.hpp"
#include "progress.hpp"

#include <symtrace/torchscript/load.hpp>
#include <symtrace/torchscript/save.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <optional>
#include <string>
#include <vector>

namespace symtrace::cli {

namespace {

// What the analysis of a model counts.
struct Counts {
  std::int64_t parameters = 0;
  SymExpr macs;
  bool complete = true;
};

Counts count(Module& model, const std::vector<InputSpec>& specs, const std::string& name) {
  const GraphCollection collection = trace_for_analysis(model, specs);
  const ModelSummary s = summarize(model, collection, name);
  return {s.parameters, s.macs, s.complete};
}

// The shapes of a result, as the commands describe values (`float32[1, 1000]`).
std::string result_text(const Value& v) { return value_text(v); }

std::string percent_change(double before, double after) {
  if (before == 0) return "";
  return fmt::format(" ({:+.1f}%)", 100.0 * (after - before) / before);
}

std::optional<double> number_of(const SymExpr& e) {
  if (const std::optional<std::int64_t> c = e.constant_value()) return static_cast<double>(*c);
  return std::nullopt;
}

// A group's modules, as analyze's text names them: the layers producing its channels, then the
// others its cut touches.
std::string modules_of(const ChannelGroup& g) {
  std::vector<std::string> out = g.producers();
  for (const GroupMember& m : g.members) {
    const std::string owner = m.tensor.substr(0, m.tensor.rfind('.'));
    if (std::find(out.begin(), out.end(), owner) == out.end()) out.push_back(owner);
  }
  if (out.size() > 6) {
    const std::size_t more = out.size() - 5;
    out.resize(5);
    out.push_back(fmt::format("and {} more", more));
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// Removes a file at the end of the scope when armed.
struct Remove {
  std::filesystem::path path;
  bool armed;
  Remove(std::filesystem::path p, bool a) : path(std::move(p)), armed(a) {}
  Remove(const Remove&) = delete;
  Remove& operator=(const Remove&) = delete;
  ~Remove() {
    std::error_code ignored;
    if (armed) std::filesystem::remove(path, ignored);
  }
};

}  // namespace

int prune_command(const Options& options, Output& output, std::ostream& err) {
  const bool file = is_torchscript_file(options.model);
  if (!file && !options.pruned_file.empty()) {
    throw UsageError(options.command, fmt::format("-o writes a pruned TorchScript file, and '{}' is a zoo model (C++ "
                                                  "code, pruned in memory); leave out -o",
                                                  options.model));
  }
  const PruneCriterion criterion = options.criterion == "l2" ? PruneCriterion::l2 : PruneCriterion::l1;
  const zoo::ModelInfo info = find_model(options);
  const ValueList args = example_values(info, options);
  std::vector<InputSpec> specs;
  for (const Value& v : args) {
    std::optional<InputSpec> spec = InputSpec::of(v);
    specs.push_back(spec ? std::move(*spec) : InputSpec::constant(v));
  }

  std::optional<Progress> shown(std::in_place, err, fmt::format("symtrace prune {}", info.name));
  Progress& progress = *shown;
  progress.stage("building the model");
  const std::shared_ptr<Module> model = info.create();
  progress.stage("finding the channel groups");
  const GraphCollection collection = trace_for_analysis(*model, specs);
  const ModelSummary summary = summarize(*model, collection, info.name);
  const Counts before{summary.parameters, summary.macs, summary.complete};
  const ChannelGroups groups = channel_groups(*model, collection);
  if (groups.num_prunable() == 0) {
    const std::string why = groups.groups.empty() ? "it has no layer whose channels could be cut"
                                                  : fmt::format("every group is refused (the first: {})",
                                                                groups.groups.front().reason);
    throw std::invalid_argument(fmt::format("{} cannot be pruned: {}; see symtrace analyze {}", info.name, why,
                                            options.model));
  }
  progress.stage("ranking the channels");
  std::vector<ChannelSelection> plan;
  std::vector<std::optional<std::int64_t>> kept(groups.groups.size());
  for (std::size_t i = 0; i < groups.groups.size(); ++i) {
    const ChannelGroup& g = groups.groups[i];
    if (!g.prunable) continue;
    std::vector<std::int64_t> keep = channels_to_keep(*model, g, options.amount, criterion);
    if (static_cast<std::int64_t>(keep.size()) == g.channels) continue;  // the amount cuts none of it
    kept[i] = static_cast<std::int64_t>(keep.size());
    plan.push_back({&g, std::move(keep)});
  }
  if (plan.empty() && !options.pruned_file.empty())
    throw std::invalid_argument(fmt::format("--amount {} cuts no channel of {} (every prunable group has fewer than "
                                            "1/{} channels), so no file was written",
                                            options.amount, info.name, options.amount));
  std::optional<Value> reference;  // the original's result, for the pruned model's shapes
  std::optional<OutputComparison> exactness;  // the pruned model against the original with the cut unread
  if (!plan.empty()) {
    progress.stage("running the original");
    reference = file ? torchscript::run_in_libtorch(options.model, args) : model->call(args);
    // A zoo model is checked in memory: the cut channels masked first (what mask_channels
    // zeroes, prune_channels then removes), then cut.
    std::optional<Value> masked;
    if (!file) {
      progress.stage("running the original with the cut channels unread");
      mask_channels(*model, plan);
      masked = model->call(args);
    }
    progress.stage("cutting the channels");
    prune_channels(*model, plan);
    if (!file) {  // the zoo model, pruned in memory, runs with the original's result shapes
      progress.stage("running the pruned model");
      const Value result = model->call(args);
      if (result_text(result) != result_text(*reference))
        throw std::runtime_error(fmt::format("the pruned model gives {} where the original gives {}",
                                             result_text(result), result_text(*reference)));
      exactness = compare_outputs(result, *masked);
    }
  }
  // A file is written (to -o, or to a temporary file) and the pruned model is that file as
  // LibTorch runs it and symtrace analyses it.
  std::string written;
  Counts after = before;
  if (file && !plan.empty()) {
    const bool keep_file = !options.pruned_file.empty();
    const std::filesystem::path path =
        keep_file ? std::filesystem::path(options.pruned_file)
                  : std::filesystem::temp_directory_path() / fmt::format("symtrace-prune-{}.pt", ::getpid());
    Remove remove_later{path, !keep_file};
    progress.stage("writing the pruned file");
    torchscript::save_with_tensors(options.model, *model, path);
    progress.stage("running the pruned file in LibTorch");
    std::string problem;
    try {
      const Value result = torchscript::run_in_libtorch(path, args);
      if (reference && result_text(result) != result_text(*reference))
        problem = fmt::format("its forward gives {} where the original's gives {}", result_text(result),
                              result_text(*reference));
      written = result_text(result);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      remove_later.armed = true;
      throw std::runtime_error(fmt::format("the pruned model does not run in LibTorch, so no file was written: {}",
                                           problem));
    }
    progress.stage("analysing the pruned file");
    after = count(*torchscript::load(path), specs, info.name);
    // The cut's test: the original with the cut channels unread by any layer, run by LibTorch,
    // computes what the pruned file computes.
    progress.stage("checking the cut against the original");
    const std::shared_ptr<Module> masked = torchscript::load(options.model);
    mask_channels(*masked, plan);
    const std::filesystem::path masked_path =
        std::filesystem::temp_directory_path() / fmt::format("symtrace-prune-masked-{}.pt", ::getpid());
    const Remove remove_masked{masked_path, true};
    torchscript::save_with_tensors(options.model, *masked, masked_path);
    exactness = compare_outputs(torchscript::run_in_libtorch(path, args), torchscript::run_in_libtorch(masked_path, args));
  } else if (!plan.empty()) {
    progress.stage("counting the pruned model");
    after = count(*model, specs, info.name);
  }
  shown.reset();

  const auto count_text = [](const SymExpr& e, bool complete) { return (complete ? "" : "≥ ") + format_count(e); };
  if (options.format == "json") {
    nlohmann::ordered_json doc{{"model", info.name}, {"amount", options.amount}, {"criterion", options.criterion}};
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    const nlohmann::ordered_json analysed = nlohmann::ordered_json::parse(to_string(groups, ReportFormat::json));
    for (std::size_t i = 0; i < groups.groups.size(); ++i) {
      nlohmann::ordered_json g = analysed["groups"][i];
      nlohmann::ordered_json entry{{"group", i + 1}, {"graph", g["graph"]}, {"channels", g["channels"]}};
      entry["kept"] = kept[i] ? nlohmann::ordered_json(*kept[i]) : nlohmann::ordered_json(nullptr);
      entry["prunable"] = g["prunable"];
      entry["reason"] = g["reason"];
      entry["members"] = g["members"];
      list.push_back(std::move(entry));
    }
    doc["groups"] = std::move(list);
    const auto number = [](const SymExpr& e) {
      const std::optional<std::int64_t> c = e.constant_value();
      return c ? nlohmann::ordered_json(*c) : nlohmann::ordered_json(to_string(e));
    };
    doc["parameters"] = {{"before", before.parameters}, {"after", after.parameters}};
    doc["macs"] = {{"before", number(before.macs)}, {"after", number(after.macs)}, {"complete", after.complete}};
    doc["max_rel_error"] = exactness ? nlohmann::ordered_json(exactness->max_rel_error) : nlohmann::ordered_json(nullptr);
    doc["output"] = options.pruned_file.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(options.pruned_file);
    output.write(doc.dump(2) + "\n");
    return exit_ok;
  }
  std::string text = fmt::format("{}: {} of {} channel groups pruned at --amount {} ({}), {} refused\n", info.name,
                                 plan.size(), groups.groups.size(), options.amount, options.criterion,
                                 groups.groups.size() - groups.num_prunable());
  for (std::size_t i = 0; i < groups.groups.size(); ++i) {
    const ChannelGroup& g = groups.groups[i];
    if (kept[i]) {
      text += fmt::format("  group {}: {} -> {} channels: {}\n", i + 1, g.channels, *kept[i], modules_of(g));
    } else if (g.prunable) {
      text += fmt::format("  group {}: {} channels, none cut at this amount\n", i + 1, g.channels);
    } else {
      text += fmt::format("  group {}: {} channels, refused: {}\n", i + 1, g.channels, g.reason);
    }
  }
  text += fmt::format("parameters: {} -> {}{}\n", format_count(before.parameters), format_count(after.parameters),
                      percent_change(static_cast<double>(before.parameters), static_cast<double>(after.parameters)));
  const std::optional<double> b = number_of(before.macs), a = number_of(after.macs);
  text += fmt::format("MACs: {} -> {}{}\n", count_text(before.macs, before.complete), count_text(after.macs, after.complete),
                      a && b ? percent_change(*b, *a) : "");
  if (exactness) {
    text += fmt::format("exactness: the pruned model computes what the original computes with the cut channels "
                        "unread, to a relative error of {:.2g}{}{}\n",
                        exactness->max_rel_error, file ? " (LibTorch running both)" : "",
                        exactness->mismatch.empty() ? "" : "; " + exactness->mismatch);
  }
  if (!options.pruned_file.empty())
    text += fmt::format("wrote {} (LibTorch loads it; its forward gives {})\n", options.pruned_file, written);
  output.write(text);
  return exit_ok;
}

}  // namespace symtrace::cli

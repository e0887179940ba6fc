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
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
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

// The plan in `path`: `{"groups": [{"group": 2, "keep": [0, 3, ...]}, ...]}`, groups numbered
// from 1 in the order of `groups`. std::invalid_argument (exit 2) naming what is wrong.
std::vector<ChannelSelection> read_plan(const std::string& path, const ChannelGroups& groups, const std::string& model) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot read the plan", path));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: not a JSON plan: {}", path, e.what()));
  }
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("{}: {}; a plan is {{\"groups\": [{{\"group\": 2, \"keep\": [0, 3, ...]}}, "
                                             "...]}}",
                                             path, why));
  };
  if (!doc.is_object() || !doc.contains("groups") || !doc["groups"].is_array()) throw bad("it has no list of groups");
  std::vector<ChannelSelection> plan;
  for (const nlohmann::json& entry : doc["groups"]) {
    if (!entry.is_object() || !entry.contains("group") || !entry["group"].is_number_integer() || !entry.contains("keep") ||
        !entry["keep"].is_array())
      throw bad(fmt::format("the entry {} is not {{\"group\": N, \"keep\": [...]}}", entry.dump()));
    const auto number = entry["group"].get<std::int64_t>();
    if (number < 1 || number > static_cast<std::int64_t>(groups.groups.size()))
      throw bad(fmt::format("group {} does not exist: {} has groups 1 to {}", number, model, groups.groups.size()));
    const ChannelGroup& g = groups.groups[static_cast<std::size_t>(number - 1)];
    if (!g.prunable) throw bad(fmt::format("group {} cannot be pruned: {}", number, g.reason));
    if (std::any_of(plan.begin(), plan.end(), [&](const ChannelSelection& s) { return s.group == &g; }))
      throw bad(fmt::format("group {} is given twice", number));
    std::vector<std::int64_t> keep;
    for (const nlohmann::json& c : entry["keep"]) {
      if (!c.is_number_integer()) throw bad(fmt::format("group {} keeps {}, which is not a channel index", number, c.dump()));
      const auto channel = c.get<std::int64_t>();
      if (channel < 0 || channel >= g.channels || (!keep.empty() && channel <= keep.back()))
        throw bad(fmt::format("group {} keeps channel {}: its channels are 0 to {}, kept in increasing order", number,
                              channel, g.channels - 1));
      keep.push_back(channel);
    }
    if (keep.empty()) throw bad(fmt::format("group {} keeps no channel", number));
    if (g.period > 0) {
      // Cut alike in every block: the kept positions of the first block, repeated.
      const auto n = static_cast<std::size_t>(std::count_if(keep.begin(), keep.end(), [&](std::int64_t c) { return c < g.period; }));
      bool same = n > 0 && keep.size() == n * static_cast<std::size_t>(g.channels / g.period);
      for (std::size_t i = 0; same && i < keep.size(); ++i)
        same = keep[i] == static_cast<std::int64_t>(i / n) * g.period + keep[i % n];
      if (!same)
        throw bad(fmt::format("group {} is cut alike in every block of {} channels (the groups of a grouped "
                              "convolution): keep the same positions in each block",
                              number, g.period));
    }
    if (static_cast<std::int64_t>(keep.size()) < g.channels) plan.push_back({&g, std::move(keep)});
  }
  return plan;
}

// The largest relative error of the pruned model against the masked original that counts as
// the same computation: float32 sums of the same terms, in LibTorch or symtrace's kernels.
constexpr double exact_enough = 1e-5;

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
  std::error_code same_error;
  if (file && !options.pruned_file.empty() && std::filesystem::equivalent(options.pruned_file, options.model, same_error))
    throw UsageError(options.command, fmt::format("-o {} is the model's own file; write the pruned model to another file",
                                                  options.pruned_file));
  const PruneCriterion criterion = options.criterion == "l2" ? PruneCriterion::l2 : PruneCriterion::l1;
  const zoo::ModelInfo info = find_model(options);
  const ValueList args = example_values(info, options);
  const std::vector<InputSpec> specs = specs_of(args);

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
  std::vector<ChannelSelection> plan;
  std::vector<std::optional<std::int64_t>> kept(groups.groups.size());
  if (!options.plan.empty()) {
    plan = read_plan(options.plan, groups, info.name);
    for (const ChannelSelection& sel : plan)
      kept[static_cast<std::size_t>(sel.group - groups.groups.data())] = static_cast<std::int64_t>(sel.keep.size());
  } else {
    progress.stage("ranking the channels");
    for (std::size_t i = 0; i < groups.groups.size(); ++i) {
      const ChannelGroup& g = groups.groups[i];
      if (!g.prunable) continue;
      std::vector<std::int64_t> keep = channels_to_keep(*model, g, options.amount, criterion);
      if (static_cast<std::int64_t>(keep.size()) == g.channels) continue;  // the amount cuts none of it
      kept[i] = static_cast<std::int64_t>(keep.size());
      plan.push_back({&g, std::move(keep)});
    }
  }
  if (plan.empty() && !options.pruned_file.empty()) {
    if (!options.plan.empty())
      throw std::invalid_argument(fmt::format("{}: the plan cuts no channel, so no file was written", options.plan));
    throw std::invalid_argument(fmt::format("--amount {} cuts no channel of {} (every prunable group has fewer than "
                                            "1/{} channels), so no file was written",
                                            options.amount, info.name, options.amount));
  }
  std::optional<OutputComparison> exactness;  // the pruned model against the original with the cut unread
  std::string written;
  Counts after = before;
  if (!plan.empty()) {
    // The cut's test: what the model computes with the cut channels unread by any layer (what
    // mask_channels zeroes, prune_channels then removes) against what the pruned model computes.
    std::optional<std::filesystem::path> masked_file;
    std::optional<Value> masked;
    if (options.check_pruned || !file) {
      progress.stage("masking the cut channels");
      mask_channels(*model, plan);
      if (file) {
        masked_file = std::filesystem::temp_directory_path() / fmt::format("symtrace-prune-masked-{}.pt", ::getpid());
        torchscript::save_with_tensors(options.model, *model, *masked_file);
      } else {
        masked = model->call(args);
      }
    }
    const Remove remove_masked{masked_file.value_or(std::filesystem::path()), masked_file.has_value()};
    progress.stage("cutting the channels");
    prune_channels(*model, plan);
    if (!file) {  // the zoo model, pruned in memory
      progress.stage("running the pruned model");
      const Value result = model->call(args);
      if (value_text(result) != value_text(*masked))
        throw std::runtime_error(fmt::format("the pruned model gives {} where the original gives {}",
                                             value_text(result), value_text(*masked)));
      exactness = compare_outputs(result, *masked);
      if (exactness->max_rel_error > exact_enough || !exactness->mismatch.empty())
        throw std::runtime_error(fmt::format("the pruned model computes something else than the original with the cut "
                                             "channels unread (relative error {:.2g})",
                                             exactness->max_rel_error));
      progress.stage("counting the pruned model");
      after = count(*model, specs, info.name);
    } else {
      // The file is written (to -o, or to a temporary file) and analysed as symtrace loads it
      // (with LibTorch's loader): what it has to count is what analyze of it counts.
      const bool keep_file = !options.pruned_file.empty();
      const std::filesystem::path path =
          keep_file ? std::filesystem::path(options.pruned_file)
                    : std::filesystem::temp_directory_path() / fmt::format("symtrace-prune-{}.pt", ::getpid());
      Remove remove_later{path, !keep_file};
      progress.stage("writing the pruned file");
      torchscript::save_with_tensors(options.model, *model, path);
      progress.stage("analysing the pruned file");
      std::string problem;
      try {
        after = count(*torchscript::load(path), specs, info.name);
        if (before.complete && !after.complete) problem = "symtrace's analysis of it fails where the original's did not";
        if (problem.empty() && options.check_pruned) {
          progress.stage("running the pruned file in LibTorch");
          const Value result = torchscript::run_in_libtorch(path, args);
          const Value unread = torchscript::run_in_libtorch(*masked_file, args);
          written = value_text(result);
          if (written != value_text(unread))
            problem = fmt::format("its forward gives {} where the original's gives {}", written, value_text(unread));
          else
            exactness = compare_outputs(result, unread);
          if (exactness && (exactness->max_rel_error > exact_enough || !exactness->mismatch.empty()))
            problem = fmt::format("it computes something else than the original with the cut channels unread "
                                  "(relative error {:.2g}{})",
                                  exactness->max_rel_error, exactness->mismatch.empty() ? "" : "; " + exactness->mismatch);
        }
      } catch (const std::exception& e) {
        problem = e.what();
      }
      if (!problem.empty()) {
        remove_later.armed = true;
        throw std::runtime_error(fmt::format("the pruned model does not work, so no file was written: {}", problem));
      }
    }
  }
  shown.reset();

  const auto count_text = [](const SymExpr& e, bool complete) { return (complete ? "" : "≥ ") + format_count(e); };
  if (options.format == "json") {
    nlohmann::ordered_json doc{{"model", info.name}};
    doc["amount"] = options.plan.empty() ? nlohmann::ordered_json(options.amount) : nlohmann::ordered_json(nullptr);
    doc["criterion"] = options.plan.empty() ? nlohmann::ordered_json(options.criterion) : nlohmann::ordered_json(nullptr);
    doc["plan"] = options.plan.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(options.plan);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    const nlohmann::ordered_json analysed = nlohmann::ordered_json::parse(to_string(groups, ReportFormat::json));
    for (std::size_t i = 0; i < groups.groups.size(); ++i) {
      nlohmann::ordered_json g = analysed["groups"][i];
      nlohmann::ordered_json entry{{"group", i + 1}, {"graph", g["graph"]}, {"channels", g["channels"]}, {"period", g["period"]}, {"width", g["width"]}};
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
  const std::string how = options.plan.empty() ? fmt::format("at --amount {} ({})", options.amount, options.criterion)
                                               : fmt::format("by the plan {}", options.plan);
  std::string text = fmt::format("{}: {} of {} channel groups pruned {}, {} refused\n", info.name, plan.size(),
                                 groups.groups.size(), how, groups.groups.size() - groups.num_prunable());
  for (std::size_t i = 0; i < groups.groups.size(); ++i) {
    const ChannelGroup& g = groups.groups[i];
    if (kept[i]) {
      const std::string blocks = g.period > 0 ? fmt::format(" (alike in each block of {})", g.period) : std::string();
      const std::string unit = g.width > 1 ? fmt::format("heads of {}", g.width) : "channels";
      text += fmt::format("  group {}: {} -> {} {}{}: {}\n", i + 1, g.channels, *kept[i], unit, blocks, modules_of(g));
    } else if (g.prunable) {
      text += fmt::format("  group {}: {} channels, none cut\n", i + 1, g.channels);
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
  if (!options.pruned_file.empty()) {
    text += fmt::format("wrote {} (LibTorch loads it{})\n", options.pruned_file,
                        written.empty() ? "" : fmt::format("; its forward gives {}", written));
  }
  output.write(text);
  return exit_ok;
}

}  // namespace symtrace::cli

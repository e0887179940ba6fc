// The command line of the symtrace program on CLI11: one table of commands (their options,
// formats, switches and texts) from which the parser, the help texts and the dispatch are
// made. CLI11 reads the command line; what it leaves (an option of another command, a second
// MODEL) and the values it cannot judge (a format, a tolerance) get the program's one-line
// errors, which say what to change.
#include "options.hpp"

#include "commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <utility>

namespace symtrace::cli {
namespace {

/// A command's own switch.
struct Switch {
  std::string_view name;
  std::string_view help;
  bool Options::*field;
};

/// Everything the program knows of a command.
struct CommandSpec {
  std::string_view name;
  std::string_view summary;      ///< one line, in the program's help
  std::string_view description;  ///< the paragraph of the command's help
  std::vector<std::string_view> formats;
  bool takes_model;
  std::string_view input_help;  ///< empty: the command takes no --input
  bool takes_tolerance;
  std::vector<Switch> switches;
  std::string_view json;  ///< the JSON document's shape, closing the help
  int (*run)(const Options&, Output&, std::ostream&);
};

int run_zoo(const Options& options, Output& output, std::ostream&) { return zoo_command(options, output); }

constexpr std::string_view input_default = "the shape of the next input, sizes separated by x (1x3x224x224; ? for an "
                                           "unknown size; [SHAPE,...] for a list of tensors, {KEY:SHAPE,...} for a "
                                           "dict); default: the model's example inputs";
constexpr std::string_view input_known = "the shape of the next input (1x3x64x64); default: the model's example inputs";

const std::array<CommandSpec, 7>& commands() {
  static const std::array<CommandSpec, 7> specs{{
      // clang-format off
      {"zoo", "the zoo's models, with parameter counts",
       "Lists the zoo's models with their parameter counts and a one-line description.", {"text", "json"}, false, {},
       false, {}, "JSON: [{\"name\", \"parameters\", \"description\"}].", run_zoo},
      {"trace", "the symbolic graph of MODEL (text, tabular, json, dot, svg, onnx)",
       "Traces MODEL symbolically and prints its graph: fx's text form (text), a table (tabular), JSON, Graphviz "
       "DOT, or SVG drawn by graphviz's dot; or writes it as an ONNX model (onnx, opset 17, with the parameters as "
       "initializers; needs -o). A model that cannot be traced whole is an error (exit 1): `symtrace report MODEL` "
       "traces it robustly. A node ONNX cannot express is an error naming it (exit 2).",
       {"text", "tabular", "json", "dot", "svg", "onnx"}, true, input_default, false, {},
       // clang-format on
       "JSON: {\"model\", \"format\", \"version\", \"nodes\": [{\"name\", \"op\", \"target\", \"args\", "
       "\"kwargs\", \"shape\", \"dtype\", \"source\", ...}], \"guards\", ...}: the graph document of the README.",
       trace_command},
      // clang-format off
      {"report", "recursive_trace of MODEL and its coverage report (text, json, dot, svg, html, document)",
       "Traces MODEL robustly (recursive_trace) and prints its coverage report: the module tree with a status per "
       "module (traced, leaf, failed, unvisited), each failure with its file:line and reason, the graph of each "
       "module traced as a root, the unvisited modules and totals. dot and svg draw the module tree coloured by "
       "status. html writes one self-contained page (give -o): the tree to fold and search, each failure with the "
       "source lines around it, each graph drawn (laid out by graphviz's dot), parameters and MACs per module. "
       "document writes the whole report (graphs included) as a symtrace.report JSON document, to render later: "
       "MODEL may be such a document (a .json file), which prints as text, json, html or document.",
       {"text", "json", "dot", "svg", "html", "document"}, true, input_default, false,
       {{"--by-execution",
         "also run each failed module whose input shapes are known on random inputs and record it by execution (a "
         "graph specialised on those inputs, with the places it read tensor data)",
         // clang-format on
         &Options::by_execution}},
       "JSON: {\"model\", \"graphs\": [{\"module\", \"type\", \"nodes\"}], \"failed\": [{\"module\", \"type\", "
       "\"kind\", \"message\", \"source\", \"op\", \"by_execution\"}], \"unvisited\": [...], \"modules\": "
       "[{\"module\", \"type\", \"status\"}], \"totals\": {...}}.",
       report_command},
      // clang-format off
      {"check", "trace MODEL, run the graph, compare with eager",
       "Traces MODEL (robustly: failed modules run eagerly as leaves), runs the graph with the interpreter on random "
       "inputs and compares with the eager forward. Prints the largest absolute and relative errors; exits 1 when the "
       "relative error exceeds the tolerance. MODEL may be a TorchScript file (then --input is required).",
       {"text", "json"}, true, input_known, true,
       {{"--against-torch",
         "also run the TorchScript file MODEL in LibTorch and compare symtrace's eager and graph results with "
         "LibTorch's",
         // clang-format on
         &Options::against_torch}},
       // clang-format off
       "JSON: {\"model\", \"max_abs_error\", \"max_rel_error\", \"ok\"}.", check_command},
      {"ops", "the ops MODEL calls when run (for a selective build)",
       "Runs MODEL eagerly on random inputs and lists the ops it called (the closed set a selective build needs), "
       "with the calls of each, the calls made inside other ops (nested) and the calls that took an op's training "
       "path. For a TorchScript file it lists LibTorch's operators as a selective build of LibTorch needs them: "
       "the root operators its code calls, the operators LibTorch runs for them in a forward, those run while "
       "loading the file, and the custom classes it uses (yaml: the layout of PyTorch's selective build).",
       {"text", "json", "yaml"}, true, input_known, false,
       // clang-format on
       {{"--training", "also run it in training mode and list what each mode needs", &Options::training}},
       "JSON: {\"model\", \"inputs\", \"modes\": {\"inference\": [{\"op\", \"calls\", \"nested_calls\", "
       "\"training_calls\"}], \"training\": [...]}, \"ops\": [...], \"training_only\": [...]}; for a TorchScript "
       "file {\"model\", \"inputs\", \"root_operators\", \"traced_operators\", \"load_operators\", "
       "\"custom_classes\"}.",
       ops_command},
      // clang-format off
      {"analyze", "parameters and MACs per module, and the channel groups for pruning",
       "Traces MODEL for analysis (robustly, with built-in layers traced through) and prints a summary table (every "
       "module with its output shape, parameters and MACs; one multiply-add is one MAC; a failed module counts with "
       "what its children traced as roots compute, its own code's cost unknown, so it and the totals above it are "
       "lower bounds, ? when nothing is known), then the channel groups structured pruning "
       "must cut together, whether each can be pruned (and why not), and the layers failed modules hide.",
       {"text", "json"}, true, input_default, false, {},
       // clang-format on
       "JSON: {\"model\", \"summary\": {\"parameters\", \"macs\", \"flops\", \"activation_bytes\", "
       "\"complete\", \"unknown\", \"modules\": [...]}, \"pruning\": {\"groups\": [...], \"hidden\": [...]}}.",
       analyze_command},
      // clang-format off
      {"prune", "prune channels of MODEL (a TorchScript file: write the smaller file with -o)",
       "Finds MODEL's channel groups (as analyze does), ranks each prunable group's channels by the norm of the "
       "weights that produce them (--criterion) and cuts the smallest fraction --amount of every group (rounded down), "
       "then prints what it did: each group pruned (channels before and after) or refused (with the reason), and "
       "parameters and MACs before and after. For a TorchScript file, -o writes the pruned model as a TorchScript "
       "file (parameters and buffers cut; a cut depthwise convolution computes its groups from its weight, an "
       "attention layer with heads cut its heads from its attributes), kept "
       "only when symtrace loads and analyses it as it did the original; with --check, only when LibTorch runs it "
       "and it computes what the original computes with the cut channels unread by any layer (a zoo model is always "
       "checked so, in memory). Exit 1 when the pruned model fails those checks. --plan FILE cuts the channels a plan chooses instead (the JSON output is the "
       "search space to choose them from). Exit 2 for an amount outside [0, 1), a plan naming groups or channels "
       "that do not exist, or a model with no group to prune; nothing is written then.",
       {"text", "json"}, true, input_known, false,
       {{"--check",
         "also run the pruned file and the original with the cut channels unread by any layer in LibTorch, and "
         "keep the file only when they compute the same (relative error 1e-5); a zoo model is always checked so",
         &Options::check_pruned}},
       // clang-format on
       "JSON: {\"model\", \"amount\", \"criterion\", \"plan\", \"groups\": [{\"group\", \"graph\", \"channels\", "
       "\"period\", \"width\", \"kept\", \"prunable\", \"reason\", \"members\": [{\"tensor\", \"dim\", \"offset\", \"role\", \"period\"}]}], "
       "\"parameters\": {\"before\", \"after\"}, \"macs\": {\"before\", \"after\", \"complete\"}, "
       "\"max_rel_error\", \"output\"}: the groups are a search space (kept is null for a group not cut); "
       "max_rel_error is the pruned model against the original with the cut channels unread (null when nothing "
       "was cut).",
       prune_command},
  }};
  return specs;
}

constexpr std::string_view program_description =
    "Robust symbolic tracing of module hierarchies: what torch.fx does for Python, for C++ models, and a model is "
    "always captured as far as it can be.";
constexpr std::string_view program_footer =
    "MODEL is a zoo model's name, or a TorchScript file saved from PyTorch (torch.jit.script or torch.jit.trace, then "
    ".save): `symtrace report resnet50.pt --input 1x3x224x224`. A file needs --input: it stores no example inputs.\n"
    "\n"
    "With no command, symtrace runs `symtrace report mixed_failures`: a model whose blocks fail in each of the common "
    "ways, captured as far as it can be. `symtrace COMMAND --help` describes a command. Exit codes: 0 done, 1 the job "
    "found a problem, 2 bad usage or input.";

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& c : commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

/// The command that has the switch `name`.
std::string_view owner_of(std::string_view name) {
  for (const CommandSpec& c : commands()) {
    for (const Switch& s : c.switches) {
      if (s.name == name) return c.name;
    }
  }
  return {};
}

/// `words` joined by spaces into lines of at most `width` characters (a longer word stands
/// alone), each line after the first starting with `hanging` spaces.
std::string wrap_words(const std::vector<std::string_view>& words, std::size_t width, std::size_t hanging) {
  std::string out;
  std::size_t line = 0;
  for (std::string_view word : words) {
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      out.append(hanging, ' ');
      line = hanging;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
  }
  return out;
}

/// `text` broken into lines of at most `width` characters; its own line breaks are kept.
std::string wrap(std::string_view text, std::size_t width) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::vector<std::string_view> words;
    for (std::size_t at = start; at < end;) {
      std::size_t stop = text.find(' ', at);
      if (stop == std::string_view::npos || stop > end) stop = end;
      if (stop > at) words.push_back(text.substr(at, stop - at));
      at = stop + 1;
    }
    if (start > 0) out += '\n';
    out += wrap_words(words, width, 0);
    start = end + 1;
  }
  return out;
}

constexpr std::size_t help_width = 92;
constexpr std::size_t option_column = 18;

/// Help in the program's shape: the usage line (made from the command's options), its
/// description, its options as CLI11 lists them, and what its JSON looks like.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(option_column); }

  std::string make_usage(const CLI::App* app, std::string) const override {
    if (app->get_parent() == nullptr) return "usage: symtrace [COMMAND] [OPTIONS]\n";
    std::vector<std::string> words{"usage: symtrace " + app->get_name()};
    for (const CLI::Option* option : app->get_options()) {
      if (option == app->get_help_ptr()) continue;
      if (option->get_positional()) {
        words.push_back(option->get_name());
        continue;
      }
      // The short name where there is one (-o, not --output), and "..." after a repeatable one.
      std::string text = option->get_snames().empty() ? "--" + option->get_lnames().front() : "-" + option->get_snames().front();
      if (!option->get_type_name().empty()) text += ' ' + option->get_type_name();
      const bool repeats = option->get_expected_max() == CLI::detail::expected_max_vector_size;
      words.push_back(fmt::format("[{}]{}", text, repeats ? "..." : ""));
    }
    // Each further line under the command's arguments; never a break inside [].
    const std::string usage = wrap_words({words.begin(), words.end()}, help_width, words.front().size() + 1);
    return usage + '\n';
  }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    std::string out = make_usage(app, name) + '\n' + wrap(app->get_description(), help_width) + '\n';
    if (app->get_parent() == nullptr) {
      out += "\ncommands:\n";
      for (const CommandSpec& c : commands()) {
        const std::string head = fmt::format("{}{}", c.name, c.takes_model ? " MODEL" : "");
        out += fmt::format("  {:<{}}{}\n", head, option_column, c.summary);
      }
    } else {
      out += make_positionals(app) + make_groups(app, mode);
    }
    if (!app->get_footer().empty()) out += '\n' + wrap(app->get_footer(), help_width) + '\n';
    return out;
  }

  std::string make_option_desc(const CLI::Option* option) const override {
    return wrap(option->get_description(), help_width - option_column - 2);  // CLI11 indents each line
  }
};

/// The command line's parser. Every option is bound to `options`; every command allows
/// extras, which parse() turns into the program's errors. One command at most (a second
/// command's name is an argument); an option given twice takes its last value, as before;
/// a switch takes no value (`--training=false` is an error, not a way to turn it off).
std::unique_ptr<CLI::App> make_app(Options& options, std::string& tolerance, std::string& amount) {
  auto app = std::make_unique<CLI::App>(std::string(program_description), "symtrace");
  app->formatter(std::make_shared<HelpFormatter>());
  app->footer(std::string(program_footer));
  app->allow_extras();
  app->require_subcommand(0, 1);
  app->set_help_flag("-h,--help", "this help");
  app->add_flag("--version", options.version, "the program's version")->disable_flag_override();
  for (const CommandSpec& c : commands()) {
    CLI::App* sub = app->add_subcommand(std::string(c.name), std::string(c.description));
    sub->allow_extras();
    sub->footer(std::string(c.json));
    sub->set_help_flag("-h,--help", "this help");
    sub->add_flag("--version", options.version, "the program's version")->disable_flag_override();
    if (c.takes_model) sub->add_option("MODEL", options.model,
                                       c.name == "report" ? "a zoo model's name, a TorchScript file or a saved report (.json)"
                                                          : "a zoo model's name or a TorchScript file")
                           ->type_name("");
    if (!c.input_help.empty()) {
      sub->add_option("--input", options.inputs, std::string(c.input_help))->type_name("SHAPE")->allow_extra_args(false);
      sub->add_option("--dim", options.dims,
                      "the range of a named dim of --input, NAME=LO..HI or NAME=LO.. (a name in a shape, as N in "
                      "--input Nx3x224x224, is a dim of any size >= 1 without it)")
          ->type_name("RANGE")
          ->allow_extra_args(false);
    }
    if (c.name == "analyze") {
      sub->add_option("--at", options.at,
                      "evaluate the costs and shapes, formulas of the named dims of --input, for these sizes: "
                      "NAME=SIZE,... (e.g. --input Nx3xHxW --at N=8,H=224,W=224)")
          ->type_name("SIZES")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    if (c.name == "prune") {
      sub->add_option("--amount", amount, "the fraction of each group's channels to cut, in [0, 1) (e.g. 0.3)")
          ->type_name("A")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
      sub->add_option("--plan", options.plan,
                      "cut as the JSON plan in FILE says instead of by --amount: {\"groups\": [{\"group\": 2, "
                      "\"keep\": [0, 3, ...]}, ...]}, the groups numbered as prune and analyze number them, the "
                      "channels to keep in increasing order")
          ->type_name("FILE")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
      sub->add_option("--criterion", options.criterion,
                      "how channels are ranked: l1 (default) or l2, the norm of the weights producing them")
          ->type_name("l1|l2")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    if (c.takes_tolerance) {
      sub->add_option("--tolerance", tolerance,
                      "the largest relative error accepted (default 1e-05): max |graph - eager| over max |eager|")
          ->type_name("R")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    for (const Switch& s : c.switches) {
      sub->add_flag(std::string(s.name), options.*s.field, std::string(s.help))->disable_flag_override();
    }
    sub->add_option("--format", options.format, fmt::format("{} (the first is the default)", fmt::join(c.formats, ", ")))
        ->type_name(fmt::format("{}", fmt::join(c.formats, "|")))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    sub->add_option("-o,--output", options.output, "write to FILE instead of standard output")
        ->type_name("FILE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  return app;
}

/// The program's error for what CLI11 left of the command line of `spec` (a command, or null
/// for the program), whose MODEL is `model`.
[[noreturn]] void reject_extra(const CommandSpec* spec, const std::vector<std::string>& extras, const std::string& model) {
  const std::string& first = extras.front();
  if (spec == nullptr) {
    if (first.starts_with("-")) {
      throw UsageError("", "options need a command first, e.g. symtrace report resnet50_fail4 --format json");
    }
    throw UsageError("", fmt::format("unknown command '{}'; the commands are zoo, trace, report, check, ops, analyze and prune", first));
  }
  const std::string command(spec->name);
  if (first.starts_with("-")) {
    const std::string name = first.substr(0, first.find('='));
    if (std::string_view owner = owner_of(name); !owner.empty()) {
      throw UsageError(command, fmt::format("{} takes no {} ({} does)", command, name, owner));
    }
    if (name == "--input" || name == "--dim") throw UsageError(command, fmt::format("{} takes no {}", command, name));
    if (name == "--tolerance") throw UsageError(command, fmt::format("{} takes no --tolerance (check does)", command));
    if (name == "--at") throw UsageError(command, fmt::format("{} takes no --at (analyze does)", command));
    if (name == "--amount" || name == "--criterion" || name == "--plan")
      throw UsageError(command, fmt::format("{} takes no {} (prune does)", command, name));
    throw UsageError(command, fmt::format("unknown option '{}'; see --help for the options", first));
  }
  if (!spec->takes_model) throw UsageError(command, fmt::format("{} takes no argument, got '{}'", command, first));
  const auto given = 1 + std::count_if(extras.begin(), extras.end(), [](const std::string& a) { return !a.starts_with("-"); });
  throw UsageError(command, fmt::format("{} takes one MODEL, got {} ('{}' and '{}')", command, given, model, first));
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  std::string tolerance, amount;
  std::unique_ptr<CLI::App> app = make_app(o, tolerance, amount);
  const CommandSpec* spec = nullptr;
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    o.help = true;
  } catch (const CLI::ParseError& e) {
    // What CLI11 refuses itself: an option without its value ("--input: 1 required SHAPE
    // missing"), a switch given a value ("training was given a disallowed flag override").
    for (const CLI::App* sub : app->get_subcommands()) spec = find_command(sub->get_name());
    const std::string command = spec != nullptr ? std::string(spec->name) : std::string();
    const std::string what = e.what();
    if (const std::size_t at = what.find(" was given a disallowed flag override"); at != std::string::npos) {
      const std::string name = "--" + what.substr(0, at);  // CLI11 names the switch without its dashes
      throw UsageError(command, fmt::format("{} takes no value; write {} alone", name, name));
    }
    if (what.ends_with(" missing")) {
      const std::string name = what.substr(0, what.find(':'));
      throw UsageError(command, fmt::format("{} needs a value", name == "--output" ? "-o" : name));
    }
    throw UsageError(command, fmt::format("{}; see --help for the options", what));
  }
  for (const CLI::App* sub : app->get_subcommands()) spec = find_command(sub->get_name());
  if (spec != nullptr) o.command = std::string(spec->name);
  if (o.help || o.version) return o;
  if (!app->remaining().empty()) {
    if (spec != nullptr) {
      throw UsageError(o.command, fmt::format("options go after the command: symtrace {}{} {}", o.command,
                                              spec->takes_model ? " MODEL" : "", fmt::join(app->remaining(), " ")));
    }
    reject_extra(nullptr, app->remaining(), o.model);
  }
  if (spec == nullptr) return o;  // no command: the default job
  const std::string& command = o.command;
  const CLI::App* sub = app->get_subcommand(command);
  if (!sub->remaining().empty()) reject_extra(spec, sub->remaining(), o.model);
  if (spec->takes_model && o.model.empty()) {
    throw UsageError(command, fmt::format("{} needs a MODEL; `symtrace zoo` lists them", command));
  }
  if (sub->count("--format") == 0) o.format = std::string(spec->formats.front());
  if (std::find(spec->formats.begin(), spec->formats.end(), o.format) == spec->formats.end()) {
    throw UsageError(command, fmt::format("{} has no format '{}'; use one of {}", command, o.format,
                                          fmt::join(spec->formats, ", ")));
  }
  if (sub->count("--output") > 0 && o.output.empty()) throw UsageError(command, "-o needs a file name");
  if (const CLI::Option* given = sub->get_option_no_throw("--tolerance"); given != nullptr && given->count() > 0) {
    const std::string& text = tolerance;
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0)) {
      throw UsageError(command, fmt::format("--tolerance '{}' is not a number >= 0; write e.g. --tolerance 1e-4", text));
    }
    o.tolerance = value;
  }
  if (command == "prune") {
    const bool by_amount = sub->count("--amount") > 0, by_plan = sub->count("--plan") > 0;
    if (by_amount == by_plan)
      throw UsageError(command, by_plan ? "give --amount or --plan, not both"
                                        : "prune needs --amount A, the fraction of each group's channels to cut (e.g. "
                                          "--amount 0.3), or --plan FILE");
    if (by_amount) {
      double value = 0;
      auto [end, ec] = std::from_chars(amount.data(), amount.data() + amount.size(), value);
      if (ec != std::errc() || end != amount.data() + amount.size() || !(value >= 0 && value < 1))
        throw UsageError(command, fmt::format("--amount '{}' is not a number in [0, 1); write e.g. --amount 0.3", amount));
      o.amount = value;
    }
    if (o.criterion != "l1" && o.criterion != "l2")
      throw UsageError(command, fmt::format("--criterion '{}' is not l1 or l2", o.criterion));
    // -o is the pruned model's file; what prune did goes to standard output.
    o.pruned_file = std::exchange(o.output, {});
  }
  for (const std::string& text : o.dims) {
    auto bad = [&](const std::string& why) {
      return UsageError(command, fmt::format("--dim '{}': {}; write NAME=LO..HI or NAME=LO.., e.g. --dim H=32..1024", text, why));
    };
    const std::size_t eq = text.find('='), dots = text.find("..");
    if (eq == std::string::npos || dots == std::string::npos || dots < eq) throw bad("it is not NAME=LO..HI");
    const std::string name = text.substr(0, eq);
    if (name.find('x') != std::string::npos)
      throw bad(fmt::format("the name '{}' holds an x, which --input reads as the separator of sizes", name));
    const auto number = [&](std::string_view part, std::int64_t none) {
      if (part.empty() && none != 0) return none;
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 0)
        throw bad(fmt::format("'{}' is not a size", part));
      return v;
    };
    const std::string_view rest(text);
    const SymRange range{number(rest.substr(eq + 1, dots - eq - 1), 0), number(rest.substr(dots + 2), SymRange::unbounded)};
    try {
      (void)SymExpr::symbol(name, range);
    } catch (const std::invalid_argument& e) {
      throw bad(e.what());
    }
    if (std::find_if(o.dim_ranges.begin(), o.dim_ranges.end(), [&](const auto& d) { return d.first == name; }) != o.dim_ranges.end())
      throw bad(fmt::format("{} has a range already; give each dim one --dim", name));
    o.dim_ranges.emplace_back(name, range);
  }
  for (const auto& [name, range] : o.dim_ranges) {
    // The names an --input shape holds: the runs of name characters between the x separators
    // (and the brackets, commas and colons of a list or dict).
    const bool used = std::any_of(o.inputs.begin(), o.inputs.end(), [&](const std::string& input) {
      std::string token;
      for (std::size_t i = 0; i <= input.size(); ++i) {
        const char c = i < input.size() ? input[i] : ' ';
        if ((std::isalnum(static_cast<unsigned char>(c)) || c == '_') && c != 'x') {
          token += c;
          continue;
        }
        if (token == name) return true;
        token.clear();
      }
      return false;
    });
    if (!used) throw UsageError(command, fmt::format("--dim names {}, which no --input shape names; write it in a shape, e.g. --input {}x3x224x224", name, name));
  }
  if (const CLI::Option* given_at = sub->get_option_no_throw("--at"); given_at != nullptr && given_at->count() > 0) {
    std::string_view rest = o.at;
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      const std::size_t eq = item.find('=');
      const std::string_view name = item.substr(0, std::min(eq, item.size()));
      const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (eq == std::string_view::npos || name.empty() || value.empty() || ec != std::errc() ||
          end != value.data() + value.size() || v < 0)
        throw UsageError(command, fmt::format("--at '{}': '{}' is not NAME=SIZE; write e.g. --at N=8,H=224,W=224", o.at, item));
      if (std::any_of(o.at_values.begin(), o.at_values.end(), [&](const auto& b) { return b.first == name; }))
        throw UsageError(command, fmt::format("--at '{}' gives {} twice; give each dim once", o.at, name));
      o.at_values.emplace_back(std::string(name), v);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  if (o.format == "onnx") {
    if (o.output.empty()) {
      throw UsageError(command, "--format onnx writes a binary model: give it a file with -o, e.g. -o model.onnx");
    }
    if (!onnx_export_available()) {
      throw UsageError(command, "--format onnx: this symtrace was built without ONNX support; install libonnx-dev "
                                "and libprotobuf-dev (tools/install-deps) and reconfigure the build");
    }
  }
  return o;
}

std::string help_text(std::string_view command) {
  Options o;
  std::string tolerance, amount;
  std::unique_ptr<CLI::App> app = make_app(o, tolerance, amount);
  if (const CommandSpec* spec = find_command(command)) return app->get_subcommand(std::string(spec->name))->help();
  return app->help();
}

int run_command(const Options& options, Output& output, std::ostream& err) {
  const CommandSpec* spec = find_command(options.command);
  if (spec == nullptr) throw UsageError("", fmt::format("unknown command '{}'", options.command));
  return spec->run(options, output, err);
}

Shape parse_shape(std::string_view text, const Options& options) {
  auto bad = [&](const std::string& why) {
    return UsageError(options.command, fmt::format("--input '{}': {}; write sizes separated by x, e.g. --input 1x3x224x224 "
                                                   "(? for an unknown size, a name such as N for a named dim)",
                                                   text, why));
  };
  if (text.empty()) throw bad("the shape is empty");
  Shape shape;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find('x', start);
    std::string_view part = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part == "?") {
      shape.push_back(Dim());
    } else if (!part.empty() && !std::isdigit(static_cast<unsigned char>(part.front()))) {
      SymRange range;
      for (const auto& [name, r] : options.dim_ranges)
        if (name == part) range = r;
      try {
        shape.push_back(Dim(SymExpr::symbol(part, range)));
      } catch (const std::invalid_argument& e) {
        throw bad(e.what());
      }
    } else {
      std::int64_t size = 0;
      auto [stop, ec] = std::from_chars(part.data(), part.data() + part.size(), size);
      if (part.empty() || ec != std::errc() || stop != part.data() + part.size() || size < 0) {
        throw bad(part.empty() ? std::string("a size is missing") : fmt::format("'{}' is not a size", part));
      }
      shape.push_back(size);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return shape;
}

}  // namespace symtrace::cli

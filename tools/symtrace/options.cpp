// The command line of the symtrace program: parsing and help texts.
#include "options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>

namespace symtrace::cli {
namespace {

struct CommandSpec {
  std::string_view name;
  bool takes_model;
  std::vector<std::string_view> formats;
  bool takes_inputs;
  bool takes_tolerance;
  std::vector<std::string_view> flags;  ///< the command's own switches
};

const std::array<CommandSpec, 6>& commands() {
  static const std::array<CommandSpec, 6> specs{{
      {"zoo", false, {"text", "json"}, false, false, {}},
      {"trace", true, {"text", "tabular", "json", "dot", "svg", "onnx"}, true, false, {}},
      {"report", true, {"text", "json", "dot", "svg"}, true, false, {"--by-execution"}},
      {"check", true, {"text", "json"}, true, true, {"--against-torch"}},
      {"ops", true, {"text", "json"}, true, false, {"--training"}},
      {"analyze", true, {"text", "json"}, true, false, {}},
  }};
  return specs;
}

/// The command that has the switch `flag`.
std::string_view owner_of(std::string_view flag) {
  for (const CommandSpec& c : commands()) {
    if (std::find(c.flags.begin(), c.flags.end(), flag) != c.flags.end()) return c.name;
  }
  return {};
}

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& c : commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

/// The value of an option written `--name VALUE` or `--name=VALUE`; advances `i` past it.
std::string option_value(const std::vector<std::string>& args, std::size_t& i, std::string_view name,
                         const std::string& command) {
  const std::string& arg = args[i];
  if (arg.size() > name.size() && arg[name.size()] == '=') return arg.substr(name.size() + 1);
  if (i + 1 >= args.size()) {
    throw UsageError(command, fmt::format("{} needs a value", name));
  }
  return args[++i];
}

bool is_option(const std::string& arg, std::string_view name) {
  return arg == name || (arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=');
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  const CommandSpec* spec = nullptr;
  std::vector<std::string> positional;
  bool format_given = false;
  bool tolerance_given = false;
  std::vector<std::string_view> flags;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::string& command = o.command;
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--version") {
      o.version = true;
    } else if (is_option(arg, "--input")) {
      o.inputs.push_back(option_value(args, i, "--input", command));
    } else if (is_option(arg, "--format")) {
      o.format = option_value(args, i, "--format", command);
      format_given = true;
    } else if (arg == "-o" || is_option(arg, "--output")) {
      o.output = option_value(args, i, arg == "-o" ? "-o" : "--output", command);
      if (o.output.empty()) throw UsageError(command, "-o needs a file name");
    } else if (is_option(arg, "--tolerance")) {
      std::string text = option_value(args, i, "--tolerance", command);
      double value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0)) {
        throw UsageError(command, fmt::format("--tolerance '{}' is not a number >= 0; write e.g. --tolerance 1e-4", text));
      }
      o.tolerance = value;
      tolerance_given = true;
    } else if (arg == "--by-execution" || arg == "--training" || arg == "--against-torch") {
      (arg == "--training" ? o.training : arg == "--against-torch" ? o.against_torch : o.by_execution) = true;
      flags.push_back(arg == "--training"        ? std::string_view("--training")
                      : arg == "--against-torch" ? std::string_view("--against-torch")
                                                 : std::string_view("--by-execution"));
    } else if (arg.size() > 1 && arg.front() == '-') {
      throw UsageError(command, fmt::format("unknown option '{}'; see --help for the options", arg));
    } else if (spec == nullptr && o.command.empty()) {
      spec = find_command(arg);
      if (spec == nullptr) {
        throw UsageError("", fmt::format("unknown command '{}'; the commands are zoo, trace, report, check, ops and analyze", arg));
      }
      o.command = arg;
    } else {
      positional.push_back(arg);
    }
  }
  if (o.help || o.version) return o;
  if (spec == nullptr) {
    if (!o.inputs.empty() || format_given || !o.output.empty() || tolerance_given || !flags.empty()) {
      throw UsageError("", "options need a command first, e.g. symtrace report resnet50_fail4 --format json");
    }
    return o;  // no command: the default job
  }
  const std::string& command = o.command;
  if (spec->takes_model) {
    if (positional.empty()) throw UsageError(command, fmt::format("{} needs a MODEL; `symtrace zoo` lists them", command));
    if (positional.size() > 1) {
      throw UsageError(command, fmt::format("{} takes one MODEL, got {} ('{}' and '{}')", command, positional.size(),
                                            positional[0], positional[1]));
    }
    o.model = positional[0];
  } else if (!positional.empty()) {
    throw UsageError(command, fmt::format("{} takes no argument, got '{}'", command, positional[0]));
  }
  if (std::find(spec->formats.begin(), spec->formats.end(), o.format) == spec->formats.end()) {
    throw UsageError(command, fmt::format("{} has no format '{}'; use one of {}", command, o.format,
                                          fmt::join(spec->formats, ", ")));
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
  if (!spec->takes_inputs && !o.inputs.empty()) {
    throw UsageError(command, fmt::format("{} takes no --input", command));
  }
  if (!spec->takes_tolerance && tolerance_given) {
    throw UsageError(command, fmt::format("{} takes no --tolerance (check does)", command));
  }
  for (std::string_view flag : flags) {
    if (std::find(spec->flags.begin(), spec->flags.end(), flag) == spec->flags.end()) {
      throw UsageError(command, fmt::format("{} takes no {} ({} does)", command, flag, owner_of(flag)));
    }
  }
  return o;
}

Shape parse_shape(std::string_view text, const std::string& command) {
  auto bad = [&](const std::string& why) {
    return UsageError(command, fmt::format("--input '{}': {}; write sizes separated by x, e.g. --input 1x3x224x224 "
                                           "(? for an unknown size)",
                                           text, why));
  };
  if (text.empty()) throw bad("the shape is empty");
  std::vector<std::int64_t> sizes;  // -1: unknown
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find('x', start);
    std::string_view part = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part == "?") {
      sizes.push_back(-1);
    } else {
      std::int64_t size = 0;
      auto [stop, ec] = std::from_chars(part.data(), part.data() + part.size(), size);
      if (part.empty() || ec != std::errc() || stop != part.data() + part.size() || size < 0) {
        throw bad(part.empty() ? std::string("a size is missing") : fmt::format("'{}' is not a size", part));
      }
      sizes.push_back(size);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return Shape(sizes);
}

std::string help_text(std::string_view command) {
  if (command == "zoo") {
    return "usage: symtrace zoo [--format text|json] [-o FILE]\n"
           "\n"
           "Lists the zoo's models with their parameter counts and a one-line description.\n"
           "JSON: [{\"name\", \"parameters\", \"description\"}].\n";
  }
  if (command == "trace") {
    return "usage: symtrace trace MODEL [--input SHAPE]... [--format text|tabular|json|dot|svg|onnx] [-o FILE]\n"
           "\n"
           "Traces MODEL symbolically and prints its graph: fx's text form (text), a table\n"
           "(tabular), JSON, Graphviz DOT, or SVG drawn by graphviz's dot; or writes it as an\n"
           "ONNX model (onnx, opset 17, with the parameters as initializers; needs -o). A model\n"
           "that cannot be traced whole is an error (exit 1): `symtrace report MODEL` traces it\n"
           "robustly. A node ONNX cannot express is an error naming it (exit 2).\n"
           "\n"
           "  --input SHAPE   the shape of the next input, sizes separated by x (1x3x224x224; ?\n"
           "                  for an unknown size); default: the model's example inputs\n"
           "  --format F      text (default), tabular, json, dot, svg or onnx\n"
           "  -o FILE         write to FILE instead of standard output (needed by onnx)\n"
           "\n"
           "JSON: {\"model\", \"nodes\": [{\"name\", \"op\", \"target\", \"args\", \"kwargs\", \"shape\",\n"
           "\"dtype\", \"source\"}], \"guards\": [{\"input\", \"value\"}]}.\n";
  }
  if (command == "report") {
    return "usage: symtrace report MODEL [--input SHAPE]... [--by-execution] [--format text|json|dot|svg] [-o FILE]\n"
           "\n"
           "Traces MODEL robustly (recursive_trace) and prints its coverage report: the module tree\n"
           "with a status per module (traced, leaf, failed, unvisited), each failure with its\n"
           "file:line and reason, the graph of each module traced as a root, the unvisited modules\n"
           "and totals. dot and svg draw the module tree coloured by status.\n"
           "\n"
           "  --input SHAPE   the shape of the next input (1x3x224x224; ? for an unknown size)\n"
           "  --by-execution  also run each failed module whose input shapes are known on random\n"
           "                  inputs and record it by execution (a graph specialised on those\n"
           "                  inputs, with the places it read tensor data)\n"
           "  --format F      text (default), json, dot or svg\n"
           "  -o FILE         write to FILE instead of standard output\n"
           "\n"
           "JSON: {\"model\", \"graphs\": [{\"module\", \"type\", \"nodes\"}], \"failed\": [{\"module\", \"type\",\n"
           "\"kind\", \"message\", \"source\", \"op\", \"by_execution\"}], \"unvisited\": [...], \"modules\":\n"
           "[{\"module\", \"type\", \"status\"}], \"totals\": {...}}.\n";
  }
  if (command == "check") {
    return "usage: symtrace check MODEL [--input SHAPE]... [--tolerance REL] [--against-torch] [--format text|json]\n"
           "                      [-o FILE]\n"
           "\n"
           "Traces MODEL (robustly: failed modules run eagerly as leaves), runs the graph with the\n"
           "interpreter on random inputs and compares with the eager forward. Prints the largest\n"
           "absolute and relative errors; exits 1 when the relative error exceeds the tolerance.\n"
           "MODEL may be a TorchScript file (then --input is required).\n"
           "\n"
           "  --against-torch also run the TorchScript file MODEL in LibTorch and compare symtrace's\n"
           "                  eager and graph results with LibTorch's\n"
           "  --input SHAPE   the shape of the next input (1x3x64x64); default: the model's example inputs\n"
           "  --tolerance R   the largest relative error accepted (default 1e-05): max |graph - eager|\n"
           "                  over max |eager|\n"
           "  --format F      text (default) or json\n"
           "  -o FILE         write to FILE instead of standard output\n"
           "\n"
           "JSON: {\"model\", \"max_abs_error\", \"max_rel_error\", \"ok\"}.\n";
  }
  if (command == "ops") {
    return "usage: symtrace ops MODEL [--input SHAPE]... [--training] [--format text|json] [-o FILE]\n"
           "\n"
           "Runs MODEL eagerly on random inputs and lists the ops it called (the closed set a\n"
           "selective build needs), with the calls of each, the calls made inside other ops\n"
           "(nested) and the calls that took an op's training path.\n"
           "\n"
           "  --input SHAPE   the shape of the next input (1x3x64x64); default: the model's example inputs\n"
           "  --training      also run it in training mode and list what each mode needs\n"
           "  --format F      text (default) or json\n"
           "  -o FILE         write to FILE instead of standard output\n"
           "\n"
           "JSON: {\"model\", \"inputs\", \"modes\": {\"inference\": [{\"op\", \"calls\", \"nested_calls\",\n"
           "\"training_calls\"}], \"training\": [...]}, \"ops\": [...], \"training_only\": [...]}.\n";
  }
  if (command == "analyze") {
    return "usage: symtrace analyze MODEL [--input SHAPE]... [--format text|json] [-o FILE]\n"
           "\n"
           "Traces MODEL for analysis (robustly, with built-in layers traced through) and prints a\n"
           "summary table (every module with its output shape, parameters and MACs; one\n"
           "multiply-add is one MAC; the cost of a failed module is unknown, shown as ?, and totals\n"
           "that miss it as lower bounds), then the channel groups structured pruning must cut\n"
           "together, whether each can be pruned (and why not), and the layers failed modules hide.\n"
           "\n"
           "  --input SHAPE   the shape of the next input (1x3x224x224); default: the model's example inputs\n"
           "  --format F      text (default) or json\n"
           "  -o FILE         write to FILE instead of standard output\n"
           "\n"
           "JSON: {\"model\", \"summary\": {\"parameters\", \"macs\", \"flops\", \"activation_bytes\",\n"
           "\"complete\", \"unknown\", \"modules\": [{\"module\", \"type\", \"status\", \"output\",\n"
           "\"parameters\", \"macs\", \"flops\", \"complete\"}]}, \"pruning\": {\"groups\": [{\"graph\",\n"
           "\"channels\", \"prunable\", \"reason\", \"members\": [{\"tensor\", \"dim\", \"offset\",\n"
           "\"role\"}]}], \"hidden\": [{\"module\", \"type\", \"layers\"}]}}.\n";
  }
  return "usage: symtrace [COMMAND] [OPTIONS]\n"
         "\n"
         "Robust symbolic tracing of module hierarchies: what torch.fx does for Python, for C++\n"
         "models, and a model is always captured as far as it can be.\n"
         "\n"
         "commands:\n"
         "  zoo               the zoo's models, with parameter counts\n"
         "  trace MODEL       the symbolic graph of MODEL (text, tabular, json, dot, svg, onnx)\n"
         "  report MODEL      recursive_trace of MODEL and its coverage report (text, json, dot, svg)\n"
         "  check MODEL       trace MODEL, run the graph, compare with eager\n"
         "  ops MODEL         the ops MODEL calls when run (for a selective build)\n"
         "  analyze MODEL     parameters and MACs per module, and the channel groups for pruning\n"
         "\n"
         "MODEL is a zoo model's name, or a TorchScript file saved from PyTorch (torch.jit.script or\n"
         "torch.jit.trace, then .save): `symtrace report resnet50.pt --input 1x3x224x224`. A file\n"
         "needs --input: it stores no example inputs.\n"
         "\n"
         "With no command, symtrace runs `symtrace report mixed_failures`: a model whose blocks\n"
         "fail in each of the common ways, captured as far as it can be.\n"
         "`symtrace COMMAND --help` describes a command. Exit codes: 0 done, 1 the job found a\n"
         "problem, 2 bad usage or input.\n";
}

}  // namespace symtrace::cli

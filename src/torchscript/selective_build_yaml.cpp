// The operator lists in the YAML layout of PyTorch's selective build (torchgen's
// SelectiveBuilder), as the mobile model tracer writes it. Needs no LibTorch.
#include "symtrace/torchscript/operator_lists.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace symtrace::torchscript {

namespace {

void operator_entry(std::string& out, const std::string& name, bool root) {
  // Operator names hold `::` and `.`, which YAML reads as a plain key; no quoting is needed.
  fmt::format_to(std::back_inserter(out),
                 "  {}:\n    is_used_for_training: false\n    is_root_operator: {}\n    include_all_overloads: false\n",
                 name, root ? "true" : "false");
}

}  // namespace

std::string selective_build_yaml(const OperatorLists& lists) {
  std::string out = "include_all_non_op_selectives: false\nbuild_features: []\n";
  const bool none = lists.root_operators.empty() && lists.traced_operators.empty() && lists.load_operators.empty();
  out += none ? "operators: {}\n" : "operators:\n";
  for (const std::string& op : lists.root_operators) operator_entry(out, op, true);
  for (const std::string& op : lists.traced_operators) operator_entry(out, op, false);
  for (const std::string& op : lists.load_operators) operator_entry(out, op, false);
  out += "kernel_metadata: {}\n";
  if (lists.custom_classes.empty()) {
    out += "custom_classes: []\n";
    return out;
  }
  out += "custom_classes:\n";
  for (const std::string& c : lists.custom_classes) {
    // TORCH_SELECTIVE_CLASS names a class by what follows its namespace.
    const std::size_t dot = c.rfind('.');
    fmt::format_to(std::back_inserter(out), "- {}\n", dot == std::string::npos ? c : c.substr(dot + 1));
  }
  return out;
}

}  // namespace symtrace::torchscript

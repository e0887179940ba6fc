// The channel groups as text and JSON.
#include "symtrace/analysis/channel_groups.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>

namespace symtrace {

namespace {

using json = nlohmann::ordered_json;

/// What the text names for a member: its layer (the module owning the tensor), with the
/// channels' range when they sit at an offset; a parameter of the model itself by its name.
std::string member_name(const GroupMember& m, std::int64_t channels) {
  const std::size_t dot = m.tensor.rfind('.');
  std::string name = dot == std::string::npos ? m.tensor : m.tensor.substr(0, dot);
  if (m.offset != 0) name += fmt::format(" [{}:{}]", m.offset, m.offset + channels);
  return name;
}

std::string text(const ChannelGroups& groups) {
  std::string out = fmt::format("Pruning groups: {} of {} can be pruned\n", groups.num_prunable(), groups.groups.size());
  for (std::size_t i = 0; i < groups.groups.size(); ++i) {
    const ChannelGroup& g = groups.groups[i];
    out += fmt::format("group {}: {} channels, {}", i + 1, g.channels, g.prunable ? "prunable" : "fixed: " + g.reason);
    if (g.period > 0) out += fmt::format(", cut alike in each block of {} (grouped convolution)", g.period);
    if (g.width > 1) out += fmt::format(", each {} wide (attention heads)", g.width);
    if (!g.graph.empty()) out += fmt::format(" (in the graph of '{}')", g.graph);
    out += '\n';
    for (ChannelRole role : {ChannelRole::out, ChannelRole::in, ChannelRole::param}) {
      std::vector<std::string> names;
      for (const GroupMember& m : g.members) {
        if (m.role != role) continue;
        std::string name = member_name(m, g.channels);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
      }
      if (names.empty()) continue;
      out += fmt::format("  {}: {}\n", role == ChannelRole::param ? "with" : to_string(role), fmt::join(names, ", "));
    }
  }
  bool any = false;
  for (const HiddenLayers& h : groups.hidden) {
    if (h.layers.empty()) continue;
    if (!any) out += "Layers hidden in failed modules (their channels cannot be followed):\n";
    any = true;
    out += fmt::format("  {} ({}): {}\n", h.module.empty() ? "the model" : h.module, h.type, fmt::join(h.layers, ", "));
  }
  return out;
}

std::string json_text(const ChannelGroups& groups) {
  json list = json::array();
  for (const ChannelGroup& g : groups.groups) {
    json members = json::array();
    for (const GroupMember& m : g.members) {
      members.push_back(json{{"tensor", m.tensor},
                             {"dim", m.dim},
                             {"offset", m.offset},
                             {"role", to_string(m.role)},
                             {"period", m.period > 0 ? json(m.period) : json(nullptr)}});
    }
    list.push_back(json{{"graph", g.graph},
                        {"channels", g.channels},
                        {"period", g.period > 0 ? json(g.period) : json(nullptr)},
                        {"width", g.width},
                        {"prunable", g.prunable},
                        {"reason", g.reason},
                        {"members", std::move(members)}});
  }
  json hidden = json::array();
  for (const HiddenLayers& h : groups.hidden) {
    hidden.push_back(json{{"module", h.module}, {"type", h.type}, {"layers", h.layers}});
  }
  const json doc{{"groups", std::move(list)}, {"hidden", std::move(hidden)}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + '\n';
}

}  // namespace

std::string to_string(const ChannelGroups& groups, ReportFormat format) {
  return format == ReportFormat::json ? json_text(groups) : text(groups);
}

}  // namespace symtrace

// Costs per node and per module. Each node of the model's graph is charged to the module whose
// forward recorded it (its scope) and to every ancestor of that module; a failed module or a
// leaf (a call_module node) makes its own cost unknown and its ancestors' totals lower bounds.

#include "symtrace/analysis/model_summary.hpp"

#include "symtrace/analysis/analysis_trace.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/linalg.hpp"
#include "symtrace/ops/registry.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

namespace symtrace {

namespace {

using json = nlohmann::ordered_json;

/// The element count of a node's result, as an expression; nullopt when a size is anonymous.
std::optional<SymExpr> numel_of(const Node* n) {
  if (n == nullptr || n->tensor_meta() == nullptr) return std::nullopt;
  return n->tensor_meta()->shape.numel_dim().expr();
}

/// The known size of dim 0 of a node's result (a weight's output or input channels), else nullopt.
std::optional<std::int64_t> first_dim(const Node* n) {
  if (n == nullptr || n->tensor_meta() == nullptr || n->tensor_meta()->shape.rank() < 1) return std::nullopt;
  return n->tensor_meta()->shape[0].maybe();
}

/// Ops charged one FLOP per input element (they read every element once).
bool reads_every_input(std::string_view op) {
  return op == "max_pool2d" || op == "avg_pool2d" || op == "adaptive_avg_pool2d" || op == "softmax" ||
         op == "log_softmax";
}

/// The cost of an op node; throws std::invalid_argument when a cost overflows 64 bits.
NodeCost op_cost(const Node& n, const OpDef& op) {
  NodeCost c;
  const std::optional<SymExpr> out = numel_of(&n);
  const bool owns_storage = !op.has(OpFlags::view) && !op.has(OpFlags::inplace);
  if (owns_storage && out) c.output_bytes = *out * SymExpr(static_cast<std::int64_t>(element_size(n.tensor_meta()->dtype)));
  const std::string_view name = op.name();
  if (op.has(OpFlags::external)) {
    // Another library's op (LibTorch's, docs/design.md decision 14): what it computes is not
    // known here, so neither is its cost. Not guessed.
    c.known = false;
    return c;
  }
  if (op.has(OpFlags::channel_mixing)) {
    const Node* w = n.arg_node(1);
    const std::optional<SymExpr> weight = numel_of(w);
    const std::optional<std::int64_t> c_out = first_dim(w);
    const std::optional<SymExpr> per_output = c_out && *c_out > 0 && weight ? divide_exactly(*weight, SymExpr(*c_out)) : std::nullopt;
    if (!out || !per_output) {
      c.known = false;
      return c;
    }
    c.macs = *out * *per_output;
    c.flops = c.macs * SymExpr(2) + (n.arg_node(2) != nullptr ? *out : SymExpr(0));
  } else if (name.starts_with("conv_transpose")) {
    // Each input element is multiplied with the weights of its input channel: weight
    // [in_channels, out_channels / groups, k...] has weight elements / in_channels of them.
    const Node* x = n.arg_node(0);
    const Node* w = n.arg_node(1);
    const std::optional<SymExpr> in = numel_of(x);
    const std::optional<SymExpr> weight = numel_of(w);
    const std::optional<std::int64_t> c_in = first_dim(w);
    const std::optional<SymExpr> per_input = c_in && *c_in > 0 && weight ? divide_exactly(*weight, SymExpr(*c_in)) : std::nullopt;
    if (!in || !out || !per_input) {
      c.known = false;
      return c;
    }
    c.macs = *in * *per_input;
    c.flops = c.macs * SymExpr(2) + (n.arg_node(2) != nullptr ? *out : SymExpr(0));
  } else if (name == "einsum") {
    // The product of all the subscripts' sizes: one multiply-add each.
    const std::string* equation = n.args().empty() ? nullptr : n.args()[0].get_if<std::string>();
    const ArgumentList* operands = n.args().size() < 2 ? nullptr : n.args()[1].get_if<ArgumentList>();
    std::vector<Shape> shapes;
    for (std::size_t i = 0; operands != nullptr && i < operands->size(); ++i) {
      const NodeId* id = (*operands)[i].get_if<NodeId>();
      const Node* operand = id != nullptr ? n.graph().find_node(*id) : nullptr;
      if (operand == nullptr || operand->tensor_meta() == nullptr) break;
      shapes.push_back(operand->tensor_meta()->shape);
    }
    const std::optional<SymExpr> macs = equation != nullptr && operands != nullptr && shapes.size() == operands->size()
                                            ? einsum_macs(*equation, shapes)
                                            : std::nullopt;
    if (!macs) {
      c.known = false;
      return c;
    }
    c.macs = *macs;
    c.flops = c.macs * SymExpr(2);
  } else if (name == "matmul") {
    const Node* self = n.arg_node(0);
    const TensorMeta* m = self ? self->tensor_meta() : nullptr;
    const std::optional<SymExpr> k =
        m != nullptr && m->shape.is_rank_known() && m->shape.rank() >= 1 ? m->shape[m->shape.rank() - 1].expr() : std::nullopt;
    if (!out || !k) {
      c.known = false;
      return c;
    }
    c.macs = *out * *k;
    c.flops = c.macs * SymExpr(2);
  } else if (name == "batch_norm" || name == "layer_norm" || name == "group_norm" || name == "instance_norm") {
    if (!out) c.known = false;
    else c.flops = *out * SymExpr(2);
  } else if (op.has(OpFlags::elementwise)) {
    if (!out) c.known = false;
    else c.flops = *out;
  } else if (op.has(OpFlags::reduction) || reads_every_input(name)) {
    const std::optional<SymExpr> in = numel_of(n.arg_node(0));
    if (!in) c.known = false;
    else c.flops = *in;
  }
  return c;
}

/// a + b into `sum`, false when it overflows 64 bits (`sum` is then unchanged).
bool add_to(SymExpr& sum, SymExpr b) {
  try {
    sum = sum + b;
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

NodeCost node_cost(const Node& n) {
  NodeCost c;
  if (n.op() == OpKind::call_module) {
    c.known = false;
    return c;
  }
  if (n.op() != OpKind::call_function && n.op() != OpKind::call_method) return c;
  const OpDef* op = OpRegistry::instance().find(n.target());
  if (op == nullptr) {
    c.known = n.target() == "getitem" || n.target() == "dict";  // a piece of a result, or a dict of them: no work
    return c;
  }
  if (op->schema.returns_number()) return c;
  try {
    return op_cost(n, *op);
  } catch (const std::invalid_argument&) {  // a cost beyond 64 bits (sizes read from a file can be anything)
    c.known = false;
    return c;
  }
}

GraphCost graph_cost(const Graph& graph) {
  GraphCost total;
  for (const Node& n : graph.nodes()) {
    const NodeCost c = node_cost(n);
    GraphCost sum = total;
    if (!c.known || !add_to(sum.macs, c.macs) || !add_to(sum.flops, c.flops) ||
        !add_to(sum.activation_bytes, c.output_bytes)) {
      ++total.unknown_nodes;
      continue;
    }
    total = sum;
  }
  return total;
}

ModelSummary summarize(const Module& model, const GraphCollection& collection, std::string name,
                       std::source_location where) {
  const Graph* graph = collection.find(model);
  if (collection.size() == 0 || graph == nullptr || collection.begin()->module != &model) {
    throw_invalid_argument(where, "summarize(): the collection was not made from this model ({}); "
                                  "make it with trace_for_analysis(model, inputs)",
                           model.type_name());
  }
  const ModuleHierarchy& h = collection.hierarchy();
  const auto* tracer = dynamic_cast<const AnalysisTracer*>(&collection.tracer());

  ModelSummary s;
  s.model = std::move(name);
  s.parameters = model.num_parameters();
  s.modules.resize(h.size());
  std::vector<bool> inside_unknown(h.size(), false);  // a failed module or leaf, or inside one
  for (std::size_t i = 0; i < h.size(); ++i) {
    const ModuleRecord& r = h[i];
    ModuleSummary& m = s.modules[i];
    m.path = h.path(i);
    m.type = std::string(r.type);
    m.depth = r.depth;
    m.status = r.status;
    m.parameters = r.module->num_parameters();
    if (tracer != nullptr) {
      if (const std::vector<TensorMeta>* out = tracer->module_output(*r.module)) m.output = *out;
    }
    m.macs = SymExpr(0);
    m.flops = SymExpr(0);
  }

  // Charges `cost` to the module at `scope` and its ancestors (by path).
  std::vector<bool> counted(h.size(), false);  // an op of known, nonzero cost was charged to it
  auto charge = [&](std::string_view scope, const NodeCost& cost, bool op) {
    while (true) {
      const std::size_t i = h.index_of(scope);
      if (i != ModuleHierarchy::npos) {
        ModuleSummary& m = s.modules[i];
        counted[i] = counted[i] || (op && cost.known && (cost.macs != SymExpr(0) || cost.flops != SymExpr(0)));
        if (!cost.known || !add_to(*m.macs, cost.macs) || !add_to(*m.flops, cost.flops)) m.complete = false;
      }
      if (scope.empty()) return;
      const std::size_t dot = scope.rfind('.');
      scope = dot == std::string_view::npos ? std::string_view() : scope.substr(0, dot);
    }
  };
  const auto join = [](const std::string& root, std::string_view path) {
    return root.empty() ? std::string(path) : path.empty() ? root
                                                           : fmt::format("{}.{}", root, path);
  };
  // Note [Costs inside failed modules]: the model's graph holds a failed module as a leaf of
  // unknown cost. Its children traced as roots (the collection's other graphs, each of a module
  // inside a failed one) are charged too, at their paths in the model: what they compute on
  // one call, at the inputs of their call. A failed module calls them at least once (they
  // were called, or their inputs are unknown and so is their cost), so the sums up their
  // ancestors, to the model's totals, are lower bounds. Each node of the model lies in one
  // graph: a graph's own failed modules are leaves there, with graphs of their own.
  for (const GraphCollection::Entry& e : collection) {
    const std::string& root_path = e.path;  // "" for the model
    for (const Node& n : e.graph.nodes()) {
      const NodeCost cost = node_cost(n);
      GraphCost sum{s.macs, s.flops, s.activation_bytes, 0};
      if (!cost.known || !add_to(sum.macs, cost.macs) || !add_to(sum.flops, cost.flops) ||
          !add_to(sum.activation_bytes, cost.output_bytes)) {
        s.complete = false;
      } else {
        s.macs = sum.macs;
        s.flops = sum.flops;
        s.activation_bytes = sum.activation_bytes;
      }
      if (n.op() == OpKind::call_module) {
        const std::size_t i = h.index_of(join(root_path, n.target()));
        if (i != ModuleHierarchy::npos && !inside_unknown[i]) {
          inside_unknown[i] = true;
          s.unknown.push_back(h.path(i));
        }
      }
      charge(join(root_path, n.scope()), cost, n.op() == OpKind::call_function || n.op() == OpKind::call_method);
    }
  }
  // A module inside a failed module or leaf: how often and on what it runs is unknown. What its
  // graphs gave is a lower bound; with no op of known cost (views and getitems cost nothing,
  // and say nothing), its cost is unknown.
  for (std::size_t i = 0; i < h.size(); ++i) {
    const std::string& path = s.modules[i].path;
    for (const std::string& u : s.unknown) {
      if (path == u || (path.starts_with(u) && (u.empty() || path[u.size()] == '.'))) {
        s.modules[i].complete = false;
        if (!counted[i]) {
          s.modules[i].macs.reset();
          s.modules[i].flops.reset();
        }
      }
    }
  }
  return s;
}

namespace {

std::string grouped(std::int64_t n) {
  std::string digits = fmt::format("{}", n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// A cost as a number (`4,089,184,256`) or a formula with grouped coefficients and `·` for a
// product (`4,089,184,256·N`); divisors stay as written (`H//32`).
std::string grouped(SymExpr e) {
  if (const std::optional<std::int64_t> c = e.constant_value()) return grouped(*c);
  const std::string text = to_string(e);
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const bool in_name = i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    if (std::isdigit(static_cast<unsigned char>(text[i])) && !in_name && (i == 0 || text[i - 1] != '/')) {
      std::size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      std::int64_t v = 0;
      std::from_chars(text.data() + i, text.data() + j, v);
      out += grouped(v);
      i = j;
    } else if (text[i] == '*') {
      out += "·";
      ++i;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string shapes(const std::vector<TensorMeta>& output) {
  if (output.empty()) return "--";
  std::string out;
  for (const TensorMeta& m : output) out += (out.empty() ? "" : ", ") + to_string(m.shape);
  return out;
}

std::string cost(const std::optional<SymExpr>& value, bool complete) {
  if (!value) return "?";
  return complete ? grouped(*value) : "≥ " + grouped(*value);
}

std::string bytes(SymExpr e) {
  const std::optional<std::int64_t> c = e.constant_value();
  if (!c) return grouped(e) + " B";
  const std::int64_t n = *c;
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024.0);
  return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1024.0 * 1024.0));
}

// " (4.09 G)" for a number; nothing for a formula.
std::string giga(SymExpr e, const char* bound) {
  const std::optional<std::int64_t> n = e.constant_value();
  return n ? fmt::format(" ({}{:.2f} G)", bound, static_cast<double>(*n) / 1e9) : std::string();
}

json cost_json(SymExpr e) {
  if (const std::optional<std::int64_t> c = e.constant_value()) return json(*c);
  return json(to_string(e));
}

/// Width in terminal columns of UTF-8 text (every code point one column).
std::size_t columns(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = columns(s);
  const std::string fill(w < width ? width - w : 0, ' ');
  return right ? fill + s : s + fill;
}

json dims_json(const Shape& shape) {
  json dims = json::array();
  if (!shape.is_rank_known()) return nullptr;
  for (const Dim d : shape) dims.push_back(d.is_known() ? json(d.raw()) : d.is_symbolic() ? json(to_string(d))
                                                                                          : json(nullptr));
  return dims;
}

std::string text(const ModelSummary& s) {
  struct Row {
    std::string module, output, parameters, macs, status;
  };
  std::vector<Row> rows;
  rows.push_back({"Module (type)", "Output", "Parameters", "MACs", ""});
  for (const ModuleSummary& m : s.modules) {
    const std::size_t dot = m.path.rfind('.');
    const std::string name = m.path.empty() ? s.model : dot == std::string::npos ? m.path
                                                                                 : m.path.substr(dot + 1);
    const bool plain = m.status == ModuleStatus::traced;
    rows.push_back({fmt::format("{}{} ({})", std::string(2 * m.depth, ' '), name, m.type), shapes(m.output),
                    grouped(m.parameters), cost(m.macs, m.complete), plain ? "" : std::string(to_string(m.status))});
  }
  std::size_t w0 = 0, w1 = 0, w2 = 0, w3 = 0;
  for (const Row& r : rows) {
    w0 = std::max(w0, columns(r.module));
    w1 = std::max(w1, columns(r.output));
    w2 = std::max(w2, columns(r.parameters));
    w3 = std::max(w3, columns(r.macs));
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line = fmt::format("{}  {}  {}  {}", pad(r.module, w0, false), pad(r.output, w1, false),
                                   pad(r.parameters, w2, true), pad(r.macs, w3, true));
    if (!r.status.empty()) line += "  " + r.status;
    out += line + '\n';
  }
  const char* bound = s.complete ? "" : "≥ ";
  out += fmt::format("Parameters: {}\n", grouped(s.parameters));
  out += fmt::format("MACs: {}{}{}\n", bound, grouped(s.macs), giga(s.macs, bound));
  out += fmt::format("FLOPs: {}{}{}\n", bound, grouped(s.flops), giga(s.flops, bound));
  out += fmt::format("Activation memory: {}{}\n", bound, bytes(s.activation_bytes));
  if (!s.unknown.empty()) {
    std::vector<std::string> names;
    for (const std::string& u : s.unknown) {
      const auto it = std::find_if(s.modules.begin(), s.modules.end(), [&](const ModuleSummary& m) { return m.path == u; });
      const std::string path = u.empty() ? s.model : u;
      names.push_back(it == s.modules.end() ? path : fmt::format("{} ({}, {})", path, it->type, to_string(it->status)));
    }
    out += fmt::format("Unknown cost (not guessed): {}\n", fmt::join(names, ", "));
  }
  return out;
}

std::string json_text(const ModelSummary& s) {
  json modules = json::array();
  for (const ModuleSummary& m : s.modules) {
    json output = nullptr;
    if (!m.output.empty()) {
      output = json::array();
      for (const TensorMeta& t : m.output) output.push_back(dims_json(t.shape));
    }
    modules.push_back(json{{"module", m.path},
                           {"type", m.type},
                           {"status", to_string(m.status)},
                           {"output", std::move(output)},
                           {"parameters", m.parameters},
                           {"macs", m.macs ? cost_json(*m.macs) : json(nullptr)},
                           {"flops", m.flops ? cost_json(*m.flops) : json(nullptr)},
                           {"complete", m.complete}});
  }
  const json doc{{"model", s.model},
                 {"parameters", s.parameters},
                 {"macs", cost_json(s.macs)},
                 {"flops", cost_json(s.flops)},
                 {"activation_bytes", cost_json(s.activation_bytes)},
                 {"complete", s.complete},
                 {"unknown", s.unknown},
                 {"modules", std::move(modules)}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + '\n';
}

}  // namespace

ModelSummary evaluate(const ModelSummary& summary, const SymBindings& bindings) {
  ModelSummary s = summary;
  const auto at = [&](SymExpr e) { return SymExpr(e.evaluate(bindings)); };
  s.macs = at(s.macs);
  s.flops = at(s.flops);
  s.activation_bytes = at(s.activation_bytes);
  for (ModuleSummary& m : s.modules) {
    if (m.macs) m.macs = at(*m.macs);
    if (m.flops) m.flops = at(*m.flops);
    for (TensorMeta& t : m.output)
      for (std::size_t d = 0; d < t.shape.rank(); ++d)
        if (t.shape[d].is_symbolic()) t.shape[d] = Dim(t.shape[d].expr()->evaluate(bindings));
  }
  return s;
}

std::string to_string(const ModelSummary& summary, ReportFormat format) {
  return format == ReportFormat::json ? json_text(summary) : text(summary);
}

std::string format_count(const SymExpr& count) { return grouped(count); }

}  // namespace symtrace

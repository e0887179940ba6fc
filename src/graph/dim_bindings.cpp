// Binding named dims to the sizes of a run's inputs, and checking size guards against them.
#include "symtrace/graph/dim_bindings.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/graph/graph.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace symtrace {

namespace {

const std::int64_t* find(const SymBindings& b, std::string_view name) {
  for (const auto& [n, v] : b)
    if (n == name) return &v;
  return nullptr;
}

bool binds_all(const SymBindings& b, SymExpr e) {
  for (const std::string& s : e.symbols())
    if (find(b, s) == nullptr) return false;
  return true;
}

// "N = 3, M = 5": the values of the dims of `e` and `f`.
std::string values_of(const SymBindings& b, SymExpr e, SymExpr f = SymExpr()) {
  std::vector<std::string> names = e.symbols();
  for (std::string& s : f.symbols()) names.push_back(std::move(s));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const std::string& s : names) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", s, *find(b, s));
  return out;
}

}  // namespace

SymBindings bind_input_dims(const Graph& graph, const std::vector<std::optional<Shape>>& shapes,
                            std::source_location where) {
  struct Seen {
    std::string_view input;
    std::size_t dim;
  };
  SymBindings bindings;
  std::vector<Seen> first;  // where each binding came from
  std::vector<const Node*> placeholders;
  for (const Node& node : graph.nodes())
    if (node.op() == OpKind::placeholder) placeholders.push_back(&node);
  // Bare names first, then expressions of them, whatever order the inputs come in.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < placeholders.size() && i < shapes.size(); ++i) {
      const TensorMeta* meta = placeholders[i]->tensor_meta();
      if (meta == nullptr || !shapes[i] || !meta->shape.is_rank_known() || shapes[i]->rank() != meta->shape.rank())
        continue;
      const std::string_view input = placeholders[i]->target();
      for (std::size_t d = 0; d < meta->shape.rank(); ++d) {
        const Dim traced = meta->shape[d];
        const Dim given = (*shapes[i])[d];
        if (!traced.is_symbolic() || !given.is_known()) continue;
        const std::int64_t size = given.raw();
        const std::optional<std::pair<std::string, SymRange>> symbol = traced.expr()->as_symbol();
        if (pass == 0 && symbol) {
          const auto& [name, range] = *symbol;
          if (!range.contains(size))
            throw_invalid_argument(where, "input '{}' has size {} at dim {}, which the graph names {}: outside {}'s "
                                          "range {}; give a size in that range, or trace with a wider range",
                                   input, size, d, name, name, to_string(range));
          if (const std::int64_t* bound = find(bindings, name)) {
            if (*bound != size) {
              const auto at = static_cast<std::size_t>(std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) {
                                                         return b.first == name;
                                                       }) -
                                                       bindings.begin());
              throw_invalid_argument(where, "input '{}' has size {} at dim {}, which the graph names {}, but {} is {} "
                                            "in input '{}' (dim {}); give inputs whose dims named alike are equal",
                                     input, size, d, name, name, *bound, first[at].input, first[at].dim);
            }
          } else {
            bindings.emplace_back(name, size);
            first.push_back(Seen{input, d});
          }
        } else if (pass == 1 && !symbol && binds_all(bindings, *traced.expr())) {
          const std::int64_t expected = traced.expr()->evaluate(bindings);
          if (expected != size)
            throw_invalid_argument(where, "input '{}' has size {} at dim {}, which the graph computes as {} = {} ({}); "
                                          "give an input of that size",
                                   input, size, d, traced, expected, values_of(bindings, *traced.expr()));
        }
      }
    }
  }
  return bindings;
}

void check_size_guards(const Graph& graph, const SymBindings& bindings, std::source_location where) {
  for (const Graph::SizeGuard& guard : graph.size_guards()) {
    if (!binds_all(bindings, guard.fact.lhs) || !binds_all(bindings, guard.fact.rhs)) continue;
    if (guard.fact.holds(bindings)) continue;
    const std::string values = values_of(bindings, guard.fact.lhs, guard.fact.rhs);
    throw_invalid_argument(where, "the input sizes ({}) break the guard {} that {}:{} recorded when the graph was "
                                  "traced; give inputs for which it holds, or trace again with these sizes",
                           values, guard.fact, guard.where.file_name(), guard.where.line());
  }
}

}  // namespace symtrace

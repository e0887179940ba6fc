#pragma once
/// \file
/// Opt-in: the Boost graph behind `ModuleHierarchy`, to run Boost's algorithms on it
/// (depth_first_search, breadth_first_search, topological_sort, ...). It is a bidirectional
/// `compressed_sparse_row_graph`: vertices are module indices (the vertex index is native), the
/// bundle is the `ModuleRecord`, an edge goes from a parent to each of its children (out-edges
/// in registration order), and in_edges() gives a module's parents.
///
///     #include <symtrace/robust/module_hierarchy_bgl.hpp>
///     const auto& g = symtrace::bgl::graph(collection.hierarchy());
///     for (auto v : boost::make_iterator_range(boost::vertices(g)))
///       if (g[v].status == symtrace::ModuleStatus::failed) ...
///     boost::breadth_first_search(g, 0, boost::visitor(my_visitor));
///
/// The graph is read-only: it belongs to the hierarchy.

#include "symtrace/nn/module_index.hpp"
#include "symtrace/robust/module_hierarchy.hpp"

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

/// The hierarchy's storage (public so that the BGL view can name it).
struct ModuleHierarchy::Impl {
  Impl();
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // Compressed sparse rows: built once, in a few arrays, with the parents of a module too.
  using Graph = boost::compressed_sparse_row_graph<boost::bidirectionalS, ModuleRecord>;
  Graph graph;
  const Module* model = nullptr;
  std::shared_ptr<const ModuleIndex> modules;  // vertex v is module v of the index
  /// (parent, name) -> child, for every name in `named_children`; built on first need
  /// (index_of(path)).
  struct NameKey {
    std::size_t parent;
    std::string_view name;
    friend bool operator==(const NameKey&, const NameKey&) = default;
  };
  struct NameKeyHash {
    std::size_t operator()(const NameKey& k) const noexcept {
      return std::hash<std::string_view>{}(k.name) ^ (k.parent * 0x9E3779B97F4A7C15ULL);
    }
  };
  std::unordered_map<NameKey, std::size_t, NameKeyHash> child_by_name;
  std::once_flag names_built;
  /// Every name of every child as the model was when traced: module v's are
  /// `named_children[named_begin[v] .. named_begin[v + 1])`, in registration order.
  std::vector<ModuleHierarchy::NamedChild> named_children;
  std::vector<std::size_t> named_begin;
};

namespace bgl {
/// The Boost graph type of a ModuleHierarchy.
using HierarchyGraph = ModuleHierarchy::Impl::Graph;
/// The hierarchy as a Boost graph (read-only).
[[nodiscard]] inline const HierarchyGraph& graph(const ModuleHierarchy& hierarchy) noexcept {
  return hierarchy.impl().graph;
}
}  // namespace bgl

}  // namespace symtrace

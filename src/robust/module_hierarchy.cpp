// ModuleHierarchy: the model's modules as a Boost graph (parent -> child), with statuses.
#include "symtrace/robust/module_hierarchy.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/robust/module_hierarchy_bgl.hpp"
#include "graph/text_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace {

namespace detail {

/// The first paths of a hierarchy's modules (the index's paths, as the model was when it was
/// traced) to their vertices: one flat text index.
class PathIndex {
 public:
  explicit PathIndex(const ModuleIndex& modules) : modules_(modules) {
    index_.reserve_for(modules.size());
    for (std::size_t v = 0; v < modules.size(); ++v) {
      const std::string& path = modules[v].path;
      const std::uint32_t hash = TextIndex::hash_of(path);
      index_.set(index_.find_slot(path, hash, text_of()), hash, static_cast<std::uint32_t>(v));  // paths are unique
    }
  }

  /// The vertex whose first path is `path`, or npos.
  [[nodiscard]] std::size_t find(std::string_view path) const noexcept {
    const std::uint32_t v = index_.entry(index_.find_slot(path, TextIndex::hash_of(path), text_of()));
    return v == TextIndex::none ? ModuleHierarchy::npos : v;
  }

 private:
  /// The text of an entry of the index: the path of the vertex.
  struct TextOf {
    const ModuleIndex* modules;
    std::string_view operator()(std::uint32_t v) const noexcept { return (*modules)[v].path; }
  };
  [[nodiscard]] TextOf text_of() const noexcept { return TextOf{&modules_}; }

  const ModuleIndex& modules_;  // the hierarchy holds it
  TextIndex index_;
};

}  // namespace detail

ModuleHierarchy::Impl::Impl() = default;
ModuleHierarchy::Impl::~Impl() = default;

std::string_view to_string(ModuleStatus status) noexcept {
  switch (status) {
    case ModuleStatus::traced: return "traced";
    case ModuleStatus::leaf: return "leaf";
    case ModuleStatus::failed: return "failed";
    case ModuleStatus::unvisited: return "unvisited";
  }
  return "unknown status";
}

ModuleHierarchy::ModuleHierarchy() noexcept = default;
ModuleHierarchy::~ModuleHierarchy() = default;
ModuleHierarchy::ModuleHierarchy(ModuleHierarchy&&) noexcept = default;
ModuleHierarchy& ModuleHierarchy::operator=(ModuleHierarchy&&) noexcept = default;

ModuleHierarchy::ModuleHierarchy(std::shared_ptr<const ModuleIndex> modules) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  const ModuleIndex& index = *modules;
  const std::size_t n = index.size();
  // An edge from each module to each of its children once, in registration order (as
  // children() gives them: a child registered twice under one parent is one edge). The
  // parents come in index order, so the edges are grouped by source as the graph stores them.
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  edges.reserve(n);
  impl.named_children.reserve(n);
  impl.named_begin.reserve(n + 1);
  std::vector<std::size_t> last_parent(n, npos);
  for (std::size_t parent = 0; parent < n; ++parent) {
    impl.named_begin.push_back(impl.named_children.size());
    for (const auto& [name, child] : index[parent].module->named_children()) {
      const std::size_t c = index.find(*child);
      SYMTRACE_ASSERT(c != ModuleIndex::npos, "a child of an indexed module is indexed");
      impl.named_children.push_back(NamedChild{name, c});
      if (last_parent[c] == parent) continue;
      last_parent[c] = parent;
      edges.emplace_back(parent, c);
    }
  }
  impl.named_begin.push_back(impl.named_children.size());
  impl.model = &index.root();
  impl.graph = Impl::Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);
  for (std::size_t v = 0; v < n; ++v) {
    const NamedModule& m = index[v];
    ModuleRecord& r = impl.graph[v];
    r.depth = index.depth(v);
    r.path = m.path;
    r.type = m.module->type_name();
    r.module = m.module;
  }
  impl.modules = std::move(modules);  // the path index is built on first need (index_of(path))
}

ModuleRecord& ModuleHierarchy::record(std::size_t index) { return impl_->graph[index]; }

const ModuleHierarchy::Impl& ModuleHierarchy::impl() const {
  static const Impl empty;
  return impl_ ? *impl_ : empty;
}

std::size_t ModuleHierarchy::size() const noexcept { return impl_ ? boost::num_vertices(impl_->graph) : 0; }

const ModuleRecord& ModuleHierarchy::operator[](std::size_t index) const {
  if (index >= size()) {
    throw std::out_of_range(fmt::format(
        "ModuleHierarchy: index {} is out of range: the model has {} modules; use index_of() to find one", index, size()));
  }
  return impl_->graph[index];
}

std::size_t ModuleHierarchy::index_of(const Module& module) const noexcept {
  if (!impl_) return npos;
  return impl_->modules->find(module);
}

std::size_t ModuleHierarchy::index_of(std::string_view path) const noexcept {
  if (!impl_) return npos;
  // A first path, as the model was when it was traced. The index of the paths reads every
  // path: it is built on the first question, not with the hierarchy (a chain of n modules has
  // paths of O(n^2) characters in all).
  std::call_once(impl_->paths_built, [&] { impl_->paths = std::make_unique<detail::PathIndex>(*impl_->modules); });
  if (const std::size_t v = impl_->paths ? impl_->paths->find(path) : npos; v != npos) return v;
  // Another path of a module registered twice: walk the names from the model, each step O(1)
  // with the modules' name indexes.
  const Module* m = impl_->model;
  while (!path.empty()) {
    const std::size_t dot = path.find('.');
    const std::string_view name = path.substr(0, dot);
    if (name.empty() || dot + 1 == path.size()) return npos;  // "a..b", ".a", "a."
    m = m->find_child(name);
    if (m == nullptr) return npos;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return index_of(*m);
}

std::vector<std::size_t> ModuleHierarchy::children(std::size_t index) const {
  (void)(*this)[index];  // range check
  std::vector<std::size_t> out;
  for (auto [it, end] = boost::out_edges(index, impl_->graph); it != end; ++it) out.push_back(boost::target(*it, impl_->graph));
  return out;
}

std::span<const ModuleHierarchy::NamedChild> ModuleHierarchy::named_children(std::size_t index) const {
  (void)(*this)[index];  // range check
  return std::span<const NamedChild>(impl_->named_children).subspan(
      impl_->named_begin[index], impl_->named_begin[index + 1] - impl_->named_begin[index]);
}

std::vector<std::size_t> ModuleHierarchy::parents(std::size_t index) const {
  (void)(*this)[index];
  std::vector<std::size_t> out;
  for (auto [it, end] = boost::in_edges(index, impl_->graph); it != end; ++it) out.push_back(boost::source(*it, impl_->graph));
  return out;
}

std::size_t ModuleHierarchy::count(ModuleStatus status) const noexcept {
  std::size_t n = 0;
  if (!impl_) return n;
  for (auto [it, end] = boost::vertices(impl_->graph); it != end; ++it) n += impl_->graph[*it].status == status;
  return n;
}

}  // namespace symtrace

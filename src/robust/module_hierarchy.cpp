// ModuleHierarchy: the model's modules as a Boost graph (parent -> child), with statuses.
#include "symtrace/robust/module_hierarchy.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/robust/module_hierarchy_bgl.hpp"

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
    for (const auto& [name, child] : index.module(parent).named_children()) {
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
    const Module& m = index.module(v);
    ModuleRecord& r = impl.graph[v];
    r.index = v;
    r.parent = index.parent(v);
    r.name = index.name(v);
    r.depth = index.depth(v);
    r.type = m.type_name();
    r.module = &m;
  }
  impl.modules = std::move(modules);  // the index of names is built on first need (index_of(path))
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

std::string ModuleHierarchy::path(std::size_t index) const {
  (void)(*this)[index];  // range check
  return impl_->modules->path(index);
}

void ModuleHierarchy::for_each_path(const std::function<void(std::size_t, std::string_view)>& fn) const {
  if (impl_) impl_->modules->for_each_path(fn);
}

std::size_t ModuleHierarchy::index_of(std::string_view path) const noexcept {
  if (!impl_) return npos;
  const auto components = [&](auto&& step) {  // false when `path` is not a path ("a..b", ".a", "a.")
    std::string_view rest = path;
    while (!rest.empty()) {
      const std::size_t dot = rest.find('.');
      const std::string_view name = rest.substr(0, dot);
      if (name.empty() || dot + 1 == rest.size()) return false;
      if (!step(name)) return false;
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    return true;
  };
  // A path as the model was when it was traced: the names from the model down, each step O(1)
  // in an index of the children's names built on the first question (paths are never stored:
  // a chain of n modules has paths of O(n^2) characters in all).
  bool indexed = true;
  try {
    std::call_once(impl_->names_built, [&] {
      const std::size_t n = size();
      impl_->child_by_name.reserve(impl_->named_children.size());
      for (std::size_t v = 0; v < n; ++v) {
        for (std::size_t k = impl_->named_begin[v]; k < impl_->named_begin[v + 1]; ++k) {
          const NamedChild& c = impl_->named_children[k];
          impl_->child_by_name.emplace(Impl::NameKey{v, c.name}, c.index);
        }
      }
    });
  } catch (const std::bad_alloc&) {
    indexed = false;  // no index to ask (the next question tries again): the model is
  }
  std::size_t v = 0;
  if (indexed && components([&](std::string_view name) {
        auto it = impl_->child_by_name.find(Impl::NameKey{v, name});
        if (it == impl_->child_by_name.end()) return false;
        v = it->second;
        return true;
      })) {
    return v;
  }
  // A path of the model now (after replace_module, say), through the modules' name indexes.
  const Module* m = impl_->model;
  if (!components([&](std::string_view name) { return (m = m->find_child(name)) != nullptr; })) return npos;
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
  // clang-format off
  return std::span<const NamedChild>(impl_->named_children).subspan(
      impl_->named_begin[index], impl_->named_begin[index + 1] - impl_->named_begin[index]);
  // clang-format on
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

// ModuleHierarchy: the model's modules as a Boost graph (parent -> child), with statuses.
#include "symtrace/robust/module_hierarchy.hpp"

#include "symtrace/nn/module.hpp"
#include "symtrace/robust/module_hierarchy_bgl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace symtrace {

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
  impl.model = &index.root();
  impl.graph = Impl::Graph(index.size());
  impl.by_path.reserve(index.size());
  for (std::size_t v = 0; v < index.size(); ++v) {
    const NamedModule& m = index[v];
    ModuleRecord& r = impl.graph[v];
    r.depth = m.path.empty() ? 0 : static_cast<std::size_t>(std::count(m.path.begin(), m.path.end(), '.')) + 1;
    r.path = m.path;
    r.type = m.module->type_name();
    r.module = m.module;
    impl.by_path.emplace(r.path, v);  // views the record's path: the vertices never move
  }
  for (std::size_t parent = 0; parent < index.size(); ++parent) {
    const Module& m = *index[parent].module;
    const auto& kids = m.named_children();
    if (kids.size() > 8) {  // a container of many: children() drops repeats with a set
      for (const std::shared_ptr<Module>& child : m.children()) boost::add_edge(parent, index.find(*child), impl.graph);
      continue;
    }
    for (std::size_t i = 0; i < kids.size(); ++i) {  // each child once, as children() gives them
      bool again = false;
      for (std::size_t j = 0; j < i && !again; ++j) again = kids[j].second == kids[i].second;
      if (!again) boost::add_edge(parent, index.find(*kids[i].second), impl.graph);
    }
  }
  impl.modules = std::move(modules);
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
  // A first path, as the model was when it was traced.
  if (auto it = impl_->by_path.find(path); it != impl_->by_path.end()) return it->second;
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

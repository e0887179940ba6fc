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

ModuleHierarchy::ModuleHierarchy(const Module& model) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.model = &model;
  std::vector<NamedModule> modules = model.named_modules();
  impl.graph = Impl::Graph(modules.size());
  impl.index.reserve(modules.size());
  for (std::size_t v = 0; v < modules.size(); ++v) {
    NamedModule& m = modules[v];
    ModuleRecord& r = impl.graph[v];
    r.depth = m.path.empty() ? 0 : static_cast<std::size_t>(std::count(m.path.begin(), m.path.end(), '.')) + 1;
    r.path = std::move(m.path);
    r.type = m.module->type_name();
    r.module = m.module;
    impl.index.emplace(m.module, v);
  }
  // Keys view the records' paths (the vertices never move: no vertex is added later).
  impl.path_index.reserve(modules.size());
  for (std::size_t v = 0; v < modules.size(); ++v) impl.path_index.emplace(impl.graph[v].path, v);
  for (std::size_t parent = 0; parent < modules.size(); ++parent) {
    for (const std::shared_ptr<Module>& child : impl.graph[parent].module->children()) {  // each child once
      boost::add_edge(parent, impl.index.find(child.get())->second, impl.graph);
    }
  }
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
  auto it = impl_->index.find(&module);
  return it == impl_->index.end() ? npos : it->second;
}

std::size_t ModuleHierarchy::index_of(std::string_view path) const noexcept {
  if (!impl_) return npos;
  if (auto it = impl_->path_index.find(path); it != impl_->path_index.end()) return it->second;
  // Another path of a module registered twice: walk the names from the model.
  const Module* m = impl_->model;
  while (!path.empty()) {
    const std::size_t dot = path.find('.');
    const std::string_view name = path.substr(0, dot);
    if (name.empty() || dot + 1 == path.size()) return npos;  // "a..b", ".a", "a."
    const Module* next = nullptr;
    for (const auto& [child_name, child] : m->named_children()) {
      if (child_name == name) {
        next = child.get();
        break;
      }
    }
    if (next == nullptr) return npos;
    m = next;
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

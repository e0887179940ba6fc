#pragma once
/// \file
/// `nn::ModuleList` and `nn::ModuleDict`, as in `torch.nn`: containers that register their
/// elements (so parameters, state dicts and traces see them) but have no forward: the owner
/// indexes them and calls the elements. Calling the container itself is an error.

#include "symtrace/nn/detail/indexed_children.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_holder.hpp"

#include <concepts>
#include <cstddef>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace::nn {

/// A list of modules named "0", "1", ...; not callable. Indexed as Sequential is
/// (`list->at<nn::LinearImpl>(0)`, `list->ptr(0)`, `(*list)[0]`).
class ModuleListImpl : public Module, public detail::IndexedChildren<ModuleListImpl> {
 public:
  ModuleListImpl() : Module(nullptr) {}
  template <class... M>
  requires(sizeof...(M) > 0) explicit ModuleListImpl(M&&... modules) : Module(nullptr) {
    (push_back(std::forward<M>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module, std::source_location where = std::source_location::current());
  template <class H>
  requires requires(const H& h) {
    typename H::ContainedType;
    h.ptr();
  }
  void push_back(const H& holder, std::source_location where = std::source_location::current()) {
    push_back(std::shared_ptr<Module>(holder.ptr()), where);
  }
};
SYMTRACE_MODULE(ModuleList);

/// An ordered map from names to modules; not callable.
class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module(nullptr) {}
  explicit ModuleDictImpl(std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules,
                          std::source_location where = std::source_location::current());

  /// Adds `module` under `key` (a valid, new name).
  void insert(std::string key, std::shared_ptr<Module> module,
              std::source_location where = std::source_location::current());
  template <class H>
  requires requires(const H& h) {
    typename H::ContainedType;
    h.ptr();
  }
  void insert(std::string key, const H& holder, std::source_location where = std::source_location::current()) {
    insert(std::move(key), std::shared_ptr<Module>(holder.ptr()), where);
  }

  [[nodiscard]] std::size_t size() const noexcept { return named_children().size(); }
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find_child(key) != nullptr; }
  [[nodiscard]] std::vector<std::string> keys() const;
  /// The module under `key`; throws std::invalid_argument listing the keys when absent.
  [[nodiscard]] Module& operator[](std::string_view key) const { return get(key); }
  [[nodiscard]] Module& get(std::string_view key, std::source_location where = std::source_location::current()) const;
  /// The module under `key` as an `M` (as ModuleList's and Sequential's `at<M>`); throws
  /// std::invalid_argument when absent or another type.
  template <class M>
  [[nodiscard]] M& at(std::string_view key, std::source_location where = std::source_location::current()) const {
    return detail::module_as<M>(get(key, where), where);
  }
  /// The same, shared.
  template <class M>
  [[nodiscard]] std::shared_ptr<M> ptr(std::string_view key, std::source_location where = std::source_location::current()) const {
    M& typed = at<M>(key, where);
    return std::shared_ptr<M>(typed.shared_from_this(), &typed);
  }
};
SYMTRACE_MODULE(ModuleDict);

}  // namespace symtrace::nn

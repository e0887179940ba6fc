#pragma once
/// \file
/// `nn::ModuleList` and `nn::ModuleDict`, as in `torch.nn`: containers that register their
/// elements (so parameters, state dicts and traces see them) but have no forward: the owner
/// indexes them and calls the elements. Calling the container itself is an error.

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

/// A list of modules named "0", "1", ...; not callable.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module(nullptr) {}
  template <class... M>
    requires(sizeof...(M) > 0)
  explicit ModuleListImpl(M&&... modules) : Module(nullptr) {
    (push_back(std::forward<M>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module, std::source_location where = std::source_location::current());
  template <class H>
    requires requires(const H& h) { typename H::ContainedType; h.ptr(); }
  void push_back(const H& holder, std::source_location where = std::source_location::current()) {
    push_back(std::shared_ptr<Module>(holder.ptr()), where);
  }

  [[nodiscard]] std::size_t size() const noexcept { return named_children().size(); }
  [[nodiscard]] bool empty() const noexcept { return named_children().empty(); }
  [[nodiscard]] Module& operator[](std::size_t index) const { return *ptr(index); }
  /// The element at `index`; throws std::invalid_argument when out of range.
  [[nodiscard]] const std::shared_ptr<Module>& ptr(std::size_t index,
                                                   std::source_location where = std::source_location::current()) const;
  /// The element at `index` as an `M` (LibTorch's `at<T>`): `seq->at<nn::LinearImpl>(0).weight`;
  /// throws std::invalid_argument when out of range or another type.
  template <class M>
  [[nodiscard]] M& at(std::size_t index, std::source_location where = std::source_location::current()) const {
    static_assert(std::derived_from<M, Module>, "at<M>() takes the module type (nn::LinearImpl), not its holder");
    Module& m = *ptr(index, where);
    auto* typed = dynamic_cast<M*>(&m);
    if (!typed) detail::throw_wrong_module_type(m, typeid(M), where);
    return *typed;
  }
  /// The same, shared (LibTorch's `ptr<T>`): `nn::Linear first(seq->ptr<nn::LinearImpl>(0))`.
  template <class M>
  [[nodiscard]] std::shared_ptr<M> ptr(std::size_t index, std::source_location where = std::source_location::current()) const {
    static_assert(std::derived_from<M, Module>, "ptr<M>() takes the module type (nn::LinearImpl), not its holder");
    auto typed = std::dynamic_pointer_cast<M>(ptr(index, where));
    if (!typed) detail::throw_wrong_module_type(*ptr(index, where), typeid(M), where);
    return typed;
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
    requires requires(const H& h) { typename H::ContainedType; h.ptr(); }
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
    static_assert(std::derived_from<M, Module>, "at<M>() takes the module type (nn::LinearImpl), not its holder");
    Module& m = get(key, where);
    auto* typed = dynamic_cast<M*>(&m);
    if (!typed) detail::throw_wrong_module_type(m, typeid(M), where);
    return *typed;
  }
  /// The same, shared.
  template <class M>
  [[nodiscard]] std::shared_ptr<M> ptr(std::string_view key, std::source_location where = std::source_location::current()) const {
    static_assert(std::derived_from<M, Module>, "ptr<M>() takes the module type (nn::LinearImpl), not its holder");
    Module& m = get(key, where);
    auto typed = std::dynamic_pointer_cast<M>(m.shared_from_this());
    if (!typed) detail::throw_wrong_module_type(m, typeid(M), where);
    return typed;
  }
};
SYMTRACE_MODULE(ModuleDict);

}  // namespace symtrace::nn

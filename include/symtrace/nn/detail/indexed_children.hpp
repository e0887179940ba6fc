#pragma once
/// \file
/// `IndexedChildren<Derived>`: the indexed access to children that ModuleList and Sequential
/// share, as LibTorch's containers give it (`size`, `operator[]`, `ptr`, `at<T>`, `ptr<T>`),
/// and `module_as<T>`, the checked downcast behind every typed accessor of a container.

#include "symtrace/nn/module.hpp"

#include <concepts>
#include <cstddef>
#include <memory>
#include <source_location>
#include <typeinfo>

namespace symtrace {

namespace detail {
/// Throws std::invalid_argument: "the module is a ReLU, not a Linear".
[[noreturn]] void throw_wrong_module_type(const Module& module, const std::type_info& wanted,
                                          std::source_location where);
}  // namespace detail

namespace nn::detail {

/// `module` as an `M`; throws std::invalid_argument naming both types when it is another.
template <class M>
[[nodiscard]] M& module_as(Module& module, std::source_location where) {
  static_assert(std::derived_from<M, Module>, "at<M>() and ptr<M>() take the module type (nn::LinearImpl), not its holder");
  auto* typed = dynamic_cast<M*>(&module);
  if (typed == nullptr) symtrace::detail::throw_wrong_module_type(module, typeid(M), where);
  return *typed;
}

/// The child at `index` of `container`; throws std::invalid_argument when out of range.
[[nodiscard]] const std::shared_ptr<Module>& child_at(const Module& container, std::size_t index,
                                                      std::source_location where);

/// Indexed access to the children of `Derived` (a Module), in registration order.
template <class Derived>
class IndexedChildren {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return self().named_children().size(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// The child at `index`; throws std::invalid_argument when out of range.
  [[nodiscard]] Module& operator[](std::size_t index) const { return *ptr(index); }
  /// The child at `index`, shared; throws std::invalid_argument when out of range.
  [[nodiscard]] const std::shared_ptr<Module>& ptr(std::size_t index,
                                                   std::source_location where = std::source_location::current()) const {
    return child_at(self(), index, where);
  }
  /// The child at `index` as an `M` (LibTorch's `at<T>`): `seq->at<nn::LinearImpl>(0).weight`;
  /// throws std::invalid_argument when out of range or another type.
  template <class M>
  [[nodiscard]] M& at(std::size_t index, std::source_location where = std::source_location::current()) const {
    return module_as<M>(*ptr(index, where), where);
  }
  /// The same, shared (LibTorch's `ptr<T>`): `nn::Linear first(seq->ptr<nn::LinearImpl>(0))`.
  template <class M>
  [[nodiscard]] std::shared_ptr<M> ptr(std::size_t index, std::source_location where = std::source_location::current()) const {
    const std::shared_ptr<Module>& child = ptr(index, where);
    return std::shared_ptr<M>(child, &module_as<M>(*child, where));
  }

 private:
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace nn::detail
}  // namespace symtrace

#pragma once
/// \file
/// `nn::Sequential`, as `torch.nn.Sequential`: calls its children in order, each on the
/// previous one's output. Children are named "0", "1", ... unless named explicitly. Traced
/// through (not a leaf), so the tracer sees each child call.

#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <concepts>
#include <cstddef>
#include <memory>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

namespace symtrace::nn {

class SequentialImpl : public TypedModule<SequentialImpl> {
 public:
  SequentialImpl() = default;
  /// `SequentialImpl(nn::Conv2d(...), nn::BatchNorm2d(64), nn::ReLU())`: holders or shared_ptrs.
  template <class... M>
    requires(sizeof...(M) > 0)
  explicit SequentialImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  explicit SequentialImpl(std::vector<std::shared_ptr<Module>> modules,
                          std::source_location where = std::source_location::current());

  /// Runs the children in order. Throws std::invalid_argument when a child does not return a
  /// single tensor (only the last child's result may be anything else is *not* supported).
  Tensor forward(const Tensor& input);

  /// Appends `module` named by its position.
  void push_back(std::shared_ptr<Module> module, std::source_location where = std::source_location::current());
  template <class H>
    requires requires(const H& h) { typename H::ContainedType; h.ptr(); }
  void push_back(const H& holder, std::source_location where = std::source_location::current()) {
    push_back(std::shared_ptr<Module>(holder.ptr()), where);
  }
  /// Appends `module` under `name`.
  void push_back(std::string name, std::shared_ptr<Module> module,
                 std::source_location where = std::source_location::current());

  [[nodiscard]] std::size_t size() const noexcept { return named_children().size(); }
  [[nodiscard]] bool empty() const noexcept { return named_children().empty(); }
  /// The child at `index`; throws std::invalid_argument when out of range.
  [[nodiscard]] Module& operator[](std::size_t index) const { return *ptr(index); }
  [[nodiscard]] const std::shared_ptr<Module>& ptr(std::size_t index,
                                                   std::source_location where = std::source_location::current()) const;
  /// The child at `index` as an `M` (LibTorch's `at<T>`): `seq->at<nn::LinearImpl>(0).weight`;
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

/// Holder of SequentialImpl: `nn::Sequential(nn::Linear(4, 8), nn::ReLU())`.
SYMTRACE_MODULE(Sequential);

}  // namespace symtrace::nn

#pragma once
/// \file
/// `nn::Sequential`, as `torch.nn.Sequential`: calls its children in order, each on the
/// previous one's output. Children are named "0", "1", ... unless named explicitly. Traced
/// through (not a leaf), so the tracer sees each child call.

#include "symtrace/nn/detail/indexed_children.hpp"
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

class SequentialImpl : public TypedModule<SequentialImpl>, public detail::IndexedChildren<SequentialImpl> {
 public:
  SequentialImpl() = default;
  /// `SequentialImpl(nn::Conv2d(...), nn::BatchNorm2d(64), nn::ReLU())`: holders or shared_ptrs.
  template <class... M>
  requires(sizeof...(M) > 0) explicit SequentialImpl(M&&... modules) {
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
  requires requires(const H& h) {
    typename H::ContainedType;
    h.ptr();
  }
  void push_back(const H& holder, std::source_location where = std::source_location::current()) {
    push_back(std::shared_ptr<Module>(holder.ptr()), where);
  }
  /// Appends `module` under `name`.
  void push_back(std::string name, std::shared_ptr<Module> module,
                 std::source_location where = std::source_location::current());
};

/// Holder of SequentialImpl: `nn::Sequential(nn::Linear(4, 8), nn::ReLU())`.
SYMTRACE_MODULE(Sequential);

}  // namespace symtrace::nn

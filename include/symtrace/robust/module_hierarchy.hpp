#pragma once
/// \file
/// `ModuleHierarchy`: the modules of a model after `recursive_trace`, with what became of each
/// (docs/design.md, decision 7). A vertex per module (a module registered under two parents is one
/// vertex with two in-edges, as in `named_modules()`), an edge from a parent to each child, and
/// a status per module:
///
/// - `traced`: its forward was captured (traced through in its parent's graph, or as a root);
///   a container that cannot be called (ModuleList, ModuleDict) is traced when any of its
///   children was called;
/// - `leaf`: recorded as a `call_module` node at each call (a built-in layer or a registered
///   leaf type);
/// - `failed`: its forward threw; it is a leaf where it was called, with a failure record;
/// - `unvisited`: never called by a trace (calls inside a leaf's metadata run do not count:
///   e.g. the children of a registered leaf).
///
///     const symtrace::ModuleHierarchy& h = collection.hierarchy();
///     for (const symtrace::ModuleRecord& m : h)
///       if (m.status == symtrace::ModuleStatus::failed) fmt::print("{}: {}\n", h.path(m.index), to_string(*m.failure));
///
/// The hierarchy is a Boost graph; `#include <symtrace/robust/module_hierarchy_bgl.hpp>` to run
/// Boost's algorithms on it. It borrows the collection's failures and graphs and the model's
/// modules (and their type names): it is valid while the GraphCollection that made it and the
/// model live.

#include "symtrace/robust/robust_tracer.hpp"

#include <fmt/core.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

class Graph;
class GraphCollection;
class Module;
class ModuleIndex;

/// What became of a module in a recursive trace (see the file comment).
enum class ModuleStatus : std::uint8_t {
  traced,
  leaf,
  failed,
  unvisited
};

/// "traced", "leaf", "failed" or "unvisited".
[[nodiscard]] std::string_view to_string(ModuleStatus status) noexcept;

/// One module of the hierarchy. Its path is `ModuleHierarchy::path(index)`: a record holds its
/// name and its parent, so that a hierarchy n modules deep costs O(n), not the O(n^2)
/// characters of its paths.
struct ModuleRecord {
  std::size_t index = 0;                              ///< its index in the hierarchy (0 for the model)
  std::size_t parent = static_cast<std::size_t>(-1);  ///< its parent on its first path (npos for the model)
  std::string_view name;                              ///< the last component of its first path ("" for the model)
  std::string_view type;                              ///< its type name (Module::type_name(), which the module keeps)
  ModuleStatus status = ModuleStatus::unvisited;
  const Module* module = nullptr;
  const ModuleFailure* failure = nullptr;  ///< its failure record when failed
  const Graph* graph = nullptr;            ///< its graph when it was traced as a root
  std::size_t depth = 0;                   ///< the number of components of its path
};

/// The module hierarchy of a model with a status per module; see the file comment.
class ModuleHierarchy {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// An empty hierarchy (no model).
  ModuleHierarchy() noexcept;
  ~ModuleHierarchy();
  ModuleHierarchy(ModuleHierarchy&&) noexcept;
  ModuleHierarchy& operator=(ModuleHierarchy&&) noexcept;

  [[nodiscard]] std::size_t size() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// The module at `index` (0 is the model), in `named_modules()` order.
  [[nodiscard]] const ModuleRecord& operator[](std::size_t index) const;
  /// The first path of the module at `index` in `named_modules()` ("" for the model), as the
  /// model was when it was traced; O(its length).
  [[nodiscard]] std::string path(std::size_t index) const;
  /// The index of `module`, or npos when it is not in the model.
  [[nodiscard]] std::size_t index_of(const Module& module) const noexcept;
  /// Calls `fn(index, path)` for every module in index order with its first path (a view valid
  /// during the call): O(modules + the length of their names), however deep the model is.
  void for_each_path(const std::function<void(std::size_t, std::string_view)>& fn) const;
  /// The index of the module at `path`, or npos: a path the module had when the model was
  /// traced (its first or another), or one it is registered under in the model now.
  [[nodiscard]] std::size_t index_of(std::string_view path) const noexcept;
  /// The direct children of the module at `index`, in registration order.
  [[nodiscard]] std::vector<std::size_t> children(std::size_t index) const;
  /// A child under one of its names.
  struct NamedChild {
    std::string name;
    std::size_t index;
  };
  /// The children of the module at `index` under every name they were registered with, in
  /// registration order, as the model was when it was traced (what the model holds now may
  /// differ: `replace_module`).
  [[nodiscard]] std::span<const NamedChild> named_children(std::size_t index) const;
  /// The parents of the module at `index` (none for the model; two for a module registered
  /// under two parents).
  [[nodiscard]] std::vector<std::size_t> parents(std::size_t index) const;
  /// How many modules have `status`.
  [[nodiscard]] std::size_t count(ModuleStatus status) const noexcept;

  class const_iterator;
  [[nodiscard]] const_iterator begin() const noexcept;
  [[nodiscard]] const_iterator end() const noexcept;

  /// The Boost graph (module_hierarchy_bgl.hpp).
  struct Impl;
  [[nodiscard]] const Impl& impl() const;

 private:
  friend class GraphCollection;  // builds it, then sets the statuses
  /// The modules of `model` in `named_modules()` order (the model is index 0), all unvisited.
  explicit ModuleHierarchy(std::shared_ptr<const ModuleIndex> modules);
  ModuleRecord& record(std::size_t index);

  std::unique_ptr<Impl> impl_;
};

/// Iterates the records in index order.
class ModuleHierarchy::const_iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = ModuleRecord;
  using difference_type = std::ptrdiff_t;
  using pointer = const ModuleRecord*;
  using reference = const ModuleRecord&;

  const_iterator() = default;
  const_iterator(const ModuleHierarchy* h, std::size_t i) : h_(h), i_(i) {}
  reference operator*() const { return (*h_)[i_]; }
  pointer operator->() const { return &(*h_)[i_]; }
  const_iterator& operator++() {
    ++i_;
    return *this;
  }
  const_iterator operator++(int) {
    const_iterator old = *this;
    ++i_;
    return old;
  }
  friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }

 private:
  const ModuleHierarchy* h_ = nullptr;
  std::size_t i_ = 0;
};

inline ModuleHierarchy::const_iterator ModuleHierarchy::begin() const noexcept { return {this, 0}; }
inline ModuleHierarchy::const_iterator ModuleHierarchy::end() const noexcept { return {this, size()}; }

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::ModuleStatus> : fmt::formatter<std::string_view> {
  auto format(symtrace::ModuleStatus status, format_context& ctx) const -> format_context::iterator {
    return fmt::formatter<std::string_view>::format(symtrace::to_string(status), ctx);
  }
};

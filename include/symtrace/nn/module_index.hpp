#pragma once
/// ModuleIndex: the modules of a hierarchy in `named_modules()` order, with the position of a
/// module found in O(1). Tracers ask "what is this module's path?" at every module call;
/// the coverage tools ask it for every module of the model. One index built per model serves
/// both.

#include "symtrace/nn/module.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// The modules under a root, depth first with children in registration order, each module
/// once at its first path (the order and the paths of `root.named_modules(prefix)`), and a
/// flat hash from module to position. A module is kept as its parent's position and its name
/// there, not as its whole path: a chain of n nested modules has paths of O(n^2) characters
/// in all, and indexing it costs O(n). Paths are made on demand. Immutable once built; safe
/// to read from several threads. It borrows the modules: valid while the root lives and its
/// hierarchy is not changed (the names and the parents stay readable after a change).
///
///   ModuleIndex index(model);
///   std::optional<std::string> path = index.path_of(*model.find_child("layer1"));  // "layer1"
class ModuleIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// Indexes `root` and its descendants, their paths prefixed by `prefix` when it is given.
  /// O(modules + registrations + the length of their names).
  explicit ModuleIndex(const Module& root, const std::string& prefix = {});

  [[nodiscard]] const Module& root() const noexcept { return *root_; }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// The `i`-th module in `named_modules()` order (0 is the root). Precondition: i < size().
  [[nodiscard]] Module& module(std::size_t i) const noexcept { return *entries_[i].module; }
  /// The position of the `i`-th module's parent on its first path, npos for the root; always
  /// less than `i`. Precondition: i < size().
  [[nodiscard]] std::size_t parent(std::size_t i) const noexcept {
    return entries_[i].parent == none ? npos : entries_[i].parent;
  }
  /// The last component of the `i`-th module's first path: its name in its parent (the
  /// prefix for the root). Precondition: i < size().
  [[nodiscard]] std::string_view name(std::size_t i) const noexcept {
    return std::string_view(names_).substr(entries_[i].name_begin, entries_[i].name_size);
  }
  /// How many registrations the `i`-th module's first path goes down from the root (0 for the
  /// root; the number of components of its path without a prefix). Precondition: i < size().
  [[nodiscard]] std::size_t depth(std::size_t i) const noexcept { return entries_[i].depth; }
  /// The `i`-th module's first path ("" for the root without a prefix), made in O(its
  /// length). Precondition: i < size().
  [[nodiscard]] std::string path(std::size_t i) const;
  /// The position of `module`, or npos when it is not under the root.
  [[nodiscard]] std::size_t find(const Module& module) const noexcept;
  /// The path of `module` (its first path), or nullopt when it is not under the root.
  [[nodiscard]] std::optional<std::string> path_of(const Module& module) const {
    const std::size_t i = find(module);
    return i == npos ? std::nullopt : std::optional<std::string>(path(i));
  }
  /// Every module with its first path, in order (`named_modules()`): O(the paths' length).
  [[nodiscard]] std::vector<NamedModule> named_modules() const;

  /// Calls `fn(i, path)` for every module in order, `path` its first path (a view valid during
  /// the call): O(modules + the length of their names), however deep the hierarchy is.
  template <class Fn>
  void for_each_path(Fn&& fn) const {
    std::string path;
    std::vector<std::size_t> ends;  // ends[d]: the length of the path of the module at depth d
    for (std::size_t i = 0; i < size(); ++i) {
      const std::size_t d = depth(i);
      path.resize(d == 0 ? 0 : ends[d - 1]);  // the parent's path: a prefix of the last one (preorder)
      if (d > 0 && !path.empty()) path += '.';
      path += name(i);
      if (ends.size() <= d) ends.resize(d + 1);
      ends[d] = path.size();
      fn(i, std::string_view(path));
    }
  }

 private:
  static constexpr std::uint32_t none = static_cast<std::uint32_t>(-1);
  struct Entry {
    Module* module;
    std::uint32_t parent;  // none for the root
    std::uint32_t depth;
    std::size_t name_begin;  // in names_
    std::size_t name_size;
  };
  struct Slot {
    const Module* module = nullptr;
    std::uint32_t index = 0;
  };
  [[nodiscard]] std::size_t slot_of(const Module* module) const noexcept;
  void grow();

  const Module* root_;
  std::vector<Entry> entries_;
  std::string names_;        // every entry's name, one after the other
  std::vector<Slot> slots_;  // linear probing; a power of two, at most half full
  unsigned shift_ = 64;
};

}  // namespace symtrace

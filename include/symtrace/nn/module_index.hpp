#pragma once
/// ModuleIndex: the modules of a hierarchy in `named_modules()` order, with the position of a
/// module found in O(1). Tracers ask "what is this module's path?" at every module call;
/// the coverage tools ask it for every module of the model. One index built per model serves
/// both.

#include "symtrace/nn/module.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace symtrace {

/// The modules under a root, depth first with children in registration order, each module
/// once at its first path (exactly `root.named_modules(prefix)`), and a flat hash from module
/// to position. Immutable once built; safe to read from several threads. It borrows the
/// modules: valid while the root lives and its hierarchy is not changed.
///
///   ModuleIndex index(model);
///   const std::string* path = index.path_of(*model.find_child("layer1"));  // "layer1"
class ModuleIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// Indexes `root` and its descendants, their paths prefixed by `prefix` when it is given.
  /// O(modules + registrations).
  explicit ModuleIndex(const Module& root, const std::string& prefix = {});

  [[nodiscard]] const Module& root() const noexcept { return *root_; }
  [[nodiscard]] std::size_t size() const noexcept { return modules_.size(); }
  /// The `i`-th module in `named_modules()` order (0 is the root). Precondition: i < size().
  [[nodiscard]] const NamedModule& operator[](std::size_t i) const noexcept { return modules_[i]; }
  [[nodiscard]] const std::vector<NamedModule>& modules() const noexcept { return modules_; }
  /// How many registrations the `i`-th module's first path goes down from the root (0 for the
  /// root; the number of components of its path without a prefix), without reading the path.
  /// Precondition: i < size().
  [[nodiscard]] std::size_t depth(std::size_t i) const noexcept { return depths_[i]; }
  /// The position of `module`, or npos when it is not under the root.
  [[nodiscard]] std::size_t find(const Module& module) const noexcept;
  /// The path of `module` (its first path), or nullptr when it is not under the root.
  [[nodiscard]] const std::string* path_of(const Module& module) const noexcept {
    const std::size_t i = find(module);
    return i == npos ? nullptr : &modules_[i].path;
  }
  /// Hands the entries over (the index is empty afterwards).
  [[nodiscard]] std::vector<NamedModule> release() && noexcept;

 private:
  struct Slot {
    const Module* module = nullptr;
    std::uint32_t index = 0;
  };
  [[nodiscard]] std::size_t slot_of(const Module* module) const noexcept;
  void grow();

  const Module* root_;
  std::vector<NamedModule> modules_;
  std::vector<std::uint32_t> depths_;  // see depth()
  std::vector<Slot> slots_;  // linear probing; a power of two, at most half full
  unsigned shift_ = 64;
};

}  // namespace symtrace

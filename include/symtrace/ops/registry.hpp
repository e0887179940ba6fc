#pragma once
/// \file
/// `OpRegistry`: every op symtrace knows, by name. The built-in ops are registered once
/// (thread-safe) on first use from the op families in src/ops and never change, so their
/// lookups need no lock. Callables (ops/callable.hpp) are added at run time under a lock and
/// found by `find`/`get` after the built-in ops. An `OpDef&` stays valid for the life of the
/// program.

#include "symtrace/ops/op.hpp"

#include <memory>
#include <source_location>
#include <string_view>
#include <vector>

namespace symtrace {

class OpRegistry {
 public:
  /// The registry (built on first call).
  [[nodiscard]] static const OpRegistry& instance();

  /// The op called `name`, or nullptr.
  [[nodiscard]] const OpDef* find(std::string_view name) const noexcept;
  /// The op called `name`; throws OpError (`unknown op 'x'`, with close names) otherwise.
  [[nodiscard]] const OpDef& get(std::string_view name,
                                 std::source_location where = std::source_location::current()) const;
  /// All built-in ops, sorted by name (callables are not listed).
  [[nodiscard]] const std::vector<const OpDef*>& ops() const noexcept { return sorted_; }

  /// Adds an op while the registry is being built; throws on a duplicate name or bad schema.
  void add(std::string_view schema, MetaFn meta, KernelFn kernel, OpFlags flags = OpFlags::none);
  /// Adds an op at run time (a callable); throws std::invalid_argument when its name is taken.
  /// Thread-safe.
  const OpDef& add_runtime(OpDef def, std::source_location where) const;

  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;
  ~OpRegistry();

 private:
  OpRegistry();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<const OpDef*> sorted_;
};

}  // namespace symtrace

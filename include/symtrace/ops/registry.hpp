#pragma once
/// \file
/// `OpRegistry`: every op symtrace knows, by name. Built once (thread-safe) on first use from
/// the op families in src/ops; never changes afterwards, so lookups need no lock and an
/// `OpDef&` stays valid for the life of the program.

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
  /// All ops, sorted by name.
  [[nodiscard]] const std::vector<const OpDef*>& ops() const noexcept { return sorted_; }

  /// Adds an op while the registry is being built; throws on a duplicate name or bad schema.
  void add(std::string_view schema, MetaFn meta, KernelFn kernel, OpFlags flags = OpFlags::none);

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

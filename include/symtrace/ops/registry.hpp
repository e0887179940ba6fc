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

  /// The op called `name`, or nullptr. A name no op or callable has goes to the resolver, when
  /// one is set (`set_resolver`).
  [[nodiscard]] const OpDef* find(std::string_view name) const noexcept;
  /// The op called `name`; throws OpError (`unknown op 'x'`, with close names) otherwise.
  [[nodiscard]] const OpDef& get(std::string_view name,
                                 std::source_location where = std::source_location::current()) const;
  /// The functional form of the in-place op `inplace` (OpFlags::inplace): the op of the same
  /// name without the `_` that ends its name, taking as many arguments and writing none
  /// (`add_` -> `add`, `aten::clamp_` -> `aten::clamp`, `aten::add_.Tensor` ->
  /// `aten::add.Tensor`), or nullptr when there is none (`fill_` and `copy_` have other forms).
  [[nodiscard]] const OpDef* functional_of(const OpDef& inplace) const noexcept;
  /// All built-in ops, sorted by name (callables are not listed).
  [[nodiscard]] const std::vector<const OpDef*>& ops() const noexcept { return sorted_; }

  /// Adds an op while the registry is being built; throws on a duplicate name or bad schema.
  void add(std::string_view schema, MetaFn meta, KernelFn kernel, OpFlags flags = OpFlags::none);
  /// Adds an op at run time (a callable); throws std::invalid_argument when its name is taken.
  /// Thread-safe.
  const OpDef& add_runtime(OpDef def, std::source_location where) const;

  /// Makes ops on demand: given a name that no op or callable has, registers an op of that
  /// name (with `add_runtime`) and returns it, or returns nullptr. The TorchScript front end
  /// sets one for LibTorch's operators (`aten::kron`, `aten::add.Tensor`: docs/design.md,
  /// decision 14), so a graph that names them runs, and reads back from JSON, in any program
  /// linked with it.
  using Resolver = const OpDef* (*)(std::string_view name) noexcept;
  /// Sets the resolver (one per process; the last one set wins). Thread-safe.
  static void set_resolver(Resolver resolver) noexcept;

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

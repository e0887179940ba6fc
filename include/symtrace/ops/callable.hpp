#pragma once
/// \file
/// `register_callable`: a user function recorded as one opaque `call_function` node instead
/// of being traced into (torch.fx's `wrap`). Use it for code a trace cannot see through: a
/// call into an external library, code that reads tensor data, a hand-written kernel.
///
///     // Once, at namespace scope: the schema names the function and types its arguments.
///     const symtrace::Callable median_center = symtrace::register_callable(
///         "mylib.median_center(Tensor x) -> Tensor",
///         [](const symtrace::OpCall& call) -> symtrace::Value { return mylib::median_center(call.tensor(0)); },
///         symtrace::Callable::same_as_argument(0));   // output dtype and shape, for traces
///
///     Tensor forward(const Tensor& x) { return median_center({x}).to_tensor().relu(); }
///     // traced: %median_center = call_function[target=mylib.median_center](args = (%x,), ...)
///
/// Eagerly (all arguments concrete) the function runs; with a symbolic argument the active
/// trace records a node whose output metadata comes from the meta function. The Interpreter
/// runs such a node by its target name, like any op. A callable is a process-wide op: its name
/// must be new, and it stays registered for the life of the program.

#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/op.hpp"

#include <cstddef>
#include <functional>
#include <source_location>
#include <string_view>

namespace symtrace {

/// The function behind a callable: gets the call (arguments bound to its schema, concrete).
using CallableFn = std::function<Value(const OpCall& call)>;
/// Its meta function: the output dtype and shape from the arguments (concrete or symbolic).
using CallableMetaFn = std::function<OutputMeta(const OpCall& call)>;

/// A registered callable: call it like a function with boxed arguments.
class Callable {
 public:
  /// Calls the function (eager) or records a `call_function` node (traced). Arguments are
  /// bound to the schema (keywords by name, defaults filled in) and type-checked: a mismatch
  /// is an OpError naming the argument.
  Value operator()(ValueList args, KeywordValues kwargs = {},
                   std::source_location where = std::source_location::current()) const;
  /// The callable's qualified name (`mylib.median_center`), the target of its nodes.
  [[nodiscard]] const std::string& name() const noexcept { return op_->name(); }
  /// Its op: schema, flags.
  [[nodiscard]] const OpDef& op() const noexcept { return *op_; }

  /// A meta function for a result with the dtype and shape of argument `index` (a tensor).
  [[nodiscard]] static CallableMetaFn same_as_argument(std::size_t index);

 private:
  friend Callable register_callable(std::string_view, CallableFn, CallableMetaFn, OpFlags, std::source_location);
  explicit Callable(const OpDef& op) noexcept : op_(&op) {}
  const OpDef* op_;
};

/// Registers `fn` as the op described by `schema` (`name(Tensor x, int k=1) -> Tensor`; the
/// name may be qualified with dots). `meta` gives the output metadata for traces and is checked
/// against every eager result. Thread-safe. Throws std::invalid_argument for a bad schema, a
/// name already taken by an op or a callable, or an empty `fn` or `meta`.
Callable register_callable(std::string_view schema, CallableFn fn, CallableMetaFn meta,
                           OpFlags flags = OpFlags::none,
                           std::source_location where = std::source_location::current());

/// Registers the op `def` (its schema and flags; its meta function and kernel are set here)
/// with `fn` as its kernel and `meta` as its meta function: what `register_callable` does for
/// a schema it parses, for a front end that builds the schema itself (the TorchScript front
/// end's LibTorch operators, whose schemas take types the schema language has no word for).
/// The op may return numbers. Thread-safe; throws std::invalid_argument for a name already
/// taken or an empty `fn` or `meta`.
const OpDef& register_op(OpDef def, CallableFn fn, CallableMetaFn meta,
                         std::source_location where = std::source_location::current());

}  // namespace symtrace

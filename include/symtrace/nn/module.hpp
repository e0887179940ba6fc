#pragma once
/// \file
/// `Module`: the base of every layer and model (the `nn` layer), in the spirit of LibTorch's
/// C++ frontend. A module owns parameters and buffers (named tensors) and child modules
/// (shared), knows its type name for reports, and has a *type-erased entry point*: Values in,
/// a Value out, with declared input names. That entry point is what lets a tracer call or
/// trace any module as a root without knowing its static type.
///
/// Users derive from `TypedModule<Derived>` (typed_module.hpp), which generates the entry
/// point from `Derived::forward`, and hold children in `ModuleHolder`s (module_holder.hpp)
/// so that `conv1(x)` reads naturally. Every module call passes the thread's `Interposer`
/// (core/thread_context.hpp), the seam a tracer's `call_module` plugs into.
///
/// Ownership: children are `std::shared_ptr<Module>`. A module registered twice (under two
/// names or two parents) is one module: `named_modules()` and `named_parameters()` list it
/// once, `state_dict()` lists its tensors under every path, as PyTorch does.

#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/nn/detail/prefetch.hpp"
#include "symtrace/nn/state_dict.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

namespace detail {
struct TypeFacts;
}  // namespace detail

class Module;

/// The static type of a `forward` parameter or result, as the type-erased entry point sees it.
enum class ParamType : std::uint8_t {
  tensor,       ///< Tensor
  tensor_list,  ///< std::vector<Tensor>
  integer,      ///< any integer type
  sym_int,      ///< SymInt: an int, or a size unknown at trace time (traced as a root, a symbolic input)
  int_list,     ///< std::vector<std::int64_t>
  floating,     ///< double or float
  boolean,      ///< bool
  string,       ///< std::string
  tuple,        ///< std::tuple<...> (results only)
  any,          ///< Value: whatever the caller passes
};

/// One declared parameter of a module's `forward`.
struct ForwardParameter {
  std::string name;       ///< the declared input name (a placeholder's name when traced)
  ParamType type;         ///< what it holds
  bool optional = false;  ///< `std::optional<...>`: None is accepted, and it may be omitted when trailing
  /// "Tensor", "Optional[Tensor]", "List[Tensor]", "int", "SymInt", "float", "bool", "str", "List[int]", "Any".
  std::string_view type_name;
};

/// What `forward` takes and returns, for callers that only know `Module&`.
struct ForwardSignature {
  std::vector<ForwardParameter> parameters;
  std::size_t num_required = 0;          ///< parameters before the trailing optional ones
  ParamType result = ParamType::tensor;  ///< tensor, tensor_list, tuple, any, ...
  std::size_t result_arity = 1;          ///< element count of a tuple result (1 otherwise)
  std::string_view result_type_name;     ///< "Tensor", "Tuple[Tensor, Tensor]", "List[Tensor]", ...
};

/// One entry of `named_modules()`: a qualified path ("" for the root, "layer1.0.conv1") and
/// the module, borrowed from the root (valid while the root lives).
struct NamedModule {
  std::string path;
  Module* module;
};

/// A named tensor of a module (parameter or buffer), with its qualified path.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// What `load_state_dict(..., strict = false)` skipped, as PyTorch's `_IncompatibleKeys`.
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

/// The base of every module; see the file comment. Not copyable; create modules with
/// `std::make_shared` (or a `ModuleHolder`) so children can be shared.
class Module : public std::enable_shared_from_this<Module> {
 public:
  using Where = std::source_location;

  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module();

  // ---- Identity ---------------------------------------------------------------------------
  /// The type name used in reports and errors ("Conv2d", "Bottleneck"): the dynamic class
  /// name without namespaces and without an `Impl` suffix, unless set_type_name() chose one.
  [[nodiscard]] const std::string& type_name() const;

  // ---- The type-erased entry point ---------------------------------------------------------
  /// True for symtrace's own layers (`symtrace::nn::Linear`, `Conv2d`, `ReLU`, ...), the
  /// modules a tracer records as leaves by default, as fx does for `torch.nn` layers; false
  /// for containers (Sequential, ModuleList, ModuleDict) and every user module.
  [[nodiscard]] bool is_builtin_layer() const;
  /// Whether a tracer records the module as a leaf by default (Tracer::is_leaf_module):
  /// is_builtin_layer(), unless a module class standing for another framework's modules says
  /// otherwise (the TorchScript front end's modules of torch.nn classes, as torch.fx's rule).
  [[nodiscard]] virtual bool is_leaf_by_default() const { return is_builtin_layer(); }
  /// True when the module has a `forward` (false for ModuleList and ModuleDict, which are only
  /// indexed).
  [[nodiscard]] bool is_callable() const noexcept { return signature_ != nullptr; }
  /// The declared signature of `forward`; nullptr when not callable.
  [[nodiscard]] const ForwardSignature* forward_signature() const noexcept { return signature_.get(); }
  /// The declared input names, in order (empty when not callable).
  [[nodiscard]] std::vector<std::string> input_names() const;
  /// Renames the inputs (placeholders get these names when the module is traced as a root).
  /// Throws std::invalid_argument unless there is one valid, distinct name per parameter.
  void set_input_names(std::vector<std::string> names, Where where = Where::current());

  /// Calls the module through the thread's Interposer (a tracer's `call_module`), or runs
  /// `run_forward(args, where)` when there is none. Observers see the call either way. This
  /// is `m(args...)` for callers that only know `Module&`.
  Value call(const ValueList& args, Where where = Where::current());
  /// Runs `forward_values(args)` as a call with no interposer installed does, after checking
  /// that the thread's stack has room for it (a TraceError otherwise): what an interposer's
  /// `call_module` does with a call it lets run.
  Value run_forward(const ValueList& args, Where where = Where::current());
  /// Runs `forward` on boxed arguments, bypassing the interposer: a tracer calls this to trace
  /// *into* a module. Trailing optional parameters may be omitted. Throws
  /// std::invalid_argument naming the parameter when an argument has the wrong kind or count,
  /// and when the module is not callable.
  virtual Value forward_values(const ValueList& args);
  /// Note [Layer output metadata]: the metadata of what `forward(args)` returns, computed
  /// from the arguments' metadata alone, or nullopt when the layer cannot tell for sure.
  /// A tracer recording a built-in layer (is_builtin_layer()) as a leaf asks this first and
  /// runs `forward` on symbolic tensors only on nullopt, so a layer answers only where its
  /// op's meta function would accept the call, and gives exactly what it would give; bad
  /// arguments are left to that run, which reports them. Other modules are never asked
  /// (their shape functions are LeafMetaFns, see Tracer::register_leaf).
  [[nodiscard]] virtual std::optional<TensorMeta> layer_output_meta(const ValueList& args) const;

  // ---- Registration -------------------------------------------------------------------------
  /// Registers `module` as the child `name` and returns it. Throws std::invalid_argument for
  /// a null module, an invalid or duplicate name, or a cycle (the module is this one or one
  /// of its ancestors).
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module,
                                     Where where = Where::current()) {
    add_child(std::move(name), module, where);
    return module;
  }
  /// Registers the module a ModuleHolder (`nn::Linear(4, 2)`) holds and returns the holder.
  template <class H>
  requires requires(const H& h) {
    typename H::ContainedType;
    h.ptr();
  }
  H register_module(std::string name, H holder, Where where = Where::current()) {
    add_child(std::move(name), holder.ptr(), where);
    return holder;
  }
  /// Replaces the child `name` (which must exist) by `module`; same checks as registration.
  /// Assign the result to the member that held the old child (`fc = replace_module("fc", ...)`):
  /// forward calls the member, the state dict sees the registered child.
  template <class M>
  [[nodiscard]] std::shared_ptr<M> replace_module(std::string_view name, std::shared_ptr<M> module,
                                                  Where where = Where::current()) {
    replace_child(name, module, where);
    return module;
  }
  template <class H>
  requires requires(const H& h) {
    typename H::ContainedType;
    h.ptr();
  }
  [[nodiscard]] H replace_module(std::string_view name, H holder, Where where = Where::current()) {
    replace_child(name, holder.ptr(), where);
    return holder;
  }
  /// Registers a parameter (counted by num_parameters(), saved in the state dict) and returns
  /// it; the module keeps the same handle, so data loaded later is visible through it.
  /// Throws std::invalid_argument for an undefined or symbolic tensor or a bad/duplicate name.
  Tensor register_parameter(std::string name, Tensor tensor, Where where = Where::current());
  /// Registers a buffer (state that is not a parameter, like BatchNorm's running mean).
  /// Non-persistent buffers are left out of the state dict.
  Tensor register_buffer(std::string name, Tensor tensor, bool persistent = true,
                         Where where = Where::current());

  // ---- Queries ------------------------------------------------------------------------------
  /// The direct children in registration order (a child registered twice appears once).
  [[nodiscard]] std::vector<std::shared_ptr<Module>> children() const;
  /// The direct children with their names, in registration order (every name).
  [[nodiscard]] const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children()
      const noexcept {
    return children_;
  }
  /// This module ("" or `prefix`) and all descendants, depth first in registration order,
  /// each module once (at its first path).
  [[nodiscard]] std::vector<NamedModule> named_modules(const std::string& prefix = {}) const;
  /// Parameters with qualified names ("layer1.0.conv1.weight"), each tensor once.
  [[nodiscard]] std::vector<NamedTensor> named_parameters(bool recurse = true) const;
  /// Buffers with qualified names, each tensor once.
  [[nodiscard]] std::vector<NamedTensor> named_buffers(bool recurse = true) const;
  [[nodiscard]] TensorList parameters(bool recurse = true) const;
  [[nodiscard]] TensorList buffers(bool recurse = true) const;
  /// Total number of parameter elements, counting a shared parameter once.
  [[nodiscard]] std::int64_t num_parameters() const;

  /// Calls `f(name, tensor)` for each of this module's own parameters (or, with `parameters`
  /// false, buffers) in registration order, copying nothing.
  template <class F>
  void for_each_own_tensor(bool parameters, F&& f) const {
    for (const TensorSlot& slot : parameters ? parameters_ : buffers_) f(std::string_view(slot.name), slot.tensor);
  }

  /// How many times this module is registered as a child (by every live parent, under every
  /// name). A module registered once has one path in any hierarchy that holds it.
  [[nodiscard]] std::uint32_t num_registrations() const noexcept {
    return registrations_.load(std::memory_order_relaxed);
  }

  /// This module's own parameter/buffer/child `name`, or null / an undefined tensor.
  [[nodiscard]] Module* find_child(std::string_view name) const noexcept;
  [[nodiscard]] Tensor find_parameter(std::string_view name) const noexcept;
  [[nodiscard]] Tensor find_buffer(std::string_view name) const noexcept;
  /// The descendant at `path` ("layer1.0.conv1"; "" is this module). Throws
  /// std::invalid_argument naming the first missing component and what exists there.
  [[nodiscard]] Module& get_submodule(std::string_view path, Where where = Where::current()) const;
  /// The parameter or buffer at `path` ("layer1.0.bn1.running_mean"); throws like get_submodule.
  [[nodiscard]] Tensor get_tensor(std::string_view path, Where where = Where::current()) const;

  // ---- Mode ---------------------------------------------------------------------------------
  /// Sets training mode on this module and all descendants; returns *this.
  Module& train(bool on = true);
  /// Same as train(false).
  Module& eval() { return train(false); }
  [[nodiscard]] bool is_training() const noexcept { return training_; }

  // ---- State --------------------------------------------------------------------------------
  /// Every parameter and persistent buffer under its qualified name, in registration order
  /// (a shared module's tensors under each of its paths). The tensors are the module's own
  /// handles: writing into them writes into the model.
  [[nodiscard]] StateDict state_dict() const;
  /// Copies `state` into this model's parameters and buffers. Checks everything first and
  /// throws std::invalid_argument listing every missing key, unexpected key (when `strict`),
  /// and shape or dtype mismatch (always), leaving the model unchanged. Returns the keys
  /// skipped when not strict.
  LoadStateDictResult load_state_dict(const StateDict& state, bool strict = true,
                                      Where where = Where::current());

  // ---- Printing -----------------------------------------------------------------------------
  /// The configuration shown between the parentheses of `to_string(module)`
  /// ("512, 1000, bias=True"); empty by default.
  [[nodiscard]] virtual std::string extra_repr() const;

 protected:
  /// `signature` is null for a module that cannot be called (ModuleList, ModuleDict).
  explicit Module(std::shared_ptr<const ForwardSignature> signature);
  /// Overrides the type name shown in reports.
  void set_type_name(std::string name) { type_name_ = std::move(name); }

  /// Called by train(); layers override it to see mode changes (rarely needed).
  virtual void on_train(bool /*on*/) {}

 private:
  friend void detail::prefetch_for_call(const Module& module) noexcept;

  /// `call` with observers registered: a `module` event around the call.
  Value call_observed(const ValueList& args, Where where);

  enum class SlotKind : std::uint8_t {
    child,
    parameter,
    buffer
  };
  struct Slot {
    SlotKind kind;
    std::uint32_t index;
  };
  struct TensorSlot {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };

  void add_child(std::string name, std::shared_ptr<Module> module, Where where);
  void replace_child(std::string_view name, std::shared_ptr<Module> module, Where where);
  void check_new_name(std::string_view name, std::string_view what, Where where) const;
  void check_no_cycle(const Module& child, std::string_view name, Where where) const;
  void add_slot(std::string_view name, SlotKind kind, std::size_t index);
  template <class Vector>
  void index_or_roll_back(Vector& entries, std::string_view name, SlotKind kind);
  [[nodiscard]] std::optional<Slot> find_slot(std::string_view name) const noexcept;
  void collect_tensors(bool parameters, bool recurse, std::vector<NamedTensor>& out) const;
  void collect_state(const std::string& prefix, StateDict& out) const;

  std::string type_name_;                                         // empty: derived from the dynamic type
  mutable std::atomic<const detail::TypeFacts*> facts_{nullptr};  // see facts()
  const detail::TypeFacts& facts() const;
  std::shared_ptr<const ForwardSignature> signature_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::vector<TensorSlot> parameters_;
  std::vector<TensorSlot> buffers_;
  /// Name index, built once a module has many names (a Sequential of 100k blocks), so
  /// registration stays O(1) per name; small modules scan their few names.
  using SlotIndex = std::unordered_map<std::string, Slot, detail::StringHash, std::equal_to<>>;
  std::unique_ptr<SlotIndex> index_;
  std::atomic<std::uint32_t> registrations_{0};  // see num_registrations()
  bool training_ = true;
};

/// The module tree as PyTorch prints it:
/// ```
/// Net(
///   (fc): Linear(in_features=4, out_features=2, bias=True)
/// )
/// ```
[[nodiscard]] std::string to_string(const Module& module);

namespace detail {
/// True for a valid registration name: PyTorch's rule, any non-empty string without '.'.
[[nodiscard]] bool is_valid_module_name(std::string_view name) noexcept;
}  // namespace detail

}  // namespace symtrace

#pragma once
/// \file
/// `Tracer`: runs a module's forward on symbolic tensors and records a `Graph` (torch.fx's
/// `Tracer`, in C++). The fx hooks are virtual functions, so a subclass changes what is a
/// leaf, how module calls and nodes are recorded, and how values become arguments:
///
///     symtrace::Tracer tracer;
///     tracer.register_leaf<GatedBlock>();              // record GatedBlock calls as leaves
///     symtrace::Graph g = tracer.trace(model, {symtrace::InputSpec(Shape{1, 3, 224, 224})});
///
/// How a trace works: each input becomes a `placeholder` and a symbolic tensor naming it.
/// Ops on symbolic tensors reach the tracer through the op dispatcher and are recorded as
/// `call_function` (free functions) or `call_method` (Tensor methods) nodes, with the output
/// dtype and shape from the op's meta function, the module scope and the caller's file:line.
/// Module calls reach `call_module`: a leaf becomes one `call_module` node, any other module
/// is traced through. Parameters and buffers used by traced-through code become `get_attr`
/// nodes; other concrete tensors the code makes (`zeros(...)` in forward) become graph
/// constants. The forward's result becomes the `output` node.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/shape.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/trace/cond.hpp"
#include "symtrace/trace/input_spec.hpp"

#include <source_location>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace symtrace {

class Module;
class ModuleIndex;
struct OpCall;
class TracingState;
namespace detail {
class TraceScope;
}  // namespace detail

/// The forward of a leaf could not run symbolically to give its result's metadata (it depends
/// on its input's values, or reads data): the leaf's own code failed, not its caller's, and
/// `where()` is the line in the leaf's code. A robust tracer makes the leaf a failed module.
class LeafForwardError : public TraceError {
 public:
  using TraceError::TraceError;
};

/// Records a module's computation as a Graph; see the file comment. A tracer may be reused
/// for several traces, one at a time per tracer object; different tracer objects may trace
/// on different threads at once.
class Tracer : public Interposer {
 public:
  Tracer() : Interposer(/*sees_concrete_calls=*/true) {}
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// Traces `root.forward` on symbolic inputs made from `inputs` and returns the graph.
  /// Every declared input gets a placeholder named after it. Inputs named in
  /// `concrete_args` are passed to forward as those values (not symbolic) and recorded as
  /// the graph's guards; `inputs` gives one spec per other input, in order (trailing
  /// optional inputs may be left out). The root is traced into even when it is a leaf type.
  /// Throws TraceError when the forward cannot be captured, std::invalid_argument when the
  /// inputs do not match the root's forward; the thread's tracing state is unchanged
  /// afterwards either way. Not virtual: a subclass extends the steps (`trace_graph`,
  /// `trace_root` and the hooks below), so a trace through a `Tracer&` is the subclass's trace.
  Graph trace(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args = {},
              std::source_location where = std::source_location::current());
  /// Whether this tracer is running a trace now (a forward it traces is on the stack of some
  /// thread): it is installed as that thread's interposer.
  [[nodiscard]] bool is_tracing() const noexcept { return is_installed(); }

  // ---- Hooks (fx's names) ----------------------------------------------------------------

  /// Whether calls of `module` (at `qualified_name`) are recorded as one `call_module` node.
  /// Default, as in fx: built-in layers (Linear, Conv2d, ReLU, ...) and registered types are
  /// leaves; containers and user modules are traced through.
  [[nodiscard]] virtual bool is_leaf_module(const Module& module, std::string_view qualified_name) const;

  /// Every module call during a trace comes here: a leaf is recorded as a `call_module` node
  /// (its output metadata found by tracing its forward on the side and rolling that back);
  /// anything else is traced into.
  Value call_module(Module& module, const ValueList& args, std::source_location where) override;

  /// Records one node in the active graph (with the current module scope and `where`).
  virtual Node& create_node(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                            std::source_location where);

  /// Records one node (through `create_node`) and returns the symbolic value standing for its
  /// result, described by `meta`: a Tensor, a list of tensors (one `getitem` node each), or a
  /// proxy SymInt for a number (fx's `create_proxy`). Op calls and leaf calls come here.
  virtual Value create_proxy(OpKind op, std::string_view target, Arguments args, KeywordArguments kwargs,
                             const OutputMeta& meta, std::source_location where);

  /// Turns a value of the traced code into a node argument: symbolic tensors become their
  /// node, parameters and buffers of the root's hierarchy a `get_attr` node (through
  /// `getattr`), any other concrete tensor a graph constant read by a `get_attr` node
  /// (`_tensor_constant0`, as in fx), numbers, strings, dtypes and None themselves, lists
  /// element-wise. Throws TraceError for a symbolic tensor of another trace.
  virtual Argument create_arg(const Value& value, std::source_location where);

  /// The node for the parameter or buffer at `qualified_name` (a `get_attr` node).
  virtual Argument getattr(std::string_view qualified_name, const Tensor& tensor, std::source_location where);

  /// Records the call of an op with at least one symbolic argument and returns its symbolic
  /// result (the op dispatcher calls this).
  virtual Value record_op(const OpCall& call);

  /// Records `cond` with a symbolic predicate (cond calls this): each branch is traced into a
  /// subgraph of the graph, then one `higher_order.cond` node and a `getitem` per result are
  /// recorded. Nothing is recorded when a branch fails or the branches disagree.
  Value record_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                    const TensorList& operands, std::source_location where);

  // ---- Leaf registration (per tracer: no hidden global registry) --------------------------

  /// Computes a leaf's output metadata from its module and arguments (symbolic tensors carry
  /// their dtype and shape): one TensorMeta, or a list (`is_list`) for a tuple or vector result.
  using LeafMetaFn = std::function<OutputMeta(const Module& module, const ValueList& args)>;

  /// Makes modules of type `M` (exactly) leaves for this tracer. A leaf's output metadata
  /// comes from `meta` when given, else from running its forward on the symbolic arguments
  /// (recording nothing); a leaf whose forward cannot run symbolically (it reads tensor data)
  /// needs `meta`. Given an argument of unknown rank, neither runs: the result's shape is
  /// unknown too.
  template <class M>
  void register_leaf(LeafMetaFn meta = {}) {
    register_leaf(typeid(M), std::move(meta));
  }
  void register_leaf(std::type_index type, LeafMetaFn meta = {});
  template <class M>
  void unregister_leaf() {
    unregister_leaf(typeid(M));
  }
  void unregister_leaf(std::type_index type);
  template <class M>
  [[nodiscard]] bool is_registered_leaf() const {
    return is_registered_leaf(std::type_index(typeid(M)));
  }
  [[nodiscard]] bool is_registered_leaf(std::type_index type) const;
  [[nodiscard]] bool is_registered_leaf(const Module& module) const;

 protected:
  /// One trace, run by `trace` once it has checked that this tracer is not tracing already.
  /// By default `record_graph`; a subclass wraps it (RobustTracer: a trace started again, the
  /// graph of a failed root) and calls `record_graph` for the recording.
  virtual Graph trace_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                            std::source_location where);
  /// The recording: checks `inputs` and `concrete_args` against the root's forward, makes the
  /// placeholders, runs `trace_root` on them and records the output; throws as `trace` says.
  Graph record_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                     std::source_location where);
  /// The graph of `root` as one leaf call, with nothing run: a placeholder per input (the
  /// dtype and shape of `inputs[i]`, tensors only; one without metadata per declared input
  /// when `inputs` is null), the root's `call_module` node (its result described by `result`,
  /// no metadata when null), and the output. Every node is made through the hooks, the nodes
  /// a trace of a leaf root makes. A subclass that knows a leaf root's result, or that the root
  /// cannot run, builds its graph with it.
  Graph record_leaf_graph(Module& root, const std::vector<InputSpec>* inputs, const OutputMeta* result,
                          std::source_location where);
  /// Runs the root's forward on the trace's inputs (placeholders made, output not yet). The
  /// robust tracer overrides it to catch a failing root.
  virtual Value trace_root(Module& root, const ValueList& args, std::source_location where);
  /// An index of `root`'s modules the trace may borrow instead of building its own, or
  /// nullptr (the default). A collection tracing one model many times indexes it once.
  [[nodiscard]] virtual std::shared_ptr<const ModuleIndex> module_index(const Module& root) const;
  /// What a leaf's result is when nothing tells its shape (Note [Unknown in, unknown out] in
  /// unknown_rank.cpp): per the forward's declared result, one tensor or a tuple of tensors of unknown
  /// rank with the dtype of the first tensor argument; TraceError for a list of unknown length.
  [[nodiscard]] static OutputMeta unknown_result(const Module& module, const ValueList& args, const std::string& path,
                                                 std::source_location where);
  /// The same, given the dtype of the first tensor argument (float32 when there is none);
  /// nullopt instead of the TraceError.
  [[nodiscard]] static std::optional<OutputMeta> unknown_result(const Module& module, DType dtype);
  /// True when an argument is (or a list holds) a tensor of unknown rank.
  [[nodiscard]] static bool any_unknown_rank(const ValueList& args) noexcept;
  /// The metadata function `register_leaf` gave for `module`'s type, or nullptr.
  [[nodiscard]] const LeafMetaFn* leaf_meta_fn(const Module& module) const;
  /// A built-in layer's result metadata for `args` computed without a run (Note [Layer output
  /// metadata] in module.hpp), or nullopt: for other modules, or when the layer cannot tell.
  /// A TensorMeta, not an OutputMeta: a caller that returns it returns
  /// `OutputMeta::single(std::move(*meta))`, a prvalue built in place (OutputMeta's inline
  /// vectors are not cheap to move).
  [[nodiscard]] static std::optional<TensorMeta> layer_result_meta(const Module& module, const ValueList& args);
  /// The result metadata of a call of the leaf `module` (at `path`) with `args`: unknown for
  /// arguments of unknown rank, else from its LeafMetaFn, else from layer_result_meta, else
  /// from its forward run in a side run (nothing recorded). A LeafForwardError when that run
  /// fails with a TraceError.
  [[nodiscard]] virtual OutputMeta leaf_result_meta(Module& module, const std::string& path, const ValueList& args,
                                                    std::source_location where);
  /// Symbolic results described by `meta` that name no node: what a side run computes.
  [[nodiscard]] Value meta_result(const OutputMeta& meta, std::source_location where) const;
  /// The trace this tracer is running, the innermost one of this thread (InternalError when it
  /// is not tracing there, e.g. while another tracer's trace runs inside its own).
  [[nodiscard]] TracingState& state() const {
    TracingState* state = innermost_state();
    if (state == nullptr) [[unlikely]]
      throw_not_tracing();
    return *state;
  }
  /// A symbolic tensor naming `node`, with `meta` (also recorded on the node).
  [[nodiscard]] Tensor proxy(Node& node, const TensorMeta& meta) const;
  /// Symbolic results naming `node`'s outputs: itself, or one getitem node per list element.
  Value wrap_result(Node& node, const OutputMeta& meta, std::source_location where);

 private:
  Value record_leaf(Module& module, const std::string& path, const ValueList& args, std::source_location where);

  // ---- The thread's interposer while tracing (core/thread_context.hpp) ----
  /// An op call with a symbolic argument or reading a parameter: `record_op(call)`.
  Value call_op(const OpCall& call) final;
  /// A parameter or buffer of the model this tracer is tracing now.
  [[nodiscard]] bool intercepts(const Tensor& tensor) const final;
  /// The module this tracer's trace is in, for TraceError messages.
  bool locate(detail::TraceLocation& location) const final;
  /// A size fact an op needs: a size guard of the graph being recorded.
  void assume(const SymFact& fact, std::source_location where) final;
  /// A cond with a symbolic predicate: `record_cond`.
  Value call_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn, const TensorList& operands,
                  std::source_location where) final;

  // ---- The trace this tracer runs (Note [The active trace] in tracing_state.cpp) ----
  /// `state()`, or nullptr when this tracer's trace is not the innermost one of this thread.
  [[nodiscard]] TracingState* innermost_state() const noexcept {
    return detail::t_interposer == this ? state_ : state_behind_interposers();
  }
  /// `innermost_state()` when other interposers are installed inside this tracer.
  [[nodiscard]] TracingState* state_behind_interposers() const noexcept;
  [[noreturn]] static void throw_not_tracing();

  friend class TracingState;
  friend class detail::TraceScope;
  TracingState* state_ = nullptr;  // the trace this tracer runs, set by its TraceScope
  std::unordered_map<std::type_index, LeafMetaFn> leaves_;
  // The model's name for the op node record_op is about to make (core/value_name.hpp), taken
  // by create_node for that node only.
  std::string_view pending_name_;
};

/// Traces `module` with a default Tracer: `Tracer().trace(module, inputs, concrete_args)`.
Graph symbolic_trace(Module& module, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args = {},
                     std::source_location where = std::source_location::current());

}  // namespace symtrace

#pragma once
/// \file
/// `RobustTracer`: a Tracer that never fails on an untraceable submodule (DESIGN decision 6;
/// the API of ModelOpt's `modelopt.torch.trace.RobustTracer`). Every module call it traces
/// through takes a graph checkpoint; when the module's forward throws, the nodes, names and
/// tracer state made since are rolled back, the module becomes a `call_module` leaf with the
/// call's real arguments, and the trace goes on. The graph is the one a plain trace would give
/// had the failed modules been registered leaves: in one pass, unless a module fails on a
/// later call after an earlier call of it was traced through; the trace then starts again with
/// that module failed, so that every call of it is a leaf (Note [A failure on a later call] in
/// robust_tracer.cpp). Any exception is the module's failure but std::bad_alloc: running out
/// of memory says nothing about the module's code, so it is never recorded as a failure; it
/// rolls the graph back and reaches the caller of `trace` (Note [Out of memory is not a
/// failure] in robust_tracer.cpp).
///
///     symtrace::RobustTracer tracer;
///     symtrace::Graph g = tracer.trace(model, {x});      // never throws for a failing submodule
///     for (const auto& [module, failure] : tracer.failures()) ...   // what failed, where, why
///
/// A failed module's output metadata comes from the LeafMetaFn registered for its type (or, for
/// a built-in layer traced through, its own shape function: Note [Layer output metadata]), else it
/// is unknown (a shape of unknown rank, the dtype of its first tensor argument): downstream ops
/// then have unknown shapes too (Note [Unknown in, unknown out] in src/trace/tracer.cpp).

#include "symtrace/observe/trace_by_execution.hpp"
#include "symtrace/trace/tracer.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <unordered_map>
#include <vector>

namespace symtrace {

/// A failed module captured by execution (RobustTracer::capture_failed_by_execution): its body
/// run eagerly on synthetic inputs of the shapes seen at its call and recorded by
/// `trace_by_execution`. The graph is *specialised*: it holds what the module computed for those
/// inputs, and `warnings` say where it read tensor data (the reason it failed symbolically).
struct ExecutionCapture {
  std::shared_ptr<const Graph> graph;  ///< null when the module could not be captured
  std::vector<InputSpec> inputs;       ///< the synthetic inputs' dtypes and shapes
  std::vector<TraceWarning> warnings;  ///< where the captured graph specialised on data
  std::string error;                   ///< why it could not be captured, else empty
};

/// Why a module could not be traced: a structured failure record.
struct ModuleFailure {
  std::string module;   ///< qualified path under the traced root ("" for the root itself)
  std::string type;     ///< the module's type name
  std::string kind;     ///< the exception's type: "TraceError", "OpError", "std::runtime_error", ...
  std::string message;  ///< what() of the exception
  std::source_location where;  ///< the user's file:line (line 0 when the exception carried none)
  std::string op;       ///< the op that refused its input (OpError), else empty
  /// Set when the tracer captured failed modules by execution (the capture, or why not).
  std::shared_ptr<const ExecutionCapture> by_execution;
};

/// "resnet.cpp:80: TraceError: a symbolic tensor was read as data ...".
[[nodiscard]] std::string to_string(const ModuleFailure& failure);

/// A Tracer that turns failing submodules into leaves; see the file comment.
///
/// `trace` (Tracer's, also through a `Tracer&`) traces `root` but never fails because of the
/// model's code: a failing submodule becomes a leaf; a failing root (or one that cannot be
/// called as a whole, e.g. a ModuleList) gives a graph of placeholders, one `call_module` node
/// for the root and the output, and the root is failed. A root that is a leaf is not traced
/// into. Bad inputs (a spec count or concrete_args that do not match the root's forward) still
/// throw std::invalid_argument, and std::bad_alloc from anywhere in the trace (the model's code
/// too) propagates; the failures recorded before either stay recorded. Failures and visits
/// accumulate over traces with this tracer.
class RobustTracer : public Tracer {
 public:
  RobustTracer() = default;


  /// Also captures each module that fails, once its trace is done, by running its forward
  /// eagerly on synthetic inputs (random float32, zero integers and bools) of the shapes seen
  /// at its call, when they are all known: `failure(m)->by_execution` holds the specialised
  /// graph and its warnings, and in the graph `trace` returns, it is a subgraph
  /// (`by_execution_0`, ...) that the failed module's `call_module` nodes name in their
  /// metadata (`by_execution`, with `specialised` true). The module's buffers are restored
  /// after its run (BatchNorm statistics in training). Off by default.
  void capture_failed_by_execution(bool on = true) noexcept { capture_by_execution_ = on; }
  [[nodiscard]] bool captures_failed_by_execution() const noexcept { return capture_by_execution_; }
  /// Built-in layers, registered types and failed modules are leaves.
  [[nodiscard]] bool is_leaf_module(const Module& module, std::string_view qualified_name) const override;
  /// Traces into `module` under a checkpoint; a failure rolls back and records a leaf.
  Value call_module(Module& module, const ValueList& args, std::source_location where) override;

  /// Whether `module` failed in a trace of this tracer.
  [[nodiscard]] bool is_failed(const Module& module) const noexcept { return failed_.contains(&module); }
  /// The failure record of `module`, or nullptr.
  [[nodiscard]] const ModuleFailure* failure(const Module& module) const noexcept;
  /// ModelOpt's message: "<kind>: <message>", or nullopt when `module` did not fail.
  [[nodiscard]] std::optional<std::string> failure_msg(const Module& module) const;
  /// Whether `module` was never called in a trace of this tracer.
  [[nodiscard]] bool is_unvisited(const Module& module) const noexcept {
    auto it = calls_.find(&module);
    return it == calls_.end() || !it->second.visited;
  }
  /// Marks `module` visited, and failed with `failure` when given (ModelOpt's hook).
  void record_call_module(const Module& module, const ModuleFailure* failure = nullptr);
  /// The failures in the order they happened.
  [[nodiscard]] const std::vector<std::pair<const Module*, ModuleFailure>>& failures() const noexcept {
    return failure_order_;
  }
  /// The graph of a root that is failed without being traced (it has no forward, or inputs a
  /// trace cannot give it): a placeholder per declared input, one `call_module` node for the
  /// root, and the output. Records `failure` for the root.
  Graph failed_root_graph(Module& root, ModuleFailure failure, std::source_location where);
  /// The input specs of `module`'s first call seen by a trace of this tracer (its tensor
  /// arguments' dtypes and shapes), or nullptr when it was not called with tensors only.
  [[nodiscard]] const std::vector<InputSpec>* observed_inputs(const Module& module) const noexcept;
  /// What `module`'s first call passed: its tensors' dtypes and shapes, and its other arguments
  /// (ints, floats, bools, strings, None, lists of them) with their positions.
  struct ObservedCall {
    std::vector<InputSpec> tensors;                       ///< in argument order
    std::vector<std::pair<std::size_t, Value>> values;    ///< (position, value) of the others
  };
  /// `module`'s first call seen by a trace of this tracer, or nullopt when it was not called,
  /// or called with something symbolic besides its tensors (a proxy SymInt).
  [[nodiscard]] std::optional<ObservedCall> observed_call(const Module& module) const;
  /// Forgets the failures, visits and observed inputs of earlier traces (leaf registrations stay).
  void clear_results() noexcept;

  /// One run of a GraphCollection over a model (its recursive_trace), for the scope's
  /// lifetime: the tracer borrows `model_index` (the model's modules, indexed once by the
  /// collection) for its traces of the model's root, and remembers the results of leaf calls
  /// across the run's traces (see leaf_result_meta). Both end with the scope.
  class CollectionRun {
   public:
    CollectionRun(RobustTracer& tracer, std::shared_ptr<const ModuleIndex> model_index) noexcept;
    ~CollectionRun();
    CollectionRun(const CollectionRun&) = delete;
    CollectionRun& operator=(const CollectionRun&) = delete;

   private:
    RobustTracer& tracer_;
  };

 protected:
  /// The robust trace (see the class comment), then the captures by execution when they are on.
  Graph trace_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                    std::source_location where) override;
  Value trace_root(Module& root, const ValueList& args, std::source_location where) override;
  /// Tracer's. While a GraphCollection traces, the results of leaf calls on symbolic tensors
  /// are remembered per module and input metadata, and a leaf traced as a root (a child of a
  /// failed module) reuses what its call with the same inputs found in an earlier trace instead
  /// of running its forward again. That assumes, as the tracer does throughout, that a leaf's
  /// result metadata depends only on its inputs' metadata and the module's own state, which
  /// does not change during one recursive_trace.
  OutputMeta leaf_result_meta(Module& module, const std::string& path, const ValueList& args,
                              std::source_location where) override;
  /// The model's index while a GraphCollection traces it (the collection builds it once).
  [[nodiscard]] std::shared_ptr<const ModuleIndex> module_index(const Module& root) const override;

  /// A failed module's result metadata: from the LeafMetaFn registered for its type or a
  /// built-in layer's shape function, else unknown (as the file comment says). A subclass
  /// that knows more may say so.
  [[nodiscard]] virtual OutputMeta failed_leaf_meta(const Module& module, const std::string& path, const ValueList& args,
                                                    std::source_location where) const;

 private:
  /// A leaf's call: its tensor arguments' metadata and its result's.
  struct LeafCall {
    std::vector<TensorMeta> inputs;
    OutputMeta result;
  };

  /// The failure of a root whose trace threw `e` (nullptr: not a std::exception): the one
  /// recorded for it, else `e` described.
  ModuleFailure root_failure(const Module& root, const std::exception* e, std::source_location where) const;
  /// Records that the LeafMetaFn of `module` threw `e` (nullptr: not a std::exception) and gives
  /// its unknown result (Note [A failing LeafMetaFn] in robust_tracer.cpp).
  OutputMeta leaf_meta_failed(Module& module, const std::string& path, const ValueList& args, const std::exception* e,
                              std::source_location where);
  /// Records `module` as a failed leaf called with `args` (its metadata as the file comment says).
  Value record_failed_leaf(Module& module, const std::string& path, const ValueList& args, std::source_location where);

  /// The graph of a leaf root whose call on `inputs` is remembered, built directly; nullopt
  /// when it cannot be (Note [A remembered leaf root] in robust_tracer.cpp).
  std::optional<Graph> remembered_leaf_graph(Module& root, const std::vector<InputSpec>& inputs, std::source_location where);
  /// `trace_graph` without the captures by execution.
  Graph trace_robustly(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                       std::source_location where);
  /// Captures by execution the modules that failed from `failure_order_[first]` on, into `graph`.
  void capture_failures(Graph& graph, std::size_t first);
  std::unordered_map<const Module*, std::size_t> failed_;  // index into failure_order_
  std::vector<std::pair<const Module*, ModuleFailure>> failure_order_;
  /// What the traces saw of a module's calls, in one entry per module.
  struct Calls {
    bool visited = false;   ///< a call ended (returned or failed): see record_call_module
    bool observed = false;  ///< `inputs` are its first call's, all tensors
    std::uint64_t traced_in = 0;  ///< the trace_generation_ of its last traced-through call
    std::vector<InputSpec> inputs;  ///< its first call's tensors (see ObservedCall)
    std::vector<std::pair<std::size_t, Value>> values;  ///< and its other arguments
  };
  /// Records `args`, a first call, in `calls` when they can be observed (see ObservedCall).
  static void observe_call(Calls& calls, const ValueList& args);
  std::unordered_map<const Module*, Calls> calls_;
  std::unordered_map<const Module*, std::vector<LeafCall>> leaf_calls_;  // see leaf_result_meta
  /// Thrown to start a trace again: Note [A failure on a later call] in robust_tracer.cpp.
  struct RestartTrace;
  std::uint64_t trace_generation_ = 0;  // one per attempt of Tracer::trace (a restart is a new one)
  bool remember_leaf_calls_ = false;
  bool capture_by_execution_ = false;
  std::shared_ptr<const ModuleIndex> model_index_;  // lent by a CollectionRun
};

}  // namespace symtrace

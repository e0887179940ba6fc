#pragma once
/// \file
/// `RobustTracer`: a Tracer that never fails on an untraceable submodule (docs/design.md, decision 6;
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
///     for (const symtrace::ModuleFailure& f : tracer.failures()) ...   // what failed, where, why
///
/// What the traces find (visits, failures, first calls, leaf results) goes to the tracer's
/// `TraceRecords` (trace_records.hpp): its own, or records it is given, such as a
/// GraphCollection's for the length of its run. The tracer keeps only what a trace needs while
/// it runs: the checkpoint of each module call, the rollback, and the failed leaf.
///
/// A failed module's output metadata comes from the LeafMetaFn registered for its type (or, for
/// a built-in layer traced through, its own shape function: Note [Layer output metadata]), else
/// from running it eagerly on inputs of its call's metadata (Note [A failed module's result by
/// execution] in src/robust/executed_result.cpp: the structure and shapes it really returns),
/// else it is unknown (a shape of unknown rank, the dtype of its first tensor argument):
/// downstream ops then have unknown shapes too (Note [Unknown in, unknown out] in
/// src/trace/unknown_rank.cpp).

#include "symtrace/robust/trace_records.hpp"
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

/// A Tracer that turns failing submodules into leaves; see the file comment.
///
/// `trace` (Tracer's, also through a `Tracer&`) traces `root` but never fails because of the
/// model's code: a failing submodule becomes a leaf; a failing root (or one that cannot be
/// called as a whole, e.g. a ModuleList) gives a graph of placeholders, one `call_module` node
/// for the root and the output, and the root is failed. A root that is a leaf is not traced
/// into. Bad inputs (a spec count or concrete_args that do not match the root's forward) still
/// throw std::invalid_argument, and std::bad_alloc from anywhere in the trace (the model's code
/// too) propagates; the failures recorded before either stay recorded. Failures and visits
/// accumulate in the tracer's records over its traces.
class RobustTracer : public Tracer {
 public:
  /// A tracer that writes into records of its own.
  RobustTracer() : own_records_(std::make_shared<TraceRecords>()), records_(own_records_) {}
  /// A tracer that writes into `records` (into records of its own when null).
  explicit RobustTracer(std::shared_ptr<TraceRecords> records) : RobustTracer() {
    if (records != nullptr) records_ = std::move(records);
  }

  /// The records the tracer writes into.
  [[nodiscard]] const TraceRecords& records() const noexcept { return *records_; }
  /// From now on, writes into `records` (back into its own records when null), for instance a
  /// GraphCollection's during its run; returns the records it wrote into until now. Not while
  /// tracing (std::logic_error); never throws otherwise.
  std::shared_ptr<TraceRecords> use_records(std::shared_ptr<TraceRecords> records);

  /// Whether a failed module whose result nothing else tells is run to find it (on by default):
  /// Note [A failed module's result by execution] in src/robust/executed_result.cpp. Off, its
  /// result is of unknown rank, and the trace costs no eager run.
  void set_result_by_execution(bool on) noexcept { result_by_execution_ = on; }
  [[nodiscard]] bool result_by_execution() const noexcept { return result_by_execution_; }

  /// Built-in layers, registered types and failed modules are leaves.
  [[nodiscard]] bool is_leaf_module(const Module& module, std::string_view qualified_name) const override;
  /// Traces into `module` under a checkpoint; a failure rolls back and records a leaf.
  Value call_module(Module& module, const ValueList& args, std::source_location where) override;

  // ---- ModelOpt's queries, answered by the records the tracer writes into now ------------
  // (its own, or lent ones: during a GraphCollection's run, the collection's)

  /// Whether `module` failed in a trace recorded there.
  [[nodiscard]] bool is_failed(const Module& module) const noexcept { return records_->is_failed(module); }
  /// The failure record of `module`, or nullptr.
  [[nodiscard]] const ModuleFailure* failure(const Module& module) const noexcept { return records_->failure(module); }
  /// ModelOpt's message: "<kind>: <message>", or nullopt when `module` did not fail.
  [[nodiscard]] std::optional<std::string> failure_msg(const Module& module) const { return records_->failure_msg(module); }
  /// Whether `module` was never called in a trace recorded there.
  [[nodiscard]] bool is_unvisited(const Module& module) const noexcept { return records_->is_unvisited(module); }
  /// Marks `module` visited, and failed with `failure` when given (ModelOpt's hook).
  void record_call_module(const Module& module, const ModuleFailure* failure = nullptr);
  /// The failures in the order they happened.
  [[nodiscard]] const std::vector<ModuleFailure>& failures() const noexcept { return records_->failures(); }
  /// The input specs of `module`'s first call recorded there (its tensor
  /// arguments' dtypes and shapes), or nullptr when it was not called with tensors only.
  [[nodiscard]] const std::vector<InputSpec>* observed_inputs(const Module& module) const noexcept {
    return records_->observed_inputs(module);
  }
  /// `module`'s first call recorded there, or nullopt when it was not called,
  /// or called with something symbolic besides its tensors (a proxy SymInt).
  [[nodiscard]] std::optional<ObservedCall> observed_call(const Module& module) const {
    return records_->observed_call(module);
  }
  /// Forgets what the records hold: failures, visits, first calls and remembered leaf results
  /// (leaf registrations stay).
  void clear_results() noexcept { records_->clear(); }

  /// The graph of a root that is failed without being traced (it has no forward, or inputs a
  /// trace cannot give it): a placeholder per declared input, one `call_module` node for the
  /// root, and the output, recorded through the hooks. Records `failure` for the root. Not
  /// while this tracer is tracing (std::logic_error).
  Graph failed_root_graph(Module& root, ModuleFailure failure, std::source_location where);

 protected:
  /// The robust trace (see the class comment).
  Graph trace_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                    std::source_location where) override;
  Value trace_root(Module& root, const ValueList& args, std::source_location where) override;
  /// Tracer's. With a model's records (a GraphCollection's run), the results of leaf calls on
  /// symbolic tensors are remembered per module and input metadata, and a leaf traced as a
  /// root (a child of a failed module) reuses what its call with the same inputs found in an
  /// earlier trace instead of running its forward again (TraceRecords::leaf_result).
  OutputMeta leaf_result_meta(Module& module, const std::string& path, const ValueList& args,
                              std::source_location where) override;
  /// The model's index when the records are a model's and `root` is the model.
  [[nodiscard]] std::shared_ptr<const ModuleIndex> module_index(const Module& root) const override;

  /// The result metadata of `module`'s forward run eagerly on synthetic inputs of `args`'
  /// metadata (Note [A failed module's result by execution] in src/robust/executed_result.cpp):
  /// nullopt when an input's rank or a size argument is not known, or when a run fails or two
  /// runs disagree on the structure. With `calls`, it also gives the first call of each module the runs called (its
  /// children's inputs, as the runs agree on them).
  [[nodiscard]] static std::optional<OutputMeta> executed_result_meta(
      Module& module, const ValueList& args, std::source_location where,
      std::vector<std::pair<const Module*, ObservedCall>>* calls = nullptr);
  /// A failed module's result metadata: from the LeafMetaFn registered for its type or a
  /// built-in layer's shape function, else, for a module with a caller, from
  /// executed_result_meta (once per module and call), else unknown (as the file comment says). A
  /// subclass that knows more may say so.
  [[nodiscard]] virtual OutputMeta failed_leaf_meta(const Module& module, const std::string& path, const ValueList& args,
                                                    std::source_location where) const;

 private:
  /// The failure of a root whose trace threw `e` (nullptr: not a std::exception): the one
  /// recorded for it, else `e` described.
  ModuleFailure root_failure(const Module& root, const std::exception* e, std::source_location where) const;
  /// Records that the LeafMetaFn of `module` threw `e` (nullptr: not a std::exception) and gives
  /// its unknown result (Note [A failing LeafMetaFn] in robust_tracer.cpp).
  OutputMeta leaf_meta_failed(Module& module, const std::string& path, const ValueList& args, const std::exception* e,
                              std::source_location where);
  /// Records `module` as a failed leaf called with `args` (its metadata as the file comment says).
  Value record_failed_leaf(Module& module, const std::string& path, const ValueList& args, std::source_location where);

  /// The graph of a leaf root whose result for `inputs` is known without a run, or nullopt
  /// (Note [A remembered leaf root] in robust_tracer.cpp).
  std::optional<Graph> remembered_leaf_graph(Module& root, const std::vector<InputSpec>& inputs, std::source_location where);

  std::shared_ptr<TraceRecords> own_records_;  // made with the tracer
  std::shared_ptr<TraceRecords> records_;      // the ones it writes into: its own or lent ones
  bool result_by_execution_ = true;
  /// Thrown to start a trace again: Note [A failure on a later call] in robust_tracer.cpp.
  struct RestartTrace;
  std::uint64_t trace_generation_ = 0;  // one per attempt of a trace (a restart is a new one), unique in the process
};

}  // namespace symtrace

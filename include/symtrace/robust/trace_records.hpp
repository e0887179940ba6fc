#pragma once
/// \file
/// `TraceRecords`: what robust traces found out about a model's modules (which were called,
/// which failed, where and why, what their first calls passed, what their leaf calls gave).
/// A `RobustTracer` writes into the records it is given and reads them back (a failed module is
/// a leaf from then on); a `GraphCollection` owns the records of its run and lends them to its
/// tracer, so the collection's failures are the tracer's, with paths in the model, and nothing
/// is copied or re-pathed.
///
///     auto records = std::make_shared<symtrace::TraceRecords>();
///     symtrace::RobustTracer tracer(records);
///     (void)tracer.trace(model, {x});
///     for (const symtrace::ModuleFailure& f : records->failures()) fmt::print("{}\n", to_string(f));

#include "symtrace/core/value.hpp"
#include "symtrace/observe/trace_by_execution.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/trace/tracer.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

class Module;
class ModuleIndex;

/// A failed module captured by execution (GraphCollection::capture_failed_by_execution): its
/// body run eagerly on synthetic inputs of the shapes seen at its call and recorded by
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
  // clang-format off
  std::string module;   ///< its path: in the model for a model's records (TraceRecords), else under the traced root ("" for the root)
  std::string type;     ///< the module's type name
  std::string kind;     ///< the exception's type: "TraceError", "OpError", "std::runtime_error", ...
  std::string message;  ///< what() of the exception
  // clang-format on
  std::source_location where;  ///< the user's file:line (line 0 when the exception carried none)
  std::string op;              ///< the op that refused its input (OpError), else empty
  /// Whether the metadata of its result in its caller's graph came from running it (Note [A
  /// failed module's result by execution] in src/robust/executed_result.cpp).
  bool result_by_execution = false;
  /// Set when the failed module was captured by execution (the capture, or why not).
  std::shared_ptr<const ExecutionCapture> by_execution;
};

/// "resnet.cpp:80: TraceError: a symbolic tensor was read as data ...".
[[nodiscard]] std::string to_string(const ModuleFailure& failure);

/// What `module`'s first call passed: its tensors' dtypes and shapes (and the specs of its lists,
/// dicts and objects holding tensors), and its other arguments (ints, floats, bools, strings,
/// None, lists of them) with their positions.
struct ObservedCall {
  /// Its tensors, and its lists and dicts holding tensors (InputSpec::of), in argument order.
  std::vector<InputSpec> tensors;
  std::vector<std::pair<std::size_t, Value>> values;  ///< (position, value) of the others
};

/// The records of robust traces; see the file comment. Lookups by module are O(1). Not
/// thread-safe: one tracer writes them at a time (a tracer traces on one thread at a time).
class TraceRecords {
 public:
  /// Records of traces of any roots: a failure's path is under the root of the trace that found it.
  TraceRecords() = default;
  /// Records of the traces of `model`'s modules (the index of its hierarchy, made once): a
  /// failure's path is its module's path in the model, traces of the model's root borrow the
  /// index, and the results of leaf calls are remembered (see `leaf_result`) until
  /// `forget_leaf_results` or `clear`: whoever changes the model's leaves after a trace calls it
  /// (a GraphCollection does at the end of its run).
  explicit TraceRecords(std::shared_ptr<const ModuleIndex> model) noexcept : model_(std::move(model)) {}

  /// The model's index, or nullptr for records of any roots.
  [[nodiscard]] const std::shared_ptr<const ModuleIndex>& model() const noexcept { return model_; }

  // ---- Failures ----------------------------------------------------------------------------

  /// Records that `module` failed, unless it failed before (the first failure stands), and
  /// that it was visited. `failure.module` is its path under the traced root ("" for the root);
  /// in a model's records it becomes the module's path in the model (a module not in the model
  /// keeps it). Strong guarantee.
  void record_failure(const Module& module, ModuleFailure failure);
  [[nodiscard]] bool is_failed(const Module& module) const noexcept { return failed_.contains(&module); }
  /// The failure of `module`, or nullptr.
  [[nodiscard]] const ModuleFailure* failure(const Module& module) const noexcept;
  /// ModelOpt's message, "<kind>: <message>", or nullopt when `module` did not fail.
  [[nodiscard]] std::optional<std::string> failure_msg(const Module& module) const;
  /// Every failure in the order it happened.
  [[nodiscard]] const std::vector<ModuleFailure>& failures() const noexcept { return failures_; }
  /// The module of each failure, in the same order.
  [[nodiscard]] const std::vector<const Module*>& failed_modules() const noexcept { return failed_modules_; }
  /// Whether the `i`-th failure was its module's failure as the root of the trace that found it
  /// (a module that failed as a whole, with no caller in that trace). Precondition: i < failures().size().
  [[nodiscard]] bool failed_as_root(std::size_t i) const noexcept { return as_root_[i]; }
  /// Sets the capture by execution of the `i`-th failure. Precondition: i < failures().size().
  void set_by_execution(std::size_t i, std::shared_ptr<const ExecutionCapture> capture) noexcept {
    failures_[i].by_execution = std::move(capture);
  }

  // ---- Calls -------------------------------------------------------------------------------

  /// What the traces saw of one module's calls.
  struct Calls {
    bool visited = false;   ///< a call of it ended (returned or failed)
    bool observed = false;  ///< `first` holds its first call's arguments
    /// The tracer's own mark: RobustTracer keeps here the trace that last traced through the
    /// module (Note [A failure on a later call] in robust_tracer.cpp).
    std::uint64_t traced_in = 0;
    ObservedCall first;
  };
  /// The entry of `module`, made empty when it has none. The reference is valid until the next
  /// call of `calls` or `clear`.
  [[nodiscard]] Calls& calls(const Module& module) { return calls_[&module]; }
  /// Marks `module` visited.
  void record_visit(const Module& module) { calls_[&module].visited = true; }
  /// Records `args` as `module`'s first call unless one is recorded: tensors as their specs,
  /// the other arguments as they are; nothing when something symbolic besides a tensor is in them
  /// (a proxy SymInt has no value to give a later trace).
  static void observe(Calls& calls, const ValueList& args);
  /// Whether `module` was never called (ModelOpt's question).
  [[nodiscard]] bool is_unvisited(const Module& module) const noexcept {
    auto it = calls_.find(&module);
    return it == calls_.end() || !it->second.visited;
  }
  /// `module`'s first call, or nullopt when it was not called, or called with something
  /// symbolic besides its tensors.
  [[nodiscard]] std::optional<ObservedCall> observed_call(const Module& module) const;
  /// The specs of `module`'s first call when it passed tensors only (or lists and dicts of them), else nullptr.
  [[nodiscard]] const std::vector<InputSpec>* observed_inputs(const Module& module) const noexcept;

  // ---- Leaf results (a model's records only) -------------------------------------------------

  /// The result remembered for a call of the leaf `module` with inputs of metadata `inputs`,
  /// or nullptr. A leaf's result metadata depends only on its inputs' metadata and its own
  /// state, which do not change while a collection traces the model.
  [[nodiscard]] const OutputMeta* leaf_result(const Module& module, const std::vector<TensorMeta>& inputs) const noexcept;
  /// Remembers `result` for a call of `module` with `inputs` (a few per module; nothing in
  /// records of any roots, whose modules may change between traces).
  void remember_leaf_result(const Module& module, std::vector<TensorMeta> inputs, const OutputMeta& result);
  /// Forgets the remembered leaf results and executed results (the model may change from now on).
  void forget_leaf_results() noexcept {
    leaf_results_.clear();
    executed_results_.clear();
  }

  /// What the runs of the failed `module` gave for a call described by `key` (Note [A failed
  /// module's result by execution] in src/robust/executed_result.cpp): nullptr when it was not
  /// run for such a call, else the result's metadata, or nullopt when the runs told nothing.
  [[nodiscard]] const std::optional<OutputMeta>* executed_result(const Module& module, std::string_view key) const noexcept;
  /// Remembers what the runs of `module` gave for a call described by `key` (a few per module).
  void remember_executed_result(const Module& module, std::string key, std::optional<OutputMeta> result);
  /// Notes on the failure of `module` that its result's metadata came from runs of it.
  void note_result_by_execution(const Module& module) noexcept {
    if (auto it = failed_.find(&module); it != failed_.end()) failures_[it->second].result_by_execution = true;
  }

  /// Forgets everything but the model.
  void clear() noexcept;

 private:
  struct LeafCall {
    std::vector<TensorMeta> inputs;
    OutputMeta result;
  };
  std::shared_ptr<const ModuleIndex> model_;
  std::vector<ModuleFailure> failures_;
  std::vector<const Module*> failed_modules_;
  std::vector<bool> as_root_;
  std::unordered_map<const Module*, std::size_t> failed_;  // index into failures_
  std::unordered_map<const Module*, Calls> calls_;
  std::unordered_map<const Module*, std::vector<LeafCall>> leaf_results_;
  std::unordered_map<const Module*, std::vector<std::pair<std::string, std::optional<OutputMeta>>>> executed_results_;
};

}  // namespace symtrace

#pragma once
/// \file
/// `GraphCollection` and `recursive_trace` (docs/design.md, decision 7; the semantics of ModelOpt's
/// `recursive_trace`): the model is traced robustly; then, breadth first, every child of every
/// module that failed is traced as a root of its own, so a model is covered as far as it can
/// be. Only the model gets `concrete_args`. A child traced as a root gets the input metadata
/// seen at its call site when it was called before its parent failed (else inputs of unknown
/// shape). Its other arguments: a `SymInt` parameter is a symbolic integer input
/// (`InputSpec::symbolic_int()`); one that forward takes as a C++ value (`int64_t`, `double`,
/// `bool`) gets the value seen at that call as a concrete argument, recorded in the graph as a
/// guard; a module never called then cannot be traced, and fails saying so.
///
/// The collection borrows the model, which must outlive it. It keeps every other module of the
/// model alive (those owned by a `std::shared_ptr`, as children are), so what it recorded stays
/// true and readable when the model changes afterwards: a module replaced with `replace_module`
/// keeps its records, its graph and its failure under the path it was traced at.
///
///     symtrace::GraphCollection c = symtrace::recursive_trace(model, {x});
///     for (const auto& entry : c) fmt::print("{}: {} nodes\n", entry.path, entry.graph.size());
///     for (const ModuleFailure& f : c.failures()) fmt::print("{}\n", to_string(f));

#include "symtrace/robust/module_hierarchy.hpp"
#include "symtrace/robust/robust_tracer.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symtrace {

/// The graphs of a model and of the children of its failed modules, with the tracing results.
class GraphCollection {
 public:
  /// One traced module: its path in the model ("" for the model), the module, its graph.
  struct Entry {
    std::string path;
    Module* module = nullptr;
    Graph graph;
  };
  using const_iterator = std::vector<Entry>::const_iterator;

  GraphCollection();
  /// A collection whose traces use `tracer` (a subclass, or one with registered leaves). During
  /// `recursive_trace` the tracer writes into the collection's records (`records()`); afterwards
  /// it writes into the ones it had before again, so `c.tracer().failures()` are not the run's:
  /// ask the collection. Throws std::invalid_argument for nullptr.
  explicit GraphCollection(std::unique_ptr<RobustTracer> tracer,
                           std::source_location where = std::source_location::current());
  ~GraphCollection();
  GraphCollection(GraphCollection&&) noexcept;
  GraphCollection& operator=(GraphCollection&&) noexcept;

  /// Traces `model` and, breadth first, the children of failed modules (see the file comment);
  /// replaces what the collection held. Throws std::invalid_argument when `inputs` or
  /// `concrete_args` do not fit the model's forward, and std::bad_alloc when memory runs out
  /// in any of the traces (it is never recorded as a module's failure: RobustTracer); the
  /// collection is then empty and the model unchanged. Throws
  /// std::invalid_argument and changes nothing when called while this collection is running a
  /// trace (from a forward it runs): a trace inside a trace needs a collection of its own.
  void recursive_trace(Module& model, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args = {},
                       std::source_location where = std::source_location::current());

  /// The traced modules in the order they were traced (the model first).
  [[nodiscard]] const_iterator begin() const noexcept { return entries_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return entries_.end(); }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// The graph of `module`, or nullptr when it was not traced as a root.
  [[nodiscard]] const Graph* find(const Module& module) const noexcept;
  /// The graph of the module at `path` ("" for the model), or nullptr.
  [[nodiscard]] const Graph* find(std::string_view path) const noexcept;
  /// The graph of `module`; throws std::out_of_range when it was not traced as a root.
  [[nodiscard]] const Graph& at(const Module& module) const;

  [[nodiscard]] bool is_failed(const Module& module) const noexcept { return records().is_failed(module); }
  /// ModelOpt's failure message ("<kind>: <message>"), or nullopt.
  [[nodiscard]] std::optional<std::string> failure_msg(const Module& module) const { return records().failure_msg(module); }
  /// Whether `module` was never called in any of the traces (ModelOpt's question: a
  /// ModuleList, never called itself, is unvisited even when its children were called).
  [[nodiscard]] bool is_unvisited(const Module& module) const noexcept { return records().is_unvisited(module); }
  /// The failure of `module`, with its path in the model, or nullptr.
  [[nodiscard]] const ModuleFailure* failure(const Module& module) const noexcept { return records().failure(module); }
  /// Every failure in the order it happened, with paths in the model.
  [[nodiscard]] const std::vector<ModuleFailure>& failures() const noexcept { return records().failures(); }
  /// What the traces found: failures, visits and first calls of the model's modules (the
  /// collection owns them; its tracer writes into them while the collection runs it).
  [[nodiscard]] const TraceRecords& records() const noexcept;
  /// The path of `module` in the model ("" for the model), or nullopt for a foreign module.
  [[nodiscard]] std::optional<std::string> path_of(const Module& module) const;
  /// The tracer that makes the graphs (one for the whole collection). Not on a moved-from
  /// collection (until its next recursive_trace).
  [[nodiscard]] const RobustTracer& tracer() const noexcept { return *tracer_; }
  /// The tracer, to register leaves before `recursive_trace`:
  /// `c.tracer().register_leaf<GatedBlock>(); c.recursive_trace(model, {x});`.
  [[nodiscard]] RobustTracer& tracer() noexcept { return *tracer_; }

  /// Also captures each module that fails, after the trace that found it: its forward runs
  /// eagerly on synthetic inputs (random float32, zero integers and bools) of the shapes seen at
  /// its call, when they are all known; `failure(m)->by_execution` holds the specialised graph
  /// and its warnings, and in the graph of the traced module, it is a subgraph (`by_execution_0`,
  /// ...) that the failed module's `call_module` nodes name in their metadata (`by_execution`,
  /// with `specialised` true). The module's buffers are restored after its run (BatchNorm
  /// statistics in training). Off by default.
  void capture_failed_by_execution(bool on = true) noexcept { capture_by_execution_ = on; }
  [[nodiscard]] bool captures_failed_by_execution() const noexcept { return capture_by_execution_; }
  /// Every module of the model with its status (module_hierarchy.hpp); empty before a trace.
  [[nodiscard]] const ModuleHierarchy& hierarchy() const noexcept { return hierarchy_; }

 private:
  /// The run; `previous` receives the records the tracer had before it lent it the collection's.
  void trace_all(Module& model, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                 std::source_location where, std::shared_ptr<TraceRecords>& previous);

  std::vector<Entry> entries_;
  std::unordered_map<const Module*, std::size_t> index_;
  std::shared_ptr<TraceRecords> records_;  // null in a new or moved-from collection until its recursive_trace
  std::unique_ptr<RobustTracer> tracer_;
  bool running_ = false;  // recursive_trace is on the stack
  bool capture_by_execution_ = false;
  ModuleHierarchy hierarchy_;
  std::vector<std::shared_ptr<const Module>> alive_;  // Note [Records outlive the model's changes]
};

/// Makes a GraphCollection of `model`: `GraphCollection c; c.recursive_trace(model, inputs, concrete_args)`.
[[nodiscard]] GraphCollection recursive_trace(Module& model, const std::vector<InputSpec>& inputs,
                                              const ConcreteArgs& concrete_args = {},
                                              std::source_location where = std::source_location::current());

}  // namespace symtrace

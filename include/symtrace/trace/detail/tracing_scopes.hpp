#pragma once
// Internal (symtrace::detail, not part of the API): the scopes that change a TracingState for
// their lifetime and restore it when they end, also when an exception passes. The trace layer
// and the robust tracer use them.

#include "symtrace/core/thread_context.hpp"
#include "symtrace/core/detail/save_and_restore.hpp"
#include "symtrace/trace/tracing_state.hpp"

#include <cstdint>
#include <source_location>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace::detail {

/// Makes `state` the innermost trace of this thread for the scope's lifetime: installs its
/// tracer as the thread's interposer, running `state`. The destructor restores the previous
/// interposer (Note [The active trace] in tracing_state.cpp).
class TraceScope {
 public:
  explicit TraceScope(TracingState& state);
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  InterposerScope interposer_;  // first: when it throws, the tracer is left as it was
  SaveAndRestore<TracingState*> state_;
};

/// A side run of the trace for the scope's lifetime (a leaf's forward run for its output
/// metadata): nothing is recorded meanwhile (`meta_only()`), and symbolic tensors made meanwhile
/// get a fresh id, which is no longer accepted once the scope ends.
class SideRun {
 public:
  explicit SideRun(TracingState& state);
  ~SideRun();
  SideRun(const SideRun&) = delete;
  SideRun& operator=(const SideRun&) = delete;

 private:
  TracingState& state_;
};

/// Records into `subgraph` for the scope's lifetime (a branch of `cond`, never inside a side
/// run): nodes go there, and
/// symbolic tensors get a fresh id under which only the subgraph's own tensors are accepted
/// (a tensor of the enclosing graph names a node of another graph). The destructor restores
/// the graph and the ids.
class SubgraphRun {
 public:
  SubgraphRun(TracingState& state, Graph& subgraph);
  ~SubgraphRun();
  SubgraphRun(const SubgraphRun&) = delete;
  SubgraphRun& operator=(const SubgraphRun&) = delete;

 private:
  TracingState& state_;
  Graph* graph_;
  std::vector<std::uint64_t> ids_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> retired_;
};

/// Keeps the paths `path_of` gave out from the current frame valid for the scope's lifetime,
/// while code runs that may call modules without entering a frame (a leaf's metadata
/// function): their paths are made one level deeper.
class PathHold {
 public:
  explicit PathHold(TracingState& state) noexcept : state_(state) { ++state_.held_paths_; }
  ~PathHold() { --state_.held_paths_; }
  PathHold(const PathHold&) = delete;
  PathHold& operator=(const PathHold&) = delete;

 private:
  TracingState& state_;
};

/// Enters the module `module` at `path`, called at `call_site`, for the scope's lifetime (nodes
/// recorded meanwhile get `path` as their scope).
class FrameScope {
 public:
  FrameScope(TracingState& state, const Module& module, std::string_view path, std::source_location call_site);
  ~FrameScope();
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  TracingState& state_;
};

}  // namespace symtrace::detail

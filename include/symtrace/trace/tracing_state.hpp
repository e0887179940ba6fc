#pragma once
/// \file
/// `TracingState`: one active symbolic trace (docs/design.md, decision 9). Each thread has a stack of
/// active traces; a trace pushes one for its lifetime and pops it when it ends, also when an
/// exception passes (the scopes of trace/detail/tracing_scopes.hpp), so after any exception a
/// thread's tracing state is exactly as before. Every trace has a process-wide unique id: a symbolic tensor carries the id of
/// the trace that made it, and using it anywhere else (after its trace ended, inside
/// another trace, on another thread) raises `TraceError` instead of touching a graph it
/// does not belong to.

#include "symtrace/core/tensor.hpp"
#include "symtrace/graph/node.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symtrace {

class Graph;
class Module;
class ModuleIndex;
class Tracer;
namespace detail {
struct TensorImpl;
class FrameScope;
class PathHold;
class TraceScope;
class SideRun;
class SubgraphRun;
}  // namespace detail

/// One active trace: the graph being written, the tracer writing it, the module being traced
/// through, and the qualified names of the root's modules and tensors. Made by
/// `Tracer::trace`; reachable through `TracingState::current()` while its scope is active.
class TracingState {
 public:
  /// Where the trace is: a module being traced through, with its qualified path ("" for the
  /// root).
  struct Frame {
    const Module* module = nullptr;
    std::string_view path;
    std::source_location call_site;  // the module's call (for the root, the trace's)
    std::size_t next_child = 0;      // where path_of looks first among the module's children
  };

  /// Borrows `modules` when it indexes `root`; else the modules of `root` are indexed on
  /// first need (see path_of), as are parameters and buffers.
  TracingState(Tracer& tracer, Graph& graph, const Module& root, std::shared_ptr<const ModuleIndex> modules = nullptr,
               std::source_location where = std::source_location::current());
  TracingState(const TracingState&) = delete;
  TracingState& operator=(const TracingState&) = delete;
  ~TracingState();

  /// The id new symbolic tensors get: process-wide unique, never 0 (0 marks concrete
  /// tensors). A side run (a leaf's forward run for its output metadata, then rolled back)
  /// has an id of its own, so tensors it made cannot be used once it is over.
  [[nodiscard]] std::uint64_t id() const noexcept { return ids_.back(); }
  /// Whether the symbolic tensor naming `ref` belongs to this trace now: made under its id or
  /// that of a side run still going on, or under a retired id below the retirement bound.
  [[nodiscard]] bool accepts(SymbolicRef ref) const noexcept;
  /// Note [Rolled-back tensors]: after a rollback of the graph to id bound `bound`, tensors made
  /// in the rolled-back region name node ids the graph will give out again. This retires the
  /// current id: its tensors stay accepted only below `bound` (as do those of ids retired
  /// before), and new tensors get a fresh id. Call it with no side run going on.
  void retire(std::uint32_t bound);
  /// True during a side run: ops, leaves and conds compute their output metadata and record
  /// nothing (a leaf's forward run for its output shapes).
  [[nodiscard]] bool meta_only() const noexcept { return ids_.size() > 1; }
  [[nodiscard]] Tracer& tracer() const noexcept { return tracer_; }
  /// The graph nodes go into now (a cond branch's subgraph while one is traced).
  [[nodiscard]] Graph& graph() const noexcept { return *graph_; }
  [[nodiscard]] const Module& root() const noexcept { return root_; }

  /// The module being traced through now (the root at first).
  [[nodiscard]] const Frame& frame() const noexcept { return frames_.back(); }
  /// The innermost frame's call site in user code (Note [User locations] in core/error.cpp), or
  /// line 0 when every frame was entered from symtrace's own code. O(depth) at worst.
  [[nodiscard]] std::source_location user_site() const noexcept;
  /// The scope, in graph(), of the module being traced through (its path, as nodes recorded
  /// now get it): found once per frame and graph, in O(|name|) when the frame's path is its
  /// parent frame's and a name (Note [Paths as prefixes] in tracing_state.cpp).
  [[nodiscard]] ScopeId frame_scope();
  /// The qualified path of `module` under the root (its first path in named_modules()
  /// order), or nullptr when it is not in the root's hierarchy. Note [Paths of called
  /// modules]: a module registered once and called by its parent, the common case, gets its
  /// parent's path and its name, found without indexing the model, in O(|name|) whatever the
  /// depth (Note [Paths as prefixes] in tracing_state.cpp); any other module is looked up in
  /// the index of the root's modules, built on first need. The string stays
  /// valid until the next path_of call made from the same frame (the call it names is over by
  /// then) and the trace is alive. May throw std::bad_alloc.
  [[nodiscard]] const std::string* path_of(const Module& module);
  /// True once the index of the root's modules exists (given, or built on first need).
  [[nodiscard]] bool has_module_index() const noexcept { return modules_ != nullptr; }
  /// The qualified name of a parameter or buffer of the root's hierarchy (its first name in
  /// named_parameters() then named_buffers() order), or nullptr. A tensor no module holds is
  /// answered at once, one held once by the module being traced from its own names; anything
  /// else indexes the root's tensors on first need (which may throw std::bad_alloc).
  [[nodiscard]] const std::string* tensor_path_of(const detail::TensorImpl* tensor) const;

  /// The innermost trace active on this thread, or nullptr: the trace of the innermost tracer
  /// among the thread's interposers (Note [The active trace] in tracing_state.cpp).
  [[nodiscard]] static TracingState* current() noexcept;

 private:
  friend class detail::FrameScope;
  friend class detail::PathHold;
  friend class detail::TraceScope;
  friend class detail::SideRun;
  friend class detail::SubgraphRun;

  std::vector<std::uint64_t> ids_;                                // the trace's id, then those of nested side runs
  std::vector<std::pair<std::uint64_t, std::uint32_t>> retired_;  // (id, bound): see retire()
  Tracer& tracer_;
  Graph* graph_;
  const Module& root_;
  /// The index of the root's modules, built on first need.
  const ModuleIndex& modules() const;

  std::vector<Frame> frames_;
  mutable std::shared_ptr<const ModuleIndex> modules_;
  // Paths made by path_of, one per frame depth (a call made from frame i has its path in
  // paths_[i], or deeper while a PathHold is alive), with the module each names: strings
  // keep their capacity, so a call's path costs no allocation once the trace is warm. A
  // deque: strings never move.
  std::deque<std::string> paths_;
  std::vector<const Module*> path_modules_;
  std::size_t held_paths_ = 0;  // see PathHold
  // The path of the innermost module called through frames; the frames' paths are prefixes
  // of it (Note [Paths as prefixes] in tracing_state.cpp).
  std::string chain_;
  std::string& extend_chain(std::size_t parent_size, std::string_view name);
  // The scope of each frame once found (see frame_scope), valid while `scope_generation_` is
  // the one it was found in: a SubgraphRun starts a generation, and so does its end.
  struct FrameScopeId {
    std::uint64_t generation = 0;
    ScopeId scope{};
  };
  std::vector<FrameScopeId> frame_scopes_;
  std::uint64_t scope_generation_ = 1;
  const std::string root_path_;  // the root's path, ""
  /// A parameter or buffer: the module that holds it first in named_parameters() order (an
  /// index into modules_), its name there, and its qualified name once asked for.
  struct TensorOwner {
    std::uint32_t module;
    std::string_view name;
    std::string path;
  };
  mutable std::unordered_map<const detail::TensorImpl*, TensorOwner> tensor_owners_;  // see tensor_path_of
  mutable bool tensor_owners_indexed_ = false;
};

}  // namespace symtrace

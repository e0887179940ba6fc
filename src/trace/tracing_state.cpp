#include "symtrace/trace/tracing_state.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/trace/tracer.hpp"
#include "symtrace/trace/detail/tracing_scopes.hpp"
#include "symtrace/nn/detail/join_path.hpp"

#include <algorithm>
#include <atomic>

namespace symtrace {

namespace {

std::atomic<std::uint64_t> next_trace_id{1};

}  // namespace

TracingState::TracingState(Tracer& tracer, Graph& graph, const Module& root, std::shared_ptr<const ModuleIndex> modules,
                           std::source_location where)
    : ids_{next_trace_id.fetch_add(1, std::memory_order_relaxed)},
      tracer_(tracer),
      graph_(&graph),
      root_(root),
      modules_(modules != nullptr && &modules->root() == &root && modules->size() > 0 && modules->name(0).empty()
                   ? std::move(modules)
                   : nullptr) {
  frames_.reserve(8);
  frames_.push_back(Frame{&root, {}, where});
  frame_scopes_.reserve(8);
  frame_scopes_.emplace_back();
}

TracingState::~TracingState() = default;

const ModuleIndex& TracingState::modules() const {
  if (modules_ == nullptr) modules_ = std::make_shared<const ModuleIndex>(root_);
  return *modules_;
}

const std::string* TracingState::path_of(const Module& module) {
  // Note [Paths of called modules]. A module registered once has a single path, its parent's
  // and its name; the parent's frame path is exact (by induction, or from the index), so
  // the path is too. A module with a few children has them all looked at; children of a
  // larger one are usually called in registration order, so it has the next few looked at
  // from where the last call was found: the search is O(1) even for a Sequential of 100k
  // blocks. A miss falls back to the index. A module found here also has what the trace
  // reads next prefetched (see below): with 10k blocks and more, those reads are the misses
  // that make a node cost more than in a small model.
  if (&module == &root_) return &root_path_;
  const std::size_t depth = frames_.size() - 1 + held_paths_;
  if (depth < path_modules_.size() && path_modules_[depth] == &module) return &paths_[depth];
  if (module.num_registrations() == 1) {
    Frame& frame = frames_.back();
    const auto& children = frame.module->named_children();
    const std::size_t n = children.size();
    constexpr std::size_t few = 32, look_ahead = 4;
    const std::size_t window = n <= few ? n : look_ahead;
    for (std::size_t k = 0; k < window; ++k) {
      const std::size_t i = (frame.next_child + k) % n;
      if (children[i].second.get() != &module) continue;
      const std::string* found = nullptr;
      if (held_paths_ == 0 && (frame.path.empty() || frame.path.data() == chain_.data())) {
        found = &extend_chain(frame.path.size(), children[i].first);
      } else {
        while (paths_.size() <= depth) paths_.emplace_back();
        if (path_modules_.size() <= depth) path_modules_.resize(depth + 1, nullptr);
        std::string& path = paths_[depth];
        path_modules_[depth] = nullptr;  // not valid while it is rewritten
        path.assign(frame.path);
        if (!path.empty()) path += '.';
        path += children[i].first;
        path_modules_[depth] = &module;
        found = &path;
      }
      frame.next_child = i + 1;
      // A large model's modules each lie in memory of their own, and the trace reads each once:
      // start loading what comes next while this module is traced (the next sibling's object,
      // this module's lists), so that the misses overlap with work instead of stalling it.
      detail::prefetch_for_call(module);
      if (i + 1 < n) {
        const char* next = reinterpret_cast<const char*>(children[i + 1].second.get());
        for (std::size_t line = 0; line < 3; ++line) __builtin_prefetch(next + 64 * line);
      }
      return found;
    }
  }
  // Anywhere else (a module registered twice, or called far from its registration order): the
  // index makes the module's first path, kept at this depth as the paths above are.
  const ModuleIndex& index = modules();
  const std::size_t i = index.find(module);
  if (i == ModuleIndex::npos) return nullptr;
  while (paths_.size() <= depth) paths_.emplace_back();
  if (path_modules_.size() <= depth) path_modules_.resize(depth + 1, nullptr);
  std::string& path = paths_[depth];
  path_modules_[depth] = nullptr;  // not valid while it is rewritten
  path = index.path(i);
  path_modules_[depth] = &module;
  return &path;
}

ScopeId TracingState::frame_scope() {
  // Note [Paths as prefixes]: a frame whose path is its parent frame's and a name gets its scope
  // from its parent's scope and that name (Graph::child_scope, O(|name|)); any other path is
  // interned whole. Frames are walked down to the deepest whose scope is known in this graph
  // (the root's is ScopeId{}), then up.
  std::size_t known = frames_.size() - 1;
  while (known > 0 && frame_scopes_[known].generation != scope_generation_) --known;
  ScopeId scope = known == 0 ? ScopeId{} : frame_scopes_[known].scope;
  for (std::size_t i = known + 1; i < frames_.size(); ++i) {
    const std::string_view path = frames_[i].path, parent = frames_[i - 1].path;
    if (path.empty()) {
      scope = ScopeId{};
    } else if (parent.empty() ? path.find('.') == std::string_view::npos
                              : path.data() == parent.data() && path.size() > parent.size() + 1 && path[parent.size()] == '.') {
      scope = graph_->child_scope(scope, path.substr(parent.empty() ? 0 : parent.size() + 1));
    } else {
      scope = graph_->intern_scope(path);
    }
    frame_scopes_[i] = FrameScopeId{scope_generation_, scope};
  }
  return scope;
}

std::string& TracingState::extend_chain(std::size_t parent_size, std::string_view name) {
  // Note [Paths as prefixes]: `chain_` holds the path of the innermost module called through
  // frames, and every frame entered with a path from here holds a prefix of it: a call's path
  // is its parent's (the prefix) and its name, appended in O(|name|) whatever the depth (a
  // copy of the parent's path per call made tracing a chain of n modules O(n^2)). A frame that
  // ends cuts `chain_` back to its own path (FrameScope), so the path path_of gave for a call
  // reads the same when the call is over. When `chain_` moves, the frames' paths follow it.
  const char* before = chain_.data();
  chain_.resize(parent_size);
  if (parent_size != 0) chain_ += '.';
  chain_ += name;
  if (chain_.data() != before) {
    for (Frame& f : frames_) {
      if (!f.path.empty() && f.path.data() == before) f.path = std::string_view(chain_.data(), f.path.size());
    }
  }
  return chain_;
}

const std::string* TracingState::tensor_path_of(const detail::TensorImpl* tensor) const {
  // A tensor no module holds (a constant made in forward, an input) is nobody's parameter.
  const std::uint32_t registrations = tensor->registrations.get();
  if (registrations == 0) return nullptr;
  auto it = tensor_owners_.find(tensor);
  if (it == tensor_owners_.end() && !tensor_owners_indexed_ && registrations == 1) {
    // Held once, by the module being traced (a model reading its own parameter, the common
    // case): its path is that module's and its name, as with Note [Paths of called modules].
    const Frame& frame = frames_.back();
    std::string_view name;
    for (bool parameters : {true, false}) {
      frame.module->for_each_own_tensor(parameters, [&](std::string_view n, const Tensor& t) {
        if (name.empty() && t.impl_ptr().get() == tensor) name = n;
      });
    }
    if (!name.empty()) it = tensor_owners_.try_emplace(tensor, TensorOwner{0, name, detail::join_path(frame.path, name)}).first;
  }
  if (it == tensor_owners_.end() && !tensor_owners_indexed_) {
    // Indexed on first need: parameters first, then buffers, each at its first module in
    // named_modules() order, as named_parameters() and named_buffers() name them; paths are
    // joined when asked for. Owners found above are kept (they are the same).
    for (bool parameters : {true, false}) {
      for (std::size_t i = 0; i < modules().size(); ++i) {
        modules().module(i).for_each_own_tensor(parameters, [&](std::string_view name, const Tensor& t) {
          tensor_owners_.try_emplace(t.impl_ptr().get(), TensorOwner{static_cast<std::uint32_t>(i), name, {}});
        });
      }
    }
    tensor_owners_indexed_ = true;
    it = tensor_owners_.find(tensor);
  }
  if (it == tensor_owners_.end()) return nullptr;
  TensorOwner& owner = it->second;
  if (owner.path.empty()) owner.path = detail::join_path(modules().path(owner.module), owner.name);
  return &owner.path;
}

std::source_location TracingState::user_site() const noexcept {
  for (std::size_t i = frames_.size(); i-- > 0;) {
    if (!detail::is_library_location(frames_[i].call_site)) return frames_[i].call_site;
  }
  return {};
}

bool TracingState::accepts(SymbolicRef ref) const noexcept {
  for (std::uint64_t mine : ids_) {
    if (mine == ref.trace) return true;
  }
  for (const auto& [id, bound] : retired_) {
    if (id == ref.trace) return ref.node < bound;
  }
  return false;
}

void TracingState::retire(std::uint32_t bound) {
  if (retired_.size() == retired_.capacity()) retired_.reserve(std::max<std::size_t>(4, 2 * retired_.capacity()));  // nothing changes if this throws
  for (auto& entry : retired_) entry.second = std::min(entry.second, bound);
  retired_.emplace_back(ids_.back(), bound);
  ids_.back() = next_trace_id.fetch_add(1, std::memory_order_relaxed);
}

detail::SideRun::SideRun(TracingState& state) : state_(state) {
  state_.ids_.push_back(next_trace_id.fetch_add(1, std::memory_order_relaxed));
}

detail::SideRun::~SideRun() { state_.ids_.pop_back(); }

detail::SubgraphRun::SubgraphRun(TracingState& state, Graph& subgraph)
    : state_(state), graph_(state.graph_), ids_{next_trace_id.fetch_add(1, std::memory_order_relaxed)} {
  std::swap(state_.ids_, ids_);  // noexcept: the fresh id list was made above
  std::swap(state_.retired_, retired_);
  state_.graph_ = &subgraph;
  ++state_.scope_generation_;  // scopes are per graph
}

detail::SubgraphRun::~SubgraphRun() {
  state_.graph_ = graph_;
  ++state_.scope_generation_;
  std::swap(state_.ids_, ids_);
  std::swap(state_.retired_, retired_);
}

// Note [The active trace]: the thread's one per-thread context (core/thread_context.hpp) is the
// only record of which trace is active: a TraceScope installs the trace's tracer as the thread's
// interposer, and the tracer holds the TracingState it runs (a tracer runs one trace at a time,
// and an interposer is installed once at a time, so that is the one). The tracer's per-node path
// asks for its trace several times per node (Tracer::state()); while the tracer is the thread's
// interposer that costs one thread-local load, a compare and a member load. Other interposers
// installed inside it (a trace by execution, an eager run of a failed module) pass some calls out
// to it: then the innermost tracer running a trace is found by walking out from the thread's
// interposer, as current() does.
detail::TraceScope::TraceScope(TracingState& state)
    : interposer_(state.tracer()), state_(state.tracer().state_, &state) {}

TracingState* TracingState::current() noexcept {
  for (const Interposer* interposer = current_interposer(); interposer != nullptr; interposer = interposer->outer()) {
    const auto* tracer = dynamic_cast<const Tracer*>(interposer);
    if (tracer != nullptr && tracer->state_ != nullptr) return tracer->state_;
  }
  return nullptr;
}

detail::FrameScope::FrameScope(TracingState& state, const Module& module, std::string_view path, std::source_location call_site)
    : state_(state) {
  state_.frame_scopes_.emplace_back();  // first: a throw leaves both lists as they were
  try {
    state_.frames_.push_back(TracingState::Frame{&module, path, call_site});
  } catch (...) {
    state_.frame_scopes_.pop_back();
    throw;
  }
}

detail::FrameScope::~FrameScope() {
  const std::string_view path = state_.frames_.back().path;
  state_.frames_.pop_back();
  state_.frame_scopes_.pop_back();
  if (!path.empty() && path.data() == state_.chain_.data()) state_.chain_.resize(path.size());  // Note [Paths as prefixes]
}

}  // namespace symtrace

#include "symtrace/trace/tracing_state.hpp"

#include "symtrace/core/tensor.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/trace/tracer.hpp"

#include <algorithm>
#include <atomic>

namespace symtrace {

namespace {

std::atomic<std::uint64_t> next_trace_id{1};
thread_local TracingState* current_state = nullptr;

}  // namespace

TracingState::TracingState(Tracer& tracer, Graph& graph, const Module& root, std::shared_ptr<const ModuleIndex> modules)
    : ids_{next_trace_id.fetch_add(1, std::memory_order_relaxed)},
      tracer_(tracer),
      graph_(&graph),
      root_(root),
      modules_(modules != nullptr && &modules->root() == &root && modules->size() > 0 && modules->modules()[0].path.empty()
                   ? std::move(modules)
                   : std::make_shared<const ModuleIndex>(root)) {
  frames_.reserve(8);
  frames_.push_back(Frame{&root, {}});
}

TracingState::~TracingState() = default;

const std::string* TracingState::path_of(const Module& module) const noexcept {
  return modules_->path_of(module);
}

const std::string* TracingState::tensor_path_of(const detail::TensorImpl* tensor) const {
  if (!tensor_paths_indexed_) {
    // Indexed on first use (an op on concrete tensors during the trace, or a parameter used
    // outside a leaf): traces that read parameters only inside leaves never ask.
    std::unordered_map<const detail::TensorImpl*, std::string> paths;
    for (NamedTensor& t : root_.named_parameters()) paths.emplace(t.tensor.impl_ptr().get(), std::move(t.name));
    for (NamedTensor& t : root_.named_buffers()) paths.emplace(t.tensor.impl_ptr().get(), std::move(t.name));
    tensor_paths_ = std::move(paths);
    tensor_paths_indexed_ = true;
  }
  auto it = tensor_paths_.find(tensor);
  return it == tensor_paths_.end() ? nullptr : &it->second;
}

TracingState* TracingState::current() noexcept { return current_state; }

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

SideRun::SideRun(TracingState& state) : state_(state) {
  state_.ids_.push_back(next_trace_id.fetch_add(1, std::memory_order_relaxed));
}

SideRun::~SideRun() { state_.ids_.pop_back(); }

SubgraphRun::SubgraphRun(TracingState& state, Graph& subgraph)
    : state_(state), graph_(state.graph_), ids_{next_trace_id.fetch_add(1, std::memory_order_relaxed)} {
  std::swap(state_.ids_, ids_);  // noexcept: the fresh id list was made above
  std::swap(state_.retired_, retired_);
  state_.graph_ = &subgraph;
}

SubgraphRun::~SubgraphRun() {
  state_.graph_ = graph_;
  std::swap(state_.ids_, ids_);
  std::swap(state_.retired_, retired_);
}

TraceScope::TraceScope(TracingState& state) : previous_(current_state), hook_(&state.tracer()) {
  current_state = &state;
  ++detail::t_active_traces;
}

TraceScope::~TraceScope() {
  current_state = previous_;
  --detail::t_active_traces;
}

FrameScope::FrameScope(TracingState& state, const Module& module, std::string_view path) : state_(state) {
  state_.frames_.push_back(TracingState::Frame{&module, path});
}

FrameScope::~FrameScope() { state_.frames_.pop_back(); }

}  // namespace symtrace

#include "symtrace/observe/operator_call_tracer.hpp"

#include "symtrace/ops/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace symtrace {

struct OperatorCallTracer::State {
  struct Entry {
    OperatorUse use;
    std::optional<std::size_t> training_arg;  // index of a bool `training`/`train` argument
  };
  mutable std::mutex mutex;
  std::map<std::string, Entry, std::less<>> ops;
};

namespace {

/// How many ops are running on this thread, per tracer state: an op started while another
/// runs is nested in it (start and end callbacks always run as pairs).
thread_local std::vector<std::pair<const void*, int>> t_depths;

int& depth_of(const void* state) {
  for (auto& [s, d] : t_depths)
    if (s == state) return d;
  return t_depths.emplace_back(state, 0).second;
}

std::optional<std::size_t> training_argument(std::string_view op_name) {
  const OpDef* op = OpRegistry::instance().find(op_name);
  if (op == nullptr) return std::nullopt;
  for (std::string_view name : {"training", "train"}) {
    if (auto index = op->schema.find_arg(name)) return index;
  }
  return std::nullopt;
}

}  // namespace

OperatorCallTracer::OperatorCallTracer() : state_(std::make_shared<State>()) {
  // The callbacks hold the state: an event that started before removal still ends safely.
  std::shared_ptr<State> state = state_;
  auto start = [state](const RecordFunction& fn) {
    int& depth = depth_of(state.get());
    const bool nested = depth > 0;
    {
      const std::lock_guard lock(state->mutex);
      auto it = state->ops.find(fn.name());
      if (it == state->ops.end()) {
        State::Entry entry;
        entry.use.name = std::string(fn.name());
        entry.training_arg = training_argument(fn.name());
        it = state->ops.emplace(entry.use.name, std::move(entry)).first;
      }
      State::Entry& e = it->second;
      ++e.use.calls;
      if (nested) ++e.use.nested_calls;
      if (e.training_arg && *e.training_arg < fn.inputs().size()) {
        const Value& flag = fn.inputs()[*e.training_arg];
        if (flag.is_bool() && flag.to_bool()) ++e.use.training_calls;
      }
    }
    ++depth;  // last: a start that throws has no end
    return std::unique_ptr<ObserverContext>();
  };
  auto end = [state](const RecordFunction&, ObserverContext*) {
    int& depth = depth_of(state.get());
    if (--depth == 0) {
      std::erase_if(t_depths, [&](const auto& p) { return p.first == state.get(); });
    }
  };
  handle_ = add_global_callback(
      RecordFunctionCallback(std::move(start), std::move(end)).scopes({RecordScope::function}).needs_inputs());
}

OperatorCallTracer::~OperatorCallTracer() { remove_callback(handle_); }

std::vector<std::string> OperatorCallTracer::called_operators() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<std::string> names;
  names.reserve(state_->ops.size());
  for (const auto& [name, entry] : state_->ops) names.push_back(name);
  return names;
}

std::vector<OperatorUse> OperatorCallTracer::uses() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<OperatorUse> out;
  out.reserve(state_->ops.size());
  for (const auto& [name, entry] : state_->ops) out.push_back(entry.use);
  return out;
}

void OperatorCallTracer::clear() {
  const std::lock_guard lock(state_->mutex);
  state_->ops.clear();
}

}  // namespace symtrace

// recursive_trace: ModelOpt's breadth-first recursion over the children of failed modules,
// with one RobustTracer for the whole collection (failures found while tracing one module make
// that module a leaf in every later trace).
#include "symtrace/robust/graph_collection.hpp"

#include "execution_capture.hpp"
#include "symtrace/core/detail/save_and_restore.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/core/stack_guard.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_index.hpp"

#include <boost/core/demangle.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <new>
#include <optional>
#include <stdexcept>
#include <typeinfo>
#include <unordered_set>

namespace symtrace {

namespace {

/// What a module traced as a root is given: the specs of its non-concrete inputs, in order, and
/// the values of the others.
struct RootInputs {
  std::vector<InputSpec> specs;
  ConcreteArgs concrete;
};

/// The inputs of `module` traced as a root. Called before (`seen`): its tensors with the dtypes
/// and shapes of that call; a SymInt parameter symbolic; any other value (a C++ int, a float, a
/// bool) as it was at that call, a concrete argument the graph records as a guard. Never called:
/// tensors of unknown shape (float32) and symbolic SymInts for its required inputs; an input
/// that must be a C++ value then has none, and the trace says so.
RootInputs root_inputs(const Module& module, const std::optional<ObservedCall>& seen) {
  RootInputs in;
  const ForwardSignature* signature = module.forward_signature();
  if (signature == nullptr) return in;
  if (!seen) {
    for (std::size_t i = 0; i < signature->num_required; ++i) {
      in.specs.push_back(signature->parameters[i].type == ParamType::sym_int ? InputSpec::symbolic_int()
                                                                             : InputSpec(Shape::unknown_rank()));
    }
    return in;
  }
  std::size_t tensor = 0, value = 0;
  for (std::size_t i = 0; tensor < seen->tensors.size() || value < seen->values.size(); ++i) {
    if (value < seen->values.size() && seen->values[value].first == i) {
      const Value& v = seen->values[value++].second;
      const bool symbolic = i < signature->parameters.size() && signature->parameters[i].type == ParamType::sym_int && v.is_int();
      if (symbolic) {
        in.specs.push_back(InputSpec::symbolic_int());
      } else if (i < signature->parameters.size()) {
        in.concrete.emplace_back(signature->parameters[i].name, v);
      }
    } else {
      in.specs.push_back(seen->tensors[tensor++]);
    }
  }
  return in;
}

}  // namespace

GraphCollection::GraphCollection() : tracer_(std::make_unique<RobustTracer>()) {}
GraphCollection::GraphCollection(std::unique_ptr<RobustTracer> tracer, std::source_location where)
    : tracer_(std::move(tracer)) {
  if (tracer_ == nullptr) {
    throw_invalid_argument(where, "GraphCollection was given a null tracer: pass std::make_unique<RobustTracer>() "
                                  "(or of a subclass), or use the default constructor");
  }
}
GraphCollection::~GraphCollection() = default;
GraphCollection::GraphCollection(GraphCollection&&) noexcept = default;
GraphCollection& GraphCollection::operator=(GraphCollection&&) noexcept = default;

void GraphCollection::recursive_trace(Module& model, const std::vector<InputSpec>& inputs,
                                      const ConcreteArgs& concrete_args, std::source_location where) {
  if (tracer_ == nullptr) tracer_ = std::make_unique<RobustTracer>();  // a moved-from collection
  // Before anything is cleared: the running trace reads it. Running covers the whole run,
  // the eager reruns of failed modules after a trace too (capture_failed_by_execution); the
  // tracer's is_tracing() covers a trace the user started with tracer(), on any thread.
  if (running_ || tracer_->is_tracing()) {
    throw_invalid_argument(where, "this GraphCollection is already running a recursive_trace; use another "
                                  "GraphCollection for a trace inside a trace");
  }
  const detail::SaveAndRestore running(running_, true);
  entries_.clear();
  index_.clear();
  hierarchy_ = ModuleHierarchy();
  alive_.clear();
  if (records_ == nullptr) records_ = std::make_shared<TraceRecords>();  // a new or moved-from collection
  std::shared_ptr<TraceRecords> previous;                                // the tracer's records before the run: given back after it
  try {
    trace_all(model, inputs, concrete_args, where, previous);
  } catch (...) {
    // Nothing half-made stays: the collection is empty.
    entries_.clear();
    index_.clear();
    *records_ = TraceRecords();
    hierarchy_ = ModuleHierarchy();
    alive_.clear();
    if (previous != nullptr) (void)tracer_->use_records(std::move(previous));
    throw;
  }
  // The tracer's next traces are no longer the collection's; the model may change from now on.
  (void)tracer_->use_records(std::move(previous));
  records_->forget_leaf_results();
}

const TraceRecords& GraphCollection::records() const noexcept {
  static const TraceRecords none;
  return records_ != nullptr ? *records_ : none;
}

void GraphCollection::trace_all(Module& model, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                                std::source_location where, std::shared_ptr<TraceRecords>& previous) {
  // The model's modules are indexed once: the hierarchy's records, the root trace's paths and
  // the failures' paths.
  auto modules = std::make_shared<const ModuleIndex>(model);
  // Note [Records outlive the model's changes]: every module the records name is kept alive,
  // so a module replaced in the model (replace_module) or dropped after the trace is still
  // what its records, its graph's entry and the failure lookups by address name, never freed
  // memory or another module allocated at its address. The model itself is the caller's.
  alive_.reserve(modules->size());
  for (std::size_t i = 0; i < modules->size(); ++i) {
    if (std::shared_ptr<const Module> owned = modules->module(i).weak_from_this().lock()) alive_.push_back(std::move(owned));
  }
  hierarchy_ = ModuleHierarchy(modules);  // the modules' paths and order; statuses at the end
  *records_ = TraceRecords(std::move(modules));
  previous = tracer_->use_records(records_);
  const TraceRecords& records = *records_;

  std::deque<Module*> queue{&model};
  std::unordered_set<const Module*> queued{&model};
  while (!queue.empty()) {
    Module* module = queue.front();
    queue.pop_front();
    if (module != &model && module->forward_signature() == nullptr) {
      // A container that cannot be called (ModuleList, or a class whose other methods its
      // parent calls): nothing to trace and nothing failed; its children may have been called
      // through it, so they are queued in its place. Its status follows theirs (below).
      for (const auto& [name, child] : module->named_children()) {
        if (queued.insert(child.get()).second) queue.push_back(child.get());
      }
      continue;
    }
    std::size_t seen = records.failures().size();
    const std::optional<ObservedCall> observed = module == &model ? std::nullopt : records.observed_call(*module);
    std::optional<Graph> traced = [&]() -> std::optional<Graph> {
      if (module == &model) return tracer_->trace(model, inputs, concrete_args, where);  // bad inputs: the caller's
      const RootInputs in = root_inputs(*module, observed);
      try {
        return tracer_->trace(*module, in.specs, in.concrete, where);
      } catch (const StackDepthError&) {
        throw;  // the stack ran out (Note [Stack guard]): the whole run stops
      } catch (const std::bad_alloc&) {
        throw;  // Note [Out of memory is not a failure] in robust_tracer.cpp
      } catch (const std::exception& e) {
        // A module never called has no inputs to trace it on: that is not a failure of its
        // own, and it stays unvisited. One that was called, with a forward that takes more
        // than tensors, cannot be traced without concrete_args: a failure.
        if (!observed) return std::nullopt;
        return tracer_->failed_root_graph(
            *module, ModuleFailure{"", module->type_name(), boost::core::demangle(typeid(e).name()), e.what(), where, {}, false, {}},
            where);
      }
    }();
    if (!traced) continue;
    Graph graph = std::move(*traced);
    if (capture_by_execution_) detail::capture_by_execution(*records_, seen, graph, *module);
    seen = std::min(seen, records.failures().size());  // a forward may have cleared the records
    index_.emplace(module, entries_.size());
    entries_.push_back(Entry{*path_of(*module), module, std::move(graph)});

    // Every child of every failed module in this module's subtree is queued once, the failed
    // modules taken in the subtree's module order (ModelOpt's `mod.modules()`). The failed
    // modules a trace finds are in the traced module's subtree (a call outside it cannot be
    // named and fails the caller), and those found before had their children queued then, so
    // the new failures are the ones to look at. A failed module that is not in the model (the
    // forward called a module it does not hold) has no path: its children are not queued.
    std::vector<const Module*> failed_now(records.failed_modules().begin() + static_cast<std::ptrdiff_t>(seen),
                                          records.failed_modules().end());
    std::stable_sort(failed_now.begin(), failed_now.end(), [&](const Module* a, const Module* b) {
      return hierarchy_.index_of(*a) < hierarchy_.index_of(*b);  // npos (foreign) last
    });
    for (const Module* failed : failed_now) {
      if (hierarchy_.index_of(*failed) == ModuleHierarchy::npos) break;  // npos sorts last
      for (const auto& [name, child] : failed->named_children()) {
        if (queued.insert(child.get()).second) queue.push_back(child.get());
      }
    }
  }

  hierarchy_.for_each_path([&](std::size_t i, std::string_view path) {
    ModuleRecord& r = hierarchy_.record(i);
    if ((r.failure = failure(*r.module)) != nullptr) {
      r.status = ModuleStatus::failed;
    } else if (records.is_unvisited(*r.module)) {
      r.status = ModuleStatus::unvisited;
    } else if (tracer_->is_leaf_module(*r.module, path)) {
      r.status = ModuleStatus::leaf;
    } else {
      r.status = ModuleStatus::traced;
    }
    r.graph = find(*r.module);
  });
  // A container that cannot be called (ModuleList, ModuleDict) is traced when any of its
  // children was called: its contents are in the graphs. Children first (nested containers
  // come after their parent in the preorder).
  for (std::size_t i = hierarchy_.size(); i-- > 0;) {
    ModuleRecord& r = hierarchy_.record(i);
    if (r.status != ModuleStatus::unvisited || r.module->forward_signature() != nullptr) continue;
    for (std::size_t child : hierarchy_.children(i)) {
      if (hierarchy_[child].status != ModuleStatus::unvisited) r.status = ModuleStatus::traced;
    }
  }
}

const Graph* GraphCollection::find(const Module& module) const noexcept {
  auto it = index_.find(&module);
  return it == index_.end() ? nullptr : &entries_[it->second].graph;
}

const Graph* GraphCollection::find(std::string_view path) const noexcept {
  for (const Entry& e : entries_) {
    if (e.path == path) return &e.graph;
  }
  return nullptr;
}

const Graph& GraphCollection::at(const Module& module) const {
  if (const Graph* g = find(module)) return *g;
  const std::optional<std::string> path = path_of(module);
  throw std::out_of_range(fmt::format("GraphCollection::at: {} was not traced as a root{}", module.type_name(),
                                      path ? fmt::format(" (its path is '{}')", *path) : std::string(" (not in the model)")));
}

std::optional<std::string> GraphCollection::path_of(const Module& module) const {
  const std::size_t i = hierarchy_.index_of(module);
  return i == ModuleHierarchy::npos ? std::nullopt : std::optional<std::string>(hierarchy_.path(i));
}

GraphCollection recursive_trace(Module& model, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                                std::source_location where) {
  GraphCollection collection;
  collection.recursive_trace(model, inputs, concrete_args, where);
  return collection;
}

}  // namespace symtrace

// The collection's fallback by execution: a module that failed symbolically is run eagerly
// on synthetic inputs of the shapes seen at its call and recorded by trace_by_execution, so a
// report shows what was captured symbolically and what only by example. It runs after each
// symbolic trace of the collection is complete (no trace is active on the thread), once per
// failure, and only when asked (GraphCollection::capture_failed_by_execution).
#include "execution_capture.hpp"

#include "symtrace/robust/detail/synthetic_run.hpp"
#include "symtrace/nn/module.hpp"

#include <boost/core/demangle.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <typeinfo>
#include <utility>

namespace symtrace {

namespace {

ExecutionCapture capture(Module& module, const std::vector<InputSpec>* specs) {
  ExecutionCapture c;
  if (specs == nullptr) {
    c.error = "it was not called with tensors only, so there are no inputs to run it on";
    return c;
  }
  c.inputs = *specs;
  if (!detail::fully_known(*specs)) {
    c.error = "the shapes of its inputs at its call are not all known";
    return c;
  }
  const ValueList inputs = detail::synthetic_inputs(*specs, 0);  // the same inputs on every run
  try {
    const detail::BufferSnapshot state(module);
    ExecutionTrace t = trace_by_execution(module, inputs);
    c.graph = std::make_shared<const Graph>(std::move(t.graph));
    c.warnings = std::move(t.warnings);
  } catch (const std::bad_alloc&) {
    throw;  // Note [Out of memory is not a failure] in robust_tracer.cpp
  } catch (const std::exception& e) {
    c.error = fmt::format("running it failed: {}: {}", boost::core::demangle(typeid(e).name()), e.what());
  }
  return c;
}

}  // namespace

namespace detail {

void capture_by_execution(TraceRecords& records, std::size_t first, Graph& graph, std::string_view path) {
  for (std::size_t i = first; i < records.failures().size(); ++i) {
    const ModuleFailure& failure = records.failures()[i];
    if (failure.by_execution) continue;
    // The records name the module as const; the capture runs it, as the trace did.
    Module& module = const_cast<Module&>(*records.failed_modules()[i]);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    auto c = std::make_shared<const ExecutionCapture>(capture(module, records.observed_inputs(module)));
    if (c->graph) {
      // The failed module's call_module nodes name it under the traced module.
      std::string_view target = failure.module;
      if (!path.empty()) {
        if (target == path) {
          target = {};
        } else if (target.starts_with(path) && target.substr(path.size()).starts_with('.')) {
          target.remove_prefix(path.size() + 1);
        }
      }
      const std::string name = graph.add_subgraph("by_execution", *c->graph);
      for (Node& node : graph.nodes()) {
        if (node.op() != OpKind::call_module || node.target() != target) continue;
        node.set_meta("by_execution", Argument(name));
        node.set_meta("specialised", Argument(true));
      }
    }
    records.set_by_execution(i, std::move(c));
  }
}

}  // namespace detail

}  // namespace symtrace

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

namespace {

/// The module a `call_module` target names under `root` ("" is `root`), or nullptr.
const Module* module_at(const Module& root, std::string_view path) noexcept {
  const Module* m = &root;
  while (!path.empty() && m != nullptr) {
    const std::size_t dot = path.find('.');
    m = m->find_child(path.substr(0, dot));
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return m;
}

}  // namespace

void capture_by_execution(TraceRecords& records, std::size_t first, Graph& graph, const Module& traced) {
  for (std::size_t i = first; i < records.failures().size(); ++i) {
    if (records.failures()[i].by_execution) continue;
    const Module* failed = records.failed_modules()[i];
    // The records name the module as const; the capture runs it, as the trace did.
    Module& module = const_cast<Module&>(*failed);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    auto c = std::make_shared<const ExecutionCapture>(capture(module, records.observed_inputs(module)));
    // The run may have changed the records (a forward may clear them): the failure is found again.
    if (i >= records.failures().size() || records.failed_modules()[i] != failed) return;
    if (c->graph) {
      // The failed module's call_module nodes name it by a path under the traced module: the
      // module's path in the model may be another (a module registered twice).
      const std::string name = graph.add_subgraph("by_execution", *c->graph);
      for (Node& node : graph.nodes()) {
        if (node.op() != OpKind::call_module || module_at(traced, node.target()) != failed) continue;
        node.set_meta("by_execution", Argument(name));
        node.set_meta("specialised", Argument(true));
      }
    }
    records.set_by_execution(i, std::move(c));
  }
}

}  // namespace detail

}  // namespace symtrace

#pragma once
/// \file
/// Concrete tracing, `torch.jit.trace`'s job: run a module (or a function) eagerly on real
/// inputs and record every op it calls into a `Graph`. Where symbolic tracing refuses code
/// that reads tensor data, tracing by execution follows whatever the example inputs did, so
/// it captures any forward, at the price of *specialising*: a tensor read as a C++ value is
/// baked into the graph as that value, and a branch on tensor data is recorded as the branch
/// taken. Every such place is reported as a `TraceWarning` with the user's file:line and the
/// module it happened in; `check_inputs` re-runs with other inputs and reports where the
/// recorded graph no longer computes what the module computes. Reads through `data_ptr()`
/// (raw access, as kernels use it) are not seen: read data with `item()` or `to_vector()`.
///
/// Built on the observer registry (ops/record_function.hpp): a thread-local callback sees each
/// eager op call (the outermost one; ops inside a composite op are its business) and each
/// module call (for node scopes), and a value map from tensor to node links the calls. Module
/// calls are inlined, as torch.jit.trace inlines them: the graph holds placeholders, `get_attr`
/// nodes for parameters, buffers and other tensors the run met (graph constants), one node per
/// op, and the output. Input shapes are kept on the placeholders, so `Interpreter` refuses
/// inputs of other shapes. Other threads are not traced.
///
///     ExecutionTrace t = symtrace::trace_by_execution(model, {x});
///     for (const TraceWarning& w : t.warnings) fmt::print("{}\n", w.message);
///     Tensor y = symtrace::Interpreter(model, t.graph).run({x}).to_tensor();   // == model(x)

#include "symtrace/core/value.hpp"
#include "symtrace/graph/graph.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace symtrace {

class Module;

/// A place where a trace by execution specialised on the example inputs' data.
struct TraceWarning {
  enum class Kind : std::uint8_t {
    value_read,  ///< a tensor read as a C++ value (item(), to_vector())
    branch,      ///< a tensor converted to bool (to_bool()): control flow on tensor data
  };
  Kind kind = Kind::value_read;
  std::string message;         ///< `file:line: what happened in 'path' (Type): why, and what to do`
  std::source_location where;  ///< the user's line that read the tensor
  std::string module_path;     ///< the innermost module running ("" for the root)
  std::string module_type;
  std::size_t count = 1;  ///< times this line read a tensor during the run
};

/// What `trace_by_execution` gives.
struct ExecutionTrace {
  Graph graph;
  /// Each place the graph is specialised on data, once per source line and kind, in the order
  /// first seen.
  std::vector<TraceWarning> warnings;
  /// What `check_inputs` found: one message per check input set whose run the graph does not
  /// reproduce (a different sequence of ops, an output that differs, or a graph that cannot
  /// run on it). Empty when every check passed or none was asked for.
  std::vector<std::string> divergences;
  /// The forward's result on the example inputs (the eager run's own output).
  Value outputs;
};

/// Options of `trace_by_execution`.
struct ExecutionTraceOptions {
  /// Other inputs to check the trace with (torch.jit.trace's check_inputs): for each, the
  /// module is traced again and the two graphs compared, and the first graph is run by the
  /// Interpreter (shapes unpinned) and compared with the eager result.
  std::vector<ValueList> check_inputs;
  /// Relative tolerance of the output comparison (absolute for values under 1 in size).
  double check_tolerance = 1e-5;
  /// Records in-place ops as their out-of-place forms (torch.jit.trace's `_force_outplace`):
  /// `y.add_(x)` as `add(y, x)`, whose node later uses of `y` read; `fill_` as `full_like`,
  /// `copy_` as `to` and `expand`; the registry's functional form otherwise
  /// (OpRegistry::functional_of). The graph then writes into nothing: it computes what the
  /// forward returns, and leaves its inputs and buffers as they were. An in-place op is
  /// recorded as it is where that would be wrong: the tensor it writes shares memory with
  /// another tensor the run met (a view), or the registry has no functional form of it.
  bool force_outplace = false;
};

/// Runs `module.call(inputs)` eagerly and records it (see the file comment). Throws
/// std::invalid_argument when the forward returns nothing, or no tensor at all (as
/// torch.jit.trace refuses), naming `where`; any exception of the forward itself propagates
/// unchanged. Nothing is left installed on the thread afterwards, whatever happens.
[[nodiscard]] ExecutionTrace trace_by_execution(Module& module, const ValueList& inputs,
                                                const ExecutionTraceOptions& options = {},
                                                std::source_location where = std::source_location::current());

/// A function to trace by execution: it takes the inputs and returns its result.
using TracedFunction = std::function<Value(const ValueList&)>;

namespace detail {
ExecutionTrace trace_function_by_execution(const TracedFunction& function, const ValueList& inputs,
                                           const ExecutionTraceOptions& options, std::source_location where);
}  // namespace detail

/// Runs `function(inputs)` eagerly and records it; placeholders are named `input_0`,
/// `input_1`, ... As the module form, but parameters of modules the function calls are graph
/// constants (the graph runs without a module: `Interpreter(any_module, graph)`).
template <class F>
requires(!std::is_base_of_v<Module, std::remove_cvref_t<F>> && std::is_invocable_r_v<Value, F&, const ValueList&>)
    [[nodiscard]] ExecutionTrace trace_by_execution(F&& function, const ValueList& inputs,
                                                    const ExecutionTraceOptions& options = {},
                                                    std::source_location where = std::source_location::current()) {
  return detail::trace_function_by_execution(TracedFunction(std::forward<F>(function)), inputs, options, where);
}

[[nodiscard]] std::string_view to_string(TraceWarning::Kind kind) noexcept;

}  // namespace symtrace

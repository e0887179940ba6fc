// RobustTracer: failures localised to the innermost traced-through module, in one pass.
//
// Note [Failure rollback]: a traced-through module call runs under a graph checkpoint. When
// its forward throws, the checkpoint rolls back every node and name made since the call (the
// graph is then exactly as before the call), RAII scopes have already restored the tracer's
// state (module frames, side-run ids, subgraph runs), and the module is recorded as a leaf
// taking the call's arguments, which were made before the checkpoint. A failure inside a
// nested module was already turned into a leaf there, so an exception reaching a call comes
// from that module's own code (or a leaf call it made): it is the innermost traced-through
// module that failed. Symbolic tensors made in the rolled-back region name node ids the graph
// gives out again, so the trace retires their id (Note [Rolled-back tensors] in
// tracing_state.hpp): using one later is a TraceError, not a wrong edge.
//
// Note [Out of memory is not a failure]: std::bad_alloc (and what derives from it) says nothing
// about a module's code: the same forward succeeds with memory to spare. Turning it into a
// ModuleFailure would give a graph, or a collection, that looks complete and is wrong (a
// module that traces fine shown as a failed leaf). So no catch of the robust layer localises
// it: it leaves the module's call with the call's checkpoint rolling the graph back, leaves
// the trace, and reaches the caller of trace() or recursive_trace() (the collection is then
// empty). Every other exception from a forward is the module's failure.
#include "symtrace/robust/robust_tracer.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/stack_guard.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/trace/tracing_state.hpp"
#include "symtrace/trace/detail/tracing_scopes.hpp"

#include <boost/core/demangle.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <typeinfo>

namespace symtrace {

// Note [A failure on a later call]: a module called several times may be traced through on
// one call and fail on a later one (it branches on a call counter, or on the shape of that
// call's input). Rolling back the failing call alone would leave the earlier calls inlined
// while the failing one is a leaf: not the graph of the model with that module a leaf, and
// wrong when the module keeps state between calls. So when a module fails after one of its
// calls was traced through in the same trace, it is recorded as failed and the trace starts
// again from the root (RestartTrace unwinds every module call in between, each rolling its
// checkpoint back), and this time every call of it is a leaf. Each restart fails one more
// module, so a trace restarts at most once per module; a model where no module fails after
// an earlier traced-through call is traced in one pass.
struct RobustTracer::RestartTrace {};

namespace {

// Adds `v` to a call's key (executed_call_key); false for a concrete tensor.
bool append_call_key(const Value& v, std::string& key) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (t.defined() && t.is_concrete()) return false;
    key += t.defined() ? to_string(t.meta()) : std::string("undefined");
  } else if (v.is_list() || v.is_dict()) {
    const bool dict = v.is_dict();
    const ValueList& items = dict ? v.to_dict().values : v.to_list();
    key += dict ? '{' : '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (dict) key += to_string(v.to_dict().keys[i]) + ':';
      if (!append_call_key(items[i], key)) return false;
      key += ',';
    }
    key += dict ? '}' : ']';
  } else {
    key += to_string(v);
  }
  return true;
}

// A call's description for TraceRecords::executed_result: its symbolic tensors' metadata and
// its other values; nullopt when it passes a concrete tensor (its data, which a run may read,
// is not in it).
std::optional<std::string> executed_call_key(const ValueList& args) {
  std::string key;
  for (const Value& a : args) {
    if (!append_call_key(a, key)) return std::nullopt;
    key += ';';
  }
  return key;
}

std::atomic<std::uint64_t> next_trace_generation{1};  // 0 is TraceRecords::Calls::traced_in's "never"

/// The exception `e` (nullptr: one not derived from std::exception) as a failure of `module`
/// at `path` called at `call_site`. Reads `e` in place: rethrowing to find its type would
/// unwind a second time. Called from the handler of `e`: a StackDepthError is rethrown, as no
/// failure of the module (the stack ran out while the model was deep; Note [Stack guard]).
ModuleFailure describe_exception(const std::exception* e, const Module& module, const std::string& path,
                                 std::source_location call_site) {
  if (dynamic_cast<const StackDepthError*>(e) != nullptr) throw;
  // An exception that carries no location is placed at the module's call, or, when symtrace's
  // own code made that call (a Sequential calling its children), at the innermost call in user
  // code around it (Note [User locations] in core/error.cpp).
  ModuleFailure f{path, module.type_name(), {}, {}, detail::user_location(call_site), {}, false, {}};
  if (e == nullptr) {
    f.kind = "unknown exception";
    f.message = "an exception of a type that is not derived from std::exception";
  } else if (const auto* trace = dynamic_cast<const TraceError*>(e)) {
    f.kind = "TraceError";
    f.message = trace->what();
    f.where = trace->where();
  } else if (const auto* op = dynamic_cast<const OpError*>(e)) {
    f.kind = "OpError";
    f.message = op->what();
    f.where = op->where();
    f.op = op->op();
  } else {
    f.kind = boost::core::demangle(typeid(*e).name());
    f.message = e->what();
  }
  return f;
}

// Note [Small frames per level]: a traced-through module call nests RobustTracer::call_module,
// Tracer::call_module, Module::call and the module's forward once per level of the model, so
// what their frames hold is paid once per level on the stack: a chain of 10,000 modules traces
// on an 8 MiB stack only if a level takes less than about 800 bytes (Note [Stack guard] in
// src/core/stack_guard.cpp). The failure record and the observed inputs are therefore made in
// frames of their own, off the recursive path, and the failure lives on the heap.

/// describe_exception's record on the heap, made in a frame of its own (Note [Small frames
/// per level]); rethrows a StackDepthError, as describe_exception does.
[[gnu::noinline]] std::unique_ptr<ModuleFailure> failure_of(const std::exception* e, const Module& module,
                                                            const std::string& path, std::source_location call_site) {
  return std::make_unique<ModuleFailure>(describe_exception(e, module, path, call_site));
}

}  // namespace

std::shared_ptr<TraceRecords> RobustTracer::use_records(std::shared_ptr<TraceRecords> records) {
  if (is_tracing()) throw std::logic_error("RobustTracer::use_records: the tracer is tracing; give it records between traces");
  std::shared_ptr<TraceRecords> before = std::move(records_);
  records_ = records != nullptr ? std::move(records) : own_records_;
  return before;
}

Graph RobustTracer::trace_graph(Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                                std::source_location where) {
  if (root.forward_signature() == nullptr) {
    return failed_root_graph(root,
                             // clang-format off
                             ModuleFailure{"", root.type_name(), "std::invalid_argument",
                                           fmt::format("{} cannot be called as a whole: it has no forward", root.type_name()),
                                           where, {}, false, {}},
                             // clang-format on
                             where);
  }
  if (records_->model() != nullptr && concrete_args.empty() && !is_failed(root) && is_leaf_module(root, "")) {
    if (std::optional<Graph> graph = remembered_leaf_graph(root, inputs, where)) return std::move(*graph);
  }
  try {
    for (;;) {
      // Unique across tracers: records shared by two tracers never see one's mark as the other's.
      trace_generation_ = next_trace_generation.fetch_add(1, std::memory_order_relaxed);
      try {
        return record_graph(root, inputs, concrete_args, where);
      } catch (const RestartTrace&) {
        // Note [A failure on a later call]: the module is failed now; trace again.
      }
    }
  } catch (const std::invalid_argument&) {
    throw;  // inputs that do not fit the root's forward: the caller's to fix
  } catch (const StackDepthError&) {
    throw;  // no failure of the root: the stack ran out (Note [Stack guard])
  } catch (const std::bad_alloc&) {
    throw;  // Note [Out of memory is not a failure]
  } catch (const std::exception& e) {
    // The root failed and cannot even stand as a leaf (its result's structure is unknown), or
    // its result cannot be an output: the root alone, with its inputs.
    return failed_root_graph(root, root_failure(root, &e, where), where);
  } catch (...) {
    return failed_root_graph(root, root_failure(root, nullptr, where), where);
  }
}

// Note [A remembered leaf root]: in a recursive_trace, most modules traced as roots are
// leaves (the children of failed modules: Conv2d, BatchNorm2d, ...). When their inputs have an
// unknown rank (they came after a failure) their result is unknown too; a built-in layer tells
// its result from its inputs (Note [Layer output metadata]); and when the parent called them
// with these very inputs before it failed, their result is remembered (TraceRecords::
// leaf_result). The graph is then known without running anything: a placeholder per input, the
// call_module node of the root, and the output, recorded through the hooks by
// Tracer::record_leaf_graph, node for node what a trace of the leaf root makes (same names,
// metadata, locations; tested against it), without the checks and checkpoints of a run.
std::optional<Graph> RobustTracer::remembered_leaf_graph(Module& root, const std::vector<InputSpec>& inputs,
                                                         std::source_location where) {
  const ForwardSignature* signature = root.forward_signature();
  if (signature == nullptr || inputs.size() < signature->num_required || inputs.size() > signature->parameters.size()) {
    return std::nullopt;
  }
  std::vector<TensorMeta> metas;
  metas.reserve(inputs.size());
  bool unknown_rank = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ParamType type = signature->parameters[i].type;
    if (!inputs[i].is_tensor() || (type != ParamType::tensor && type != ParamType::any)) return std::nullopt;
    unknown_rank = unknown_rank || !inputs[i].shape.is_rank_known();
    metas.push_back(TensorMeta{inputs[i].dtype, inputs[i].shape});
  }
  std::optional<OutputMeta> known;
  const OutputMeta* result = nullptr;
  if (unknown_rank) {
    // Note [Unknown in, unknown out], as leaf_result_meta finds it for this call.
    known = unknown_result(root, inputs.empty() ? DType::float32 : inputs[0].dtype);
    result = known ? &*known : nullptr;
  } else {
    result = records_->leaf_result(root, metas);
  }
  if (result == nullptr && !unknown_rank && leaf_meta_fn(root) == nullptr) {
    // A built-in layer tells its result without a run (nothing was remembered for it: see
    // leaf_result_meta). Its inputs are stand-ins of a trace id never given out.
    ValueList values;
    values.reserve(metas.size());
    for (const TensorMeta& m : metas) values.emplace_back(Tensor::symbolic(m, SymbolicRef{~std::uint64_t{0}, 0}));
    if (std::optional<TensorMeta> meta = layer_result_meta(root, values)) {
      known = OutputMeta::single(std::move(*meta));
      result = &*known;
    }
  }
  if (result == nullptr || result->is_number || result->outputs.empty() || !result->nesting.empty()) return std::nullopt;
  Graph graph = record_leaf_graph(root, &inputs, result, where);
  TraceRecords::Calls& calls = records_->calls(root);
  if (!calls.observed) {
    calls.first = ObservedCall{inputs, {}};
    calls.observed = true;
  }
  calls.visited = true;  // record_call_module without a failure
  return graph;
}

ModuleFailure RobustTracer::root_failure(const Module& root, const std::exception* e, std::source_location where) const {
  if (const ModuleFailure* earlier = failure(root)) return *earlier;
  return describe_exception(e, root, "", where);
}

Value RobustTracer::trace_root(Module& root, const ValueList& args, std::source_location where) {
  // A traced-through root catches its own failure in call_module; a leaf root's failure (its
  // metadata run threw) has no caller to fall back to, so it is caught here.
  ModuleFailure failure;
  {
    Graph::Checkpoint checkpoint = state().graph().checkpoint();
    try {
      Value result = call_module(root, args, where);
      checkpoint.commit();
      return result;
    } catch (const RestartTrace&) {
      throw;  // Note [A failure on a later call]
    } catch (const std::bad_alloc&) {
      throw;  // Note [Out of memory is not a failure]
    } catch (const std::exception& e) {
      failure = describe_exception(&e, root, "", where);
    } catch (...) {
      failure = describe_exception(nullptr, root, "", where);
    }
    checkpoint.rollback();
    state().retire(state().graph().id_bound());  // Note [Rolled-back tensors]
  }
  record_call_module(root, &failure);
  return record_failed_leaf(root, "", args, where);
}

bool RobustTracer::is_leaf_module(const Module& module, std::string_view qualified_name) const {
  return is_failed(module) || Tracer::is_leaf_module(module, qualified_name);
}

Value RobustTracer::call_module(Module& module, const ValueList& args, std::source_location where) {
  TracingState& st = state();
  const std::string* path = st.path_of(module);
  if (st.meta_only()) {  // inside a leaf's side run: metadata only
    if (path != nullptr && is_failed(module)) {
      // A lambda of its own: its metadata would take room in this frame (Note [Small frames per level]).
      return [&]() __attribute__((noinline)) {
        const detail::PathHold hold(st);
        return meta_result(failed_leaf_meta(module, *path, args, where), where);
      }
      ();
    }
    return Tracer::call_module(module, args, where);
  }
  // The entry is used before the call only: the forward may run anything, clear_results() too.
  // In a lambda of its own, as the bookkeeping takes room (Note [Small frames per level]).
  const bool failed_before = [&]() __attribute__((noinline)) {
    TraceRecords::Calls& calls = records_->calls(module);
    if (!calls.observed) TraceRecords::observe(calls, args);
    if (path == nullptr || !is_failed(module)) return false;
    calls.visited = true;
    return true;
  }
  ();
  // Failed before: a leaf whose forward is not run again (it would throw again).
  if (failed_before) return record_failed_leaf(module, *path, args, where);
  std::unique_ptr<ModuleFailure> failure;  // Note [Small frames per level]
  if (path == nullptr || is_leaf_module(module, *path)) {
    try {
      Value result = Tracer::call_module(module, args, where);
      record_call_module(module);
      return result;
    } catch (const LeafForwardError& e) {
      // Note [A leaf's own failure]: the leaf's code, not its caller's, cannot be traced (a
      // torch.nn LSTM on a PackedSequence reads its batch sizes): the leaf is the failed module,
      // its result comes as a failed module's does, and the caller traces on. (A leaf refusing
      // its arguments, an OpError, is the caller's failure.) Its side run recorded nothing. A
      // leaf recorded on an earlier call of this trace restarts it, so that every call of it is
      // the failed module's (Note [A failure on a later call]).
      if (path == nullptr) throw;
      failure = failure_of(&e, module, *path, where);
    }
    // A scan, on this rare path only: the hot path keeps no mark per leaf call.
    const bool recorded_before = [&]() __attribute__((noinline)) {
      for (const Node& n : st.graph().nodes())
        if (n.op() == OpKind::call_module && n.target() == *path) return true;
      return false;
    }
    ();
    record_call_module(module, failure.get());
    if (recorded_before) throw RestartTrace{};
    return record_failed_leaf(module, *path, args, where);
  }
  {
    Graph::Checkpoint checkpoint = st.graph().checkpoint();
    try {
      // The result is made in place (no second Value in this frame: Note [Small frames per level]).
      Value result = Tracer::call_module(module, args, where);
      checkpoint.commit();
      // After the commit only std::bad_alloc can come (rethrown below): a failure to record a
      // committed call is the caller's failure (its checkpoint takes this call's nodes back),
      // not this module's.
      [&]() __attribute__((noinline)) {
        TraceRecords::Calls& entry = records_->calls(module);  // again: the forward may have called clear_results()
        entry.visited = true;
        entry.traced_in = trace_generation_;
      }
      ();
      return result;
    } catch (const RestartTrace&) {
      throw;  // Note [A failure on a later call]: the whole trace starts again
    } catch (const std::bad_alloc&) {
      throw;  // Note [Out of memory is not a failure]; the checkpoint rolls back on the way out
    } catch (const std::exception& e) {
      failure = failure_of(&e, module, *path, where);
    } catch (...) {
      failure = failure_of(nullptr, module, *path, where);
    }
    checkpoint.rollback();             // the forward threw: Note [Failure rollback]
    st.retire(st.graph().id_bound());  // Note [Rolled-back tensors]
  }
  const bool traced_before = records_->calls(module).traced_in == trace_generation_;
  record_call_module(module, failure.get());
  if (traced_before) throw RestartTrace{};  // Note [A failure on a later call]
  return record_failed_leaf(module, *path, args, where);
}

OutputMeta RobustTracer::failed_leaf_meta(const Module& module, const std::string& path, const ValueList& args,
                                          std::source_location where) const {
  if (any_unknown_rank(args)) return unknown_result(module, args, path, where);
  if (const LeafMetaFn* meta_fn = leaf_meta_fn(module)) {
    try {
      return (*meta_fn)(module, args);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (...) {  // NOLINT(bugprone-empty-catch): Note [A failing LeafMetaFn], recorded at its first call
      return unknown_result(module, args, path, where);
    }
  }
  // A built-in layer's shape function (a traced-through layer that failed).
  if (std::optional<TensorMeta> meta = layer_result_meta(module, args)) return OutputMeta::single(std::move(*meta));
  // Its result from runs (Note [A failed module's result by execution] in
  // src/robust/executed_result.cpp), for a module with a caller (a failed root's graph is its
  // one leaf: nothing reads its result); equal calls reuse the runs. The tracer holds modules
  // as const; the runs restore the module's buffers. The calls the runs made are the inputs of
  // children the trace never reached, for when they are traced as roots.
  if (!path.empty() && result_by_execution_) {
    const std::optional<std::string> key = executed_call_key(args);
    if (key) {
      if (const std::optional<OutputMeta>* known = records_->executed_result(module, *key)) {
        if (*known) return **known;
        return unknown_result(module, args, path, where);
      }
    }
    std::vector<std::pair<const Module*, ObservedCall>> calls;
    std::optional<OutputMeta> meta =
        executed_result_meta(const_cast<Module&>(module), args, where, &calls);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    for (auto& [callee, call] : calls) {
      TraceRecords::Calls& seen = records_->calls(*callee);
      if (seen.observed) continue;
      seen.first = std::move(call);
      seen.observed = true;
    }
    if (meta) records_->note_result_by_execution(module);
    if (key) records_->remember_executed_result(module, *key, meta);
    if (meta) return std::move(*meta);
  }
  return unknown_result(module, args, path, where);
}

Value RobustTracer::record_failed_leaf(Module& module, const std::string& path, const ValueList& args,
                                       std::source_location where) {
  const OutputMeta meta = [&] {
    const detail::PathHold hold(state());  // `path` stays valid whatever a metadata function calls
    return failed_leaf_meta(module, path, args, where);
  }();
  Arguments node_args;
  node_args.reserve(args.size());
  for (const Value& a : args) node_args.push_back(create_arg(a, where));
  Node& node = create_node(OpKind::call_module, path, std::move(node_args), {}, where);
  if (const ModuleFailure* f = failure(module)) node.set_meta(meta_keys::failure, to_string(*f));
  return wrap_result(node, meta, where);
}

Graph RobustTracer::failed_root_graph(Module& root, ModuleFailure failure, std::source_location where) {
  Graph graph = record_leaf_graph(root, nullptr, nullptr, where);
  for (Node& node : graph.nodes()) {
    if (node.op() == OpKind::call_module) node.set_meta(meta_keys::failure, to_string(failure));
  }
  record_call_module(root, &failure);
  return graph;
}

void RobustTracer::record_call_module(const Module& module, const ModuleFailure* failure) {
  if (failure == nullptr) {
    records_->record_visit(module);
  } else {
    records_->record_failure(module, *failure);
  }
}

std::shared_ptr<const ModuleIndex> RobustTracer::module_index(const Module& root) const {
  const std::shared_ptr<const ModuleIndex>& model = records_->model();
  return model != nullptr && &model->root() == &root ? model : nullptr;
}

// Note [A failing LeafMetaFn]: the metadata function registered for a leaf's type may throw
// (it assumed a rank, it read an attribute the module lacks). Nothing is wrong with the calling
// module's code, so the caller goes on: the leaf is recorded as a failed module whose output
// has an unknown shape, its failure naming the function, the exception and the leaf's call,
// where the collection and the report show it; later calls of it are failed leaves too.
OutputMeta RobustTracer::leaf_meta_failed(Module& module, const std::string& path, const ValueList& args,
                                          const std::exception* e, std::source_location where) {
  ModuleFailure failure = describe_exception(e, module, path, where);
  failure.message = fmt::format("the output metadata function (LeafMetaFn) registered for the leaf {} ({}) failed, so its "
                                "output has an unknown shape: {}",
                                path.empty() ? std::string("root") : fmt::format("'{}'", path), module.type_name(),
                                failure.message);
  record_call_module(module, &failure);
  return unknown_result(module, args, path, where);
}

OutputMeta RobustTracer::leaf_result_meta(Module& module, const std::string& path, const ValueList& args,
                                          std::source_location where) {
  if (const LeafMetaFn* meta_fn = leaf_meta_fn(module); meta_fn != nullptr && !any_unknown_rank(args)) {
    try {
      return (*meta_fn)(module, args);  // Note [A failing LeafMetaFn]
    } catch (const std::bad_alloc&) {
      throw;  // not the function's fault: the caller's to handle
    } catch (const std::exception& e) {
      return leaf_meta_failed(module, path, args, &e, where);
    } catch (...) {
      return leaf_meta_failed(module, path, args, nullptr, where);
    }
  }
  if (records_->model() == nullptr) return Tracer::leaf_result_meta(module, path, args, where);
  // A built-in layer that tells its result from its inputs needs nothing remembered:
  // remembered_leaf_graph asks it again.
  if (!any_unknown_rank(args) && leaf_meta_fn(module) == nullptr) {
    if (std::optional<TensorMeta> meta = layer_result_meta(module, args)) return OutputMeta::single(std::move(*meta));
  }
  // Only calls on symbolic tensors of known rank are remembered: their metadata is all a
  // leaf's forward can read of them (a concrete argument's data could change its result).
  std::vector<TensorMeta> inputs;
  inputs.reserve(args.size());
  for (const Value& a : args) {
    if (!a.is_tensor() || !a.to_tensor().is_symbolic() || !a.to_tensor().shape().is_rank_known()) {
      return Tracer::leaf_result_meta(module, path, args, where);
    }
    inputs.push_back(a.to_tensor().meta());
  }
  if (path.empty()) {  // the root of this trace: a child of a failed module, called before
    if (const OutputMeta* remembered = records_->leaf_result(module, inputs)) return *remembered;
  }
  OutputMeta result = Tracer::leaf_result_meta(module, path, args, where);
  records_->remember_leaf_result(module, std::move(inputs), result);
  return result;
}

}  // namespace symtrace

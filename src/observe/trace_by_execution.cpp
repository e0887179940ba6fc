// Tracing by execution (torch.jit.trace's job) on top of the observer registry.
//
// A Recorder owns the graph being built and a value map from tensor to node. While the run
// lasts, a thread-local RecordFunction callback tells it about every eager op call and every
// module call on this thread, and the thread's interposer (symtrace/core/thread_context.hpp)
// about every tensor read as a C++ value. Only outermost op calls become nodes: an op called inside
// another op (a composite op) is part of that op, which the graph runs as a whole. The value
// map is keyed by TensorImpl address and holds weak references: a tensor the run dropped can
// neither be found again nor be confused with a new tensor at the same address, and the run
// frees its activations as the eager forward does.
#include "symtrace/observe/trace_by_execution.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/graph/input_path.hpp"
#include "symtrace/interp/interpreter.hpp"
#include "symtrace/nn/shape_layers.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/record_function.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/ops/registry.hpp"
#include "symtrace/trace/tracer.hpp"
#include "symtrace/trace/detail/value_argument.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

namespace symtrace {

std::string_view to_string(TraceWarning::Kind kind) noexcept {
  switch (kind) {
    case TraceWarning::Kind::value_read: return "value_read";
    case TraceWarning::Kind::branch: return "branch";
  }
  return "unknown";
}

namespace {

bool contains_tensor(const Value& v);
bool is_undefined_tensor(const Value& v) { return v.is_tensor() && !v.to_tensor().defined(); }

using detail::TensorImpl;

class Recorder {
 public:
  Recorder(Graph& graph, Module* root, bool force_outplace) : graph_(graph), force_outplace_(force_outplace) {
    if (root == nullptr) return;
    index_.emplace(*root);
    for (const bool parameters : {true, false}) {
      for (const NamedTensor& t : parameters ? root->named_parameters() : root->named_buffers())
        if (t.tensor.defined()) attributes_.emplace(t.tensor.impl_ptr().get(), t.name);
    }
  }

  /// A placeholder for input `name` holding `value`; a non-tensor input is a guard. A list or a
  /// str-keyed dict holding tensors is read by a `getitem` node per part that holds tensors, its
  /// other parts guards named by their path (`images.image_sizes`, `xs[1]`), as a symbolic trace
  /// of InputSpec::list and InputSpec::dict makes it.
  void add_input(const std::string& name, const Value& value, std::source_location where) {
    Node& node = graph_.create_node(OpKind::placeholder, name, {}, {}, name, where);
    if (!contains_tensor(value)) {
      graph_.add_guard(name, argument(value, where));
      return;
    }
    if (!value.is_tensor()) {
      if (const std::optional<InputSpec> spec = InputSpec::of(value)) node.set_meta(meta_keys::structure, input_structure(*spec));
    }
    read_part(node, name, name, value, where);
  }

  /// Maps the tensors `value` holds to `node` (its value) and the getitem nodes that read them.
  void read_part(Node& node, const std::string& name, const std::string& path, const Value& value, std::source_location where) {
    if (const Tensor* t = boost::variant2::get_if<Tensor>(&value.value); t != nullptr && t->defined()) {
      node.set_tensor_meta(t->meta());
      map(*t, node);
      return;
    }
    const auto part = [&](const Argument& at, const std::string& part_path, const Value& v) {
      if (!contains_tensor(v) && !holds_dict(v)) {  // a value a guard can hold
        graph_.add_guard(part_path, argument(v, where));
        return;
      }
      Node& item = graph_.create_node(OpKind::call_function, "getitem", {node, at}, {}, {}, where);
      read_part(item, name, part_path, v, where);
    };
    const ValueList* list = boost::variant2::get_if<ValueList>(&value.value);
    const ValueDict* dict = boost::variant2::get_if<ValueDict>(&value.value);
    const bool readable =
        (list != nullptr && std::none_of(list->begin(), list->end(), is_undefined_tensor)) ||
        (dict != nullptr && std::all_of(dict->keys.begin(), dict->keys.end(), [](const Value& k) { return k.is_string(); }) &&
         std::none_of(dict->values.begin(), dict->values.end(), is_undefined_tensor));
    if (!readable) {
      throw_invalid_argument(where, "input '{}' holds tensors in a form a trace cannot read ({} at {}): give tensors, "
                                    "lists of tensors or dicts of tensors with str keys",
                             name, value.type_name(), path);
    }
    if (list != nullptr) {
      for (std::size_t i = 0; i < list->size(); ++i) part(Argument(static_cast<std::int64_t>(i)), append_index(path, i), (*list)[i]);
    } else {
      for (std::size_t i = 0; i < dict->size(); ++i) {
        const std::string& key = dict->keys[i].to_string_ref();
        part(Argument(key), append_key(path, key), dict->values[i]);
      }
    }
  }

  /// The graph's output: the forward's result.
  void add_output(const Value& result, std::source_location where) {
    graph_.output(argument(result, where), where);
  }

  // ---- events ----

  void op_started() noexcept { ++op_depth_; }

  void op_ended(const RecordFunction& fn) {
    --op_depth_;
    // An op that threw has no outputs; an op inside another op is that op's business.
    if (op_depth_ != 0 || fn.outputs().empty() || fn.op_call() == nullptr) return;
    record(*fn.op_call(), fn.outputs().front());
  }

  void module_started(const Module* module) { modules_.push_back(module); }
  void module_ended() noexcept {
    if (!modules_.empty()) modules_.pop_back();
  }

  void data_read(DataRead read, std::source_location where) {
    if (op_depth_ != 0) return;  // a kernel reading its operands
    const bool branch = read == DataRead::to_bool;
    const TraceWarning::Kind kind = branch ? TraceWarning::Kind::branch : TraceWarning::Kind::value_read;
    const std::string key = fmt::format("{}:{}:{}:{}", where.file_name(), where.line(), where.column(),
                                        static_cast<int>(kind));
    if (auto it = warning_index_.find(key); it != warning_index_.end()) {
      ++warnings_[it->second].count;
      return;
    }
    TraceWarning w;
    w.kind = kind;
    w.where = where;
    const Module* module = modules_.empty() ? nullptr : modules_.back();
    std::string in;
    if (module != nullptr) {
      w.module_type = std::string(module->type_name());
      const std::size_t position = index_ ? index_->find(*module) : ModuleIndex::npos;
      if (position == ModuleIndex::npos) {
        in = fmt::format(" in a {} module", w.module_type);  // a function's module, or a foreign one
      } else {
        w.module_path = index_->path(position);
        in = position == 0 ? fmt::format(" in the root module ({})", w.module_type)
                           : fmt::format(" in '{}' ({})", w.module_path, w.module_type);
      }
    }
    static constexpr std::string_view what[] = {"item()", "to_bool()", "to_vector()"};
    w.message = branch
                    ? fmt::format("{}:{}: a tensor was converted to bool ({}){} while tracing by execution: the "
                                  "graph follows the branch the example inputs took and other inputs may take "
                                  "the other; keep the choice in the graph with where() or cond(), or check the "
                                  "trace with check_inputs",
                                  where.file_name(), where.line(), what[static_cast<int>(read)], in)
                    : fmt::format("{}:{}: a tensor was read as a C++ value ({}){} while tracing by execution: "
                                  "the graph holds the value it had for the example inputs; compute it with "
                                  "tensor ops instead, or check the trace with check_inputs",
                                  where.file_name(), where.line(), what[static_cast<int>(read)], in);
    warning_index_.emplace(key, warnings_.size());
    warnings_.push_back(std::move(w));
  }

  [[nodiscard]] std::vector<TraceWarning> take_warnings() && { return std::move(warnings_); }

 private:
  struct Mapped {
    std::weak_ptr<TensorImpl> tensor;
    NodeId node;
  };

  void map(const Tensor& t, const Node& node) {
    values_[t.impl_ptr().get()] = Mapped{t.impl_ptr(), node.id()};
  }

  /// The node `t` is the value of, or nullopt when the run has not met it.
  [[nodiscard]] std::optional<NodeId> lookup(const Tensor& t) const {
    auto it = values_.find(t.impl_ptr().get());
    if (it == values_.end() || it->second.tensor.lock() != t.impl_ptr()) return std::nullopt;
    return it->second.node;
  }

  [[nodiscard]] std::string_view scope() const {
    if (modules_.empty() || !index_) return {};
    // Made once per module entered, not per node: the nodes a module records come together.
    if (modules_.back() != scope_module_) {
      scope_module_ = nullptr;  // not valid while it is rewritten
      std::optional<std::string> path = index_->path_of(*modules_.back());
      scope_path_ = path ? std::move(*path) : std::string();
      scope_module_ = modules_.back();
    }
    return scope_path_;
  }

  Node& create(OpKind op, std::string_view target, Arguments args, std::source_location where,
               KeywordArguments kwargs = {}) {
    Node& node = graph_.create_node(op, target, std::move(args), std::move(kwargs), {}, where);
    if (const std::string_view s = scope(); !s.empty()) node.set_scope(s);
    return node;
  }

  Argument argument(const Value& value, std::source_location where) {
    // What a trace by execution makes of tensors (detail::to_argument does the rest): the node
    // a tensor is the value of, else a get_attr node.
    struct Maker {
      Recorder& recorder;
      std::source_location where;
      Argument tensor(const Tensor& t) const {
        if (!t.defined()) return Argument();
        if (std::optional<NodeId> id = recorder.lookup(t)) return Argument(*id);
        // A parameter or buffer is read by path; any other tensor the run met (made outside
        // the ops, or held without registration) is a graph constant.
        auto attribute = recorder.attributes_.find(t.impl_ptr().get());
        Node& node = attribute != recorder.attributes_.end()
                         ? recorder.create(OpKind::get_attr, attribute->second, {}, where)
                         : recorder.create(OpKind::get_attr, recorder.graph_.add_constant(t), {}, where);
        node.set_tensor_meta(t.meta());
        recorder.map(t, node);
        return Argument(node);
      }
      Argument sym_int(const SymInt& s) const {
        SYMTRACE_ASSERT(!s.is_symbolic(), "a symbolic size reached an eager op call");
        return Argument(s.value(where));
      }
      Argument sym_float(const SymFloat& s) const {
        SYMTRACE_ASSERT(!s.is_symbolic(), "a symbolic float reached an eager op call");
        return Argument(s.value(where));
      }
      Argument item(const Value& v) const { return recorder.argument(v, where); }
      Argument dict(KeywordArguments items) const {
        return Argument(recorder.create(OpKind::call_function, "dict", {}, where, std::move(items)));
      }
    };
    Maker maker{*this, where};
    return detail::to_argument(value, where, maker);
  }

  void record(const OpCall& call, const Value& result) {
    const ValueList* list = boost::variant2::get_if<ValueList>(&result.value);
    const bool tensor_list =
        list != nullptr && std::all_of(list->begin(), list->end(), [](const Value& v) { return v.is_tensor(); });
    if (!result.is_tensor() && !tensor_list) return;  // a number: a C++ value from here on
    Arguments args;
    args.reserve(call.args.size());
    KeywordArguments kwargs;
    const auto& specs = call.op.schema.args;
    for (std::size_t i = 0; i < call.args.size(); ++i) {
      if (specs[i].kwarg_only) kwargs.emplace_back(specs[i].name, argument(call.args[i], call.where));
      else args.push_back(argument(call.args[i], call.where));
    }
    OpKind kind = call.style == CallStyle::method ? OpKind::call_method : OpKind::call_function;
    std::string_view target = call.op.name();
    if (force_outplace_ && call.op.has(OpFlags::inplace) && result.is_tensor()) [[unlikely]]
      out_of_place(call, result.to_tensor(), kind, target, args);
    Node& node = create(kind, target, std::move(args), call.where, std::move(kwargs));
    if (result.is_tensor()) {
      node.set_tensor_meta(result.to_tensor().meta());
      map(result.to_tensor(), node);
      return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Tensor& t = (*list)[i].to_tensor();
      Node& item = create(OpKind::call_function, "getitem", {node, static_cast<std::int64_t>(i)}, call.where);
      item.set_tensor_meta(t.meta());
      map(t, item);
    }
  }

  /// Whether a tensor the run met, other than `t`, shares its memory (a view of it, or its base).
  [[nodiscard]] bool aliased(const Tensor& t) const {
    const std::shared_ptr<detail::Storage>& storage = t.impl_ptr()->storage;
    if (storage == nullptr) return false;
    for (const auto& [impl, mapped] : values_) {
      if (impl == t.impl_ptr().get()) continue;
      const std::shared_ptr<TensorImpl> other = mapped.tensor.lock();
      if (other != nullptr && other->storage == storage) return true;
    }
    return false;
  }

  /// ExecutionTraceOptions::force_outplace: makes `kind`, `target` and `args` (the in-place
  /// call's) those of the out-of-place form that computes `written`'s new value, or leaves them.
  void out_of_place(const OpCall& call, const Tensor& written, OpKind& kind, std::string_view& target, Arguments& args) {
    if (aliased(written)) return;  // the other tensor would not see the write
    const std::string_view name = call.op.name();
    if (name == "fill_") {
      kind = OpKind::call_function;
      target = "full_like";  // full_like(self, value): self's shape and dtype
      return;
    }
    if (name == "copy_") {
      // The source, cast to the target's dtype and broadcast to its shape.
      const Tensor& src = call.tensor(1);
      Argument value = args[1];
      if (src.dtype() != written.dtype()) {
        Node& cast = create(OpKind::call_function, "to", {value, Argument(written.dtype())}, call.where);
        cast.set_tensor_meta(TensorMeta{written.dtype(), src.shape()});
        value = Argument(cast);
      }
      ArgumentList sizes;
      for (const std::int64_t s : written.shape().sizes()) sizes.emplace_back(s);
      kind = OpKind::call_function;
      target = "expand";
      args = {value, Argument(std::move(sizes))};
      return;
    }
    if (const OpDef* functional = OpRegistry::instance().functional_of(call.op)) target = functional->name();
  }

  Graph& graph_;
  bool force_outplace_ = false;
  std::optional<ModuleIndex> index_;
  mutable const Module* scope_module_ = nullptr;  // the module scope_path_ is the path of (see scope())
  mutable std::string scope_path_;
  std::unordered_map<const TensorImpl*, std::string> attributes_;
  std::unordered_map<const TensorImpl*, Mapped> values_;
  std::vector<const Module*> modules_;
  int op_depth_ = 0;
  std::vector<TraceWarning> warnings_;
  std::unordered_map<std::string, std::size_t> warning_index_;
};

/// Installs `recorder` on this thread for its lifetime: a thread-local callback tells it about
/// op and module events, and the interposer this object is about reads of tensor data. Module
/// calls run as they would with nothing installed.
class Installation final : public Interposer {
 public:
  explicit Installation(Recorder& recorder)
      : recorder_(recorder),
        handle_(add_thread_local_callback(
            RecordFunctionCallback(
                [&recorder](const RecordFunction& fn) -> std::unique_ptr<ObserverContext> {
                  if (fn.scope() == RecordScope::function) recorder.op_started();
                  else recorder.module_started(fn.module());
                  return nullptr;
                },
                [&recorder](const RecordFunction& fn, ObserverContext*) {
                  if (fn.scope() == RecordScope::function) recorder.op_ended(fn);
                  else recorder.module_ended();
                })
                .needs_inputs()
                .needs_outputs()
                .scopes({RecordScope::function, RecordScope::module}))) {
    try {
      scope_.emplace(*this);
    } catch (...) {
      remove_callback(handle_);
      throw;
    }
  }
  ~Installation() override {
    scope_.reset();
    remove_callback(handle_);
  }

  Value call_op(const OpCall& call) override {
    if (outer() != nullptr) return outer()->call_op(call);
    throw_trace_error(call.where,
                      "{}() got a symbolic tensor during a trace by execution, which runs on concrete tensors: "
                      "give it concrete inputs",
                      call.op.name());
  }
  Value call_module(Module& module, const ValueList& args, std::source_location where) override {
    // A call on symbolic values belongs to an enclosing symbolic trace, as its ops do.
    if (outer() != nullptr && std::any_of(args.begin(), args.end(), [](const Value& v) { return contains_symbolic(v); }))
      return outer()->call_module(module, args, where);
    return module.run_forward(args, where);
  }
  void on_data_read(DataRead read, std::source_location where) override { recorder_.data_read(read, where); }

 private:
  Recorder& recorder_;
  CallbackHandle handle_;
  std::optional<InterposerScope> scope_;
};

bool contains_tensor(const Value& v) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) return t->defined();
  if (const ValueList* l = boost::variant2::get_if<ValueList>(&v.value))
    return std::any_of(l->begin(), l->end(), contains_tensor);
  if (const ValueDict* d = boost::variant2::get_if<ValueDict>(&v.value))
    return std::any_of(d->values.begin(), d->values.end(), contains_tensor);
  return false;
}

/// One run, recorded: `run()` gives the result; `names` the placeholders.
template <class Run>
ExecutionTrace record_run(Module* root, const std::vector<std::string>& names, const ValueList& inputs, Run&& run,
                          bool force_outplace, std::source_location where) {
  ExecutionTrace trace;
  Recorder recorder(trace.graph, root, force_outplace);
  for (std::size_t i = 0; i < inputs.size(); ++i) recorder.add_input(names[i], inputs[i], where);
  {
    const Installation installed(recorder);
    trace.outputs = run();
  }
  if (!contains_tensor(trace.outputs)) {
    throw_invalid_argument(where,
                           "trace_by_execution: {} returned {} and there is nothing to trace: a traced module or "
                           "function must return a tensor or a list of tensors",
                           root ? fmt::format("{}.forward", root->type_name()) : std::string("the function"),
                           trace.outputs.is_none() ? std::string("nothing (None)")
                                                   : fmt::format("{} ({})", trace.outputs.type_name(), trace.outputs));
  }
  recorder.add_output(trace.outputs, where);
  trace.warnings = std::move(recorder).take_warnings();
  return trace;
}

/// One line per node, with node references by id (the same in two traces that made the same
/// calls in the same order): what check_inputs compares.
std::vector<std::string> structure(const Graph& graph) {
  std::vector<std::string> lines;
  lines.reserve(graph.size());
  for (const Node& node : graph.nodes()) {
    std::string line = fmt::format("{}[target={}]({})", node.op(), node.target(), fmt::join(node.args(), ", "));
    lines.push_back(std::move(line));
  }
  return lines;
}

/// Where `actual` (the graph's result) differs from `expected` (the eager result), or empty.
std::string compare(const Value& actual, const Value& expected, double tolerance, const std::string& at) {
  const Tensor* a = boost::variant2::get_if<Tensor>(&actual.value);
  const Tensor* e = boost::variant2::get_if<Tensor>(&expected.value);
  if (a != nullptr && e != nullptr) {
    if (a->meta() != e->meta())
      return fmt::format("output{} is {} where the forward returns {}", at, a->meta(), e->meta());
    const std::vector<double> x = a->to_vector<double>();
    const std::vector<double> y = e->to_vector<double>();
    for (std::size_t i = 0; i < x.size(); ++i) {
      const bool same = x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])) ||
                        std::abs(x[i] - y[i]) <= tolerance * std::max(1.0, std::abs(y[i]));
      if (!same) return fmt::format("output{} differs at element {}: {} from the graph, {} from the forward", at, i, x[i], y[i]);
    }
    return {};
  }
  const ValueList* al = boost::variant2::get_if<ValueList>(&actual.value);
  const ValueList* el = boost::variant2::get_if<ValueList>(&expected.value);
  if (al != nullptr && el != nullptr && al->size() == el->size()) {
    for (std::size_t i = 0; i < al->size(); ++i) {
      std::string d = compare((*al)[i], (*el)[i], tolerance, fmt::format("{}[{}]", at, i));
      if (!d.empty()) return d;
    }
    return {};
  }
  const ValueDict* ad = boost::variant2::get_if<ValueDict>(&actual.value);
  const ValueDict* ed = boost::variant2::get_if<ValueDict>(&expected.value);
  if (ad != nullptr && ed != nullptr && ad->size() == ed->size()) {
    for (std::size_t i = 0; i < ad->size(); ++i) {
      const Value* mine = ad->find(ed->keys[i]);
      if (mine == nullptr) return fmt::format("output{} has no key {}", at, to_string(ed->keys[i]));
      std::string d = compare(*mine, ed->values[i], tolerance, fmt::format("{}[{}]", at, to_string(ed->keys[i])));
      if (!d.empty()) return d;
    }
    return {};
  }
  if (a == nullptr && e == nullptr && al == nullptr && el == nullptr && ad == nullptr && ed == nullptr &&
      to_string(actual) == to_string(expected))
    return {};
  return fmt::format("output{} is {} where the forward returns {}", at, to_string(actual), to_string(expected));
}

/// The graph with its placeholders' shapes unpinned (rank and dtype kept), to run on inputs
/// of other sizes.
Graph unpinned(const Graph& graph) {
  Graph copy(graph);
  for (Node& node : copy.nodes()) {
    if (node.op() != OpKind::placeholder || node.tensor_meta() == nullptr) continue;
    const TensorMeta& meta = *node.tensor_meta();
    if (meta.shape.is_rank_known())
      node.set_tensor_meta(TensorMeta{meta.dtype, Shape::unknown(meta.shape.rank())});
  }
  return copy;
}

template <class Trace>
void check(ExecutionTrace& trace, Module& runner, const ExecutionTraceOptions& options, Trace&& retrace) {
  const std::vector<std::string> expected = structure(trace.graph);
  const Graph runnable = unpinned(trace.graph);
  for (std::size_t k = 0; k < options.check_inputs.size(); ++k) {
    const ValueList& inputs = options.check_inputs[k];
    ExecutionTrace other = retrace(inputs);
    const std::vector<std::string> got = structure(other.graph);
    const auto [mine, theirs] = std::mismatch(expected.begin(), expected.end(), got.begin(), got.end());
    if (mine != expected.end() || theirs != got.end()) {
      const auto i = static_cast<std::size_t>(mine - expected.begin());
      trace.divergences.push_back(fmt::format(
          "check input {}: the forward made other calls than with the example inputs, from node {}: {} with the "
          "example inputs, {} with the check input; the trace is specialised on data (see its warnings)",
          k, i, mine != expected.end() ? *mine : std::string("the end of the graph"),
          theirs != got.end() ? *theirs : std::string("the end of the graph")));
      continue;
    }
    try {
      const Value result = Interpreter(runner, runnable).run(inputs);
      const std::string difference = compare(result, other.outputs, options.check_tolerance, "");
      if (!difference.empty())
        trace.divergences.push_back(fmt::format(
            "check input {}: the graph does not compute what the forward computes: {}; the trace is specialised "
            "on data (see its warnings)",
            k, difference));
    } catch (const std::exception& e) {
      trace.divergences.push_back(fmt::format("check input {}: the graph cannot run on it: {}", k, e.what()));
    }
  }
}

}  // namespace

ExecutionTrace trace_by_execution(Module& module, const ValueList& inputs, const ExecutionTraceOptions& options,
                                  std::source_location where) {
  std::vector<std::string> names = module.input_names();
  for (std::size_t i = names.size(); i < inputs.size(); ++i) names.push_back(fmt::format("input_{}", i));
  auto trace_once = [&](const ValueList& args) {
    return record_run(
        &module, names, args, [&] { return module.call(args, where); }, options.force_outplace, where);
  };
  ExecutionTrace trace = trace_once(inputs);
  if (!options.check_inputs.empty()) {
    for (const ValueList& args : options.check_inputs) {
      if (args.size() != inputs.size())
        throw_invalid_argument(where, "trace_by_execution: a check input set has {} inputs, the example inputs {}; "
                                      "give each check the same inputs",
                               args.size(), inputs.size());
    }
    check(trace, module, options, trace_once);
  }
  return trace;
}

ExecutionTrace detail::trace_function_by_execution(const TracedFunction& function, const ValueList& inputs,
                                                   const ExecutionTraceOptions& options, std::source_location where) {
  if (!function) throw_invalid_argument(where, "trace_by_execution: the function is empty");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < inputs.size(); ++i) names.push_back(fmt::format("input_{}", i));
  auto trace_once = [&](const ValueList& args) {
    return record_run(
        nullptr, names, args, [&] { return function(args); }, options.force_outplace, where);
  };
  ExecutionTrace trace = trace_once(inputs);
  if (!options.check_inputs.empty()) {
    for (const ValueList& args : options.check_inputs) {
      if (args.size() != inputs.size())
        throw_invalid_argument(where, "trace_by_execution: a check input set has {} inputs, the example inputs {}; "
                                      "give each check the same inputs",
                               args.size(), inputs.size());
    }
    nn::Identity runner;  // the graph reads only its constants
    check(trace, *runner, options, trace_once);
  }
  return trace;
}

}  // namespace symtrace

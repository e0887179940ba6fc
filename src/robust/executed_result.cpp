// Note [A failed module's result by execution]: a module that could not be traced stands in
// its caller's graph as a leaf, and the code after it reads its result: its rank and sizes
// (`x.size(1)`), its structure (a GRU's `(output, h_n)` unpacked, a backbone's dict iterated).
// A result that nothing tells would make that code fail too, for nothing in its own code: one
// failure would cascade into others. So, when neither a LeafMetaFn nor a layer's shape function
// knows the result, the module is run eagerly, twice, on synthetic inputs of the metadata seen
// at its call (standard normal floats, zero integers, other arguments as they are), with an
// interposer on the thread that lets everything run eagerly and keeps the first call of each
// module the runs call, and its buffers restored afterwards. Each named dim of the inputs is
// bound to a size of its own in each run (32 + i, then 48 + i, for the i-th name), an
// anonymous one to 3, then 5. When both runs give the same structure (tensor, list lengths,
// dict keys, dtypes and ranks), that is the leaf's result: a dim is known where both runs give
// the same size (but 0), it is the input's named dim that gives each run's size where one does
// (`N`, `H//4`), and unknown otherwise (a count from the data, such as what nms keeps). In a
// result that holds lists or dicts (a detection model's region proposal network returns
// `([boxes of each image], {losses})`) the first dim, where such counts lie, is always unknown
// (two runs may agree on a capped count). When an input's rank or a size argument is not
// known, or a run fails, the result stays unknown (what the module's signature declares: a
// tensor, or a tuple of them, of unknown rank). The runs are remembered per module and call
// (its inputs' metadata and other arguments: TraceRecords::executed_result), so equal calls
// reuse them, and the failure notes that its result's shape came by execution. The calls the
// runs make are merged the same way and become the observed inputs of the children the trace
// never reached (the module failed before calling them), for when the collection traces them
// as roots; a child the runs called differently (other structure or constants) gets none. The
// runs share the running TorchScript code's attributes set by the run (Note [Attributes set by
// a run]): torchvision's are caches computed from known sizes. A run costs what the module's
// eager forward costs at those sizes.
#include "symtrace/robust/robust_tracer.hpp"

#include "symtrace/core/factories.hpp"
#include "symtrace/core/random.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/robust/detail/synthetic_run.hpp"
#include "symtrace/trace/detail/result_meta.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

namespace {

// The sizes of a run: each named dim of the inputs bound to a value of its own (distinct per
// name, and per run), an anonymous one (a count from the data) to `anonymous`.
struct RunSizes {
  SymBindings bindings;
  std::int64_t anonymous = 3;
  // The size of `d` in this run, or nullopt when it has none (an expression negative there).
  [[nodiscard]] std::optional<std::int64_t> size(Dim d) const {
    if (d.is_known()) return d.raw();
    if (d.is_anonymous()) return anonymous;
    const std::int64_t v = d.expr()->evaluate(bindings);
    return v >= 0 ? std::optional(v) : std::nullopt;
  }
};

// `v` with each symbolic tensor replaced by a concrete one of its shape at `sizes`; nullopt
// when a rank or a size is not known.
std::optional<Value> synthetic_value(const Value& v, Generator& gen, const RunSizes& sizes) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined() || t.is_concrete()) return v;
    const Shape& shape = t.shape();
    if (!shape.is_rank_known()) return std::nullopt;
    IntList dims;
    for (Dim d : shape) {
      const std::optional<std::int64_t> n = sizes.size(d);
      if (!n) return std::nullopt;
      dims.push_back(*n);
    }
    if (t.dtype() == DType::float32) return Value(randn(dims, gen));
    return Value(zeros(SymIntList(dims), t.dtype()));
  }
  // A proxy number: its value at these sizes, when it is an expression over named dims.
  if (v.is_symint()) {
    const std::optional<std::int64_t> n = sizes.size(v.to_sym_int().dim());
    return n ? std::optional<Value>(*n) : std::nullopt;
  }
  if (v.is_symfloat()) {
    const SymFloat f = v.to_sym_float();
    const std::optional<std::int64_t> n = sizes.size(f.numerator());
    if (!n) return std::nullopt;
    return Value(static_cast<double>(*n) / static_cast<double>(f.denominator()));
  }
  if (v.is_list()) {
    ValueList out;
    for (const Value& item : v.to_list()) {
      std::optional<Value> s = synthetic_value(item, gen, sizes);
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
    }
    return Value(std::move(out));
  }
  if (v.is_dict()) {
    ValueDict out;
    const ValueDict& d = v.to_dict();
    for (std::size_t k = 0; k < d.size(); ++k) {
      std::optional<Value> s = synthetic_value(d.values[k], gen, sizes);
      if (!s) return std::nullopt;
      out.insert_or_assign(d.keys[k], std::move(*s));
    }
    return Value(std::move(out));
  }
  return v;
}

// The named dims of `v`'s symbolic tensors: each distinct expression (the candidates a result's
// dim may be) and each name in them with its range.
void named_dims(const Value& v, std::vector<SymExpr>& exprs, std::vector<std::pair<std::string, SymRange>>& names) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined() || !t.is_symbolic() || !t.shape().is_rank_known()) return;
    for (Dim d : t.shape()) {
      if (!d.is_symbolic()) continue;
      const SymExpr e = *d.expr();
      if (std::find(exprs.begin(), exprs.end(), e) != exprs.end()) continue;
      exprs.push_back(e);
      for (auto& [name, range] : e.symbol_ranges()) {
        if (std::none_of(names.begin(), names.end(), [&](const auto& n) { return n.first == name; }))
          names.emplace_back(name, range);
      }
    }
  } else if (v.is_list()) {
    for (const Value& item : v.to_list()) named_dims(item, exprs, names);
  } else if (v.is_dict()) {
    for (const Value& item : v.to_dict().values) named_dims(item, exprs, names);
  }
}

// Runs a failed module eagerly (an interposer that lets every op run and every module call run
// its forward) and keeps the first call of each module it calls, as specs: the inputs of its
// children, which the collection traces as roots (Note [A failed module's result by execution]).
class ChildCalls final : public Interposer {
 public:
  using Calls = std::unordered_map<const Module*, TraceRecords::Calls>;
  ChildCalls() : Interposer(/*sees_concrete_calls=*/false) {}
  // Only an op with a symbolic argument comes here: something of the trace reached the run.
  Value call_op(const OpCall& call) override {
    throw std::invalid_argument(fmt::format("{}: a symbolic value reached an eager run", call.op.name()));
  }
  Value call_module(Module& module, const ValueList& args, std::source_location where) override {
    // The first call only, as a trace observes it (unobserved when it cannot be described).
    if (auto [it, first] = calls_.try_emplace(&module); first) TraceRecords::observe(it->second, args);
    return module.run_forward(args, where);
  }
  void on_data_read(DataRead, std::source_location) override {}  // an eager run reads what it likes
  bool locate(detail::TraceLocation&) const override { return false; }
  [[nodiscard]] Calls& calls() noexcept { return calls_; }

 private:
  Calls calls_;
};

// What the two runs' sizes say of a dim: a size both give (but 0, what a count from the data
// often is) is known; sizes that differ are the input's named dim (an expression over the
// inputs' names) that gives each run's size, or unknown when none does (a count from the data).
struct DimResolver {
  const RunSizes* runs[2];
  std::vector<SymExpr> candidates;
  [[nodiscard]] Dim resolve(Dim x, Dim y) const {
    if (!x.is_known() || !y.is_known()) return Dim::unknown();
    if (x == y) return x == Dim(0) ? Dim::unknown() : x;
    for (const SymExpr& e : candidates) {
      if (e.evaluate(runs[0]->bindings) == x.raw() && e.evaluate(runs[1]->bindings) == y.raw()) return Dim(e);
    }
    return Dim::unknown();
  }
  void merge(Shape& x, const Shape& y) const {
    for (std::size_t d = 0; d < x.rank(); ++d) x[d] = resolve(x[d], y[d]);
  }
};

// Two runs' specs of one argument merged (DimResolver); nullopt when their structures or
// constants differ.
std::optional<InputSpec> merge_spec(const InputSpec& a, const InputSpec& b, const DimResolver& dims) {
  if (a.is_constant != b.is_constant || a.is_list != b.is_list || a.is_dict != b.is_dict || a.is_int != b.is_int)
    return std::nullopt;
  if (a.is_constant) return to_string(a.value) == to_string(b.value) ? std::optional(a) : std::nullopt;
  if (a.is_list || a.is_dict) {
    if (a.keys != b.keys || a.elements.size() != b.elements.size()) return std::nullopt;
    InputSpec out = a;
    for (std::size_t i = 0; i < a.elements.size(); ++i) {
      std::optional<InputSpec> e = merge_spec(a.elements[i], b.elements[i], dims);
      if (!e) return std::nullopt;
      out.elements[i] = std::move(*e);
    }
    return out;
  }
  if (a.dtype != b.dtype || a.shape.rank() != b.shape.rank()) return std::nullopt;
  InputSpec out = a;
  dims.merge(out.shape, b.shape);
  return out;
}

// `b` merged into `a` (DimResolver): false when their structures differ.
bool merge(OutputMeta& a, const OutputMeta& b, const DimResolver& dims) {
  if (a.nesting != b.nesting || a.keys != b.keys || a.outputs.size() != b.outputs.size()) return false;
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    TensorMeta& x = a.outputs[i];
    const TensorMeta& y = b.outputs[i];
    if (x.dtype != y.dtype || x.shape.rank() != y.shape.rank()) return false;
    dims.merge(x.shape, y.shape);
  }
  return true;
}

}  // namespace

namespace {

// As for results: a count from the data (boxes kept by nms, capped at 1,000) lies in the first
// dim, where two runs may agree on it by the cap, so it is never taken as known.
void first_dims_unknown(InputSpec& spec) {
  for (InputSpec& e : spec.elements) first_dims_unknown(e);
  if (spec.is_tensor() && spec.shape.is_rank_known() && spec.shape.rank() > 0) spec.shape[0] = Dim::unknown();
}

// The calls both runs made and observed, merged argument by argument (merge_spec; first dims
// unknown when `counts_first`); a module whose calls differ in structure or other values is
// left out.
std::vector<std::pair<const Module*, ObservedCall>> merged_calls(ChildCalls::Calls& first, const ChildCalls::Calls& second,
                                                                 const DimResolver& dims, bool counts_first) {
  std::vector<std::pair<const Module*, ObservedCall>> out;
  for (auto& [module, a] : first) {
    auto it = second.find(module);
    if (!a.observed || it == second.end() || !it->second.observed) continue;
    const ObservedCall& b = it->second.first;
    bool agree = a.first.tensors.size() == b.tensors.size() && a.first.values.size() == b.values.size();
    for (std::size_t i = 0; agree && i < a.first.values.size(); ++i) {
      agree = a.first.values[i].first == b.values[i].first &&
              to_string(a.first.values[i].second) == to_string(b.values[i].second);
    }
    for (std::size_t i = 0; agree && i < a.first.tensors.size(); ++i) {
      std::optional<InputSpec> spec = merge_spec(a.first.tensors[i], b.tensors[i], dims);
      agree = spec.has_value();
      if (agree) {
        if (counts_first) first_dims_unknown(*spec);
        a.first.tensors[i] = std::move(*spec);
      }
    }
    if (agree) out.emplace_back(module, std::move(a.first));
  }
  return out;
}

// The two runs' sizes for `args`: each name of their named dims bound to 32 + i in the first
// run and 48 + i in the second (the i-th name; kept in its range), so that no two names, nor a
// name and a constant of the model, are likely to give the same sizes in both runs; anonymous
// dims are 3 and 5.
std::array<RunSizes, 2> run_sizes(const ValueList& args, std::vector<SymExpr>& candidates) {
  std::vector<std::pair<std::string, SymRange>> names;
  for (const Value& a : args) named_dims(a, candidates, names);
  std::array<RunSizes, 2> runs{RunSizes{{}, 3}, RunSizes{{}, 5}};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& [name, range] = names[i];
    const auto n = static_cast<std::int64_t>(i);
    runs[0].bindings.emplace_back(name, std::clamp<std::int64_t>(32 + n, range.lo, range.hi));
    runs[1].bindings.emplace_back(name, std::clamp<std::int64_t>(48 + n, range.lo, range.hi));
  }
  return runs;
}

}  // namespace

std::optional<OutputMeta> RobustTracer::executed_result_meta(Module& module, const ValueList& args, std::source_location where,
                                                             std::vector<std::pair<const Module*, ObservedCall>>* calls) {
  // A result that holds lists or dicts is where a selection from the data (nms, a mask,
  // nonzero) puts its counts, in the first dim, where two runs may agree on it by a cap (at
  // most 1,000 proposals): there the first dim is never taken as known.
  const ForwardSignature* signature = module.forward_signature();
  const std::string_view declared = signature != nullptr ? std::string_view(signature->result_type_name) : "";
  const bool counts_first = declared.find("List[") != std::string_view::npos || declared.find("Dict[") != std::string_view::npos;
  DimResolver dims{};
  const std::array<RunSizes, 2> runs = run_sizes(args, dims.candidates);
  dims.runs[0] = &runs[0];
  dims.runs[1] = &runs[1];
  std::optional<OutputMeta> result;
  ChildCalls::Calls first_run;
  for (std::size_t run = 0; run < runs.size(); ++run) {
    Generator gen(run);
    ValueList inputs;
    for (const Value& a : args) {
      std::optional<Value> s = synthetic_value(a, gen, runs[run]);
      if (!s) return std::nullopt;
      inputs.push_back(std::move(*s));
    }
    OutputMeta meta;
    ChildCalls children;
    try {
      const InterposerScope eager(children);
      const detail::BufferSnapshot state(module);
      const Value out = module.run_forward(inputs, where);
      if (out.is_tensor()) {
        meta = OutputMeta::single(TensorMeta(out.to_tensor().meta()));
      } else {
        meta.is_list = true;
        if (!detail::flatten_result(out, meta)) return std::nullopt;
      }
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception&) {
      return std::nullopt;  // the result stays unknown
    }
    if (!result) {
      result = std::move(meta);
      first_run = std::move(children.calls());
    } else if (result->is_list != meta.is_list || !merge(*result, meta, dims)) {
      return std::nullopt;
    } else if (calls != nullptr) {
      *calls = merged_calls(first_run, children.calls(), dims, counts_first);
    }
  }
  if (counts_first) {
    for (TensorMeta& m : result->outputs)
      if (m.shape.rank() > 0) m.shape[0] = Dim::unknown();
  }
  return result;
}

}  // namespace symtrace

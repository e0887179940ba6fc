// Note [A failed module's result by execution]: a module that could not be traced stands in
// its caller's graph as a leaf whose result nothing tells, and an unknown tensor stands for
// it. When its forward declares a result that holds lists or dicts (a detection model's region
// proposal network returns `([boxes of each image], {losses})`), that cannot be: the caller
// indexes and iterates the result, and would fail for want of its structure, not for anything
// in its own code. So such a module is run eagerly, twice, on synthetic inputs of the shapes
// seen at its call (standard normal floats, zero integers, 3 and then 5 for a dim the trace
// does not know, other arguments as they are), with an interposer on the thread that lets
// everything run eagerly and keeps the first call of each module the runs call, and its
// buffers restored afterwards. When both runs give the same structure (list lengths, dict
// keys, dtypes and ranks), that is the leaf's result; a dim is known where both runs agree and
// unknown where they differ or are 0 (a count that depends on the data, such as what nms
// keeps, is often 0 on random inputs), and the first dim, where such counts lie, is always
// unknown (two runs may agree on a capped count). When an input's rank or a size argument is
// not known, or a run fails, the result stays unknown. The calls are merged the same way,
// first dims unknown, and become the observed inputs of the children the trace never reached
// (the module failed before calling them), for when the collection traces them as roots; a
// child the runs called differently (other structure or constants) gets none. The runs share the running TorchScript
// code's attributes set by the run (Note [Attributes set by a run]): torchvision's are caches
// computed from known sizes.
#include "symtrace/robust/robust_tracer.hpp"

#include "symtrace/core/factories.hpp"
#include "symtrace/core/random.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/robust/detail/synthetic_run.hpp"
#include "symtrace/trace/detail/result_meta.hpp"

#include <fmt/format.h>

#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

namespace {

// `v` with each symbolic tensor replaced by a concrete one of its shape, an unknown dim (a
// count from the data) by `stand_in`; nullopt when a rank or a size is not known.
std::optional<Value> synthetic_value(const Value& v, Generator& gen, std::int64_t stand_in) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined() || t.is_concrete()) return v;
    const Shape& shape = t.shape();
    if (!shape.is_rank_known()) return std::nullopt;
    IntList sizes;
    for (Dim d : shape) sizes.push_back(d.is_known() ? d.raw() : stand_in);
    if (t.dtype() == DType::float32) return Value(randn(sizes, gen));
    return Value(zeros(SymIntList(sizes), t.dtype()));
  }
  if (v.is_symint()) {
    if (!v.to_sym_int().is_known()) return std::nullopt;
    return v;
  }
  if (v.is_list()) {
    ValueList out;
    for (const Value& item : v.to_list()) {
      std::optional<Value> s = synthetic_value(item, gen, stand_in);
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
    }
    return Value(std::move(out));
  }
  if (v.is_dict()) {
    ValueDict out;
    const ValueDict& d = v.to_dict();
    for (std::size_t k = 0; k < d.size(); ++k) {
      std::optional<Value> s = synthetic_value(d.values[k], gen, stand_in);
      if (!s) return std::nullopt;
      out.insert_or_assign(d.keys[k], std::move(*s));
    }
    return Value(std::move(out));
  }
  return v;
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

// `y` merged into `x` (of the same rank): a dim the two runs give different sizes, or none, is
// unknown (an empty result is what a count from the data often is).
void merge_dims(Shape& x, const Shape& y) {
  for (std::size_t d = 0; d < x.rank(); ++d)
    if (x[d] != y[d] || x[d] == Dim(0)) x[d] = Dim::unknown();
}

// Two runs' specs of one argument merged (merge_dims); nullopt when their structures or
// constants differ.
std::optional<InputSpec> merge_spec(const InputSpec& a, const InputSpec& b) {
  if (a.is_constant != b.is_constant || a.is_list != b.is_list || a.is_dict != b.is_dict || a.is_int != b.is_int)
    return std::nullopt;
  if (a.is_constant) return to_string(a.value) == to_string(b.value) ? std::optional(a) : std::nullopt;
  if (a.is_list || a.is_dict) {
    if (a.keys != b.keys || a.elements.size() != b.elements.size()) return std::nullopt;
    InputSpec out = a;
    for (std::size_t i = 0; i < a.elements.size(); ++i) {
      std::optional<InputSpec> e = merge_spec(a.elements[i], b.elements[i]);
      if (!e) return std::nullopt;
      out.elements[i] = std::move(*e);
    }
    return out;
  }
  if (a.dtype != b.dtype || a.shape.rank() != b.shape.rank()) return std::nullopt;
  InputSpec out = a;
  merge_dims(out.shape, b.shape);
  return out;
}

// `b` merged into `a` (merge_dims): false when their structures differ.
bool merge(OutputMeta& a, const OutputMeta& b) {
  if (a.nesting != b.nesting || a.keys != b.keys || a.outputs.size() != b.outputs.size()) return false;
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    TensorMeta& x = a.outputs[i];
    const TensorMeta& y = b.outputs[i];
    if (x.dtype != y.dtype || x.shape.rank() != y.shape.rank()) return false;
    merge_dims(x.shape, y.shape);
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

// The calls both runs made and observed, merged argument by argument (merge_spec, first dims
// unknown); a module whose calls differ in structure or other values is left out.
std::vector<std::pair<const Module*, ObservedCall>> merged_calls(ChildCalls::Calls& first, const ChildCalls::Calls& second) {
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
      std::optional<InputSpec> spec = merge_spec(a.first.tensors[i], b.tensors[i]);
      agree = spec.has_value();
      if (agree) {
        first_dims_unknown(*spec);
        a.first.tensors[i] = std::move(*spec);
      }
    }
    if (agree) out.emplace_back(module, std::move(a.first));
  }
  return out;
}

}  // namespace

std::optional<OutputMeta> RobustTracer::executed_result_meta(Module& module, const ValueList& args, std::source_location where,
                                                             std::vector<std::pair<const Module*, ObservedCall>>* calls) {
  const ForwardSignature* signature = module.forward_signature();
  if (signature == nullptr) return std::nullopt;
  const std::string_view declared = signature->result_type_name;
  if (declared.find("List[") == std::string_view::npos && declared.find("Dict[") == std::string_view::npos)
    return std::nullopt;
  std::optional<OutputMeta> result;
  ChildCalls::Calls first_run;
  for (std::uint64_t seed : {0u, 1u}) {
    Generator gen(seed);
    ValueList inputs;
    for (const Value& a : args) {
      std::optional<Value> s = synthetic_value(a, gen, seed == 0 ? 3 : 5);
      if (!s) return std::nullopt;
      inputs.push_back(std::move(*s));
    }
    OutputMeta meta;
    meta.is_list = true;
    ChildCalls children;
    try {
      const InterposerScope eager(children);
      const detail::BufferSnapshot state(module);
      const Value out = module.run_forward(inputs, where);
      if (out.is_tensor() || !detail::flatten_result(out, meta)) return std::nullopt;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception&) {
      return std::nullopt;  // the result stays unknown
    }
    if (!result) {
      result = std::move(meta);
      first_run = std::move(children.calls());
    } else if (!merge(*result, meta)) {
      return std::nullopt;
    } else if (calls != nullptr) {
      *calls = merged_calls(first_run, children.calls());
    }
  }
  // The first dim is where a selection from the data puts its count (nms, a mask, nonzero):
  // two runs may agree on it by a cap (at most 1,000 proposals), so it is never taken as known.
  for (TensorMeta& m : result->outputs)
    if (m.shape.rank() > 0) m.shape[0] = Dim::unknown();
  return result;
}

}  // namespace symtrace

#include "symtrace/analysis/analysis_trace.hpp"

#include "symtrace/robust/detail/synthetic_run.hpp"
#include "symtrace/nn/module.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

namespace symtrace {

namespace {

void collect_tensors(const Value& value, std::vector<TensorMeta>& out) {
  if (value.is_tensor()) {
    out.push_back(value.to_tensor().meta());
  } else if (value.is_list()) {
    for (const Value& v : value.to_list()) collect_tensors(v, out);
  } else if (value.is_dict()) {
    for (const Value& v : value.to_dict().values) collect_tensors(v, out);
  }
}

}  // namespace

bool AnalysisTracer::is_leaf_module(const Module& module, std::string_view) const {
  return is_failed(module) || is_registered_leaf(module);
}

Value AnalysisTracer::call_module(Module& module, const ValueList& args, std::source_location where) {
  Value result = RobustTracer::call_module(module, args, where);
  if (auto [it, first_call] = outputs_.try_emplace(&module); first_call) collect_tensors(result, it->second);
  return result;
}

const std::vector<TensorMeta>* AnalysisTracer::module_output(const Module& module) const noexcept {
  auto it = outputs_.find(&module);
  return it == outputs_.end() ? nullptr : &it->second;
}

OutputMeta AnalysisTracer::failed_leaf_meta(const Module& module, const std::string& path, const ValueList& args,
                                            std::source_location where) const {
  auto it = executed_.find(&module);
  if (it != executed_.end()) {
    std::vector<TensorMeta> inputs;
    for (const Value& a : args) collect_tensors(a, inputs);
    if (inputs == it->second.inputs) return it->second.result;
  }
  return RobustTracer::failed_leaf_meta(module, path, args, where);
}

namespace {

/// The one tensor `module` returns when run on synthetic inputs of `specs`, if two runs on
/// different inputs agree on its dtype and shape.
std::optional<TensorMeta> executed_result(Module& module, const std::vector<InputSpec>& specs) {
  // Only random inputs can show a shape that depends on the data (integer inputs are zeros).
  // Its calls are matched by their tensors' metadata: tensor inputs only.
  if (!std::all_of(specs.begin(), specs.end(), [](const InputSpec& s) { return s.is_tensor() && s.dtype == DType::float32; })) {
    return std::nullopt;
  }
  std::optional<TensorMeta> result;
  for (std::uint64_t seed : {0u, 1u}) {
    try {
      const detail::BufferSnapshot state(module);
      const Value out = module.forward_values(detail::synthetic_inputs(specs, seed));
      if (!out.is_tensor()) return std::nullopt;
      const TensorMeta& meta = out.to_tensor().meta();
      if (result && *result != meta) return std::nullopt;  // its shape depends on the data
      result = meta;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return result;
}

}  // namespace

GraphCollection trace_for_analysis(Module& model, const std::vector<InputSpec>& inputs, std::source_location where) {
  GraphCollection c(std::make_unique<AnalysisTracer>(), where);
  c.recursive_trace(model, inputs, {}, where);
  while (true) {
    AnalysisTracer::ExecutedCalls executed = dynamic_cast<const AnalysisTracer&>(c.tracer()).executed_calls();
    bool found = false;
    const TraceRecords& records = c.records();
    for (std::size_t i = 0; i < records.failures().size(); ++i) {
      const Module* failed = records.failed_modules()[i];
      if (executed.contains(failed)) continue;
      const std::vector<InputSpec>* specs = records.observed_inputs(*failed);
      // A module that failed as the root of its trace is a leaf of no graph: its result tells nothing.
      if (specs == nullptr || !detail::fully_known(*specs) || records.failed_as_root(i)) continue;
      // The tracer records modules as const; the analysis runs them, as a capture does.
      Module& module = const_cast<Module&>(*failed);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
      const std::optional<TensorMeta> result = executed_result(module, *specs);
      if (!result) continue;
      AnalysisTracer::ExecutedCall call;
      for (const InputSpec& s : *specs) call.inputs.push_back(TensorMeta{s.dtype, s.shape});
      call.result = OutputMeta::single(result->dtype, result->shape);
      executed.emplace(failed, std::move(call));
      found = true;
    }
    if (!found) return c;
    GraphCollection next(std::make_unique<AnalysisTracer>(std::move(executed)), where);
    next.recursive_trace(model, inputs, {}, where);
    c = std::move(next);
  }
}

}  // namespace symtrace

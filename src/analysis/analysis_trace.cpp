#include "symtrace/analysis/analysis_trace.hpp"

#include <memory>
#include <utility>

namespace symtrace {

namespace {

void collect_tensors(const Value& value, std::vector<TensorMeta>& out) {
  if (value.is_tensor()) {
    out.push_back(value.to_tensor().meta());
  } else if (value.is_list()) {
    for (const Value& v : value.to_list()) collect_tensors(v, out);
  }
}

}  // namespace

bool AnalysisTracer::is_leaf_module(const Module& module, std::string_view) const {
  return is_failed(module) || is_registered_leaf(module);
}

Value AnalysisTracer::call_module(Module& module, const ValueList& args, std::source_location where) {
  Value result = RobustTracer::call_module(module, args, where);
  if (!outputs_.contains(&module)) {
    std::vector<TensorMeta> metas;
    collect_tensors(result, metas);
    outputs_.emplace(&module, std::move(metas));
  }
  return result;
}

const std::vector<TensorMeta>* AnalysisTracer::module_output(const Module& module) const noexcept {
  auto it = outputs_.find(&module);
  return it == outputs_.end() ? nullptr : &it->second;
}

GraphCollection trace_for_analysis(Module& model, const std::vector<InputSpec>& inputs, std::source_location where) {
  GraphCollection c(std::make_unique<AnalysisTracer>(), where);
  c.recursive_trace(model, inputs, {}, where);
  return c;
}

}  // namespace symtrace

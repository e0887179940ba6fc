// TraceRecords: the bookkeeping of robust traces, kept apart from the tracing itself.
#include "symtrace/robust/trace_records.hpp"

#include "symtrace/nn/module_index.hpp"
#include "symtrace/ops/dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace symtrace {

std::string to_string(const ModuleFailure& failure) {
  if (failure.where.line() == 0) return fmt::format("{}: {}", failure.kind, failure.message);
  const std::string location = fmt::format("{}:{}", failure.where.file_name(), failure.where.line());
  // A TraceError's or OpError's message starts with its location: printed once.
  std::string_view message = failure.message;
  if (message.starts_with(location) && message.substr(location.size()).starts_with(": ")) {
    message.remove_prefix(location.size() + 2);
  }
  return fmt::format("{}: {}: {}", location, failure.kind, message);
}

void TraceRecords::record_failure(const Module& module, ModuleFailure failure) {
  // An entry made empty says nothing (unvisited, unobserved): making it changes no answer.
  Calls& calls = calls_[&module];
  if (!failed_.contains(&module)) {
    const bool as_root = failure.module.empty();
    if (model_ != nullptr) {
      if (std::optional<std::string> path = model_->path_of(module)) failure.module = std::move(*path);
    }
    failures_.reserve(failures_.size() + 1);
    failed_modules_.reserve(failures_.size() + 1);
    as_root_.reserve(failures_.size() + 1);
    failed_.emplace(&module, failures_.size());  // the last step that may throw
    failures_.push_back(std::move(failure));     // no allocation from here on
    failed_modules_.push_back(&module);
    as_root_.push_back(as_root);
  }
  calls.visited = true;
}

const ModuleFailure* TraceRecords::failure(const Module& module) const noexcept {
  auto it = failed_.find(&module);
  return it == failed_.end() ? nullptr : &failures_[it->second];
}

std::optional<std::string> TraceRecords::failure_msg(const Module& module) const {
  const ModuleFailure* f = failure(module);
  if (f == nullptr) return std::nullopt;
  return fmt::format("{}: {}", f->kind, f->message);
}

void TraceRecords::observe(Calls& calls, const ValueList& args) {
  if (calls.observed) return;
  std::vector<InputSpec> specs;
  std::vector<std::pair<std::size_t, Value>> values;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Value& a = args[i];
    // A tensor, or a list or dict holding tensors (List[Tensor], Dict[str, Tensor], an object).
    if (std::optional<InputSpec> spec = InputSpec::of(a)) {
      specs.push_back(std::move(*spec));
    } else if (holds_tensor(a) || contains_symbolic(a)) {  // an undefined tensor, a proxy number, a key not a str
      return;
    } else {
      values.emplace_back(i, a);
    }
  }
  calls.first.tensors = std::move(specs);
  calls.first.values = std::move(values);
  calls.observed = true;
}

std::optional<ObservedCall> TraceRecords::observed_call(const Module& module) const {
  auto it = calls_.find(&module);
  if (it == calls_.end() || !it->second.observed) return std::nullopt;
  return it->second.first;
}

const std::vector<InputSpec>* TraceRecords::observed_inputs(const Module& module) const noexcept {
  auto it = calls_.find(&module);
  if (it == calls_.end() || !it->second.observed || !it->second.first.values.empty()) return nullptr;
  return &it->second.first.tensors;
}

const OutputMeta* TraceRecords::leaf_result(const Module& module, const std::vector<TensorMeta>& inputs) const noexcept {
  auto it = leaf_results_.find(&module);
  if (it == leaf_results_.end()) return nullptr;
  for (const LeafCall& call : it->second) {
    if (call.inputs == inputs) return &call.result;
  }
  return nullptr;
}

void TraceRecords::remember_leaf_result(const Module& module, std::vector<TensorMeta> inputs, const OutputMeta& result) {
  if (model_ == nullptr) return;
  std::vector<LeafCall>& calls = leaf_results_[&module];
  if (calls.size() < 4) calls.push_back(LeafCall{std::move(inputs), result});
}

const std::optional<OutputMeta>* TraceRecords::executed_result(const Module& module, std::string_view key) const noexcept {
  auto it = executed_results_.find(&module);
  if (it == executed_results_.end()) return nullptr;
  for (const auto& [k, result] : it->second) {
    if (k == key) return &result;
  }
  return nullptr;
}

void TraceRecords::remember_executed_result(const Module& module, std::string key, std::optional<OutputMeta> result) {
  std::vector<std::pair<std::string, std::optional<OutputMeta>>>& runs = executed_results_[&module];
  if (runs.size() < 8) runs.emplace_back(std::move(key), std::move(result));
}

void TraceRecords::clear() noexcept {
  failures_.clear();
  failed_modules_.clear();
  as_root_.clear();
  failed_.clear();
  calls_.clear();
  leaf_results_.clear();
  executed_results_.clear();
}

}  // namespace symtrace

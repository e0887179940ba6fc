#pragma once
/// \file
/// `AnalysisTracer` and `trace_for_analysis`: the traces the analysis layer reads. They are
/// robust traces with the semantics of `recursive_trace` (a failing module becomes a leaf,
/// its children are traced on their own), except that built-in layers are traced *through*:
/// every convolution, linear layer and norm appears as its op (`conv2d`, `linear`,
/// `batch_norm`, ...) with its weights as `get_attr` nodes named by their qualified paths. Costs
/// and channel dependencies are then read from the op registry's declared properties, never
/// from layer types. The tracer also keeps the result of each module's first call (the shapes
/// torchinfo's forward hooks report).
///
///     symtrace::GraphCollection c = symtrace::trace_for_analysis(*model, {x});
///     symtrace::ModelSummary s = symtrace::summarize(*model, c, "resnet18");

#include "symtrace/robust/graph_collection.hpp"
#include "symtrace/robust/robust_tracer.hpp"

#include <source_location>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

/// A RobustTracer for analysis; see the file comment.
class AnalysisTracer : public RobustTracer {
 public:
  /// The result of a failed module found by running it (see trace_for_analysis): the dtypes
  /// and shapes of the tensor arguments it was run with, and of what it returned.
  struct ExecutedCall {
    std::vector<TensorMeta> inputs;
    OutputMeta result;
  };
  using ExecutedCalls = std::unordered_map<const Module*, ExecutedCall>;

  AnalysisTracer() = default;
  /// A tracer that gives a failed module called with `executed`'s inputs `executed`'s result.
  explicit AnalysisTracer(ExecutedCalls executed) : executed_(std::move(executed)) {}

  /// Failed modules and registered leaf types are leaves; built-in layers are traced through.
  [[nodiscard]] bool is_leaf_module(const Module& module, std::string_view qualified_name) const override;
  /// RobustTracer's, keeping the tensors of the result of `module`'s first call.
  Value call_module(Module& module, const ValueList& args, std::source_location where) override;
  /// The dtypes and shapes of the tensors `module`'s first call returned (in the order a
  /// depth-first walk of the result meets them), or nullptr when it was never called in a
  /// trace of this tracer.
  [[nodiscard]] const std::vector<TensorMeta>* module_output(const Module& module) const noexcept;
  /// The failed modules' results this tracer was given.
  [[nodiscard]] const ExecutedCalls& executed_calls() const noexcept { return executed_; }

 protected:
  /// The executed result when the module is called with the inputs it was run with, else
  /// RobustTracer's.
  [[nodiscard]] OutputMeta failed_leaf_meta(const Module& module, const std::string& path, const ValueList& args,
                                            std::source_location where) const override;

 private:
  std::unordered_map<const Module*, std::vector<TensorMeta>> outputs_;
  ExecutedCalls executed_;
};

/// `recursive_trace(model, inputs)` made with an AnalysisTracer (reach it through
/// `dynamic_cast<const AnalysisTracer&>(c.tracer())`). The output shape of a failed module is
/// unknown to a symbolic trace, and so would be every shape after it; so a failed module whose
/// inputs were float32 tensors of fully known shapes is run eagerly, twice, on standard normal
/// inputs of those shapes from two seeds (its buffers restored afterwards). When both runs return one tensor of the same dtype and shape, the model is
/// traced again with that as the module's result, so the ops after it have shapes. That
/// repeats while it finds new results (once per failed module at most). The failed module's
/// own cost stays unknown. Throws std::invalid_argument when the inputs do not fit the
/// model's forward.
[[nodiscard]] GraphCollection trace_for_analysis(Module& model, const std::vector<InputSpec>& inputs,
                                                 std::source_location where = std::source_location::current());

}  // namespace symtrace

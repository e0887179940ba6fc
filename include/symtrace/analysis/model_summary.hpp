#pragma once
/// \file
/// Parameters, MACs, FLOPs and activation memory, per node and per module, from traced graphs
/// with shapes; and a summary table like torchinfo's (module tree, output shape, parameters,
/// MACs), as text or JSON.
///
/// Counting convention: one multiply-add is one MAC and two FLOPs.
/// - `conv1d`, `conv2d`, `conv3d`, `linear` (ops that mix channels through a weight): MACs =
///   output elements x (weight elements / output channels); FLOPs = 2 x MACs, plus one per
///   output element for a bias.
/// - `conv_transpose1d`, `conv_transpose2d`, `conv_transpose3d`: MACs = input elements x
///   (weight elements / input channels); FLOPs as for conv2d.
/// - `matmul`: MACs = output elements x the contracted size; FLOPs = 2 x MACs.
/// - `einsum`: MACs = the product of the sizes of all the equation's subscripts (output
///   elements x the summed sizes); FLOPs = 2 x MACs.
/// - `batch_norm`, `layer_norm`, `group_norm` and `instance_norm`: no MACs; FLOPs = 2 per output element (the affine
///   normalisation; the statistics of a training-mode norm are not counted).
/// - elementwise ops: one FLOP per output element; pooling, reductions and softmax: one FLOP
///   per input element; shape and view ops: none.
/// MACs are what model zoos quote as "GFLOPs" (resnet50: 4.1 G at 224x224).
///
/// Activation memory is the bytes of every op result that owns its storage (views share
/// their input's) — what one forward pass allocates if nothing is freed.
///
/// Costs are size expressions (core/sym_expr.hpp): numbers for a trace with known sizes,
/// formulas over the named dims of a trace with named dims (`4089184256*N` MACs for resnet50 at
/// `Nx3x224x224`), which `evaluate` turns into the numbers for given sizes.
///
/// A failed module or a `call_module` leaf contributes its own parameter count, but its cost is
/// unknown: it is not guessed. The table shows "?" for it (and for the modules inside a failed
/// one), and "≥" before a total that misses it. The children of a failed module that the
/// collection traced as roots count with what their own graphs compute (one call, at the
/// inputs of their call): the failed module and its ancestors then show a lower bound ("≥")
/// that includes them.

#include "symtrace/core/tensor_meta.hpp"
#include "symtrace/robust/coverage_report.hpp"
#include "symtrace/robust/graph_collection.hpp"
#include "symtrace/robust/module_hierarchy.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace symtrace {

/// The cost of one node (see the file comment for the convention).
struct NodeCost {
  SymExpr macs;
  SymExpr flops;
  SymExpr output_bytes;  ///< bytes of the result when it owns its storage, else 0
  /// False for a `call_module` node (its cost is its module's, unknown here), for an op with an
  /// anonymous size, and for a cost beyond 64 bits.
  bool known = true;
};

/// The cost of `node`, read from its op and the shapes of its arguments and result.
[[nodiscard]] NodeCost node_cost(const Node& node);

/// The costs of a whole graph: sums of its nodes' costs.
struct GraphCost {
  SymExpr macs;
  SymExpr flops;
  SymExpr activation_bytes;
  std::size_t unknown_nodes = 0;  ///< nodes whose cost is unknown (not counted in the sums)
};
[[nodiscard]] GraphCost graph_cost(const Graph& graph);

/// One row of the summary: one module.
struct ModuleSummary {
  std::string path;  ///< "" for the model
  std::string type;
  std::size_t depth = 0;
  ModuleStatus status = ModuleStatus::unvisited;
  /// The tensors its first call returned; empty when it was never called.
  std::vector<TensorMeta> output;
  std::int64_t parameters = 0;  ///< of its subtree, each tensor once
  /// MACs and FLOPs of its calls in the model's graph and its children's graphs; nullopt when
  /// unknown (a failed module or leaf, or a module inside a failed one, with no graph to count).
  std::optional<SymExpr> macs;
  std::optional<SymExpr> flops;
  /// False when a module inside it has an unknown cost: `macs` is then a lower bound.
  bool complete = true;
};

/// The summary of a model.
struct ModelSummary {
  std::string model;                   ///< the name given to summarize()
  std::vector<ModuleSummary> modules;  ///< every module, in named_modules() order (the model first)
  std::int64_t parameters = 0;         ///< Module::num_parameters() of the model
  SymExpr macs;                        ///< of the collection's graphs (a lower bound unless complete)
  SymExpr flops;
  SymExpr activation_bytes;
  bool complete = true;
  /// The modules whose cost is unknown (failed modules and leaves of the model's graph).
  std::vector<std::string> unknown;
};

/// Summarises `model` from `collection` (made from it, by `trace_for_analysis` to see the
/// output of every module). Throws std::invalid_argument when the collection is empty or not
/// made from `model`.
[[nodiscard]] ModelSummary summarize(const Module& model, const GraphCollection& collection, std::string name,
                                     std::source_location where = std::source_location::current());

/// The summary for sizes: every cost and output shape evaluated for `bindings` (which must bind
/// every named dim they use; std::invalid_argument names one it does not).
[[nodiscard]] ModelSummary evaluate(const ModelSummary& summary, const SymBindings& bindings);

/// A count as the summary table writes it: `25,557,032`, or a formula with grouped
/// coefficients and `·` for a product (`4,089,184,256·N`).
[[nodiscard]] std::string format_count(const SymExpr& count);

/// The summary as a table (torchinfo's layout, with totals) or as JSON:
/// `{"model", "parameters", "macs", "flops", "activation_bytes", "complete", "unknown": [...],
///   "modules": [{"module", "type", "status", "output": [[dims...]...] | null, "parameters",
///   "macs", "flops", "complete"}]}` (an unknown dim is null; an unknown cost is null; a dim or a
///   cost that is a formula of named dims is a string, in the grammar of graph JSON's sizes).
[[nodiscard]] std::string to_string(const ModelSummary& summary, ReportFormat format = ReportFormat::text);

}  // namespace symtrace

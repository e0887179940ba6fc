#pragma once
// The ONNX exporter's walk over a graph, shared by the files that implement it: onnx.cpp (the
// walk, arguments, the public functions), onnx_layers.cpp (built-in layers and the mappings
// layers and ops share) and onnx_ops.cpp (call_function / call_method). Private to the library.

#include "export/onnx_builder.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/export/onnx.hpp"

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace symtrace {
class Module;
}  // namespace symtrace

namespace symtrace::detail::onnx_export {

using Ints = std::vector<std::int64_t>;

/// Thrown inside the exporter for a node it cannot map; `export_node` adds the node's context.
struct Unmapped {
  std::string why;
  std::string fix;
};

[[noreturn]] inline void unmapped(std::string why, std::string fix) { throw Unmapped{std::move(why), std::move(fix)}; }

inline std::int64_t normalize_dim(std::int64_t d, std::int64_t rank) { return d < 0 ? d + rank : d; }

/// Walks a pure graph once, in order, writing each node's ONNX operators (see onnx.cpp).
class Exporter {
 public:
  Exporter(const Graph& graph, const Module& root, std::source_location where)
      : graph_(graph), root_(root), where_(where) {}

  std::string run(const OnnxOptions& options);

 private:
  void export_node(const Node& node);
  void placeholder(const Node& node);
  void get_attr(const Node& node);
  void call_module(const Node& node);
  void call_op(const Node& node);
  void output(const Node& node);
  [[noreturn]] void fail(const Node& node, const Unmapped& u) const;

  // ---- arguments ----
  /// The argument at `index` (or the keyword `name`), or nullptr when not given.
  static const Argument* arg(const Node& node, std::size_t index, std::string_view name);
  /// The value name of the tensor argument `a`.
  const std::string& value(const Argument& a) const;
  const std::string& value(const Node& node, std::size_t index, std::string_view name) const;
  /// The value name of a tensor-or-number argument; a number becomes a constant of `dtype`,
  /// and a tensor of another dtype is cast to it.
  std::string operand(const Argument& a, DType dtype, const std::string& base);
  static std::optional<std::int64_t> int_arg(const Node& node, std::size_t index, std::string_view name);
  static std::int64_t int_arg(const Node& node, std::size_t index, std::string_view name, std::int64_t fallback);
  static double float_arg(const Node& node, std::size_t index, std::string_view name, double fallback);
  static bool bool_arg(const Node& node, std::size_t index, std::string_view name, bool fallback);
  static Ints ints_arg(const Node& node, std::size_t index, std::string_view name, Ints fallback);
  /// The value name of a 1-D int64 tensor holding the sizes argument `index`: a constant when
  /// every size is a number, else a Concat of the numbers and the sizes computed in the graph
  /// (Note [Sizes computed in the graph]). `known` rewrites each number first.
  std::string sizes_input(const Node& node, std::size_t index, std::string_view name, const std::string& base,
                          std::int64_t (*known)(std::int64_t) = nullptr);
  /// A size computed in the graph (`size`, `operator.mul`, ...) as ONNX operators on 0-d int64
  /// tensors.
  void size_arithmetic(const Node& node);
  /// Whether the argument is given and not None.
  static bool given(const Node& node, std::size_t index, std::string_view name);
  /// The input metadata of the node argument `a` (throws Unmapped when unknown).
  const TensorMeta& meta_of(const Argument& a) const;
  static const TensorMeta& result_meta(const Node& node);
  std::int64_t rank_of(const Argument& a) const;

  // ---- mappings shared by modules and ops ----
  void conv(const Node& node, const std::string& x, const std::string& w, const std::string* b, const Ints& stride,
            const Ints& padding, const Ints& dilation, std::int64_t groups);
  void batch_norm(const Node& node, const Argument& input, std::string scale, std::string bias, const std::string& mean,
                  const std::string& var, double eps);
  void layer_norm(const Node& node, const std::string& x, const Ints& normalized_shape, std::string scale,
                  const std::string* bias, double eps);
  void linear(const Node& node, const Argument& input, const std::string& w, const std::string* b);
  void pool(const Node& node, std::string_view op_type, const std::string& x, const Ints& kernel, Ints stride,
            const Ints& padding, const Ints* dilation, bool ceil_mode, std::optional<bool> count_include_pad);
  void adaptive_avg_pool(const Node& node, const Argument& input, const Ints& output_size);
  void gelu(const Node& node, const std::string& x, std::string_view approximate);
  void flatten(const Node& node, const Argument& input, std::int64_t start, std::int64_t end);
  void unary(const Node& node, std::string_view op_type, const std::string& x);
  void upsample_nearest(const Node& node, const std::string& x, const std::optional<std::vector<double>>& scale);
  void clip(const Node& node, const std::string& x, std::optional<double> lo, std::optional<double> hi);
  /// PyTorch's hardsigmoid (relu6(x + 3) / 6): ONNX's HardSigmoid with alpha 1/6.
  void hard_sigmoid(const Node& node, const std::string& x);

  /// The initializer for the tensor `qualified_name` of the root module (written once).
  std::string parameter(const std::string& qualified_name);
  /// The value name of the node's result: the node's name, taken for it before the walk
  /// (suffixed only when a parameter has that name).
  const std::string& result(const Node& node);

  const Graph& graph_;
  const Module& root_;
  std::source_location where_;
  OnnxBuilder builder_;
  std::unordered_map<std::uint32_t, std::string> values_;              // node id -> value name
  std::unordered_map<std::uint32_t, std::vector<std::string>> lists_;  // node id -> list items
  std::unordered_map<std::uint32_t, std::string> own_names_;           // node id -> its name, taken
  std::unordered_set<std::string> initializers_;
  std::unordered_set<std::string> typed_;  // names with a type
};

}  // namespace symtrace::detail::onnx_export

#pragma once
// OnnxBuilder: the ONNX side of the exporter. It owns the ModelProto being written and makes
// its pieces (value names unique in the graph, nodes with attributes, constants, initializers
// and typed value infos) so that src/export/onnx.cpp reads as a table of mappings. Private to
// the library: this is the only place besides onnx.cpp that includes ONNX headers.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/core/tensor_meta.hpp"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace symtrace::detail {

/// Builds one ONNX graph. Value names are unique: every name goes through `reserve` or
/// `fresh`, which suffix `_1`, `_2`, ... when a name is taken.
class OnnxBuilder {
 public:
  OnnxBuilder();

  [[nodiscard]] onnx::ModelProto& model() noexcept { return model_; }
  [[nodiscard]] onnx::GraphProto& graph() noexcept { return *model_.mutable_graph(); }

  /// Marks `name` as taken as it is (an initializer's qualified name); false when it already was.
  bool reserve(const std::string& name);
  /// `base` if free, else `base_1`, `base_2`, ...; the result is taken.
  [[nodiscard]] std::string fresh(std::string_view base);

  /// Adds a node `op_type(inputs) -> outputs`, named after its first output.
  onnx::NodeProto& node(std::string_view op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  /// Adds a one-output node and returns its output, a fresh name from `base`.
  std::string node1(std::string_view op_type, const std::vector<std::string>& inputs, std::string_view base);

  /// A `Constant` node holding `values` (a 1-D int64 tensor, or a 0-d one when `scalar`).
  std::string constant_ints(const std::vector<std::int64_t>& values, std::string_view base, bool scalar = false);
  /// A `Constant` node holding the 0-d tensor `value` of `dtype`.
  std::string constant_scalar(double value, DType dtype, std::string_view base);
  /// A `Constant` node holding `value` (concrete).
  std::string constant_tensor(const Tensor& value, std::string_view base);

  /// Adds `value` (concrete) as the initializer `name` (already reserved).
  void initializer(const std::string& name, const Tensor& value);
  /// Adds a graph input, a graph output or a value info `name` of type `meta`.
  void input(const std::string& name, const TensorMeta& meta);
  void output(const std::string& name, const TensorMeta* meta);
  void value_info(const std::string& name, const TensorMeta& meta);

 private:
  onnx::ModelProto model_;
  std::unordered_set<std::string> taken_;
};

/// The ONNX element type of `dtype`.
[[nodiscard]] int onnx_elem_type(DType dtype) noexcept;
/// `value` (concrete) as a TensorProto called `name`.
[[nodiscard]] onnx::TensorProto onnx_tensor(const Tensor& value, const std::string& name);

void set_attribute(onnx::NodeProto& node, std::string_view name, std::int64_t value);
void set_attribute(onnx::NodeProto& node, std::string_view name, double value);
void set_attribute(onnx::NodeProto& node, std::string_view name, const std::vector<std::int64_t>& values);

}  // namespace symtrace::detail

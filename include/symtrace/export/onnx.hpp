#pragma once
/// \file
/// A traced graph as an ONNX model (what `torch.onnx.export` writes for a Python model):
/// each node becomes ONNX operators of the default domain at opset 17, the parameters and
/// buffers the graph reads become initializers named by their qualified names
/// (`layer1.0.conv1.weight`), and every value carries its traced dtype and shape (graph
/// inputs and outputs, and `value_info` for the values in between).
///
///     auto model = symtrace::zoo::create("resnet18");
///     symtrace::Graph graph = symtrace::symbolic_trace(*model, {symtrace::InputSpec(symtrace::Shape{1, 3, 224, 224})});
///     symtrace::export_onnx(graph, *model, "resnet18.onnx");
///
/// What is mapped: the built-in layers met as `call_module` leaves (Conv2d, BatchNorm2d in
/// eval mode, Linear, LayerNorm, ReLU, ReLU6, GELU, SiLU, Hardswish, Hardsigmoid, Sigmoid,
/// Tanh, Dropout, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten, Identity, Embedding, Upsample) and the ops of the
/// registry that have an ONNX counterpart (arithmetic, activations, matmul, linear, conv2d, the
/// norms, pooling, upsampling, softmax, reductions, views, splits and joins, indexing with
/// constant indices, comparisons, where, casts). GELU is written out with `Erf` (or `Tanh`),
/// as symtrace's kernel computes it: ONNX's `Gelu` needs opset 20. The export is of inference: dropout is the identity. Sizes must be known
/// where an op takes them as arguments (reshape, expand, ...), as they are when the graph was
/// traced on example shapes. In-place ops are rewritten first (`remove_inplace`, on a copy).
///
/// ONNX is an optional dependency: symtrace built without it (libonnx-dev not found when meson
/// configured it) still declares these functions, and they throw `std::runtime_error` saying
/// so; `onnx_export_available()` tells which build this is. This header does not include ONNX
/// or protobuf.

#include "symtrace/graph/graph.hpp"

#include <filesystem>
#include <iosfwd>
#include <source_location>
#include <string>

namespace symtrace {

class Module;

/// How `export_onnx` writes the model.
struct OnnxOptions {
  /// The name of the ONNX graph (`GraphProto.name`).
  std::string graph_name = "main_graph";
  /// The model's producer name (`ModelProto.producer_name`); the producer version is symtrace's.
  std::string producer_name = "symtrace";
  /// Whether to run `onnx::checker::check_model` on the model before it is returned or
  /// written; a failure is a symtrace bug and throws `InternalError`.
  bool check = true;
};

/// The ONNX opset version `export_onnx` targets (the default domain; LayerNormalization needs 17).
inline constexpr int onnx_opset_version = 17;

/// True when this build of symtrace can export ONNX (it was configured with libonnx-dev).
[[nodiscard]] bool onnx_export_available() noexcept;

/// The ONNX model of `graph` (a serialized `onnx.ModelProto`, as `onnx.load_model_from_string`
/// reads). `root` is the module the graph was traced from: `get_attr` targets and
/// `call_module` targets are qualified names in it, and it holds the parameters and buffers
/// written as initializers (tensors the graph holds itself, `Graph::add_constant`, are
/// written as initializers under their graph names).
///
/// Throws std::invalid_argument (`file:line: cannot export %node (call_function[target=op]) to
/// ONNX in 'module.path' (Type): why; what to do`) naming the first node that has no ONNX
/// mapping (an op, a module type, an argument that is not a constant where ONNX needs one, a
/// size that is not known, a dtype ONNX lacks), or that `remove_inplace` cannot make pure.
/// Throws std::runtime_error when symtrace was built without ONNX support.
[[nodiscard]] std::string export_onnx(const Graph& graph, const Module& root, const OnnxOptions& options = {},
                                      std::source_location where = std::source_location::current());

/// Writes the ONNX model of `graph` to `out` (see the overload returning it). The model is
/// built whole first: when the export fails nothing is written.
void export_onnx(const Graph& graph, const Module& root, std::ostream& out, const OnnxOptions& options = {},
                 std::source_location where = std::source_location::current());

/// Writes the ONNX model of `graph` to the file `path` (created or replaced). The model is
/// built whole before the file is opened: when the export fails no file is written. Throws
/// std::runtime_error naming the path when it cannot be written.
void export_onnx(const Graph& graph, const Module& root, const std::filesystem::path& path,
                 const OnnxOptions& options = {}, std::source_location where = std::source_location::current());

}  // namespace symtrace

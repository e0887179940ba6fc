#pragma once
// The MODEL argument and its inputs: a zoo entry, and input specs or random example tensors
// from --input shapes (or the entry's example inputs).

#include "options.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <vector>

namespace symtrace::cli {

/// The model options.model names: a zoo entry, or a TorchScript file (a path: it has a '/' or
/// a '.', or is an existing file), loaded now, whose entry's inputs are its forward's, with
/// the --input shapes (required: a TorchScript file stores no example inputs). Throws
/// UsageError naming the closest zoo model, or for a file without --input;
/// std::invalid_argument (exit 2) for a file that cannot be loaded, with its one-line reason.
[[nodiscard]] zoo::ModelInfo find_model(const Options& options);

/// True when `model` names a TorchScript file rather than a zoo entry.
[[nodiscard]] bool is_torchscript_file(std::string_view model);

/// The entry's example inputs with their shapes replaced by the --input shapes, if any.
/// Throws UsageError when the number of --input differs from the model's inputs, or a shape
/// cannot be read; with `known_sizes`, also when a size is unknown.
[[nodiscard]] std::vector<Shape> input_shapes(const zoo::ModelInfo& model, const Options& options, bool known_sizes);

/// Input specs for a symbolic trace: the model's input dtypes with `input_shapes`.
[[nodiscard]] std::vector<InputSpec> input_specs(const zoo::ModelInfo& model, const Options& options);

/// Random inputs to run the model on (normal floats, int64 ids below the entry's bound),
/// from a fixed seed, with `input_shapes`.
[[nodiscard]] std::vector<Tensor> example_tensors(const zoo::ModelInfo& model, const Options& options);

/// `shape` as `1x3x224x224` (`?` for an unknown size), as --input reads it.
[[nodiscard]] std::string shape_text(const Shape& shape);

}  // namespace symtrace::cli

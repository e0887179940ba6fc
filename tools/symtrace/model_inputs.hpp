#pragma once
// The MODEL argument and its inputs: a zoo entry, and input specs or random example tensors
// from --input shapes (or the entry's example inputs).

#include "options.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <optional>
#include <utility>
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

/// One input as --input gives it (or the entry's example input): a tensor's shape, dtype and,
/// for int64, the range its values are drawn from; None; or a list or dict of inputs.
struct InputText {
  enum class Kind : std::uint8_t {
    tensor,
    none,
    list,
    dict
  } kind = Kind::tensor;
  Shape shape;
  DType dtype = DType::float32;
  std::int64_t low = 0;   ///< int64 values are drawn from [low, high)
  std::int64_t high = 0;  ///< 0 (with low 0): all zeros
  /// float32 values are drawn uniformly from [first, second) when given (an image's [0,1)),
  /// else from the standard normal distribution.
  std::optional<std::pair<double, double>> float_range;
  std::vector<InputText> elements;  ///< of a list or a dict
  std::vector<std::string> keys;    ///< of a dict
};

/// The model's inputs: the --input texts read (`1x3x224x224`, `1x16:int64[0,30522)`,
/// `3x320x320:float32[0,1)`, `4:bool`,
/// `none`, `[SPEC,...]`, `{KEY:SPEC,...}`), or the entry's example inputs when none is given.
/// Throws UsageError when the number of --input differs from the model's inputs or one cannot
/// be read.
[[nodiscard]] std::vector<InputText> input_texts(const zoo::ModelInfo& model, const Options& options);

/// Input specs for a symbolic trace (input_texts; None is a constant input).
[[nodiscard]] std::vector<InputSpec> input_specs(const zoo::ModelInfo& model, const Options& options);

/// Inputs to run the model on, from a fixed seed (input_texts: normal floats, integers uniform
/// in their range, false bools, None, lists and dicts of them). Throws UsageError for a size
/// that is not known, std::invalid_argument for a tensor too large to make.
[[nodiscard]] ValueList example_values(const zoo::ModelInfo& model, const Options& options);

/// Input specs of `args` for a trace that runs them: each tensor's shape and dtype, anything
/// else a constant input.
[[nodiscard]] std::vector<InputSpec> specs_of(const ValueList& args);
/// `float32[1, 3]`, `[float32[3, 8, 8], float32[3, 8, 8]]`, `None`: a value as the commands
/// describe their inputs.
[[nodiscard]] std::string value_text(const Value& value);

/// `shape` as `1x3x224x224` (`?` for an unknown size), as --input reads it.
[[nodiscard]] std::string shape_text(const Shape& shape);

}  // namespace symtrace::cli

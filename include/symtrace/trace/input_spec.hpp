#pragma once
/// \file
/// The inputs of a trace: `InputSpec` describes one input of the root's forward (a tensor's
/// dtype and shape, whose dims may be unknown or named; a symbolic int; a list or dict of specs
/// with constant parts), and `ConcreteArgs` gives inputs a value to specialise the trace on
/// (fx's `concrete_args`). `Tracer::trace` (trace/tracer.hpp) takes both:
///
///     tracer.trace(model, {symtrace::InputSpec(Shape{Dim::unknown(), 3, 224, 224})});
///     tracer.trace(detector, {symtrace::InputSpec::list({images[0], images[1]})});

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/shape.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/graph/argument.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace symtrace {

/// A traced input: its dtype and shape, whose dims may be unknown (`Dim::unknown()`).
/// An example tensor converts to its own dtype and shape. `InputSpec::symbolic_int()` is an
/// integer unknown at trace time, for a forward parameter of type SymInt. Structured inputs
/// (torchvision's detection models pass lists of tensors, `Dict[str, Tensor]` and objects such
/// as `ImageList`) are `list` and `dict` specs, whose parts are specs again; a part that is not
/// traced (an `ImageList`'s `image_sizes`) is a `constant`, recorded as a guard of the graph.
struct InputSpec {
  DType dtype = DType::float32;
  Shape shape;
  bool is_int = false;   ///< a symbolic integer (a SymInt placeholder), not a tensor
  bool is_list = false;  ///< a list (`List[Tensor]`, a tuple), one spec per element in `elements`
  /// A dict with str keys (`Dict[str, Tensor]`, or an object of a TorchScript class, which is
  /// a dict of its attributes): `keys[i]` names `elements[i]`.
  bool is_dict = false;
  bool is_constant = false;  ///< a part of a list or dict that is not traced: `value`
  std::vector<InputSpec> elements;
  std::vector<std::string> keys;
  Value value;  ///< the constant's value

  InputSpec(Shape s, DType d = DType::float32) : dtype(d), shape(std::move(s)) {}  // NOLINT: implicit
  InputSpec(const Tensor& example);                                                // NOLINT: implicit
  /// Whether this is a tensor's spec (not an int, a list, a dict or a constant).
  [[nodiscard]] bool is_tensor() const noexcept { return !is_int && !is_list && !is_dict && !is_constant; }
  /// An integer input unknown at trace time: its placeholder is an `int` and forward gets a
  /// proxy SymInt. Only a SymInt parameter takes it.
  [[nodiscard]] static InputSpec symbolic_int() {
    InputSpec spec(Shape{}, DType::int64);
    spec.is_int = true;
    return spec;
  }
  /// A list input (torchvision's detection models take `List[Tensor]` images): its placeholder
  /// is a list, and forward gets a list with one proxy per traced element (`getitem` nodes).
  /// Elements are tensors, lists, dicts or constants; throws std::invalid_argument for a
  /// symbolic int element.
  [[nodiscard]] static InputSpec list(std::vector<InputSpec> elements);
  /// A dict input with str keys, in order: its placeholder is a dict, and forward gets a dict
  /// with one proxy per traced value (`getitem` nodes by key). Throws std::invalid_argument
  /// for a key given twice or a symbolic int value.
  [[nodiscard]] static InputSpec dict(std::vector<std::pair<std::string, InputSpec>> items);
  /// A part of a list or dict input that forward gets as it is (an int, a list of ints, a
  /// string, ...); the graph records it as a guard (`images.image_sizes`). Throws
  /// std::invalid_argument for a value holding a tensor, a dict (describe it with `dict`) or
  /// something symbolic.
  [[nodiscard]] static InputSpec constant(Value value);
  /// The spec of `value` as an input: a tensor's dtype and shape; for a list or str-keyed
  /// dict that holds a tensor, a list or dict spec (dicts inside it dict specs too) whose other
  /// parts are constants; nullopt for anything else (a value holding no tensor, an undefined
  /// tensor, a dict key not a str, a symbolic number).
  [[nodiscard]] static std::optional<InputSpec> of(const Value& value);
};

/// The structure of a list or dict input, as its placeholder records it (`meta_keys::structure`).
[[nodiscard]] Argument input_structure(const InputSpec& spec);

/// "float32[1, 3, 224, 224]", "int" (symbolic_int), "[float32[3, 320, 320], float32[3, 320, 320]]",
/// "{'tensors': float32[1, 3, 320, 320], 'image_sizes': [[240, 320]]}".
[[nodiscard]] std::string to_string(const InputSpec& spec);

/// Inputs specialised to a value for a trace (fx's `concrete_args`): input name and value.
using ConcreteArgs = std::vector<std::pair<std::string, Value>>;

}  // namespace symtrace

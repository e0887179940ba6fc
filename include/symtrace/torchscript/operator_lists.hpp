#pragma once
/// \file
/// What a selective build of LibTorch needs to run a TorchScript file, as PyTorch's mobile model
/// tracer finds it: the operators the model's own code calls (root operators, the list
/// `torch.jit.export_opnames` gives), the operators LibTorch runs in turn while the forward
/// runs (`aten::conv2d` runs `aten::convolution`, `aten::_convolution`, ...), the operators run
/// while the file is loaded and the model set up (unpickling tensors, `__setstate__`), and the
/// classes registered with LibTorch (`torch::class_`) that the model holds or creates. Operators
/// are named as LibTorch names them, with their overload (`aten::add.Tensor`, `aten::conv2d`).
///
/// Part of the TorchScript front end: built only with LibTorch (see load.hpp).

#include "symtrace/core/value.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace symtrace::torchscript {

/// The operator lists of a file. Each list is sorted, and an operator is in one list only: a
/// root operator is not repeated among the traced ones, nor a traced one among those of loading.
struct OperatorLists {
  /// Called from the model's own methods (`forward`, methods exported with
  /// `@torch.jit.export`, and the `__getstate__`/`__setstate__` of the objects it holds), with
  /// the methods they call inlined, both branches of every `if` counted: the operators of the
  /// file's code, run or not, as `torch.jit.export_opnames` lists them.
  std::vector<std::string> root_operators;
  /// Run by LibTorch during a forward on the given inputs (and while making those inputs its
  /// tensors) and not root operators: those the root operators call in turn. LibTorch's RecordFunction observes them (operators it does not
  /// observe, such as `aten::size`, are not listed).
  std::vector<std::string> traced_operators;
  /// Run while LibTorch loads the file and sets the model up, and neither root nor traced.
  std::vector<std::string> load_operators;
  /// The registered classes the model holds (in its attributes, at any depth), creates (a value
  /// of the class in its code) or passes to operators (their schemas name it), as
  /// `torch.classes.NS.Name`.
  std::vector<std::string> custom_classes;
};

/// Loads the file with LibTorch, runs its forward on `inputs` (tensors, numbers, lists of
/// them; as `run_in_libtorch`) and lists what ran. Throws std::invalid_argument (`path: why`)
/// like `load`, naming a registered class the file uses that this process does not have, and
/// when LibTorch's forward fails.
[[nodiscard]] OperatorLists operator_lists(const std::filesystem::path& path, const ValueList& inputs);

/// The lists in the YAML layout PyTorch's selective build reads (torchgen's
/// `SelectiveBuilder.from_yaml_str`), as the mobile model tracer writes it: every operator under
/// `operators` with `is_root_operator` true for the root ones, and the custom classes by the
/// short name `TORCH_SELECTIVE_CLASS` uses (`LinearPackedParamsBase`).
[[nodiscard]] std::string selective_build_yaml(const OperatorLists& lists);

}  // namespace symtrace::torchscript

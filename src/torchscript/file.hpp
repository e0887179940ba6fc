#pragma once
// A TorchScript file as LibTorch reads it, and symtrace values as LibTorch's forward takes
// them: what load, run_in_libtorch and operator_lists share.
#include "symtrace/core/value.hpp"

#include <torch/csrc/jit/api/module.h>

#include <filesystem>
#include <vector>

namespace symtrace::torchscript::detail {

/// The file read by `torch::jit::load` (torchvision's ops library loaded first when the file
/// names its ops). Throws std::invalid_argument `path: why` for a missing file, a file that is
/// not TorchScript, and what LibTorch refuses in it (a class it does not know, by name).
torch::jit::Module read_file(const std::filesystem::path& path);

/// `inputs` as arguments of LibTorch's forward (tensors copied; lists of tensors or ints).
/// Throws std::invalid_argument for a value LibTorch cannot take.
std::vector<c10::IValue> libtorch_inputs(const ValueList& inputs);
/// A copy of the concrete tensor `t` (float32, int64 or bool) as a LibTorch tensor.
at::Tensor libtorch_tensor(const Tensor& t);

}  // namespace symtrace::torchscript::detail

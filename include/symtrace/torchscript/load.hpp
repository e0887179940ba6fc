#pragma once
/// \file
/// The TorchScript front end (the `torchscript` layer): a PyTorch model saved with
/// `torch.jit.script(model).save(path)` or `torch.jit.trace(model, x).save(path)` becomes a
/// symtrace module tree. torch.nn's layers become symtrace's own layers (leaves of a trace, as
/// in torch.fx); every other module becomes a module named by its class whose forward runs
/// its TorchScript code on symtrace values, calling its children through the module-call
/// seam, so tracing, robust tracing, analysis and export treat it as any C++ model. Nodes
/// made while running that code, and errors there, name the model's Python file:line.
///
/// Built only with LibTorch (Debian's libtorch-dev); without it `available()` is false and
/// the functions throw std::runtime_error saying so.
///
/// A TorchScript file holds code, and LibTorch's loader is not hardened against hostile
/// archives: load only files you trust. symtrace's executor runs a model's code only through
/// the op registry (no Python, no process or file access from the model).

#include "symtrace/core/value.hpp"

#include <filesystem>
#include <memory>

namespace symtrace {
class Module;
}

namespace symtrace::torchscript {

/// True when this build of symtrace has the TorchScript front end (it was built with LibTorch).
[[nodiscard]] bool available() noexcept;

/// Loads the TorchScript file at `path` as a module tree: every submodule at its PyTorch path,
/// its parameters and buffers under PyTorch's state-dict names (float16, bfloat16 and float64
/// converted to float32), in the training mode it was saved in. An op symtrace lacks does not
/// stop loading: running the module that uses it throws OpError naming the op and the Python
/// line. Throws std::invalid_argument (`path: why`) for a missing or unreadable file, a file
/// that is not TorchScript, and a tensor of a dtype symtrace cannot hold (naming it).
[[nodiscard]] std::shared_ptr<Module> load(const std::filesystem::path& path);

/// Runs the file's forward in LibTorch itself on `inputs` (concrete tensors, numbers) and
/// returns its result as symtrace values (a tensor, or a list for a tuple or list): the
/// reference that `check --against-torch` compares with. Throws std::invalid_argument like
/// `load`, and for inputs LibTorch rejects.
[[nodiscard]] Value run_in_libtorch(const std::filesystem::path& path, const ValueList& inputs);

namespace detail {
/// Reads the file with LibTorch's `torch::jit::load` and nothing else: the part of `load` that
/// is LibTorch's, which the benchmarks compare `load` with.
void read_with_libtorch(const std::filesystem::path& path);
}  // namespace detail

}  // namespace symtrace::torchscript

#pragma once
/// \file
/// Writing a changed model back as a TorchScript file: the file it was loaded from, with the
/// parameters and buffers the module tree now holds (pruned channels cut away, or any values
/// changed), for `torch::jit::load` and Python's `torch.jit.load` to run.

#include <filesystem>

namespace symtrace {
class Module;
}

namespace symtrace::torchscript {

/// Writes to `out` the TorchScript file `source` with every parameter and buffer of `model`
/// (the module tree `load(source)` made, changed since: by prune_channels, or in place) whose
/// sizes or values differ from the file's, in the file's dtype. TorchScript holds the sizes of
/// torch.nn's layers as constants of their classes; where the code computes with one that a
/// cut changes (a depthwise convolution's `groups`, a LayerNorm's `normalized_shape`), the
/// written code computes it from the layer's weight instead. Constants the code does not read
/// (`out_channels`, `num_features`, `in_features`) keep the file's values, and sizes a traced
/// file baked into its code (a reshape's) are not changed: run the result to know it works.
/// The file is written whole or not at all. Throws std::invalid_argument naming the path for a
/// tensor of `model` the file does not hold (a model not loaded from `source`) and for a file
/// that cannot be read or written; std::runtime_error when symtrace was built without LibTorch.
void save_with_tensors(const std::filesystem::path& source, const Module& model, const std::filesystem::path& out);

}  // namespace symtrace::torchscript

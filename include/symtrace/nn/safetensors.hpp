#pragma once
/// \file
/// Reading and writing state dicts in the safetensors format, the format PyTorch users
/// exchange weights in (https://github.com/huggingface/safetensors): an 8-byte little-endian
/// header length N, N bytes of JSON header (`{"name": {"dtype": "F32", "shape": [2, 3],
/// "data_offsets": [begin, end]}, ..., "__metadata__": {"key": "value"}}`), then the raw
/// little-endian tensor data, offsets relative to the start of the data.
///
/// Writing stores float32 as "F32", int64 as "I64" and bool as "BOOL". Reading also accepts
/// "F64", "F16" and "BF16" (converted to float32) and "I32", "I16", "I8", "U8" (converted to
/// int64). Files are treated as hostile: a truncated file, a header that is not JSON or lies
/// (offsets out of range, overlapping or leaving holes, sizes that disagree with the shape,
/// unknown dtypes) fails with std::invalid_argument naming the file and the problem; nothing is
/// read past the buffer. Failing to open, read or write a file throws symtrace::Error.

#include "symtrace/nn/module.hpp"
#include "symtrace/nn/state_dict.hpp"

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// Free-form string metadata stored under "__metadata__".
using SafetensorsMetadata = std::map<std::string, std::string>;

/// The bytes of a safetensors file holding `state` (tensors in the state's order).
[[nodiscard]] std::vector<std::byte> serialize_safetensors(const StateDict& state,
                                                           const SafetensorsMetadata& metadata = {});
/// Parses safetensors bytes; `source` names them in error messages (a file name).
/// When `metadata` is given, it receives the "__metadata__" entries.
[[nodiscard]] StateDict deserialize_safetensors(std::span<const std::byte> bytes,
                                                std::string_view source = "<memory>",
                                                SafetensorsMetadata* metadata = nullptr);

/// Writes `state` to `path` (replacing the file).
void save_safetensors(const StateDict& state, const std::filesystem::path& path,
                      const SafetensorsMetadata& metadata = {});
/// Reads the state dict stored in `path`.
[[nodiscard]] StateDict load_safetensors(const std::filesystem::path& path,
                                         SafetensorsMetadata* metadata = nullptr);

/// Writes `module.state_dict()` to `path`.
void save_safetensors(const Module& module, const std::filesystem::path& path,
                      const SafetensorsMetadata& metadata = {});
/// Loads `path` into `module` with `load_state_dict(state, strict)`.
LoadStateDictResult load_safetensors(Module& module, const std::filesystem::path& path,
                                     bool strict = true);

}  // namespace symtrace

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
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

/// Free-form string metadata stored under "__metadata__".
using SafetensorsMetadata = std::map<std::string, std::string>;

/// The bytes of a safetensors file holding `state`: tensors in the state's order in the header
/// and in the data (views are written in row-major element order), "__metadata__" first when
/// `metadata` is not empty, the header padded with spaces so the data starts 8-byte aligned.
/// Throws std::invalid_argument (message starting "<memory>: ") for a symbolic or undefined
/// tensor, an empty name, the reserved name "__metadata__", or a string that is not UTF-8.
[[nodiscard]] std::vector<std::byte> serialize_safetensors(const StateDict& state,
                                                           const SafetensorsMetadata& metadata = {});
/// Parses safetensors bytes; `source` names them in error messages (a file name). Tensors come
/// back in the header's order, contiguous, with the dtypes listed in the file comment. When
/// `metadata` is given, it is replaced by the "__metadata__" entries (left alone on failure).
/// Throws std::invalid_argument whose message starts with `source` and names the problem and
/// the tensor: truncation, a header longer than 100 MB or not a JSON object, a missing or
/// mistyped field, an unsupported dtype, a bad shape, offsets that disagree with the shape or
/// do not tile the data exactly, duplicate JSON keys, bool bytes other than 0 and 1.
[[nodiscard]] StateDict deserialize_safetensors(std::span<const std::byte> bytes,
                                                std::string_view source = "<memory>",
                                                SafetensorsMetadata* metadata = nullptr);

/// Writes `state` to `path` (replacing the file). Refuses a state as serialize_safetensors does,
/// with the path as the message prefix; throws symtrace::Error "cannot write 'path': reason"
/// when the file cannot be written.
void save_safetensors(const StateDict& state, const std::filesystem::path& path,
                      const SafetensorsMetadata& metadata = {});
/// Reads the state dict stored in `path`; errors in the data are reported as by
/// deserialize_safetensors with the path as `source`. Throws symtrace::Error
/// "cannot read 'path': reason" when the file cannot be opened or read.
[[nodiscard]] StateDict load_safetensors(const std::filesystem::path& path,
                                         SafetensorsMetadata* metadata = nullptr);

/// Writes `module.state_dict()` to `path`.
void save_safetensors(const Module& module, const std::filesystem::path& path,
                      const SafetensorsMetadata& metadata = {});
/// Loads `path` into `module` with `load_state_dict(state, strict)` and returns its result; the
/// model is unchanged when that throws.
LoadStateDictResult load_safetensors(Module& module, const std::filesystem::path& path,
                                     bool strict = true,
                                     std::source_location where = std::source_location::current());

}  // namespace symtrace

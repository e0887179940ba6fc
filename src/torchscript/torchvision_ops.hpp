#pragma once
// torchvision's compiled ops (`torchvision::nms`, `torchvision::roi_align`, ...). LibTorch
// refuses a file that names an op it has no schema for, and torchvision's detection models
// name these; Debian's python3-torchvision ships them as torchvision/_C*.so, a library that
// registers them with LibTorch when loaded. symtrace runs its own kernels of these ops: the
// library only lets LibTorch read the file (and run it, for comparisons).

#include <optional>
#include <string>

namespace symtrace::torchscript::detail {

/// Loads torchvision's ops library once per process (thread-safe): the file named by the
/// environment variable SYMTRACE_TORCHVISION_OPS, else the first torchvision/_C*.so in
/// Python's package directories. Returns the library loaded, or nullopt when there is none
/// or it did not load; `why_not()` then says what was tried.
std::optional<std::string> load_torchvision_ops();

/// One line: where torchvision's ops library was looked for and how to get it.
std::string torchvision_ops_why_not();

}  // namespace symtrace::torchscript::detail

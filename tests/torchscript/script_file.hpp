#pragma once
// TorchScript files made by LibTorch in the test itself, from source code (without Python).

#include <filesystem>
#include <string>

namespace symtrace::testing {

/// A TorchScript file NAME.pt, in a folder of this process's own removed at exit, whose module
/// has the methods in `source` (`def forward(self, x): ...`), compiled by LibTorch.
std::filesystem::path script_file(const std::string& name, const std::string& source);

}  // namespace symtrace::testing

#pragma once
// Helpers for the layers' extra_repr(), in PyTorch's spelling.

#include "symtrace/nn/size2.hpp"

#include <string>

namespace symtrace::nn::detail {

/// "True" / "False".
inline const char* py_bool(bool b) { return b ? "True" : "False"; }
/// "(7, 7)", as PyTorch prints a pair.
std::string pair_repr(const Size2& s);
/// "3" for a size written as one number, "(3, 3)" for one written as a pair: PyTorch's pooling
/// layers print their options as given (Conv2d normalises them to pairs and uses pair_repr).
std::string int_or_pair_repr(const Size2& s);

}  // namespace symtrace::nn::detail

#pragma once
/// \file
/// `nn::Size2`: a pair of sizes (height, width) that a single number also converts to, for
/// the kernel size, stride, padding and dilation options of 2-D layers (PyTorch's `_pair`).
/// `Conv2d(3, 64, 7, {.stride = 2})` and `Conv2d(3, 64, {3, 5})` both read naturally.

#include "symtrace/core/tensor.hpp"

#include <cstdint>

namespace symtrace::nn {

/// (height, width); see the file comment.
struct Size2 {
  Size2(std::int64_t both) : h(both), w(both) {}  // NOLINT: implicit, as PyTorch's int-or-pair
  Size2(std::int64_t height, std::int64_t width) : h(height), w(width) {}
  std::int64_t h;
  std::int64_t w;
  /// {h, w}, as the functional ops take it.
  [[nodiscard]] IntList list() const { return {h, w}; }
  friend bool operator==(const Size2&, const Size2&) = default;
};

}  // namespace symtrace::nn

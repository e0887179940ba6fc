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
  Size2(std::int64_t height, std::int64_t width) : h(height), w(width), written_as_pair(true) {}
  std::int64_t h;
  std::int64_t w;
  /// True when given as (height, width) rather than as one number. Pooling layers print their
  /// options the way they were written, as PyTorch keeps the user's int or tuple:
  /// `AdaptiveAvgPool2d(1)` prints `output_size=1`, `AdaptiveAvgPool2d({1, 1})` `output_size=(1, 1)`.
  bool written_as_pair = false;
  /// {h, w}, as the functional ops take it.
  [[nodiscard]] IntList list() const { return {h, w}; }
  /// Compares the sizes only (`Size2(1) == Size2(1, 1)`), not how they were written.
  friend bool operator==(const Size2& a, const Size2& b) noexcept { return a.h == b.h && a.w == b.w; }
};

}  // namespace symtrace::nn

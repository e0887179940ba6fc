#pragma once
// Internal (symtrace::detail, not part of the API): iteration over strided, possibly broadcast,
// tensors. Used by every kernel that touches elements. Note [Strided runs]: the loop visits the
// index space of `sizes` in row-major order as runs along the innermost dim; adjacent dims whose
// strides compose are merged first, so a contiguous tensor is one run and the inner loop
// vectorises.

#include "symtrace/core/error.hpp"
#include "symtrace/core/tensor.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace symtrace::detail {

/// Calls `body(offsets, count, inner_strides)` for each innermost run of the index space of
/// `sizes`; `offsets[k]` is operand k's element offset at the run's start and `inner_strides[k]`
/// its step along the run. `strides[k]` has one stride per dim of `sizes` (0 for broadcast).
template <std::size_t N, class Body>
void for_each_run(std::span<const std::int64_t> sizes,
                  const std::array<std::span<const std::int64_t>, N>& strides,
                  const std::array<std::int64_t, N>& base, Body&& body) {
  constexpr int kMaxRank = 16;
  std::int64_t sz[kMaxRank];
  std::int64_t st[N][kMaxRank];
  int rank = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return;
    if (sizes[d] == 1) continue;  // size-1 dims contribute nothing
    if (rank > 0) {
      bool merge = true;
      for (std::size_t k = 0; k < N; ++k)
        merge = merge && st[k][rank - 1] == strides[k][d] * sizes[d];
      if (merge) {
        sz[rank - 1] *= sizes[d];
        for (std::size_t k = 0; k < N; ++k) st[k][rank - 1] = strides[k][d];
        continue;
      }
    }
    SYMTRACE_ASSERT(rank < kMaxRank, "tensor rank above 16 is not supported by the CPU kernels");
    sz[rank] = sizes[d];
    for (std::size_t k = 0; k < N; ++k) st[k][rank] = strides[k][d];
    ++rank;
  }
  std::array<std::int64_t, N> off = base;
  std::array<std::int64_t, N> inner{};
  if (rank == 0) {
    body(off, std::int64_t{1}, inner);
    return;
  }
  for (std::size_t k = 0; k < N; ++k) inner[k] = st[k][rank - 1];
  const std::int64_t count = sz[rank - 1];
  std::int64_t idx[kMaxRank] = {};
  for (;;) {
    body(off, count, inner);
    int d = rank - 2;
    for (; d >= 0; --d) {
      for (std::size_t k = 0; k < N; ++k) off[k] += st[k][d];
      if (++idx[d] < sz[d]) break;
      for (std::size_t k = 0; k < N; ++k) off[k] -= st[k][d] * sz[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/// The strides of `t` viewed as having `out_rank` dims broadcast to `out_sizes`: leading
/// dims added and size-1 dims stretched get stride 0. `t`'s shape must broadcast to it.
Strides broadcast_strides(const Tensor& t, std::span<const std::int64_t> out_sizes);

/// The strides as a span (Boost's small_vector is not a C++20 contiguous range).
inline std::span<const std::int64_t> as_span(const Strides& s) noexcept { return {s.data(), s.size()}; }

/// Element type pointer at storage offset 0 of `t` (offsets from `for_each_run` add to it).
template <class T>
T* base_ptr(const Tensor& t) {
  return reinterpret_cast<T*>(t.impl().storage->data);
}

}  // namespace symtrace::detail

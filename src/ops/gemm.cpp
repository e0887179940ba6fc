// A cache-blocked i-k-j matrix multiply: the innermost loop runs along contiguous rows of B
// and C, so the compiler vectorises it without reassociating sums (results do not depend on
// -ffast-math). Blocking over k and n keeps a panel of B in cache across rows of A.

#include "ops/gemm.hpp"

#include <algorithm>

namespace symtrace::detail {

namespace {

template <class T>
void gemm_impl(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b,
               std::int64_t ldb, T* c, std::int64_t ldc, bool accumulate) {
  if (!accumulate)
    for (std::int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, T(0));
  constexpr std::int64_t kBlockK = 256;
  constexpr std::int64_t kBlockN = 512;
  for (std::int64_t j0 = 0; j0 < n; j0 += kBlockN) {
    const std::int64_t j1 = std::min(n, j0 + kBlockN);
    for (std::int64_t p0 = 0; p0 < k; p0 += kBlockK) {
      const std::int64_t p1 = std::min(k, p0 + kBlockK);
      for (std::int64_t i = 0; i < m; ++i) {
        T* __restrict crow = c + i * ldc;
        const T* arow = a + i * lda;
        for (std::int64_t p = p0; p < p1; ++p) {
          const T av = arow[p];  // no shortcut for av == 0: 0 * NaN must stay NaN
          const T* __restrict brow = b + p * ldb;
          for (std::int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
        }
      }
    }
  }
}

}  // namespace

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
          std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate) {
  gemm_impl(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::int64_t* a, std::int64_t lda,
          const std::int64_t* b, std::int64_t ldb, std::int64_t* c, std::int64_t ldc, bool accumulate) {
  gemm_impl(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

}  // namespace symtrace::detail

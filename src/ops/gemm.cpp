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
        std::int64_t p = p0;
        // Four rows of B per pass over the row of C: C is loaded and stored once per four
        // products instead of once per product (the loop was bound by those loads and stores).
        // The sums are added in the same order as one row at a time: the same result, bit for bit.
        for (; p + 4 <= p1; p += 4) {
          const T a0 = arow[p], a1 = arow[p + 1], a2 = arow[p + 2], a3 = arow[p + 3];  // no shortcut for 0: 0 * NaN is NaN
          const T* __restrict b0 = b + p * ldb;
          const T* __restrict b1 = b0 + ldb;
          const T* __restrict b2 = b1 + ldb;
          const T* __restrict b3 = b2 + ldb;
          for (std::int64_t j = j0; j < j1; ++j) {
            T sum = crow[j];
            sum += a0 * b0[j];
            sum += a1 * b1[j];
            sum += a2 * b2[j];
            sum += a3 * b3[j];
            crow[j] = sum;
          }
        }
        for (; p < p1; ++p) {
          const T av = arow[p];
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

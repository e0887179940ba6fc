#pragma once
// Private: single-precision matrix multiply for matmul, linear and conv2d (im2col).

#include <cstdint>

namespace symtrace::detail {

/// C[m, n] (+)= A[m, k] * B[k, n], all row-major with leading dimensions lda, ldb, ldc.
/// With `accumulate` false, C is overwritten. Integer variant for int64 matmul.
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
          std::int64_t ldb, float* c, std::int64_t ldc, bool accumulate = false);
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::int64_t* a, std::int64_t lda,
          const std::int64_t* b, std::int64_t ldb, std::int64_t* c, std::int64_t ldc, bool accumulate = false);

}  // namespace symtrace::detail

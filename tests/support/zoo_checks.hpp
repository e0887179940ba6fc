#pragma once
// Test support for whole models: finiteness, bit-identical state, a boxed call.

#include <symtrace/symtrace.hpp>

#include <algorithm>
#include <cmath>

namespace symtrace::testing {

/// True when every element is finite.
inline bool all_finite(const Tensor& t) {
  for (float v : t.to_vector<float>())
    if (!std::isfinite(v)) return false;
  return true;
}

/// Same keys in the same order, and bit-identical values.
inline bool same_state(const Module& a, const Module& b) {
  const StateDict sa = a.state_dict(), sb = b.state_dict();
  if (sa.keys() != sb.keys()) return false;
  for (std::size_t i = 0; i < sa.size(); ++i) {
    const Tensor& x = sa.entries()[i].second;
    const Tensor& y = sb.entries()[i].second;
    if (x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
    if (x.dtype() != DType::float32 || !x.is_contiguous() || !y.is_contiguous()) {
      if (x.to_vector<double>() != y.to_vector<double>()) return false;
    } else if (!std::equal(x.data_ptr<float>(), x.data_ptr<float>() + *x.shape().numel(), y.data_ptr<float>())) {
      return false;
    }
  }
  return true;
}

/// The model called through its type-erased entry point on one tensor.
inline Tensor run(Module& model, const Tensor& x) { return model.call({x}).to_tensor(); }

}  // namespace symtrace::testing

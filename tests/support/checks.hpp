#pragma once
// Test support: comparing tensors with hand-computed values, random shapes, and the check
// that an op's meta function agrees with its kernel (on concrete arguments, and on symbolic
// arguments whose dims are partly unknown).

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <symtrace/symtrace.hpp>

#include <cmath>
#include <source_location>
#include <string>
#include <vector>

namespace doctest {
template <> struct StringMaker<symtrace::Shape> {
  static String convert(const symtrace::Shape& s) { return symtrace::to_string(s).c_str(); }
};
template <> struct StringMaker<symtrace::DType> {
  static String convert(symtrace::DType d) { return symtrace::to_string(d).c_str(); }
};
template <> struct StringMaker<symtrace::SymExpr> {
  static String convert(symtrace::SymExpr e) { return symtrace::to_string(e).c_str(); }
};
template <> struct StringMaker<symtrace::TensorMeta> {
  static String convert(const symtrace::TensorMeta& m) { return fmt::format("{}", m).c_str(); }
};
}  // namespace doctest

namespace symtrace::testing {

/// Checks dtype, shape and every value (|a - e| <= tol * max(1, |e|); NaN matches NaN).
inline void check_tensor(const Tensor& t, DType dtype, const IntList& shape, const std::vector<double>& expected,
                         double tol = 1e-5) {
  REQUIRE(t.defined());
  CHECK(t.dtype() == dtype);
  REQUIRE(t.shape() == Shape(shape));
  const auto actual = t.to_vector<double>();
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    const bool ok = (std::isnan(a) && std::isnan(e)) || (a == e) || std::abs(a - e) <= tol * std::max(1.0, std::abs(e));
    if (!ok) FAIL_CHECK(fmt::format("element {}: got {}, expected {} (all: {})", i, a, e, fmt::join(actual, ", ")));
  }
}

/// 0, 1, 2, ... in row-major order, as a float32 tensor of `shape` (0-dim for an empty shape).
inline Tensor iota(const IntList& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return shape.empty() ? scalar_tensor(0.0f) : tensor(values, shape);
}

/// first, first + 1, ..., last - 1, for expected values.
inline std::vector<double> range(int first, int last) {
  std::vector<double> out;
  for (int i = first; i < last; ++i) out.push_back(i);
  return out;
}

/// A view of 2-D `t` with its dims swapped (no copy, no view op), so kernels see strides.
inline Tensor transposed(const Tensor& t) {
  const auto& s = t.strides();
  return Tensor::view_of(t, Shape{t.shape()[1], t.shape()[0]}, symtrace::detail::Strides{s[1], s[0]},
                         t.storage_offset());
}

/// Largest |a - b| over two tensors of the same shape.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const auto x = a.to_vector<double>();
  const auto y = b.to_vector<double>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

/// Largest |traced - eager| relative to the largest |eager| (docs/design.md's traced == eager check).
inline double max_rel_error(const Tensor& traced, const Tensor& eager) {
  double scale = 1e-12;
  for (double v : eager.to_vector<double>()) scale = std::max(scale, std::abs(v));
  return max_abs_diff(traced, eager) / scale;
}

/// An integer in [lo, hi].
inline std::int64_t uniform_int(Generator& gen, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(hi - lo + 1));
}

/// The start of an OpError message raised by a call of `op` on `line` of the calling test file:
/// "views_test.cpp:42: view(): ".
inline std::string error_at(int line, std::string_view op,
                            std::source_location here = std::source_location::current()) {
  std::string_view file = here.file_name();
  file = file.substr(file.find_last_of('/') + 1);
  return fmt::format("{}:{}: {}(): ", file, line, op);
}

/// A random shape with rank in [min_rank, max_rank] and sizes in [min_size, max_size].
inline IntList random_shape(Generator& gen, int min_rank, int max_rank, int min_size = 0, int max_size = 4) {
  const std::int64_t rank = uniform_int(gen, min_rank, max_rank);
  IntList shape;
  for (std::int64_t i = 0; i < rank; ++i) shape.push_back(uniform_int(gen, min_size, max_size));
  return shape;
}

/// `t`'s metadata as a symbolic tensor whose dims are each unknown with probability 1/2.
inline Tensor symbolic_like(const Tensor& t, Generator& gen, std::uint32_t node) {
  Shape shape = t.shape();
  for (std::size_t i = 0; i < shape.rank(); ++i)
    if (gen.bits() & 1) shape[i] = Dim::unknown();
  return Tensor::symbolic(TensorMeta{t.dtype(), shape}, SymbolicRef{1, node});
}

namespace detail {
inline Value symbolise(const Value& v, Generator& gen, std::uint32_t& node) {
  if (v.is_tensor()) return symbolic_like(v.to_tensor(), gen, ++node);
  if (v.is_list()) {
    ValueList out;
    for (const Value& e : v.to_list()) out.push_back(symbolise(e, gen, node));
    return out;
  }
  return v;
}
inline std::vector<Tensor> result_tensors(const Value& v) {
  if (v.is_tensor()) return {v.to_tensor()};
  return v.to_tensor_list();
}
}  // namespace detail

/// Runs `op` eagerly and checks that its meta function predicts the outputs' dtype and shape:
/// (1) on the concrete arguments exactly; (2) on symbolic copies with random unknown dims, where
/// every dim the meta function claims to know must equal the real one (it may also refuse with
/// OpError or TraceError, e.g. when an output count depends on an unknown dim).
/// Returns the eager result.
inline Value check_meta_agrees(std::string_view op_name, ValueList args, KeywordValues kwargs, Generator& gen) {
  const OpDef& op = OpRegistry::instance().get(op_name);
  const ValueList bound = bind_arguments(op, std::move(args), std::move(kwargs), std::source_location::current());
  const OutputMeta meta = infer_meta(op, bound);
  const Value result = dispatch(op, bound, std::source_location::current());
  const auto outs = detail::result_tensors(result);
  REQUIRE(outs.size() == meta.outputs.size());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    CHECK(outs[i].dtype() == meta.outputs[i].dtype);
    CHECK(outs[i].shape() == meta.outputs[i].shape);
  }
  for (int trial = 0; trial < 4; ++trial) {
    std::uint32_t node = 0;
    ValueList symbolic;
    for (const Value& v : bound) symbolic.push_back(detail::symbolise(v, gen, node));
    OutputMeta sm;
    try {
      sm = infer_meta(op, symbolic);
    } catch (const OpError&) {
      continue;
    } catch (const TraceError&) {
      continue;
    }
    REQUIRE(sm.outputs.size() == outs.size());
    for (std::size_t i = 0; i < outs.size(); ++i) {
      CHECK(sm.outputs[i].dtype == outs[i].dtype());
      REQUIRE(sm.outputs[i].shape.rank() == outs[i].shape().rank());
      for (std::size_t d = 0; d < outs[i].shape().rank(); ++d)
        if (sm.outputs[i].shape[d].is_known())
          CHECK_MESSAGE(sm.outputs[i].shape[d] == outs[i].shape()[d],
                        fmt::format("{}: symbolic meta {} vs actual {}", op_name, sm.outputs[i].shape, outs[i].shape()));
    }
  }
  return result;
}

}  // namespace symtrace::testing

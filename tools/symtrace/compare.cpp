// compare_outputs: the graph's result against the eager forward's.
#include "compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace symtrace::cli {
namespace {

/// The tensors of a forward's result, in order (a tensor, or lists and dicts of them).
void collect_tensors(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    out.push_back(v.to_tensor());
  } else if (v.is_list()) {
    for (const Value& item : v.to_list()) collect_tensors(item, out);
  } else if (v.is_dict()) {
    for (const Value& item : v.to_dict().values) collect_tensors(item, out);
  }
}

}  // namespace

OutputComparison compare_outputs(const Value& traced, const Value& eager) {
  std::vector<Tensor> a;
  std::vector<Tensor> b;
  collect_tensors(traced, a);
  collect_tensors(eager, b);
  OutputComparison c;
  if (a.size() != b.size()) {
    c.mismatch = fmt::format("the graph returns {} tensors, the eager forward {}", a.size(), b.size());
    return c;
  }
  double scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) {
      c.mismatch = fmt::format("output {} is {}{} from the graph but {}{} from the eager forward", i, a[i].dtype(),
                               a[i].shape(), b[i].dtype(), b[i].shape());
      return c;
    }
    const std::vector<double> x = a[i].to_vector<double>();
    const std::vector<double> y = b[i].to_vector<double>();
    for (std::size_t j = 0; j < x.size(); ++j) {
      // Equal values (infinities included) and NaN against NaN agree; NaN against a number does not.
      double d = x[j] == y[j] || (std::isnan(x[j]) && std::isnan(y[j])) ? 0.0 : std::abs(x[j] - y[j]);
      if (std::isnan(d)) d = INFINITY;
      c.max_abs_error = std::max(c.max_abs_error, d);
      if (std::isfinite(y[j])) scale = std::max(scale, std::abs(y[j]));
    }
  }
  c.max_rel_error = c.max_abs_error == 0 ? 0.0 : c.max_abs_error / std::max(scale, 1e-30);
  return c;
}

}  // namespace symtrace::cli

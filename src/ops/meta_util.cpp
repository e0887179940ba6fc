#include "ops/meta_util.hpp"

#include "symtrace/core/thread_context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace symtrace::detail {

std::optional<std::pair<std::int64_t, std::int64_t>> dyadic_fraction(double value) noexcept {
  if (!std::isfinite(value)) return std::nullopt;
  std::int64_t denominator = 1;
  for (int k = 0; k <= 20; ++k, denominator *= 2) {
    const double numerator = value * static_cast<double>(denominator);  // exact: a power of 2
    if (numerator == std::floor(numerator) && std::fabs(numerator) < 0x1p31)
      return std::pair{static_cast<std::int64_t>(numerator), denominator};
  }
  return std::nullopt;
}

Pair pair_arg(const OpCall& call, std::size_t index) {
  const IntList v = call.int_list(index);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  call.fail("argument '{}' must hold one value (for both spatial dims) or two (height, width), got [{}]",
            call.op.schema.args[index].name, fmt::join(v, ", "));
}

std::int64_t wrap_dim(const OpCall& call, std::int64_t dim, std::int64_t rank, const Shape& shape) {
  const std::int64_t lo = rank == 0 ? -1 : -rank;
  const std::int64_t hi = rank == 0 ? 0 : rank - 1;
  if (dim < lo || dim > hi)
    call.fail("dimension {} is out of range for a tensor of shape {} (expected {} to {})", dim, shape, lo, hi);
  return dim < 0 ? dim + std::max<std::int64_t>(rank, 1) : dim;
}

std::int64_t wrap_insert_dim(const OpCall& call, std::int64_t dim, std::int64_t rank, const Shape& shape) {
  if (dim < -rank - 1 || dim > rank)
    call.fail("dimension {} is out of range for inserting into a tensor of shape {} (expected {} to {})", dim,
              shape, -rank - 1, rank);
  return dim < 0 ? dim + rank + 1 : dim;
}

void require(const OpCall& call, const SymFact& fact, std::string_view what) {
  const std::optional<bool> decided = fact.decide();
  if (decided == true) return;
  if (decided == false) {
    std::string ranges;
    for (const auto& [name, range] : (fact.lhs - fact.rhs).symbol_ranges())
      ranges += fmt::format("{}{} in {}", ranges.empty() ? "" : ", ", name, to_string(range));
    call.fail("{}: {} holds for no size the dims' ranges allow ({}); give the dims other ranges", what, fact, ranges);
  }
  Interposer* interposer = current_interposer();
  if (interposer == nullptr) call.fail("{}: {} cannot be proved and no trace is active to assume it", what, fact);
  interposer->assume(fact, call.where);
}

std::optional<Dim> same_size(const OpCall& call, Dim a, Dim b, std::string_view what) {
  if (a == b || b.is_anonymous()) return a;
  if (a.is_anonymous()) return b;
  if (a.is_known() && b.is_known()) return std::nullopt;
  require(call, SymFact{*a.expr(), SymRel::eq, *b.expr()}, what);
  return b.is_known() ? b : a;
}

// Note [Broadcasting named dims]: a named dim broadcast against a known size n > 1 must be n,
// and two different named dims must be equal: each is a guard, as torch.export assumes. A
// named dim may be 1 at run time, which broadcasting would also allow; the guard refuses that
// input rather than let the graph's shapes be wrong.
Shape broadcast_shapes(const OpCall& call, const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.rank(), b.rank());
  Shape out = Shape::unknown(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const Dim da = i < rank - a.rank() ? Dim(1) : a[i - (rank - a.rank())];
    const Dim db = i < rank - b.rank() ? Dim(1) : b[i - (rank - b.rank())];
    if (da == db) {
      out[i] = da;
    } else if (da.is_known() && db.is_known()) {
      if (da.raw() != 1 && db.raw() != 1)
        call.fail("shapes {} and {} cannot be broadcast: dimension {} is {} in one and {} in the other; "
                  "make them equal or 1",
                  a, b, i, da.raw(), db.raw());
      out[i] = da.raw() == 1 ? db : da;
    } else if (da.is_known() && da.raw() == 1) {
      out[i] = db;
    } else if (db.is_known() && db.raw() == 1) {
      out[i] = da;
    } else if (da.is_anonymous() || db.is_anonymous()) {
      // An unknown dim broadcast against n > 1 must be n (or 1); against a named one, either.
      if (da.is_known()) out[i] = da;
      else if (db.is_known()) out[i] = db;
    } else {
      require(call, SymFact{*da.expr(), SymRel::eq, *db.expr()},
              fmt::format("broadcasting shapes {} and {} at dimension {}", a, b, i));
      out[i] = da.is_known() ? da : db.is_known() ? db
                                                  : da;
    }
  }
  return out;
}

bool fits(const Shape& result, const Shape& target) noexcept {
  if (result.rank() != target.rank()) return false;
  for (std::size_t i = 0; i < result.rank(); ++i)
    if (target[i].is_known() && result[i] != target[i]) return false;
  return true;
}

TensorMeta operand_meta(const Value& v) {
  if (v.is_tensor()) return v.to_tensor().meta();
  if (v.is_symint()) return TensorMeta{DType::int64, Shape{}};  // a size unknown at trace time
  if (v.is_symfloat()) return TensorMeta{DType::float32, Shape{}};
  return TensorMeta{v.to_scalar().dtype(), Shape{}};
}

DType result_type(const Value& a, const Value& b) {
  const auto category = [](DType d) { return d == DType::bool_ ? 0 : d == DType::int64 ? 1
                                                                                       : 2; };
  const DType da = operand_meta(a).dtype;
  const DType db = operand_meta(b).dtype;
  if (a.is_tensor() && b.is_tensor()) return promote_types(da, db);
  // A Scalar only matters if it is of a higher category than the tensor.
  const DType tensor_dtype = a.is_tensor() ? da : db;
  const DType scalar_dtype = a.is_tensor() ? db : da;
  return category(scalar_dtype) > category(tensor_dtype) ? scalar_dtype : tensor_dtype;
}

void require_floating(const OpCall& call, const Tensor& t, std::string_view arg) {
  if (!is_floating(t.dtype()))
    call.fail("argument '{}' must be a floating-point tensor, got {} of shape {}; convert it with .to(float32)",
              arg, t.dtype(), t.shape());
}

void require_rank(const OpCall& call, const Tensor& t, std::string_view arg, std::int64_t rank, std::int64_t rank2) {
  if (t.dim() == rank || (rank2 >= 0 && t.dim() == rank2)) return;
  if (rank2 >= 0)
    call.fail("argument '{}' must have {} or {} dims, got shape {}", arg, rank, rank2, t.shape());
  call.fail("argument '{}' must have {} dims, got shape {}", arg, rank, t.shape());
}

std::vector<std::int64_t> reduction_dims(const OpCall& call, const IntList& dims, const Shape& shape) {
  std::vector<std::int64_t> out;
  if (dims.empty()) {
    for (std::int64_t d = 0; d < shape.ndim(); ++d) out.push_back(d);
    return out;
  }
  for (std::int64_t d : dims) out.push_back(wrap_dim(call, d, shape.ndim(), shape));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    call.fail("dimension list [{}] repeats a dimension (shape {})", fmt::join(dims, ", "), shape);
  if (shape.ndim() == 0) out.clear();  // dim 0 / -1 of a 0-dim tensor is the tensor itself
  return out;
}

}  // namespace symtrace::detail

namespace symtrace::detail {

std::string size_list_text(const IntList& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    out += sizes[i] == OpCall::unknown_size ? std::string("?") : std::to_string(sizes[i]);
  }
  return out + "]";
}

}  // namespace symtrace::detail

#pragma once
// Private: checks and shape arithmetic shared by meta functions. Every failure goes through
// OpCall::fail, so messages name the op, the shapes and the caller's file:line.

#include "symtrace/ops/op.hpp"

#include <array>
#include <optional>
#include <utility>

namespace symtrace::detail {

/// A (height, width) pair of a 2-D op.
using Pair = std::array<std::int64_t, 2>;
/// Argument `index`, an int[] holding one value (for both spatial dims) or two (height, width).
Pair pair_arg(const OpCall& call, std::size_t index);

/// `value` as p/2^k with 2^k <= 2^20 and |p| < 2^31 (2.0 is 2/1, 0.75 is 3/4), or nullopt when
/// it is not such a fraction (0.1, 1/3 are not exact in binary). H*value is then exact in a
/// double for any size H, so floor(H*value) is (p*H)//2^k.
std::optional<std::pair<std::int64_t, std::int64_t>> dyadic_fraction(double value) noexcept;

/// `dim` wrapped into [0, rank) (negative counts from the end); fails naming `shape`.
std::int64_t wrap_dim(const OpCall& call, std::int64_t dim, std::int64_t rank, const Shape& shape);
/// Same, for inserting a new dim (range [-rank-1, rank]).
std::int64_t wrap_insert_dim(const OpCall& call, std::int64_t dim, std::int64_t rank, const Shape& shape);
/// Makes sure the size fact `fact` holds where the op needs it (`what` says why): nothing to do
/// when the dims' ranges prove it, a failure when they refute it, else the active trace records
/// it as a guard (Interposer::assume).
void require(const OpCall& call, const SymFact& fact, std::string_view what);
/// The size two dims must share (a matmul's inner dims, cat's other dims): either when they are
/// equal or one is anonymous; two different expressions are assumed equal (`require`), and the
/// known one or `a` is returned. nullopt when both are known and differ: the caller fails,
/// saying why they must agree.
std::optional<Dim> same_size(const OpCall& call, Dim a, Dim b, std::string_view what);
/// The broadcast of two shapes (unknown dims stay unknown unless the other side is > 1; named
/// dims that must be equal are guards: Note [Broadcasting named dims]).
Shape broadcast_shapes(const OpCall& call, const Shape& a, const Shape& b);
/// True when a result of shape `result` can be stored in a target of shape `target`: same rank,
/// and each dim equal or unknown in the target (an unknown target dim may be that size).
bool fits(const Shape& result, const Shape& target) noexcept;
/// The dtype of a binary op on a tensor and a tensor-or-scalar (PyTorch's result_type:
/// a Scalar only raises the category: bool < integral < floating).
DType result_type(const Value& a, const Value& b);
/// Metadata of a Tensor|Scalar argument (a Scalar is a 0-dim tensor of its dtype).
TensorMeta operand_meta(const Value& v);
/// Fails unless `t` has a floating dtype.
void require_floating(const OpCall& call, const Tensor& t, std::string_view arg);
/// Fails unless `t` has exactly `rank` dims (or one of `rank`, `rank2` when rank2 >= 0).
void require_rank(const OpCall& call, const Tensor& t, std::string_view arg, std::int64_t rank,
                  std::int64_t rank2 = -1);
/// "[2, ?, -1]": a size list as OpCall::size_list reads it (proxies print as `?`).
std::string size_list_text(const IntList& sizes);
/// Wrapped, sorted, duplicate-free reduction dims (all dims when `dims` is empty).
std::vector<std::int64_t> reduction_dims(const OpCall& call, const IntList& dims, const Shape& shape);

}  // namespace symtrace::detail

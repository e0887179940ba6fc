#pragma once
/// \file
/// Shape ops: views (share storage with their input, so in-place ops on them write through),
/// joins, splits and indexing.
///
/// Views: `reshape(Tensor self, int[] shape)` (a view when possible, else a copy; one -1
/// infers a size), `view(Tensor self, int[] size)` (fails when the strides do not allow it),
/// `flatten(Tensor self, int start_dim=0, int end_dim=-1)`, `permute(Tensor self, int[] dims)`,
/// `transpose(Tensor self, int dim0, int dim1)`, `unsqueeze(Tensor self, int dim)`,
/// `squeeze(Tensor self, int? dim=None)`, `expand(Tensor self, int[] size)` (-1 keeps a size),
/// `contiguous(Tensor self)`, `clone(Tensor self)` (a copy; aten's memory_format is dropped),
/// `slice(Tensor self, int dim=0, int? start=None, int? end=None,
/// int step=1)`, `narrow(Tensor self, int dim, int start, int length)`,
/// `select(Tensor self, int dim, int index)`.
/// Others: `index_select(Tensor self, int dim, Tensor index)`, `cat(Tensor[] tensors, int dim=0)`,
/// `stack(Tensor[] tensors, int dim=0)`, `chunk(Tensor self, int chunks, int dim=0) -> Tensor[]`,
/// `split(Tensor self, int split_size, int dim=0) -> Tensor[]`,
/// `split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]`,
/// `unbind(Tensor self, int dim=0) -> Tensor[]`,
/// `pad(Tensor self, int[] pad, str mode='constant', float? value=None)`,
/// `roll(Tensor self, int[] shifts, int[] dims=[])`, `repeat(Tensor self, int[] repeats)`, and the
/// functional form of slice assignment
/// `slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1)`.
/// Slice assignment in place is `x.slice(dim, a, b).copy_(src)`.
/// Advanced indexing (PyTorch's `x[i, :, mask]`): `index(Tensor self, Tensor?[] indices)`,
/// `index_put_(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False)` (in
/// place; `index_put`, with the same arguments, writes into a copy), and `nonzero(Tensor self)`.

#include "symtrace/core/tensor.hpp"

#include <optional>
#include <source_location>
#include <string_view>

namespace symtrace {

using Where = std::source_location;

Tensor reshape(const Tensor& x, const SymIntList& shape, Where where = Where::current());
Tensor view(const Tensor& x, const SymIntList& shape, Where where = Where::current());
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1, Where where = Where::current());
Tensor permute(const Tensor& x, const IntList& dims, Where where = Where::current());
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1, Where where = Where::current());
Tensor unsqueeze(const Tensor& x, std::int64_t dim, Where where = Where::current());
Tensor squeeze(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, Where where = Where::current());
Tensor expand(const Tensor& x, const SymIntList& sizes, Where where = Where::current());
Tensor contiguous(const Tensor& x, Where where = Where::current());
/// A contiguous copy of `x` that shares no memory with it, as `torch.clone`.
Tensor clone(const Tensor& x, Where where = Where::current());
Tensor slice(const Tensor& x, std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
             std::int64_t step = 1, Where where = Where::current());
Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length,
              Where where = Where::current());
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index, Where where = Where::current());
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index, Where where = Where::current());
Tensor cat(const TensorList& tensors, std::int64_t dim = 0, Where where = Where::current());
Tensor stack(const TensorList& tensors, std::int64_t dim = 0, Where where = Where::current());
/// `torch.nn.functional.pad(x, pad, value=value)`: pads with a constant, `pad` giving (before,
/// after) pairs from the last dim backwards (`{1, 1}` pads the last dim by one on each side);
/// negative amounts crop.
Tensor pad(const Tensor& x, const IntList& pad, double value = 0.0, Where where = Where::current());
/// `torch.nn.functional.pad(x, pad, mode, value)`: `mode` "constant" pads with `value` (0 when
/// absent); "reflect" mirrors the elements next to each edge (the edge not repeated),
/// "replicate" repeats the edge element, "circular" wraps around. Those three pad the last 1, 2
/// or 3 dims of an input with 1 or 2 more dims, by less than the dim's size for "reflect", at
/// most its size for "circular" (which alone may crop); they take no value.
Tensor pad(const Tensor& x, const IntList& pad, std::string_view mode, std::optional<double> value = std::nullopt,
           Where where = Where::current());
/// `torch.roll(x, shifts, dims)`: moves elements `shifts[k]` places along `dims[k]`, those that
/// leave at one end coming back at the other.
Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims, Where where = Where::current());
/// `x.repeat(repeats)`: `x` tiled `repeats[i]` times along dim i (recorded as a method, as
/// PyTorch has it). More repeats than dims add leading dims first (`[2, 3]` repeated `{2, 1, 2}`
/// is `[2, 2, 6]`); fewer are refused. A repeat may be a size known only when run.
Tensor repeat(const Tensor& x, const SymIntList& repeats, Where where = Where::current());
TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0, Where where = Where::current());
TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0, Where where = Where::current());
TensorList split(const Tensor& x, const IntList& split_sizes, std::int64_t dim = 0, Where where = Where::current());
TensorList unbind(const Tensor& x, std::int64_t dim = 0, Where where = Where::current());
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim = 0,
                     std::optional<std::int64_t> start = std::nullopt, std::optional<std::int64_t> end = std::nullopt,
                     std::int64_t step = 1, Where where = Where::current());

/// Advanced indexing, `x[indices]` with tensors (aten::index.Tensor). Each entry of `indices`
/// indexes the next dims of `x`: an undefined Tensor (None) takes a whole dim, an int64 tensor
/// picks along one dim (negative values count from the end), a bool mask selects where it is
/// true over as many dims as it has (its shape must be theirs). Dims past the list are taken
/// whole. The index tensors broadcast together to one shape B, which replaces the indexed dims
/// when they are adjacent and comes first otherwise:
/// ```
/// x: [5, 6, 7]   index(x, {i, j}) with i, j: int64 [3]     -> [3, 7]
///                index(x, {Tensor(), i})                    -> [5, 3, 7]
///                index(x, {i, Tensor(), j})                 -> [3, 6]
///                index(x, {mask}) with mask: bool [5, 6]    -> [n, 7], n = mask's true count
/// ```
/// A mask makes a size only the run knows: traced, it is an unknown dim. Throws OpError for an
/// index out of range (when run), a mask that does not fit, or indices that cover more dims
/// than `x` has.
Tensor index(const Tensor& x, const TensorList& indices, Where where = Where::current());
/// `x[indices] = values` in place (aten::index_put_): writes `values`, broadcast to the shape
/// `index(x, indices)` has, to the elements that indexing selects, and returns `x`. With
/// `accumulate` the values are added (repeated indices add up); without it a repeated index
/// keeps the last value. `values` must have `x`'s dtype.
Tensor index_put_(const Tensor& x, const TensorList& indices, const Tensor& values, bool accumulate = false,
                  Where where = Where::current());
/// The coordinates of the nonzero elements of `x`, int64 [n, x.dim()] in row-major order (NaN
/// counts as nonzero); n is known only when run.
Tensor nonzero(const Tensor& x, Where where = Where::current());

}  // namespace symtrace

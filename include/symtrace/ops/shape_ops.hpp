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
/// `contiguous(Tensor self)`, `slice(Tensor self, int dim=0, int? start=None, int? end=None,
/// int step=1)`, `narrow(Tensor self, int dim, int start, int length)`,
/// `select(Tensor self, int dim, int index)`.
/// Others: `index_select(Tensor self, int dim, Tensor index)`, `cat(Tensor[] tensors, int dim=0)`,
/// `stack(Tensor[] tensors, int dim=0)`, `chunk(Tensor self, int chunks, int dim=0) -> Tensor[]`,
/// `split(Tensor self, int split_size, int dim=0) -> Tensor[]`,
/// `split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]`,
/// `unbind(Tensor self, int dim=0) -> Tensor[]`,
/// `pad(Tensor self, int[] pad, str mode='constant', float? value=None)`,
/// `roll(Tensor self, int[] shifts, int[] dims=[])`, and the functional form of slice assignment
/// `slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1)`.
/// Slice assignment in place is `x.slice(dim, a, b).copy_(src)`.

#include "symtrace/core/tensor.hpp"

#include <optional>
#include <source_location>

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
/// `torch.roll(x, shifts, dims)`: moves elements `shifts[k]` places along `dims[k]`, those that
/// leave at one end coming back at the other.
Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims, Where where = Where::current());
TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0, Where where = Where::current());
TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0, Where where = Where::current());
TensorList split(const Tensor& x, const IntList& split_sizes, std::int64_t dim = 0, Where where = Where::current());
TensorList unbind(const Tensor& x, std::int64_t dim = 0, Where where = Where::current());
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim = 0,
                     std::optional<std::int64_t> start = std::nullopt, std::optional<std::int64_t> end = std::nullopt,
                     std::int64_t step = 1, Where where = Where::current());

}  // namespace symtrace

// Joins and splits: cat and stack copy their inputs into a new tensor (in the promoted dtype);
// chunk, split, split_with_sizes and unbind return views of consecutive pieces of their input
// (OpFlags::view: an in-place op on a piece writes through to the input); pad, roll and repeat
// copy their input into a new tensor of another shape.
//
// The number of pieces a split makes depends on the size of the split dim. When that dim is
// unknown (a symbolic tensor traced without example shapes) the result cannot be a list of
// known length, so the meta function throws TraceError, as fx does for a data-dependent length;
// split_with_sizes names its pieces explicitly and works regardless.

#include "symtrace/ops/shape_ops.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace symtrace {

namespace {

using detail::narrow_view;
using detail::select_view;

using detail::wrap_dim;

// ---- cat, stack --------------------------------------------------------------------------

// The shape shared by `tensors` in every dim except `skip` (none when skip == rank): known dims
// must agree, named ones are guarded equal; a dim unknown in one tensor takes its size from the
// others.
Shape common_shape(const OpCall& call, const TensorList& tensors, std::size_t skip, std::string_view rule) {
  Shape out = tensors[0].shape();
  std::vector<std::size_t> source(out.rank(), 0);  // which tensor each known size came from
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    const Shape& s = tensors[i].shape();
    for (std::size_t d = 0; d < out.rank(); ++d) {
      if (d == skip || s[d].is_anonymous() || out[d] == s[d]) continue;
      if (out[d].is_anonymous()) {
        out[d] = s[d];
        source[d] = i;
      } else if (const std::optional<Dim> same = detail::same_size(call, out[d], s[d], rule)) {
        if (*same != out[d]) source[d] = i;
        out[d] = *same;
      } else {
        call.fail("{}, but dimension {} is {} in tensor {} (shape {}) and {} in tensor {} (shape {})", rule, d,
                  out[d], source[d], tensors[source[d]].shape(), s[d], i, s);
      }
    }
  }
  return out;
}

DType promoted_dtype(const TensorList& tensors) {
  DType dt = tensors[0].dtype();
  for (const Tensor& t : tensors) dt = promote_types(dt, t.dtype());
  return dt;
}

// Checks the list is non-empty and all ranks are equal; returns the tensors.
TensorList same_rank_tensors(const OpCall& call) {
  TensorList tensors = call.tensor_list(0);
  if (tensors.empty()) call.fail("needs at least one tensor, got an empty list");
  for (std::size_t i = 1; i < tensors.size(); ++i)
    if (tensors[i].dim() != tensors[0].dim())
      call.fail("all tensors must have the same number of dims, but tensor 0 has shape {} and tensor {} has "
                "shape {}",
                tensors[0].shape(), i, tensors[i].shape());
  return tensors;
}

// PyTorch's legacy rule for cat: a 1-D tensor with no elements (`torch.empty(0)`, an empty
// start of a list to be filled) is left out, whatever the other tensors' ranks; its dtype still
// takes part in the result's.
bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.shape()[0] == Dim(0); }

// The tensors cat joins: the list without its legacy empty tensors (all of them when every one
// is), checked for equal ranks.
TensorList joined_tensors(const OpCall& call, const TensorList& all) {
  if (all.empty()) call.fail("needs at least one tensor, got an empty list");
  TensorList tensors;
  tensors.reserve(all.size());
  std::size_t first = 0;  // the first tensor kept, by its index in the list
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (legacy_empty(all[i])) continue;
    if (tensors.empty()) first = i;
    else if (all[i].dim() != tensors[0].dim())
      call.fail("all tensors must have the same number of dims, but tensor {} has shape {} and tensor {} has "
                "shape {}",
                first, tensors[0].shape(), i, all[i].shape());
    tensors.push_back(all[i]);
  }
  return tensors.empty() ? all : tensors;
}

OutputMeta cat_meta(const OpCall& call) {
  const TensorList all = call.tensor_list(0);
  const TensorList tensors = joined_tensors(call, all);
  if (tensors[0].dim() == 0)
    call.fail("0-dim tensors (shape []) cannot be concatenated; use stack(), or unsqueeze() them first");
  const auto d = static_cast<std::size_t>(wrap_dim(call, call.integer(1), tensors[0].dim(), tensors[0].shape()));
  Shape out = common_shape(call, tensors, d, fmt::format("tensors must have the same size except in dimension {}", d));
  Dim total = 0;
  for (const Tensor& t : tensors) total = total + t.shape()[d];
  out[d] = total;
  return OutputMeta::single(promoted_dtype(all), std::move(out));
}

Value cat_kernel(const OpCall& call, const OutputMeta& meta) {
  const TensorList tensors = joined_tensors(call, call.tensor_list(0));
  const auto d = static_cast<std::size_t>(wrap_dim(call, call.integer(1), tensors[0].dim(), tensors[0].shape()));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  std::int64_t offset = 0;
  for (const Tensor& t : tensors) {
    const std::int64_t n = t.shape()[d].value();
    detail::copy_into(narrow_view(out, d, offset, n), t);
    offset += n;
  }
  return out;
}

OutputMeta stack_meta(const OpCall& call) {
  const TensorList tensors = same_rank_tensors(call);
  const Tensor& first = tensors[0];
  const auto d = detail::wrap_insert_dim(call, call.integer(1), first.dim(), first.shape());
  Shape out = common_shape(call, tensors, first.shape().rank(), "stack needs tensors of equal shapes");
  out.insert(static_cast<std::size_t>(d), static_cast<std::int64_t>(tensors.size()));
  return OutputMeta::single(promoted_dtype(tensors), std::move(out));
}

Value stack_kernel(const OpCall& call, const OutputMeta& meta) {
  const TensorList tensors = call.tensor_list(0);
  const auto d = static_cast<std::size_t>(
      detail::wrap_insert_dim(call, call.integer(1), tensors[0].dim(), tensors[0].shape()));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    detail::copy_into(select_view(out, d, static_cast<std::int64_t>(i)), tensors[i]);
  return out;
}

// ---- chunk, split, split_with_sizes, unbind -----------------------------------------------

// The wrapped split dim of a tensor that must have at least one dim.
std::size_t split_dim(const OpCall& call, const Tensor& x) {
  if (x.dim() == 0) call.fail("cannot split a 0-dim tensor (shape []); unsqueeze() it first");
  return static_cast<std::size_t>(wrap_dim(call, call.integer(2), x.dim(), x.shape()));
}

// The size of the split dim, which decides how many pieces there are: TraceError when unknown.
std::int64_t known_split_size(const OpCall& call, const Tensor& x, std::size_t d, std::string_view instead) {
  const Dim n = x.shape()[d];
  if (!n.is_known())
    throw_trace_error(call.where, "{}(): the number of outputs depends on dimension {} of shape {}, which is "
                                  "unknown; give example shapes or {}",
                      call.op.name(), d, x.shape(), instead);
  return n.raw();
}

// One output per piece size: `x`'s shape with dim `d` set to the piece's size.
OutputMeta pieces_meta(const Tensor& x, std::size_t d, const IntList& sizes) {
  OutputMeta meta;
  meta.is_list = true;
  for (std::int64_t size : sizes) {
    Shape shape = x.shape();
    shape[d] = size;
    meta.outputs.push_back(TensorMeta{x.dtype(), std::move(shape)});
  }
  return meta;
}

// PyTorch's split: pieces of `size` (the last may be smaller); one empty piece for an empty dim.
IntList split_sizes(std::int64_t n, std::int64_t size) {
  const std::int64_t count = size == 0 ? 1 : std::max<std::int64_t>((n + size - 1) / size, 1);
  IntList sizes(static_cast<std::size_t>(count), size);
  sizes.back() = n - size * (count - 1);
  return sizes;
}

OutputMeta chunk_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const std::size_t d = split_dim(call, x);
  const std::int64_t chunks = call.integer(1);
  if (chunks <= 0) call.fail("chunks must be positive, got {} (shape {})", chunks, x.shape());
  const std::int64_t n = known_split_size(call, x, d, "use split_with_sizes() with explicit sizes");
  // Chunks of ceil(n / chunks), so there may be fewer than `chunks`; an empty dim gives
  // `chunks` empty pieces.
  if (n == 0) return pieces_meta(x, d, IntList(static_cast<std::size_t>(chunks), 0));
  return pieces_meta(x, d, split_sizes(n, (n + chunks - 1) / chunks));
}

OutputMeta split_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const std::size_t d = split_dim(call, x);
  const std::int64_t size = call.integer(1);
  if (size < 0) call.fail("split_size must be non-negative, got {} (shape {})", size, x.shape());
  const std::int64_t n = known_split_size(call, x, d, "use split_with_sizes() with explicit sizes");
  if (size == 0 && n != 0)
    call.fail("split_size can only be 0 when dimension {} is empty, but shape is {}", d, x.shape());
  return pieces_meta(x, d, split_sizes(n, size));
}

OutputMeta split_with_sizes_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const std::size_t d = split_dim(call, x);
  const IntList sizes = call.int_list(1);
  std::int64_t total = 0;
  for (std::int64_t size : sizes) {
    if (size < 0)
      call.fail("split sizes [{}] must be non-negative (shape {})", fmt::join(sizes, ", "), x.shape());
    total += size;
  }
  const Dim n = x.shape()[d];
  if (n.is_known() && n.raw() != total)
    call.fail("split sizes [{}] sum to {}, but dimension {} of shape {} is {}; they must sum to it",
              fmt::join(sizes, ", "), total, d, x.shape(), n.raw());
  return pieces_meta(x, d, sizes);
}

// chunk, split and split_with_sizes: consecutive views, sized as the meta function said.
Value pieces_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const std::size_t d = split_dim(call, x);
  TensorList pieces;
  std::int64_t offset = 0;
  for (const TensorMeta& m : meta.outputs) {
    const std::int64_t n = m.shape[d].value();
    pieces.push_back(narrow_view(x, d, offset, n));
    offset += n;
  }
  return pieces;
}

std::size_t unbind_dim(const OpCall& call, const Tensor& x) {
  if (x.dim() == 0) call.fail("cannot unbind a 0-dim tensor (shape []); it has no dimension to unbind");
  return static_cast<std::size_t>(wrap_dim(call, call.integer(1), x.dim(), x.shape()));
}

OutputMeta unbind_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const std::size_t d = unbind_dim(call, x);
  const std::int64_t n = known_split_size(call, x, d, "select() the pieces you need");
  Shape shape = x.shape();
  shape.erase(d);
  OutputMeta meta;
  meta.is_list = true;
  for (std::int64_t i = 0; i < n; ++i) meta.outputs.push_back(TensorMeta{x.dtype(), shape});
  return meta;
}

Value unbind_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const std::size_t d = unbind_dim(call, x);
  TensorList pieces;
  for (std::size_t i = 0; i < meta.outputs.size(); ++i) pieces.push_back(select_view(x, d, static_cast<std::int64_t>(i)));
  return pieces;
}

// ---- pad, roll ------------------------------------------------------------------------------

// pad's (before, after) amounts of dim d, from `pad`'s pairs that run from the last dim back.
std::pair<std::int64_t, std::int64_t> pad_of(const IntList& pad, std::size_t rank, std::size_t d) {
  const std::size_t from_end = rank - 1 - d;
  if (2 * from_end + 1 >= pad.size() + 1) return {0, 0};
  return {pad[2 * from_end], pad[2 * from_end + 1]};
}

// pad's modes: a constant, or the input's own elements beyond each edge.
enum class PadMode {
  constant,
  reflect,
  replicate,
  circular
};

PadMode pad_mode(const OpCall& call) {
  const std::string& mode = call.string(2);
  if (mode == "constant") return PadMode::constant;
  if (mode == "reflect") return PadMode::reflect;
  if (mode == "replicate") return PadMode::replicate;
  if (mode == "circular") return PadMode::circular;
  call.fail("mode '{}' is not one of 'constant', 'reflect', 'replicate' and 'circular'", mode);
}

// The checks of the modes that pad with the input's own elements (PyTorch's): they pad the
// last 1, 2 or 3 dims of a batched or unbatched input, each by at most its size (less than
// its size for reflect), and take no value.
void check_edge_padding(const OpCall& call, PadMode mode, const Shape& x, const IntList& pad) {
  const std::string& name = call.string(2);
  if (!call.args[3].is_none() && call.real(3) != 0.0)
    call.fail("mode '{}' takes no value, got value={}; pad with mode='constant' to fill with a value", name,
              call.real(3));
  const std::size_t k = pad.size() / 2;
  if (k < 1 || k > 3 || (x.rank() != k + 1 && x.rank() != k + 2))
    call.fail("mode '{}' pads the last 1, 2 or 3 dims of an input with 1 or 2 more dims, got padding {} ({} pairs) "
              "for shape {}",
              name, pad, k, x);
  for (std::size_t d = x.rank() - k; d < x.rank(); ++d) {
    const auto [before, after] = pad_of(pad, x.rank(), d);
    if (mode != PadMode::circular && (before < 0 || after < 0))
      call.unsupported("mode '{}' with a negative padding {} is not supported; symtrace crops with mode='circular' "
                       "or 'constant' only",
                       name, pad);
    const std::int64_t most = std::max(before, after);
    const Dim size = x[d];
    // reflect reads up to `size - 1` elements past an edge; replicate needs one to repeat;
    // circular wraps around once at most.
    const std::int64_t least = mode == PadMode::reflect ? most + 1 : mode == PadMode::replicate ? 1
                                                                                                : most;
    // Padding after cropping the other side wraps around what the cropping leaves (a size
    // not known here is refused).
    if (mode == PadMode::circular && std::min(before, after) < 0 && most > 0 &&
        (!size.is_known() || size.raw() + std::min(before, after) < most))
      call.unsupported("mode 'circular' padding {} crops dimension {} of shape {} below the amount it pads on the other "
                       "side; symtrace wraps around once at most",
                       pad, d, x);
    if (size.is_symbolic()) {
      detail::require(call, SymFact{*size.expr(), SymRel::ge, SymExpr(least)},
                      fmt::format("mode '{}' needs dimension {} to be at least {}", name, d, least));
      continue;
    }
    if (size.is_known() && size.raw() < least)
      call.fail("mode '{}' pads dimension {} of shape {} by ({}, {}), which needs it to have at least {} elements{}",
                name, d, x, before, after, least,
                mode == PadMode::reflect    ? "; the padding must be smaller than the dimension"
                : mode == PadMode::circular ? "; the padding must not wrap around more than once"
                                            : "");
  }
}

OutputMeta pad_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const IntList pad = call.int_list(1);
  const PadMode mode = pad_mode(call);
  if (pad.size() % 2 != 0) call.fail("the padding {} must have an even length (before, after for each dim)", pad);
  if (pad.size() / 2 > x.shape().rank())
    call.fail("the padding {} has {} pairs, more than the {} dims of shape {}", pad, pad.size() / 2, x.shape().rank(),
              x.shape());
  if (mode != PadMode::constant) check_edge_padding(call, mode, x.shape(), pad);
  Shape out = x.shape();
  for (std::size_t d = 0; d < out.rank(); ++d) {
    const auto [before, after] = pad_of(pad, out.rank(), d);
    if (out[d].is_symbolic()) {
      const SymExpr size = *out[d].expr() + SymExpr(before + after);
      detail::require(call, SymFact{size, SymRel::ge, SymExpr(0)}, fmt::format("padding dimension {} must leave it a size", d));
      out[d] = size;
      continue;
    }
    if (!out[d].is_known()) continue;
    const std::int64_t size = out[d].raw() + before + after;
    if (size < 0) call.fail("padding {} makes dimension {} of shape {} negative", pad, d, x.shape());
    out[d] = size;
  }
  return OutputMeta::single(x.dtype(), std::move(out));
}

template <class T>
void fill_with(const Tensor& t, double value) {
  T* data = t.data_ptr<T>();
  std::fill(data, data + *t.shape().numel(), static_cast<T>(value));
}

// Where output index `o` of a dim of `n` elements padded by (`before`, `after`) reads in the
// input. circular crops first (negative amounts), then wraps around what is left, as PyTorch.
std::int64_t pad_source(PadMode mode, std::int64_t o, std::int64_t before, std::int64_t after, std::int64_t n) {
  const std::int64_t i = o - before;
  switch (mode) {
    case PadMode::reflect:
      if (i < 0) return -i;
      return i >= n ? 2 * (n - 1) - i : i;
    case PadMode::replicate: return std::clamp<std::int64_t>(i, 0, n - 1);
    case PadMode::circular: {
      const std::int64_t first = std::max<std::int64_t>(0, -before);
      const std::int64_t kept = n - first - std::max<std::int64_t>(0, -after);
      const std::int64_t j = o - std::max<std::int64_t>(0, before);
      return first + ((j % kept) + kept) % kept;
    }
    case PadMode::constant: break;
  }
  return i;
}

// reflect, replicate, circular: each output element copies the input element its index maps
// to in every dim (pad_source).
Value edge_pad_kernel(const OpCall& call, const OutputMeta& meta, PadMode mode) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  const IntList pad = call.int_list(1);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const std::int64_t total = *out.shape().numel();
  if (total == 0) return out;
  const IntList in_sizes = x.shape().sizes();
  const IntList out_sizes = out.shape().sizes();
  const std::size_t rank = in_sizes.size();
  // Per dim, the input index each output index reads.
  std::vector<std::vector<std::int64_t>> source(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const auto [before, after] = pad_of(pad, rank, d);
    for (std::int64_t o = 0; o < out_sizes[d]; ++o)
      source[d].push_back(pad_source(mode, o, before, after, in_sizes[d]));
  }
  IntList in_strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in_sizes[d];
  visit_dtype(x.dtype(), [&]<class T>() {
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    IntList index(rank, 0);
    for (std::int64_t e = 0; e < total; ++e) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < rank; ++d) at += source[d][static_cast<std::size_t>(index[d])] * in_strides[d];
      o[e] = in[at];
      for (std::size_t d = rank; d-- > 0;) {
        if (++index[d] < out_sizes[d]) break;
        index[d] = 0;
      }
    }
  });
  return out;
}

Value pad_kernel(const OpCall& call, const OutputMeta& meta) {
  if (const PadMode mode = pad_mode(call); mode != PadMode::constant) return edge_pad_kernel(call, meta, mode);
  const Tensor& x = call.tensor(0);
  const IntList pad = call.int_list(1);
  const double value = call.args[3].is_none() ? 0.0 : call.real(3);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  switch (out.dtype()) {
    case DType::float32: fill_with<float>(out, value); break;
    case DType::int64: fill_with<std::int64_t>(out, value); break;
    case DType::bool_: fill_with<bool>(out, value); break;
    default: detail::throw_not_computed(out.dtype());
  }
  // The part of x that lands inside the output (negative padding crops).
  Tensor dst = out, src = x;
  for (std::size_t d = 0; d < x.shape().rank(); ++d) {
    const auto [before, after] = pad_of(pad, x.shape().rank(), d);
    const std::int64_t n = x.shape()[d].raw();
    const std::int64_t skip_front = std::max<std::int64_t>(0, -before);
    const std::int64_t skip_back = std::max<std::int64_t>(0, -after);
    const std::int64_t length = std::max<std::int64_t>(0, n - skip_front - skip_back);
    src = narrow_view(src, d, skip_front, length);
    dst = narrow_view(dst, d, std::max<std::int64_t>(0, before), length);
  }
  if (*src.shape().numel() > 0) detail::copy_into(dst, src);
  return out;
}

OutputMeta roll_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const IntList shifts = call.int_list(1);
  const IntList dims = call.int_list(2);
  if (dims.empty()) call.unsupported("symtrace rolls along given dims only; pass dims");
  if (shifts.size() != dims.size())
    call.fail("shifts {} and dims {} must have the same length", shifts, dims);
  for (std::int64_t d : dims) {
    const auto w = static_cast<std::size_t>(wrap_dim(call, d, x.dim(), x.shape()));
    if (!x.shape()[w].is_known())
      throw_trace_error(call.where, "roll(): dimension {} of shape {} is unknown, and what moves where depends on "
                                    "it; give example shapes",
                        w, x.shape());
  }
  return OutputMeta::single(x.meta().dtype, x.shape());
}

Value roll_kernel(const OpCall& call, const OutputMeta& meta) {
  const IntList shifts = call.int_list(1);
  const IntList dims = call.int_list(2);
  Tensor current = call.tensor(0);
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const auto d = static_cast<std::size_t>(wrap_dim(call, dims[k], current.dim(), current.shape()));
    const std::int64_t n = current.shape()[d].raw();
    Tensor next = detail::empty_like_meta(meta.outputs[0]);
    const std::int64_t s = n == 0 ? 0 : ((shifts[k] % n) + n) % n;
    if (n - s > 0) detail::copy_into(narrow_view(next, d, s, n - s), narrow_view(current, d, 0, n - s));
    if (s > 0) detail::copy_into(narrow_view(next, d, 0, s), narrow_view(current, d, n - s, s));
    current = std::move(next);
  }
  return current;
}

// ---- repeat --------------------------------------------------------------------------------

// PyTorch's rule: at least one repeat per dim; extra repeats add leading dims of size 1 first,
// then each dim is multiplied by its repeat.
OutputMeta repeat_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const Shape& shape = x.shape();
  const IntList repeats = call.size_list(1);
  if (repeats.size() < shape.rank())
    call.fail("needs a repeat for each of the {} dims of shape {}, got {}; give one per dim (1 keeps a dim)",
              shape.rank(), shape, detail::size_list_text(repeats));
  const std::size_t lead = repeats.size() - shape.rank();
  Shape out;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] != OpCall::unknown_size && repeats[i] < 0)
      call.fail("repeat {} at dim {} of {} is negative (shape {})", repeats[i], i, detail::size_list_text(repeats),
                shape);
    const Dim r = repeats[i] == OpCall::unknown_size ? Dim::unknown() : Dim(repeats[i]);
    out.push_back(r * (i < lead ? Dim(1) : shape[i - lead]));
  }
  return OutputMeta::single(x.dtype(), std::move(out));
}

// The output, viewed with each dim i split in two, (repeat r_i, size s_i), is x broadcast over
// the repeat dims (stride 0): one strided copy.
Value repeat_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& x = call.tensor(0);
  const IntList repeats = call.int_list(1);
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  if (*out.shape().numel() == 0) return out;
  const IntList sizes = x.shape().sizes();
  const std::size_t lead = repeats.size() - sizes.size();
  IntList split;
  detail::Strides out_strides, x_strides;
  std::int64_t stride = *out.shape().numel();
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    const std::int64_t size = i < lead ? 1 : sizes[i - lead];
    split.insert(split.end(), {repeats[i], size});
    stride /= repeats[i];  // no zeros here: the output is not empty
    out_strides.push_back(stride);
    stride /= size;
    out_strides.push_back(stride);
    x_strides.push_back(0);
    x_strides.push_back(i < lead ? 0 : x.strides()[i - lead]);
  }
  const Shape split_shape(split);
  detail::copy_into(Tensor::view_of(out, split_shape, std::move(out_strides), 0),
                    Tensor::view_of(x, split_shape, std::move(x_strides), x.storage_offset()));
  return out;
}

}  // namespace

void detail::register_join_ops(OpRegistry& r) {
  r.add("repeat(Tensor self, int[] repeats) -> Tensor", repeat_meta, repeat_kernel);
  r.add("pad(Tensor self, int[] pad, str mode='constant', float? value=None) -> Tensor", pad_meta, pad_kernel);
  r.add("roll(Tensor self, int[] shifts, int[] dims=[]) -> Tensor", roll_meta, roll_kernel);
  constexpr OpFlags v = OpFlags::view;
  r.add("cat(Tensor[] tensors, int dim=0) -> Tensor", cat_meta, cat_kernel, OpFlags::concatenation);
  r.add("stack(Tensor[] tensors, int dim=0) -> Tensor", stack_meta, stack_kernel);
  r.add("chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", chunk_meta, pieces_kernel, v);
  r.add("split(Tensor self, int split_size, int dim=0) -> Tensor[]", split_meta, pieces_kernel, v);
  r.add("split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]", split_with_sizes_meta,
        pieces_kernel, v);
  r.add("unbind(Tensor self, int dim=0) -> Tensor[]", unbind_meta, unbind_kernel, v);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::invoke_list;
using detail::fn;

Tensor cat(const TensorList& tensors, std::int64_t dim, Where w) { return invoke(SYMTRACE_OP("cat"), w, fn, tensors, dim); }
Tensor pad(const Tensor& x, const IntList& pad, double value, Where w) {
  return invoke(SYMTRACE_OP("pad"), w, fn, x, pad, std::string("constant"), value);
}
Tensor pad(const Tensor& x, const IntList& pad, std::string_view mode, std::optional<double> value, Where w) {
  return invoke(SYMTRACE_OP("pad"), w, fn, x, pad, std::string(mode), value ? Value(*value) : Value());
}
Tensor repeat(const Tensor& x, const SymIntList& repeats, Where w) {
  return invoke(SYMTRACE_OP("repeat"), w, CallStyle::method, x, repeats);
}
Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims, Where w) {
  return invoke(SYMTRACE_OP("roll"), w, fn, x, shifts, dims);
}
Tensor stack(const TensorList& tensors, std::int64_t dim, Where w) {
  return invoke(SYMTRACE_OP("stack"), w, fn, tensors, dim);
}
TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim, Where w) {
  return invoke_list(SYMTRACE_OP("chunk"), w, fn, x, chunks, dim);
}
TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim, Where w) {
  return invoke_list(SYMTRACE_OP("split"), w, fn, x, split_size, dim);
}
TensorList split(const Tensor& x, const IntList& split_sizes, std::int64_t dim, Where w) {
  return invoke_list(SYMTRACE_OP("split_with_sizes"), w, fn, x, split_sizes, dim);
}
TensorList unbind(const Tensor& x, std::int64_t dim, Where w) { return invoke_list(SYMTRACE_OP("unbind"), w, fn, x, dim); }

}  // namespace symtrace

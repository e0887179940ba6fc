#include "symtrace/core/tensor.hpp"

#include "symtrace/core/thread_context.hpp"
#include "symtrace/core/detail/strided.hpp"
#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace symtrace {

namespace detail {

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.rank());
  std::int64_t step = 1;
  for (std::size_t i = shape.rank(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(shape[i].raw(), 1);
  }
  return strides;
}

Strides broadcast_strides(const Tensor& t, std::span<const std::int64_t> out_sizes) {
  const Shape& shape = t.shape();
  const auto& in_strides = t.strides();
  SYMTRACE_ASSERT(shape.rank() <= out_sizes.size(), "broadcast_strides: the tensor has more dims than the output");
  Strides out(out_sizes.size(), 0);
  const std::size_t lead = out_sizes.size() - shape.rank();
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    const std::int64_t size = shape[i].raw();
    SYMTRACE_ASSERT(size == out_sizes[lead + i] || size == 1, "broadcast_strides: shapes do not broadcast");
    out[lead + i] = size == 1 ? 0 : in_strides[i];
  }
  return out;
}

namespace {
[[noreturn]] void throw_symbolic_read(const char* what, std::source_location where) {
  throw_trace_error(where,
                    "a symbolic tensor was read as data ({}): control flow or C++ values that "
                    "depend on tensor data cannot be traced; make the module a leaf (Tracer::register_leaf) or use "
                    "where() or cond()",
                    what);
}
}  // namespace

}  // namespace detail

using detail::TensorImpl;

std::optional<std::uint64_t> detail::data_bytes(const TensorMeta& meta) noexcept {
  if (!meta.shape.is_rank_known()) return std::nullopt;
  std::uint64_t bytes = element_size(meta.dtype);
  for (Dim d : meta.shape) {
    if (!d.is_known() || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d.raw()), &bytes)) return std::nullopt;
  }
  return bytes;
}

std::string detail::too_large(std::uint64_t bytes) {
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  return fmt::format("{} bytes ({:.1f} GiB), more than the {} bytes ({:.1f} GiB) of memory this machine has; "
                     "give it smaller sizes",
                     bytes, static_cast<double>(bytes) / gib, max_tensor_bytes(),
                     static_cast<double>(max_tensor_bytes()) / gib);
}

std::uint64_t max_tensor_bytes() noexcept {
  static const std::uint64_t limit = [] {
    std::uint64_t bytes = UINT64_MAX;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) bytes = std::min<std::uint64_t>(bytes, as.rlim_cur);
    return bytes;
  }();
  return limit;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Where where) {
  for (Dim d : shape) {
    if (!d.is_known())
      throw_invalid_argument(where, "cannot allocate a tensor of shape {}: every size must be known", shape);
  }
  const std::optional<std::uint64_t> bytes = detail::data_bytes(TensorMeta{dtype, shape});
  if (!bytes) throw_invalid_argument(where, "cannot allocate a tensor of shape {}: its size overflows 64 bits", shape);
  if (*bytes > max_tensor_bytes()) {
    throw_invalid_argument(where, "cannot allocate a {} tensor of shape {}: it needs {}", dtype, shape,
                           detail::too_large(*bytes));
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = TensorMeta{dtype, shape};
  impl->storage = std::make_shared<detail::Storage>(static_cast<std::size_t>(*bytes));
  impl->strides = detail::contiguous_strides(shape);
  return Tensor(std::move(impl));
}

Tensor Tensor::from_blob(void* data, const Shape& shape, DType dtype, std::shared_ptr<const void> owner,
                         Where where) {
  return from_blob_owned(data, shape, dtype, std::move(owner), nullptr, where);
}

Tensor Tensor::from_blob_owned(void* data, const Shape& shape, DType dtype, std::shared_ptr<const void> owner,
                               const std::type_info* owner_type, Where where) {
  if (data == nullptr) throw_invalid_argument(where, "from_blob() of a null pointer");
  for (Dim d : shape) {
    if (!d.is_known()) throw_invalid_argument(where, "from_blob() of shape {}: every size must be known", shape);
  }
  const std::uint64_t size = element_size(dtype);
  if (reinterpret_cast<std::uintptr_t>(data) % size != 0)
    throw_invalid_argument(where, "from_blob(): {} data must be aligned to {} bytes", dtype, size);
  const std::optional<std::uint64_t> bytes = detail::data_bytes(TensorMeta{dtype, shape});
  if (!bytes) throw_invalid_argument(where, "from_blob() of shape {}: its size overflows 64 bits", shape);
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = TensorMeta{dtype, shape};
  impl->storage = std::make_shared<detail::Storage>(static_cast<std::byte*>(data), static_cast<std::size_t>(*bytes),
                                                    std::move(owner), owner_type);
  impl->strides = detail::contiguous_strides(shape);
  return Tensor(std::move(impl));
}

Tensor Tensor::symbolic(TensorMeta meta, SymbolicRef ref) {
  SYMTRACE_ASSERT(ref.trace != 0, "Tensor::symbolic needs a trace id other than 0");
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = std::move(meta);
  impl->ref = ref;
  return Tensor(std::move(impl));
}

Tensor Tensor::view_of(const Tensor& base, const Shape& shape, detail::Strides strides,
                       std::int64_t offset) {
  SYMTRACE_ASSERT(base.is_concrete(), "view_of needs a concrete base");
  SYMTRACE_ASSERT(strides.size() == shape.rank(), "view_of: one stride per dim");
  // Bounds: the lowest and highest element reached must lie inside the storage.
  std::int64_t lo = offset, hi = offset;
  bool empty = false;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    const std::int64_t n = shape[i].value();
    if (n == 0) empty = true;
    const std::int64_t span = (n - 1) * strides[i];
    (span < 0 ? lo : hi) += span;
  }
  const auto capacity = static_cast<std::int64_t>(base.impl_->storage->nbytes / element_size(base.dtype()));
  SYMTRACE_ASSERT(empty || (lo >= 0 && hi < capacity), "view_of: view exceeds its storage");
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = TensorMeta{base.dtype(), shape};
  impl->storage = base.impl_->storage;
  impl->offset = offset;
  impl->strides = std::move(strides);
  return Tensor(std::move(impl));
}

detail::TensorImpl& Tensor::impl() const {
  if (!impl_) throw std::invalid_argument("use of an undefined Tensor (default-constructed)");
  return *impl_;
}

DType Tensor::dtype() const { return impl().meta.dtype; }
const Shape& Tensor::shape() const { return impl().meta.shape; }
const TensorMeta& Tensor::meta() const { return impl().meta; }

void Tensor::unknown_rank(Where where, const char* what) {
  throw_trace_error(where,
                    "{} of a tensor whose shape is unknown (the output of a module that could not be traced, "
                    "whose rank nothing tells): code that depends on it cannot be traced; give that module's "
                    "type a shape function (register_leaf with a LeafMetaFn)",
                    what);
}

const detail::Strides& Tensor::strides(Where where) const {
  if (!defined()) throw_invalid_argument(where, "strides() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("strides()", where);
  return impl_->strides;
}

std::int64_t Tensor::storage_offset(Where where) const {
  if (!defined()) throw_invalid_argument(where, "storage_offset() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("storage_offset()", where);
  return impl_->offset;
}

bool Tensor::is_contiguous(Where where) const {
  const auto& s = strides(where);
  if (shape().numel() == 0) return true;  // as in PyTorch: an empty tensor is contiguous
  std::int64_t step = 1;
  for (std::size_t i = shape().rank(); i-- > 0;) {
    const std::int64_t n = shape()[i].raw();
    if (n != 1 && s[i] != step) return false;
    step *= n;
  }
  return true;
}

bool Tensor::shares_storage_with(const Tensor& other) const noexcept {
  return is_concrete() && other.is_concrete() && impl_->storage == other.impl_->storage;
}

template <class T>
T* Tensor::data_ptr(Where where) const {
  if (!defined()) throw_invalid_argument(where, "data_ptr() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("data_ptr()", where);
  if (dtype() != dtype_of<T>())
    throw_invalid_argument(where, "data_ptr<{}>() of a {} tensor: the element types differ",
                           name(dtype_of<T>()), dtype());
  return reinterpret_cast<T*>(impl_->storage->data) + impl_->offset;
}

void* Tensor::data_ptr(Where where) const {
  if (!defined()) throw_invalid_argument(where, "data_ptr() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("data_ptr()", where);
  return impl_->storage->data + impl_->offset * static_cast<std::int64_t>(element_size(dtype()));
}

template <class T>
T Tensor::item(Where where) const {
  if (!defined()) throw_invalid_argument(where, "item() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("item()", where);
  if (shape().numel() != 1)
    throw_invalid_argument(where, "item() needs a tensor with one element, got shape {}", shape());
  detail::note_data_read(DataRead::item, where);
  return visit_dtype(dtype(), [&]<class S>() {
    const S v = reinterpret_cast<const S*>(impl_->storage->data)[impl_->offset];
    return static_cast<T>(v);
  });
}

bool Tensor::to_bool(Where where) const {
  if (!defined()) throw_invalid_argument(where, "to_bool() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("to_bool()", where);
  if (shape().numel() != 1)
    throw_invalid_argument(where, "to_bool() needs a tensor with one element, got shape {}; reduce it first "
                                  "(sum(), amax())",
                           shape());
  detail::note_data_read(DataRead::to_bool, where);
  return visit_dtype(dtype(), [&]<class S>() {
    return reinterpret_cast<const S*>(impl_->storage->data)[impl_->offset] != S{};
  });
}

template <class T>
std::vector<T> Tensor::to_vector(Where where) const {
  if (!defined()) throw_invalid_argument(where, "to_vector() of an undefined Tensor");
  if (is_symbolic()) detail::throw_symbolic_read("to_vector()", where);
  detail::note_data_read(DataRead::to_vector, where);
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(*shape().numel()));
  const IntList sz = shape().sizes();
  visit_dtype(dtype(), [&]<class S>() {
    const S* base = detail::base_ptr<S>(*this);
    detail::for_each_run<1>(sz, {detail::as_span(impl_->strides)}, {impl_->offset},
                            [&](auto off, std::int64_t n, auto inner) {
                              for (std::int64_t i = 0; i < n; ++i)
                                out.push_back(static_cast<T>(base[off[0] + i * inner[0]]));
                            });
  });
  return out;
}

template float* Tensor::data_ptr<float>(Where) const;
template std::int64_t* Tensor::data_ptr<std::int64_t>(Where) const;
template bool* Tensor::data_ptr<bool>(Where) const;
template float Tensor::item<float>(Where) const;
template double Tensor::item<double>(Where) const;
template std::int64_t Tensor::item<std::int64_t>(Where) const;
template bool Tensor::item<bool>(Where) const;
template std::vector<float> Tensor::to_vector<float>(Where) const;
template std::vector<double> Tensor::to_vector<double>(Where) const;
template std::vector<std::int64_t> Tensor::to_vector<std::int64_t>(Where) const;
template std::vector<bool> Tensor::to_vector<bool>(Where) const;

namespace {

template <class T>
std::string format_element(T v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
  else if constexpr (std::is_integral_v<T>) return std::to_string(v);
  else return fmt::format("{:.4f}", v);
}

// Prints nested brackets; dims longer than 6 show the first and last 3 entries around "...".
template <class T>
void format_dim(std::string& out, const std::vector<T>& data, const IntList& sizes,
                std::size_t dim, std::int64_t offset, std::int64_t stride) {
  if (dim == sizes.size()) {
    out += format_element<T>(data[static_cast<std::size_t>(offset)]);
    return;
  }
  const std::int64_t n = sizes[dim];
  const std::int64_t inner = stride / std::max<std::int64_t>(n, 1);
  out += '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (n > 6 && i == 3) {
      out += "..., ";
      i = n - 3;
    }
    format_dim(out, data, sizes, dim + 1, offset + i * inner, inner);
    if (i + 1 < n) out += ", ";
  }
  out += ']';
}

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "Tensor(undefined)";
  if (t.is_symbolic())
    return fmt::format("Tensor(%{}, {}{})", t.symbolic_ref().node, t.dtype(), t.shape());
  std::string out = "tensor(";
  const IntList sizes = t.shape().sizes();
  visit_dtype(t.dtype(), [&]<class T>() {
    const auto data = t.to_vector<T>();
    format_dim<T>(out, data, sizes, 0, 0, static_cast<std::int64_t>(data.size()));
  });
  return out + fmt::format(", dtype={}, shape={})", t.dtype(), t.shape());
}

}  // namespace symtrace

auto fmt::formatter<symtrace::Tensor>::format(const symtrace::Tensor& t, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(t), ctx);
}

std::string symtrace::to_string(const TensorMeta& meta) { return fmt::format("{}{}", meta.dtype, meta.shape); }

auto fmt::formatter<symtrace::TensorMeta>::format(const symtrace::TensorMeta& m,
                                                  format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(fmt::format("{}{}", m.dtype, m.shape), ctx);
}

namespace symtrace {

Tensor Tensor::set_(const Tensor& source, Where where) const {
  if (!defined() || !source.defined()) throw_invalid_argument(where, "set_() needs two defined tensors");
  if (is_symbolic() || source.is_symbolic()) {
    throw_invalid_argument(where, "set_() needs concrete tensors: a symbolic tensor names a node of a trace");
  }
  if (impl_ == source.impl_) return *this;
  detail::TensorImpl copy = *source.impl_;  // copy first: `source` may be a view of this tensor
  *impl_ = std::move(copy);
  return *this;
}

}  // namespace symtrace

#pragma once
/// \file
/// `Tensor`: one type, two natures (docs/design.md, decision 1). A tensor is either *concrete* (owns
/// strided data on the CPU reference backend) or *symbolic* (names a node of an active trace
/// and carries only dtype and a shape whose dims may be unknown). Model code is written once
/// against `Tensor`; every op dispatches on the nature of its inputs (see ops/dispatch.hpp).
///
/// A Tensor is a cheap value-type handle (like `at::Tensor`): copies share the same data.
/// View ops (`view`, `slice`, `transpose`, ...) share storage with their base, so in-place
/// ops on a view (`x.slice(1, 0, 2).copy_(y)`) write through to the base.
///
/// Reading data (`item()`, `data_ptr()`, `to_vector()`) from a symbolic tensor throws
/// `TraceError`: that is control flow depending on tensor data. There is no conversion to bool.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/core/shape.hpp"
#include "symtrace/core/tensor_meta.hpp"

#include <fmt/core.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <typeinfo>
#include <vector>

namespace symtrace {

class Tensor;
using TensorList = std::vector<Tensor>;
using IntList = std::vector<std::int64_t>;
class SymInt;    // core/sym_int.hpp, included at the end of this file
class SymFloat;  // core/sym_float.hpp
class SymIntList;

/// The identity of a symbolic tensor: the trace that made it and its node there.
/// `trace == 0` means "not symbolic".
struct SymbolicRef {
  std::uint64_t trace = 0;
  std::uint32_t node = 0;
  friend bool operator==(const SymbolicRef&, const SymbolicRef&) = default;
};

namespace detail {
/// A reference-counted byte buffer: its own, uninitialised (16-byte aligned by operator
/// new[]), or memory owned elsewhere that `owner` keeps alive (Tensor::from_blob).
struct Storage {
  explicit Storage(std::size_t bytes)
      : nbytes(bytes), own(std::make_unique_for_overwrite<std::byte[]>(bytes == 0 ? 1 : bytes)), data(own.get()) {}
  Storage(std::byte* external, std::size_t bytes, std::shared_ptr<const void> keep_alive,
          const std::type_info* keep_alive_type = nullptr) noexcept
      : nbytes(bytes), data(external), owner(std::move(keep_alive)), owner_type(keep_alive_type) {}
  std::size_t nbytes;
  std::unique_ptr<std::byte[]> own;  ///< null for memory owned elsewhere
  std::byte* data;
  std::shared_ptr<const void> owner;           ///< keeps memory owned elsewhere alive
  const std::type_info* owner_type = nullptr;  ///< the type of *owner, when from_blob knew it
};

using Strides = boost::container::small_vector<std::int64_t, 4>;

/// How many module slots hold a tensor as a parameter or buffer (kept by Module). It belongs
/// to the TensorImpl object, not to its data: copying an impl (`set_`) leaves it alone.
class Registrations {
 public:
  Registrations() = default;
  Registrations(const Registrations&) noexcept {}
  Registrations& operator=(const Registrations&) noexcept { return *this; }
  ~Registrations() = default;
  [[nodiscard]] std::uint32_t get() const noexcept { return count_.load(std::memory_order_relaxed); }
  void add() noexcept { count_.fetch_add(1, std::memory_order_relaxed); }
  void remove() noexcept { count_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  std::atomic<std::uint32_t> count_{0};
};

/// The state behind a Tensor handle. Concrete: storage + offset + strides (in elements).
/// Symbolic: `ref` names the node; `storage` is null.
struct TensorImpl {
  TensorMeta meta;
  std::shared_ptr<Storage> storage;
  std::int64_t offset = 0;
  Strides strides;
  SymbolicRef ref;
  Registrations registrations;
};

/// Contiguous (row-major) strides for fully known `shape`.
Strides contiguous_strides(const Shape& shape);
}  // namespace detail

/// A tensor operand of a Tensor operator (`a + b`): the tensor or number and the caller's
/// source location, captured when the operand is converted at the call site.
struct Operand;
/// A number on the left of a Tensor operator (`2 * x`), with the caller's source location.
struct ScalarOperand;

/// The most bytes one tensor's data may take: this machine's physical memory, or the process's
/// address-space limit (RLIMIT_AS) when that is lower. A tensor larger than that could never be
/// computed, so Tensor::empty and eager ops refuse it with a clear error before they try.
[[nodiscard]] std::uint64_t max_tensor_bytes() noexcept;
namespace detail {
/// The bytes of a contiguous tensor of `meta`'s dtype and shape, or nullopt when a size is
/// unknown or the count overflows 64 bits.
[[nodiscard]] std::optional<std::uint64_t> data_bytes(const TensorMeta& meta) noexcept;
/// "N bytes (x GiB), more than the M bytes (y GiB) of memory this machine has; give it smaller
/// sizes": why a tensor of `bytes` bytes is refused.
[[nodiscard]] std::string too_large(std::uint64_t bytes);
}  // namespace detail

/// A concrete or symbolic tensor; see the file comment.
class Tensor {
 public:
  using Where = std::source_location;

  /// An undefined tensor (`defined() == false`); ops reject it with a clear error.
  Tensor() noexcept = default;

  /// Makes a contiguous concrete tensor of `shape` (fully known, sizes >= 0) with
  /// uninitialised data. Throws std::invalid_argument for an unknown or negative size, and,
  /// before allocating anything, for a tensor larger than max_tensor_bytes().
  [[nodiscard]] static Tensor empty(const Shape& shape, DType dtype = DType::float32,
                                    Where where = Where::current());
  /// Makes a contiguous concrete tensor of `shape` and `dtype` over `data`, memory owned
  /// elsewhere that `owner` keeps alive as long as any tensor uses it (`torch::from_blob` with
  /// a deleter). `data` must hold the tensor's bytes and be aligned for `dtype`; throws
  /// std::invalid_argument for a null or misaligned pointer or an unknown or negative size.
  [[nodiscard]] static Tensor from_blob(void* data, const Shape& shape, DType dtype, std::shared_ptr<const void> owner,
                                        Where where = Where::current());
  /// As above, with an owner whose type is known (another library's tensor), which
  /// `storage_owner<T>()` gives back: a tensor of a dtype symtrace holds but does not compute
  /// with keeps what that library knows of it (a quantized tensor's scale and zero point).
  template <class T>
  [[nodiscard]] static Tensor from_blob(void* data, const Shape& shape, DType dtype, std::shared_ptr<const T> owner,
                                        Where where = Where::current()) {
    return from_blob_owned(data, shape, dtype, std::shared_ptr<const void>(std::move(owner)), &typeid(T), where);
  }
  /// Makes a symbolic tensor naming node `ref.node` of trace `ref.trace`. For tracers.
  [[nodiscard]] static Tensor symbolic(TensorMeta meta, SymbolicRef ref);
  /// Makes a concrete view of `base`'s storage. For view kernels; checks bounds.
  [[nodiscard]] static Tensor view_of(const Tensor& base, const Shape& shape,
                                      detail::Strides strides, std::int64_t offset);

  [[nodiscard]] bool defined() const noexcept { return impl_ != nullptr; }
  [[nodiscard]] bool is_symbolic() const noexcept { return impl_ && impl_->ref.trace != 0; }
  [[nodiscard]] bool is_concrete() const noexcept { return impl_ && impl_->ref.trace == 0; }
  /// The node this symbolic tensor names (trace 0 for concrete tensors).
  [[nodiscard]] SymbolicRef symbolic_ref() const noexcept { return impl_ ? impl_->ref : SymbolicRef{}; }

  [[nodiscard]] DType dtype() const;
  [[nodiscard]] const Shape& shape() const;
  [[nodiscard]] const TensorMeta& meta() const;
  /// Number of dimensions. Throws TraceError for a symbolic tensor of unknown rank (the output
  /// of a module that could not be traced).
  [[nodiscard]] std::int64_t dim(Where where = Where::current()) const {
    const Shape& s = shape();
    if (!s.is_rank_known()) [[unlikely]]
      unknown_rank(where, "dim()");
    return s.ndim();
  }
  /// The size of dim `d` (negative `d` counts from the end): a plain SymInt when known; for an
  /// unknown dim of a symbolic tensor, a proxy naming a recorded `size` node. Throws
  /// std::invalid_argument when `d` is out of range.
  [[nodiscard]] SymInt size(std::int64_t d, Where where = Where::current()) const;
  /// All sizes, as `size(d)` gives them.
  [[nodiscard]] SymIntList sizes(Where where = Where::current()) const;
  /// Number of elements: plain when known, else a proxy naming a recorded `numel` node.
  [[nodiscard]] SymInt numel(Where where = Where::current()) const;

  // Concrete-only accessors (TraceError on a symbolic tensor, invalid_argument when undefined).
  [[nodiscard]] const detail::Strides& strides(Where where = Where::current()) const;
  [[nodiscard]] std::int64_t storage_offset(Where where = Where::current()) const;
  [[nodiscard]] bool is_contiguous(Where where = Where::current()) const;
  /// True when both are concrete and share one storage (one is a view of the other).
  [[nodiscard]] bool shares_storage_with(const Tensor& other) const noexcept;
  /// Typed pointer to the first element (at `storage_offset()`); checks dtype.
  template <class T> [[nodiscard]] T* data_ptr(Where where = Where::current()) const;
  /// Untyped pointer to the first element (at `storage_offset()`), of any dtype (for handing the
  /// memory to another library, as LibTorch's untyped `data_ptr()`).
  [[nodiscard]] void* data_ptr(Where where = Where::current()) const;
  /// The owner given to `from_blob` when it is a `T` and this concrete tensor uses its memory
  /// (a view of it included); nullptr otherwise.
  template <class T> [[nodiscard]] const T* storage_owner() const noexcept {
    const detail::Storage* s = impl_ ? impl_->storage.get() : nullptr;
    if (s == nullptr || s->owner_type == nullptr || *s->owner_type != typeid(T)) return nullptr;
    return static_cast<const T*>(s->owner.get());
  }
  /// The only element of a one-element tensor, converted to T.
  template <class T> [[nodiscard]] T item(Where where = Where::current()) const;
  /// The truth value of a one-element tensor, as Python's `bool(t)`: nonzero is true. On a
  /// symbolic tensor it throws TraceError: that is control flow depending on tensor data.
  [[nodiscard]] bool to_bool(Where where = Where::current()) const;
  /// All elements in row-major order, converted to T.
  template <class T> [[nodiscard]] std::vector<T> to_vector(Where where = Where::current()) const;

  /// The implementation; for kernels and tracers.
  [[nodiscard]] detail::TensorImpl& impl() const;
  [[nodiscard]] const std::shared_ptr<detail::TensorImpl>& impl_ptr() const noexcept { return impl_; }

  // ---- Tensor methods (each records a call_method node when traced; defined by the ops layer)
  Tensor add(const Operand& other, Where where = Where::current()) const;
  Tensor sub(const Operand& other, Where where = Where::current()) const;
  Tensor mul(const Operand& other, Where where = Where::current()) const;
  Tensor div(const Operand& other, Where where = Where::current()) const;
  Tensor pow(const Operand& exponent, Where where = Where::current()) const;
  Tensor eq(const Operand& other, Where where = Where::current()) const;
  Tensor ne(const Operand& other, Where where = Where::current()) const;
  Tensor lt(const Operand& other, Where where = Where::current()) const;
  Tensor le(const Operand& other, Where where = Where::current()) const;
  Tensor gt(const Operand& other, Where where = Where::current()) const;
  Tensor ge(const Operand& other, Where where = Where::current()) const;
  Tensor neg(Where where = Where::current()) const;
  Tensor abs(Where where = Where::current()) const;
  Tensor exp(Where where = Where::current()) const;
  Tensor log(Where where = Where::current()) const;
  Tensor sqrt(Where where = Where::current()) const;
  Tensor rsqrt(Where where = Where::current()) const;
  Tensor relu(Where where = Where::current()) const;
  Tensor sigmoid(Where where = Where::current()) const;
  Tensor tanh(Where where = Where::current()) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max,
               Where where = Where::current()) const;
  Tensor softmax(std::int64_t dim, Where where = Where::current()) const;
  Tensor log_softmax(std::int64_t dim, Where where = Where::current()) const;
  /// Sum over `dims` (all dims when empty).
  Tensor sum(const IntList& dims = {}, bool keepdim = false, Where where = Where::current()) const;
  Tensor mean(const IntList& dims = {}, bool keepdim = false, Where where = Where::current()) const;
  Tensor amax(const IntList& dims = {}, bool keepdim = false, Where where = Where::current()) const;
  /// Index of the maximum over `dim` (over the flattened tensor when nullopt).
  Tensor argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                Where where = Where::current()) const;
  Tensor matmul(const Tensor& other, Where where = Where::current()) const;
  Tensor to(DType dtype, Where where = Where::current()) const;

  Tensor reshape(const SymIntList& shape, Where where = Where::current()) const;
  Tensor view(const SymIntList& shape, Where where = Where::current()) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1,
                 Where where = Where::current()) const;
  Tensor permute(const IntList& dims, Where where = Where::current()) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1, Where where = Where::current()) const;
  Tensor unsqueeze(std::int64_t dim, Where where = Where::current()) const;
  /// Removes size-1 dims (only `dim` when given).
  Tensor squeeze(std::optional<std::int64_t> dim = std::nullopt,
                 Where where = Where::current()) const;
  Tensor expand(const SymIntList& sizes, Where where = Where::current()) const;
  Tensor contiguous(Where where = Where::current()) const;
  TensorList chunk(std::int64_t chunks, std::int64_t dim = 0, Where where = Where::current()) const;
  TensorList split(std::int64_t split_size, std::int64_t dim = 0,
                   Where where = Where::current()) const;
  TensorList split(const IntList& split_sizes, std::int64_t dim = 0,
                   Where where = Where::current()) const;
  TensorList unbind(std::int64_t dim = 0, Where where = Where::current()) const;
  Tensor slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
               std::int64_t step = 1, Where where = Where::current()) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length,
                Where where = Where::current()) const;
  Tensor select(std::int64_t dim, std::int64_t index, Where where = Where::current()) const;
  Tensor index_select(std::int64_t dim, const Tensor& index, Where where = Where::current()) const;

  // In-place ops: mutate this tensor (and every view sharing its storage) and return it.
  Tensor add_(const Operand& other, Where where = Where::current()) const;
  Tensor mul_(const Operand& other, Where where = Where::current()) const;
  Tensor relu_(Where where = Where::current()) const;
  Tensor copy_(const Tensor& src, Where where = Where::current()) const;
  Tensor fill_(const Scalar& value, Where where = Where::current()) const;
  /// Makes this tensor, through every handle that shares it, use `source`'s storage, dtype,
  /// shape and strides, as PyTorch's `Tensor.set_(source)`: a module's parameter then holds
  /// data of another shape (what structured pruning does). Views taken earlier keep the old
  /// data. Throws std::invalid_argument unless both tensors are defined and concrete.
  Tensor set_(const Tensor& source, Where where = Where::current()) const;

 private:
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) noexcept : impl_(std::move(impl)) {}
  /// Throws the TraceError for asking `what` of a tensor of unknown rank.
  [[noreturn]] static void unknown_rank(Where where, const char* what);
  static Tensor from_blob_owned(void* data, const Shape& shape, DType dtype, std::shared_ptr<const void> owner,
                                const std::type_info* owner_type, Where where);
  std::shared_ptr<detail::TensorImpl> impl_;
};

struct Operand {
  template <Arithmetic T>
  Operand(T number, std::source_location where = std::source_location::current())  // NOLINT
      : scalar(number), where(where) {}
  Operand(const Tensor& t, std::source_location where = std::source_location::current())  // NOLINT
      : tensor(t), where(where), from_tensor(true) {}
  Operand(const Scalar& s, std::source_location where = std::source_location::current())  // NOLINT
      : scalar(s), where(where) {}
  /// A size (`x / x.size(-1)`): a known one is a number; a proxy is recorded as an argument.
  Operand(const SymInt& s, std::source_location where = std::source_location::current());  // NOLINT
  /// A float computed from sizes (`x * (x.size(-1) * 0.5)`), likewise.
  Operand(const SymFloat& s, std::source_location where = std::source_location::current());  // NOLINT
  /// True when made from a Tensor (even an undefined one, which ops then reject).
  [[nodiscard]] bool is_tensor() const noexcept { return from_tensor; }
  /// True when made from a proxy SymInt (`tensor` is then its proxy).
  [[nodiscard]] bool is_sym_int() const noexcept { return from_sym_int; }
  /// True when made from a proxy SymFloat (`tensor` is then its proxy).
  [[nodiscard]] bool is_sym_float() const noexcept { return from_sym_float; }
  Tensor tensor;  ///< set when the operand is a tensor (or the proxy of a SymInt or SymFloat)
  Scalar scalar;  ///< the number otherwise
  std::source_location where;
  bool from_tensor = false;
  bool from_sym_int = false;
  bool from_sym_float = false;
};

struct ScalarOperand {
  template <Arithmetic T>
  ScalarOperand(T number, std::source_location where = std::source_location::current())  // NOLINT
      : scalar(number), where(where) {}
  Scalar scalar;
  std::source_location where;
};

// ---- Operators: the caller's file:line comes from the converted operand.
Tensor operator+(const Tensor& a, const Operand& b);
Tensor operator-(const Tensor& a, const Operand& b);
Tensor operator*(const Tensor& a, const Operand& b);
Tensor operator/(const Tensor& a, const Operand& b);
Tensor operator+(const ScalarOperand& a, const Tensor& b);
Tensor operator-(const ScalarOperand& a, const Tensor& b);
Tensor operator*(const ScalarOperand& a, const Tensor& b);
Tensor operator/(const ScalarOperand& a, const Tensor& b);
/// Negation; the operand carries the caller's location.
Tensor operator-(const Operand& a);
Tensor operator<(const Tensor& a, const Operand& b);
Tensor operator<=(const Tensor& a, const Operand& b);
Tensor operator>(const Tensor& a, const Operand& b);
Tensor operator>=(const Tensor& a, const Operand& b);
/// Elementwise equality: a bool tensor (use `equal()` for a C++ bool about concrete tensors).
Tensor operator==(const Tensor& a, const Operand& b);
Tensor operator!=(const Tensor& a, const Operand& b);
Tensor& operator+=(Tensor& a, const Operand& b);
Tensor& operator*=(Tensor& a, const Operand& b);

/// "tensor([[1, 2], [3, 4]], dtype=int64, shape=[2, 2])"; symbolic: "Tensor(%7, float32[?, 3])".
[[nodiscard]] std::string to_string(const Tensor& tensor);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::Tensor> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Tensor& t, format_context& ctx) const -> format_context::iterator;
};

#include "symtrace/core/sym_int.hpp"  // IWYU pragma: export (size() returns SymInt)

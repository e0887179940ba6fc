#pragma once
/// \file
/// `ModuleHolder<Impl>`: a shared handle to a module with typed call operators, as in
/// LibTorch (`torch::nn::Linear` holds a `LinearImpl`). Holding children in holders lets
/// forward code read `conv1(x)`; each call records the caller's file:line and passes the
/// interposer (the tracer's `call_module`).
///
/// The call operators are generated from `Impl::forward`: one taking exactly forward's
/// parameters, plus one per omissible trailing `std::optional` parameter, each followed by a
/// defaulted `std::source_location`.
///
/// `SYMTRACE_MODULE(Block)` declares `Block` as the holder of `BlockImpl`, forwarding its
/// constructor arguments (`Block(64)` makes a `BlockImpl(64)`); `Block{nullptr}` is empty.

#include "symtrace/core/error.hpp"
#include "symtrace/nn/detail/forward_traits.hpp"
#include "symtrace/nn/typed_module.hpp"

#include <concepts>
#include <cstddef>
#include <memory>
#include <source_location>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace symtrace {

template <class Impl>
class ModuleHolder;

namespace detail {
/// Throws std::invalid_argument: "use of an empty ModuleHolder<Linear> (constructed from
/// nullptr and never assigned)".
[[noreturn]] void throw_empty_holder(std::string_view type, std::source_location where);

/// One call operator taking the parameter types `Q...` (a prefix of forward's).
template <class Holder, class Impl, class Prefix>
struct HolderCallOperator;
template <class Holder, class Impl, class... Q>
struct HolderCallOperator<Holder, Impl, TypeList<Q...>> {
  typename ForwardTraits<Impl>::Result operator()(
      Q... args, std::source_location where = std::source_location::current()) const {
    return static_cast<const Holder&>(*this).get(where)->call_at(where, std::forward<Q>(args)...);
  }
};

template <class Holder, class Impl, class Seq>
struct HolderCallOperatorSet;
template <class Holder, class Impl, std::size_t... K>
struct HolderCallOperatorSet<Holder, Impl, std::index_sequence<K...>>
    : HolderCallOperator<Holder, Impl,
                         typename ForwardTraits<Impl>::template Prefix<
                             ForwardTraits<Impl>::num_required + K>>... {
  using HolderCallOperator<Holder, Impl,
                           typename ForwardTraits<Impl>::template Prefix<
                               ForwardTraits<Impl>::num_required + K>>::operator()...;
};

/// The call operators of a holder (none when Impl has no forward, e.g. ModuleList).
template <class Holder, class Impl>
struct HolderCallOperators {};
template <class Holder, class Impl>
requires HasForward<Impl>
struct HolderCallOperators<Holder, Impl>
    : HolderCallOperatorSet<Holder, Impl,
                            std::make_index_sequence<ForwardTraits<Impl>::arity -
                                                     ForwardTraits<Impl>::num_required + 1>> {
};
}  // namespace detail

/// A shared handle to an `Impl` module; see the file comment.
template <class Impl>
class ModuleHolder : public detail::HolderCallOperators<ModuleHolder<Impl>, Impl> {
 public:
  using ContainedType = Impl;

  /// Makes a default-constructed `Impl` (LibTorch's behaviour); use `{nullptr}` for an empty holder.
  ModuleHolder() requires std::default_initializable<Impl>
      : impl_(std::make_shared<Impl>()) {}
  /// An empty holder, to be assigned later (typically from register_module).
  /// (A template, so that a literal 0, which means a size, does not convert to nullptr_t.)
  template <std::same_as<std::nullptr_t> Null>
  ModuleHolder(Null) noexcept {}  // NOLINT: implicit, as in LibTorch
  /// Holds an existing module.
  /// (A template, so that a literal 0 does not convert to a null shared_ptr.)
  template <std::derived_from<Impl> I>
  ModuleHolder(std::shared_ptr<I> impl) noexcept : impl_(std::move(impl)) {}  // NOLINT
  /// Makes an `Impl` from the arguments.
  template <class Head, class... Tail>
  // clang-format off
    requires(!std::same_as<std::remove_cvref_t<Head>, std::nullptr_t> &&
             !(sizeof...(Tail) == 0 && std::derived_from<std::remove_cvref_t<Head>, ModuleHolder>) &&
             !std::same_as<std::remove_cvref_t<Head>, std::shared_ptr<Impl>> &&
             std::constructible_from<Impl, Head, Tail...>)
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      // clang-format on
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  /// The module; throws std::invalid_argument when the holder is empty.
  Impl* get(std::source_location where = std::source_location::current()) const {
    if (!impl_) [[unlikely]]
      detail::throw_empty_holder(typeid(Impl).name(), where);
    return impl_.get();
  }
  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  [[nodiscard]] const std::shared_ptr<Impl>& ptr() const noexcept { return impl_; }
  [[nodiscard]] bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return impl_ != nullptr; }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace symtrace

/// Declares `Name` as the ModuleHolder of `NameImpl` (LibTorch's TORCH_MODULE).
#define SYMTRACE_MODULE(Name)                                 \
  class Name : public ::symtrace::ModuleHolder<Name##Impl> {  \
   public:                                                    \
    using ::symtrace::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

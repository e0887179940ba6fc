#pragma once
/// \file
/// `TypedModule<Derived>`: the base user modules derive from. It reads the signature of
/// `Derived::forward` at compile time and generates from it the type-erased entry point
/// (`forward_values`: Values in, a Value out) and the declared input names, so a tracer can
/// call or trace any module knowing only `Module&`.
///
/// ```
/// struct BlockImpl : symtrace::TypedModule<BlockImpl> {
///   BlockImpl() { fc = register_module("fc", nn::Linear(64, 64)); }
///   Tensor forward(const Tensor& x) { return x + relu(fc(x)); }
///   nn::Linear fc{nullptr};
/// };
/// SYMTRACE_MODULE(Block);  // Block: a ModuleHolder<BlockImpl>, called as block(x)
/// ```
///
/// `forward` takes Tensor, int, double, bool, std::string, std::vector<Tensor>,
/// std::vector<int64_t>, `std::optional` of those, or `Value`, by value or const reference;
/// it returns Tensor, a `std::tuple` of those types, `std::vector<Tensor>`, or `Value`.
/// Trailing `std::optional` parameters may be omitted by callers. A `forward` that is
/// `virtual` in a module class dispatches to the override of a derived module class.
///
/// The type name in reports is the class name without namespaces and without an `Impl`
/// suffix ("Block"); `set_type_name` overrides it.

#include "symtrace/core/stack_guard.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/nn/detail/forward_traits.hpp"
#include "symtrace/nn/module.hpp"

#include <concepts>
#include <cstddef>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace symtrace {

namespace detail {
/// A call argument that is not the call's source location.
template <class A>
concept NotLocation = !std::same_as<std::remove_cvref_t<A>, std::source_location>;

/// The boxed arguments of a module call made through the interposer, from a per-thread stack of
/// lists that keep their capacity: a traced module call allocates no argument list. Cleared
/// (every reference released) when the call ends, also by an exception.
class BoxedArgs {
 public:
  BoxedArgs();
  ~BoxedArgs();
  BoxedArgs(const BoxedArgs&) = delete;
  BoxedArgs& operator=(const BoxedArgs&) = delete;
  [[nodiscard]] ValueList& list() noexcept { return list_; }

 private:
  ValueList& list_;
};
}  // namespace detail

/// A Module whose forward is `Derived::forward`; see the file comment.
template <class Derived>
class TypedModule : public Module {
 public:
  /// Runs `Derived::forward` on boxed arguments, without passing the interposer.
  Value forward_values(const ValueList& args) override {
    using T = detail::ForwardTraits<Derived>;
    if (args.size() < T::num_required || args.size() > T::arity)
      detail::throw_arity_error(*this, args.size());
    return [&]<std::size_t... I>(std::index_sequence<I...>)->Value {
      const auto& params = forward_signature()->parameters;
      return T::ResultCodec::box(derived().forward(
          I < args.size() ? T::template Codec<I>::unbox(args[I], {this, params[I].name, I + 1})
                          : std::remove_cvref_t<typename T::template Param<I>>{}...));
    }
    (std::make_index_sequence<T::arity>{});
  }

  /// Calls the module as `forward(args...)` would, through the interposer (the
  /// tracer's `call_module`), recording the caller's file:line: `(*block)(x)` for a child held
  /// as a `std::shared_ptr<Block>`; a child held as a `ModuleHolder<Block>` is called as
  /// `block(x)`. Returns forward's result type. (A defaulted location cannot follow a
  /// parameter pack, so there is one overload per number of arguments, up to six; with more,
  /// call_at records the location.)
  auto operator()(std::source_location where = std::source_location::current()) { return call_at(where); }
  template <detail::NotLocation A0>
  auto operator()(A0&& a0, std::source_location where = std::source_location::current()) {
    return call_at(where, std::forward<A0>(a0));
  }
  template <detail::NotLocation A0, detail::NotLocation A1>
  auto operator()(A0&& a0, A1&& a1, std::source_location where = std::source_location::current()) {
    return call_at(where, std::forward<A0>(a0), std::forward<A1>(a1));
  }
  template <detail::NotLocation A0, detail::NotLocation A1, detail::NotLocation A2>
  auto operator()(A0&& a0, A1&& a1, A2&& a2, std::source_location where = std::source_location::current()) {
    return call_at(where, std::forward<A0>(a0), std::forward<A1>(a1), std::forward<A2>(a2));
  }
  template <detail::NotLocation A0, detail::NotLocation A1, detail::NotLocation A2, detail::NotLocation A3>
  auto operator()(A0&& a0, A1&& a1, A2&& a2, A3&& a3,
                  std::source_location where = std::source_location::current()) {
    return call_at(where, std::forward<A0>(a0), std::forward<A1>(a1), std::forward<A2>(a2), std::forward<A3>(a3));
  }
  template <detail::NotLocation A0, detail::NotLocation A1, detail::NotLocation A2, detail::NotLocation A3,
            detail::NotLocation A4>
  auto operator()(A0&& a0, A1&& a1, A2&& a2, A3&& a3, A4&& a4,
                  std::source_location where = std::source_location::current()) {
    return call_at(where, std::forward<A0>(a0), std::forward<A1>(a1), std::forward<A2>(a2), std::forward<A3>(a3),
                   std::forward<A4>(a4));
  }
  template <detail::NotLocation A0, detail::NotLocation A1, detail::NotLocation A2, detail::NotLocation A3,
            detail::NotLocation A4, detail::NotLocation A5>
  auto operator()(A0&& a0, A1&& a1, A2&& a2, A3&& a3, A4&& a4, A5&& a5,
                  std::source_location where = std::source_location::current()) {
    return call_at(where, std::forward<A0>(a0), std::forward<A1>(a1), std::forward<A2>(a2), std::forward<A3>(a3),
                   std::forward<A4>(a4), std::forward<A5>(a5));
  }
  /// More than six arguments (MultiheadAttention takes seven): no call site is recorded.
  template <class... A>
  requires(sizeof...(A) > 6) auto operator()(A&&... args) {
    return call_at(std::source_location{}, std::forward<A>(args)...);
  }

  /// operator() with an explicit call site. Omitted trailing optional arguments are None.
  template <class... A>
  auto call_at(std::source_location where, A&&... args) {
    using T = detail::ForwardTraits<Derived>;
    constexpr std::size_t given = sizeof...(A);
    static_assert(given >= T::num_required && given <= T::arity,
                  "wrong number of arguments for this module's forward");
    return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>,
                                                   std::index_sequence<J...>) {
      return this->template call_typed<typename T::template Param<I>...>(
          where, std::forward<A>(args)...,
          std::remove_cvref_t<typename T::template Param<given + J>>{}...);
    }
    (std::make_index_sequence<T::arity>{}, std::make_index_sequence<T::arity - given>{});
  }

  /// The call with arguments already converted to forward's parameter types `P...`: goes
  /// through `Module::call` (boxing the arguments) when an interposer is installed, an
  /// observer is registered or the stack may be nearly used up (Module::call checks it: Note
  /// [Stack guard]), else runs forward directly. For ModuleHolder and call_at.
  template <class... P>
  auto call_typed(std::source_location where, P... args) {
    using T = detail::ForwardTraits<Derived>;
    if (current_interposer() != nullptr || has_callbacks() || detail::stack_may_be_low()) [[unlikely]] {
      detail::BoxedArgs boxed;
      (boxed.list().push_back(detail::ArgCodec<std::remove_cvref_t<P>>::box(args)), ...);
      return typename T::Result(T::ResultCodec::unbox(Module::call(boxed.list(), where), {this, {}, 0}));
    }
    return typename T::Result(derived().forward(std::forward<P>(args)...));
  }

 private:
  // Private with `friend Derived`: only `Derived` can derive from TypedModule<Derived> (a
  // mistyped `class B : TypedModule<A>` would make derived() undefined behaviour).
  friend Derived;
  /// Declares default input names ("x", or "x0", "x1", ...).
  TypedModule() : Module(signature()) {}
  /// Declares `input_names`, one per forward parameter.
  explicit TypedModule(std::vector<std::string> input_names,
                       std::source_location where = std::source_location::current())
      : Module(signature()) {
    set_input_names(std::move(input_names), where);
  }

  static std::shared_ptr<const ForwardSignature> signature() {
    static_assert(detail::HasForward<Derived>,
                  "a TypedModule needs exactly one member function named forward");
    static_assert(
        []<std::size_t... I>(std::index_sequence<I...>) {
          return (detail::ForwardParameterType<
                      typename detail::ForwardTraits<Derived>::template Param<I>> &&
                  ...);
        }(std::make_index_sequence<detail::ForwardTraits<Derived>::arity>{}),
        "forward parameters must be Tensor, int, double, bool, std::string, "
        "std::vector<Tensor>, std::vector<int64_t>, std::optional of those, or Value, "
        "by value or const reference");
    static_assert(!std::is_reference_v<typename detail::ForwardTraits<Derived>::Result>,
                  "forward must return by value");
    static_assert(detail::Boxable<typename detail::ForwardTraits<Derived>::Result>,
                  "forward must return Tensor, a std::tuple, std::vector<Tensor> or Value");
    static const auto sig =
        std::make_shared<const ForwardSignature>(detail::make_forward_signature<Derived>());
    return sig;
  }
  Derived& derived() { return static_cast<Derived&>(*this); }
};

}  // namespace symtrace

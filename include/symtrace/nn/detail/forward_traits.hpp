#pragma once
/// \file
/// Compile-time reflection of a module's `forward`: its parameter and result types, which
/// trailing parameters are optional, and how each type is boxed into a `Value` and unboxed
/// from one. Used by TypedModule (the type-erased entry point) and ModuleHolder (the typed
/// call operators with the caller's source location).

#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/nn/module.hpp"

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace symtrace::detail {

template <class... T>
struct TypeList {};

/// What an unboxing failure reports: which module, which parameter (or the result).
struct UnboxContext {
  const Module* module;
  std::string_view parameter;      ///< empty for the result
  std::size_t position;            ///< 1-based position of the parameter
  std::string_view declared = {};  ///< the declared type when it wraps the checked one (Optional[...])
};

/// Throws std::invalid_argument: "T.forward(): argument 'x' (position 1) must be Tensor, got int"
/// or "T.forward() returns Tensor, but the call produced list".
[[noreturn]] void throw_unbox_error(const UnboxContext& context, std::string_view expected,
                                    const Value& got);

/// How a forward parameter/result type maps to a Value. Specialised below for every
/// supported type; an unsupported type fails to compile with the message in TypedModule.
template <class T>
struct ArgCodec;

template <>
struct ArgCodec<Tensor> {
  static constexpr ParamType type = ParamType::tensor;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "Tensor"; }
  static Value box(const Tensor& t) { return Value(t); }
  static Tensor unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_tensor()) throw_unbox_error(c, name(), v);
    return v.to_tensor();
  }
};

template <class T>
requires(std::integral<T> && !std::same_as<T, bool>) struct ArgCodec<T> {
  static constexpr ParamType type = ParamType::integer;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "int"; }
  static Value box(T v) { return Value(static_cast<std::int64_t>(v)); }
  static T unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_int()) throw_unbox_error(c, name(), v);
    const std::int64_t i = v.to_int();
    if (!std::in_range<T>(i)) throw_unbox_error(c, "an int in range", v);
    return static_cast<T>(i);
  }
};

/// A SymInt parameter takes an int or a proxy SymInt: the forward works on sizes unknown at trace
/// time (a module traced as a root gets a symbolic one).
template <>
struct ArgCodec<SymInt> {
  static constexpr ParamType type = ParamType::sym_int;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "SymInt"; }
  static Value box(const SymInt& v) { return Value(v); }
  static SymInt unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_int() && !v.is_symint()) throw_unbox_error(c, name(), v);
    return v.to_sym_int();
  }
};

template <std::floating_point T>
struct ArgCodec<T> {
  static constexpr ParamType type = ParamType::floating;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "float"; }
  static Value box(T v) { return Value(static_cast<double>(v)); }
  static T unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_double() && !v.is_int()) throw_unbox_error(c, name(), v);
    return static_cast<T>(v.to_double());
  }
};

template <>
struct ArgCodec<bool> {
  static constexpr ParamType type = ParamType::boolean;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "bool"; }
  static Value box(bool v) { return Value(v); }
  static bool unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_bool()) throw_unbox_error(c, name(), v);
    return v.to_bool();
  }
};

template <>
struct ArgCodec<std::string> {
  static constexpr ParamType type = ParamType::string;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "str"; }
  static Value box(const std::string& v) { return Value(v); }
  static std::string unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_string()) throw_unbox_error(c, name(), v);
    return v.to_string_ref();
  }
};

template <>
struct ArgCodec<TensorList> {
  static constexpr ParamType type = ParamType::tensor_list;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "List[Tensor]"; }
  static Value box(const TensorList& v) { return Value(v); }
  static TensorList unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_list()) throw_unbox_error(c, name(), v);
    for (const Value& e : v.to_list())
      if (!e.is_tensor()) throw_unbox_error(c, name(), v);
    return v.to_tensor_list();
  }
};

template <>
struct ArgCodec<IntList> {
  static constexpr ParamType type = ParamType::int_list;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "List[int]"; }
  static Value box(const IntList& v) { return Value(v); }
  static IntList unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_list()) throw_unbox_error(c, name(), v);
    for (const Value& e : v.to_list())
      if (!e.is_int()) throw_unbox_error(c, name(), v);
    return v.to_int_list();
  }
};

template <>
struct ArgCodec<Value> {
  static constexpr ParamType type = ParamType::any;
  static constexpr bool optional = false;
  static std::string_view name() noexcept { return "Any"; }
  static Value box(const Value& v) { return v; }
  static Value unbox(const Value& v, const UnboxContext&) { return v; }
};

template <class T>
struct ArgCodec<std::optional<T>> {
  static constexpr ParamType type = ArgCodec<T>::type;
  static constexpr bool optional = true;
  static std::string_view name() {
    static const std::string n = "Optional[" + std::string(ArgCodec<T>::name()) + "]";
    return n;
  }
  static Value box(const std::optional<T>& v) { return v ? ArgCodec<T>::box(*v) : Value(); }
  static std::optional<T> unbox(const Value& v, const UnboxContext& c) {
    if (v.is_none()) return std::nullopt;
    UnboxContext declared = c;
    declared.declared = name();
    return ArgCodec<T>::unbox(v, declared);
  }
};

/// Tuples are results only: boxed as a list of their elements.
template <class... T>
struct ArgCodec<std::tuple<T...>> {
  static constexpr ParamType type = ParamType::tuple;
  static constexpr bool optional = false;
  static std::string_view name() {
    static const std::string n = [] {
      std::string s = "Tuple[";
      std::size_t i = 0;
      ((s += (i++ ? ", " : ""), s += ArgCodec<T>::name()), ...);
      return s + "]";
    }();
    return n;
  }
  static Value box(const std::tuple<T...>& v) {
    return std::apply([](const T&... e) { return Value(ValueList{ArgCodec<T>::box(e)...}); }, v);
  }
  static std::tuple<T...> unbox(const Value& v, const UnboxContext& c) {
    if (!v.is_list() || v.to_list().size() != sizeof...(T)) throw_unbox_error(c, name(), v);
    const ValueList& l = v.to_list();
    UnboxContext declared = c;
    declared.declared = name();
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<T...>(ArgCodec<T>::unbox(l[I], declared)...);
    }
    (std::index_sequence_for<T...>{});
  }
};

template <class T>
concept Boxable = requires { ArgCodec<std::remove_cvref_t<T>>::type; };

template <class F>
struct MemberFunctionTraits;
template <class C, class R, class... P>
struct MemberFunctionTraits<R (C::*)(P...)> {
  using Result = R;
  using Params = std::tuple<P...>;
};
template <class C, class R, class... P>
struct MemberFunctionTraits<R (C::*)(P...) const> : MemberFunctionTraits<R (C::*)(P...)> {};
template <class C, class R, class... P>
struct MemberFunctionTraits<R (C::*)(P...) noexcept> : MemberFunctionTraits<R (C::*)(P...)> {};
template <class C, class R, class... P>
struct MemberFunctionTraits<R (C::*)(P...) const noexcept>
    : MemberFunctionTraits<R (C::*)(P...)> {};

/// True when `D` has exactly one member function `forward` (not overloaded, not a template).
template <class D>
concept HasForward = requires { &D::forward; };

/// Everything known about `D::forward` at compile time.
template <class D>
struct ForwardTraits {
  using Function = MemberFunctionTraits<decltype(&D::forward)>;
  using Result = typename Function::Result;
  using Params = typename Function::Params;
  static constexpr std::size_t arity = std::tuple_size_v<Params>;
  template <std::size_t I>
  using Param = std::tuple_element_t<I, Params>;
  template <std::size_t I>
  using Codec = ArgCodec<std::remove_cvref_t<Param<I>>>;
  using ResultCodec = ArgCodec<std::remove_cvref_t<Result>>;

  /// Parameters before the run of trailing optional ones.
  static constexpr std::size_t num_required = [] {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      constexpr std::array<bool, sizeof...(I) + 1> optional{Codec<I>::optional..., false};
      std::size_t n = sizeof...(I);
      while (n > 0 && optional[n - 1]) --n;
      return n;
    }
    (std::make_index_sequence<arity>{});
  }();

  template <class Seq>
  struct PrefixOf;
  template <std::size_t... I>
  struct PrefixOf<std::index_sequence<I...>> {
    using type = TypeList<Param<I>...>;
  };
  /// The first K parameter types.
  template <std::size_t K>
  using Prefix = typename PrefixOf<std::make_index_sequence<K>>::type;
};

/// Parameter types a forward may take: by value or const reference.
template <class P>
concept ForwardParameterType =
    // clang-format off
    Boxable<P> && (!std::is_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>) &&
    !std::same_as<std::remove_cvref_t<P>, std::tuple<>>;
// clang-format on

/// The static signature of `D::forward`, with default input names: "x" for one input,
/// "x0", "x1", ... for several.
template <class D>
ForwardSignature make_forward_signature() {
  using T = ForwardTraits<D>;
  ForwardSignature sig;
  sig.num_required = T::num_required;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (sig.parameters.push_back(ForwardParameter{
         T::arity == 1 ? std::string("x") : "x" + std::to_string(I), T::template Codec<I>::type,
         T::template Codec<I>::optional, T::template Codec<I>::name()}),
     ...);
  }
  (std::make_index_sequence<T::arity>{});
  sig.result = T::ResultCodec::type;
  sig.result_type_name = T::ResultCodec::name();
  if constexpr (T::ResultCodec::type == ParamType::tuple)
    sig.result_arity = std::tuple_size_v<std::remove_cvref_t<typename T::Result>>;
  return sig;
}

/// Throws std::invalid_argument: "T.forward() takes 1 argument (x), got 2".
[[noreturn]] void throw_arity_error(const Module& module, std::size_t given);

}  // namespace symtrace::detail

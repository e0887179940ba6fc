#pragma once
/// \file
/// `Argument`: a value in a node's positional or keyword arguments, as fx's `Argument`:
/// None, bool, int, float, string, dtype, a reference to another node (`NodeId`), or a list of
/// arguments. Everything that walks arguments goes through `for_each_node` and `map_nodes`,
/// just as fx routes everything through `map_arg`.

#include "symtrace/core/dtype.hpp"
#include "symtrace/graph/node_id.hpp"

#include <boost/variant2/variant.hpp>
#include <fmt/core.h>

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace {

class Node;
struct Argument;

/// A list argument (`[1, 2]`, `[%a, %b]`); nested lists are allowed.
using ArgumentList = std::vector<Argument>;
/// A node's positional arguments.
using Arguments = std::vector<Argument>;
/// A node's keyword arguments, in call order (names are unique within a node).
using KeywordArguments = std::vector<std::pair<std::string, Argument>>;

/// Builds a visitor from lambdas: `visit(overloaded{[](bool) {...}, [](auto&&) {...}}, v)`.
template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

/// One argument value. `value` is a `boost::variant2::variant` whose first alternative,
/// `monostate`, is None; the order of alternatives is fixed (serialisation stores the index).
///
///     Argument a = 3;                    // int64
///     Argument n = node;                 // reference to a node of the same graph
///     Argument l = Argument::list({1, node, DType::float32, "x", {}});
///     fmt::print("{}", l);               // [1, %3, symtrace.float32, 'x', None]
struct Argument {
  using Value = boost::variant2::variant<boost::variant2::monostate, bool, std::int64_t, double,
                                         std::string, DType, NodeId, ArgumentList>;
  Value value;

  /// None.
  Argument() noexcept = default;
  Argument(boost::variant2::monostate) noexcept {}  // NOLINT: implicit
  Argument(bool b) noexcept : value(b) {}            // NOLINT: implicit
  /// Any integer type but bool (a `char` is a number here, not a string).
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Argument(I i) noexcept : value(static_cast<std::int64_t>(i)) {}  // NOLINT: implicit
  template <std::floating_point F>
  Argument(F f) noexcept : value(static_cast<double>(f)) {}  // NOLINT: implicit
  Argument(std::string s) noexcept : value(std::move(s)) {}  // NOLINT: implicit
  Argument(std::string_view s) : value(std::string(s)) {}    // NOLINT: implicit
  Argument(const char* s) : value(std::string(s)) {}         // NOLINT: implicit
  Argument(DType d) noexcept : value(d) {}                   // NOLINT: implicit
  Argument(NodeId id) noexcept : value(id) {}                // NOLINT: implicit
  /// A reference to `node` (by id: it is only meaningful in the node's graph and its copies).
  Argument(const Node& node) noexcept;  // NOLINT: implicit
  Argument(ArgumentList list) noexcept : value(std::move(list)) {}  // NOLINT: implicit

  /// A list argument: `Argument::list({1, 2, node})`.
  [[nodiscard]] static Argument list(std::initializer_list<Argument> items) {
    return Argument(ArgumentList(items));
  }

  [[nodiscard]] bool is_none() const noexcept { return value.index() == 0; }
  [[nodiscard]] bool is_node() const noexcept { return value.index() == 6; }
  [[nodiscard]] bool is_list() const noexcept { return value.index() == 7; }

  /// A pointer to the alternative `T`, or nullptr: `if (auto* id = arg.get_if<NodeId>())`.
  template <class T>
  [[nodiscard]] const T* get_if() const noexcept {
    return boost::variant2::get_if<T>(&value);
  }
  template <class T>
  [[nodiscard]] T* get_if() noexcept {
    return boost::variant2::get_if<T>(&value);
  }

  friend bool operator==(const Argument& a, const Argument& b) noexcept { return a.value == b.value; }
};

/// Calls `f(NodeId)` for each node reference in `arg`, depth first, left to right.
template <class F>
void for_each_node(const Argument& arg, F&& f) {
  if (const NodeId* id = arg.get_if<NodeId>()) {
    f(*id);
  } else if (const ArgumentList* list = arg.get_if<ArgumentList>()) {
    for (const Argument& item : *list) for_each_node(item, f);
  }
}

/// Calls `f(NodeId)` for each node reference in `args` then `kwargs`, in order: the order
/// that numbers uses (a use's position is its rank in this walk).
template <class F>
void for_each_node(const Arguments& args, const KeywordArguments& kwargs, F&& f) {
  for (const Argument& a : args) for_each_node(a, f);
  for (const auto& [key, a] : kwargs) for_each_node(a, f);
}

/// A copy of `arg` in which every node reference `id` is replaced by `f(id)` (an Argument).
template <class F>
[[nodiscard]] Argument map_nodes(const Argument& arg, F&& f) {
  if (const NodeId* id = arg.get_if<NodeId>()) return Argument(f(*id));
  if (const ArgumentList* list = arg.get_if<ArgumentList>()) {
    ArgumentList out;
    out.reserve(list->size());
    for (const Argument& item : *list) out.push_back(map_nodes(item, f));
    return Argument(std::move(out));
  }
  return arg;
}

/// True when `arg` refers to a node anywhere inside.
[[nodiscard]] bool contains_node(const Argument& arg) noexcept;

/// Python-like text: `None`, `True`, `3`, `1.0`, `1e-05`, `'text'`, `symtrace.float32`, `%7`,
/// `[1, %7]`. Node references print by id; graph printing prints them by name.
[[nodiscard]] std::string to_string(const Argument& arg);

namespace detail {
/// Appends Python's `repr` of a double (`1.0`, `1e-05`, `inf`, `nan`) to `out`.
void append_float(std::string& out, double value);
/// Appends Python's `repr` of a string (single quotes, backslash escapes) to `out`.
void append_quoted(std::string& out, std::string_view text);
}  // namespace detail

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::Argument> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Argument& arg, format_context& ctx) const -> format_context::iterator;
};

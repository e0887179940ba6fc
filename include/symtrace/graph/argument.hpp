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
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
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

namespace detail {
/// A heap-held value with value semantics (deep copies). Strings and lists are boxed so that
/// an Argument takes 16 bytes, not 40: most arguments are node references and small numbers,
/// and a node's argument vector is a large part of its memory. A moved-from box reads as empty.
template <class T>
class Boxed {
 public:
  Boxed() = default;
  explicit Boxed(T value) : p_(std::make_unique<T>(std::move(value))) {}
  Boxed(const Boxed& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Boxed(Boxed&& other) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&& other) noexcept = default;
  ~Boxed() = default;

  [[nodiscard]] const T& get() const noexcept {
    static const T empty{};
    return p_ ? *p_ : empty;
  }
  [[nodiscard]] T& get() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  friend bool operator==(const Boxed& a, const Boxed& b) noexcept { return a.get() == b.get(); }

 private:
  std::unique_ptr<T> p_;
};
}  // namespace detail

/// One argument value. `value` is a `boost::variant2::variant` whose first alternative,
/// `monostate`, is None; the order of alternatives is fixed (serialisation stores the index).
/// Strings and lists are held in `detail::Boxed` (see there); read them with
/// `get_if<std::string>()` and `get_if<ArgumentList>()`, which see through the box.
///
///     Argument a = 3;                    // int64
///     Argument n = node;                 // reference to a node of the same graph
///     Argument l = Argument::list({1, node, DType::float32, "x", {}});
///     fmt::print("{}", l);               // [1, %3, symtrace.float32, 'x', None]
struct Argument {
  using Value = boost::variant2::variant<boost::variant2::monostate, bool, std::int64_t, double,
                                         detail::Boxed<std::string>, DType, NodeId, detail::Boxed<ArgumentList>>;
  Value value;

  /// None.
  Argument() noexcept = default;
  Argument(boost::variant2::monostate) noexcept {}  // NOLINT: implicit
  Argument(bool b) noexcept : value(b) {}           // NOLINT: implicit
  /// Any integer type but bool (a `char` is a number here, not a string).
  template <std::integral I>
  requires(!std::same_as<I, bool>)
      Argument(I i)
  noexcept : value(static_cast<std::int64_t>(i)) {}  // NOLINT: implicit
  template <std::floating_point F>
  Argument(F f) noexcept : value(static_cast<double>(f)) {}                     // NOLINT: implicit
  Argument(std::string s) : value(detail::Boxed<std::string>(std::move(s))) {}  // NOLINT: implicit
  Argument(std::string_view s) : Argument(std::string(s)) {}                    // NOLINT: implicit
  Argument(const char* s) : Argument(std::string(s)) {}                         // NOLINT: implicit
  Argument(DType d) noexcept : value(d) {}                                      // NOLINT: implicit
  Argument(NodeId id) noexcept : value(id) {}                                   // NOLINT: implicit
  /// A reference to `node` (by id: it is only meaningful in the node's graph and its copies).
  Argument(const Node& node) noexcept;                                                  // NOLINT: implicit
  Argument(ArgumentList list) : value(detail::Boxed<ArgumentList>(std::move(list))) {}  // NOLINT: implicit

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
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, ArgumentList>) {
      const auto* box = boost::variant2::get_if<detail::Boxed<T>>(&value);
      return box != nullptr ? &box->get() : nullptr;
    } else {
      return boost::variant2::get_if<T>(&value);
    }
  }
  template <class T>
  [[nodiscard]] T* get_if() {
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, ArgumentList>) {
      auto* box = boost::variant2::get_if<detail::Boxed<T>>(&value);
      return box != nullptr ? &box->get() : nullptr;
    } else {
      return boost::variant2::get_if<T>(&value);
    }
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

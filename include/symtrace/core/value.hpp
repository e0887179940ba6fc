#pragma once
/// \file
/// `Value`: what flows through a module's `forward` and an op's argument list: none, bool,
/// int64, double, string, dtype, Tensor, a list of values, a proxy SymInt (a size unknown at
/// trace time; known SymInts are stored as int64), a dict of values, a proxy SymFloat (a float
/// computed from such sizes; known ones are stored as double), (inside the TorchScript
/// executor only) a list or dict shared by reference, or another library's object held opaque. It is the boxed form the
/// type-erased module entry point, the op registry and (later) the interpreter exchange.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/core/sym_float.hpp"
#include "symtrace/core/tensor.hpp"

#include <boost/variant2/variant.hpp>
#include <fmt/core.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace symtrace {

struct Value;
using ValueList = std::vector<Value>;

/// A dict in insertion order, as Python's and TorchScript's (`Dict[str, Tensor]`, an
/// `OrderedDict` of features): `keys[i]` maps to `values[i]`; keys are distinct. Dicts are
/// small, so lookups are linear.
struct ValueDict {
  ValueList keys;
  ValueList values;

  [[nodiscard]] std::size_t size() const noexcept;  // defined below, where Value is complete
  /// The value of `key`, or nullptr (keys compare by kind and value: 1 is not '1').
  [[nodiscard]] const Value* find(const Value& key) const noexcept;
  /// Sets `key` to `value`, in place if present, else at the end.
  void insert_or_assign(Value key, Value value);
};

/// A list or dict shared by reference, as TorchScript's and Python's: copies of the Value share
/// the one container, so a change made through one is seen through all. Only the TorchScript
/// executor makes them, and no value leaves its runs with one (Note [Lists and dicts are
/// references], src/torchscript/program.hpp): ops, modules, tracers and graphs never see one.
using ValueRef = std::shared_ptr<Value>;

/// An object of another library's that symtrace holds without looking into it (a TorchScript
/// custom class's, such as a quantized convolution's packed weights,
/// `torch.classes.quantized.Conv2dPackedParamsBase`), passed back to that library's ops as it
/// came. Copies share the object; two compare equal when they hold the same object.
struct OpaqueObject {
  std::shared_ptr<const void> object;
  const std::type_info* type = nullptr;  ///< the type of *object
  std::string type_name;                 ///< the other library's name of the object's class

  /// Holds `object`, a `T` that `get<T>()` gives back.
  template <class T>
  static OpaqueObject of(std::shared_ptr<const T> object, std::string type_name) {
    return OpaqueObject{std::shared_ptr<const void>(std::move(object)), &typeid(T), std::move(type_name)};
  }
  /// The object, when it is a `T`; nullptr otherwise.
  template <class T> [[nodiscard]] const T* get() const noexcept {
    return type != nullptr && *type == typeid(T) ? static_cast<const T*>(object.get()) : nullptr;
  }
  friend bool operator==(const OpaqueObject& a, const OpaqueObject& b) noexcept { return a.object == b.object; }
};

/// A boxed value. The alternatives are append-only (serialised forms store the index).
struct Value {
  using None = boost::variant2::monostate;
  using Variant = boost::variant2::variant<None, bool, std::int64_t, double, std::string, DType,
                                           Tensor, ValueList, SymInt, ValueDict, ValueRef, OpaqueObject,
                                           SymFloat>;
  /// Alternative indices, for switch statements.
  enum class Kind : std::uint8_t {
    none,
    boolean,
    integer,
    floating,
    string,
    dtype,
    tensor,
    list,
    symint,
    dict,
    ref,
    opaque,
    symfloat
  };

  Value() noexcept = default;
  Value(std::nullopt_t) noexcept {}  // NOLINT
  template <Arithmetic T>
  Value(T v) : value(box(v)) {}                    // NOLINT: implicit, as in an argument list
  Value(const Scalar& s);                          // NOLINT
  Value(std::string s) : value(std::move(s)) {}    // NOLINT
  Value(const char* s) : value(std::string(s)) {}  // NOLINT
  Value(DType d) : value(d) {}                     // NOLINT
  Value(Tensor t) : value(std::move(t)) {}         // NOLINT
  Value(ValueList l) : value(std::move(l)) {}      // NOLINT
  Value(ValueDict d) : value(std::move(d)) {}      // NOLINT
  Value(OpaqueObject o) : value(std::move(o)) {}   // NOLINT
  Value(const TensorList& l);                      // NOLINT
  Value(const IntList& l);                         // NOLINT
  Value(const std::vector<double>& l);             // NOLINT
  /// A known SymInt becomes an int64, a proxy stays a SymInt.
  Value(const SymInt& s);  // NOLINT
  /// A known SymFloat becomes a double, a proxy stays a SymFloat.
  Value(const SymFloat& s);  // NOLINT
  /// A list of ints and proxy SymInts.
  Value(const SymIntList& l);  // NOLINT
  template <class T>
  Value(const std::optional<T>& o) {  // NOLINT
    if (o) *this = Value(*o);
  }

  [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(value.index()); }
  [[nodiscard]] bool is_none() const noexcept { return kind() == Kind::none; }
  [[nodiscard]] bool is_bool() const noexcept { return kind() == Kind::boolean; }
  [[nodiscard]] bool is_int() const noexcept { return kind() == Kind::integer; }
  [[nodiscard]] bool is_double() const noexcept { return kind() == Kind::floating; }
  /// bool, int or double.
  [[nodiscard]] bool is_number() const noexcept { return is_bool() || is_int() || is_double(); }
  [[nodiscard]] bool is_string() const noexcept { return kind() == Kind::string; }
  [[nodiscard]] bool is_dtype() const noexcept { return kind() == Kind::dtype; }
  [[nodiscard]] bool is_tensor() const noexcept { return kind() == Kind::tensor; }
  [[nodiscard]] bool is_list() const noexcept { return kind() == Kind::list; }
  /// A proxy SymInt (a size unknown at trace time).
  [[nodiscard]] bool is_symint() const noexcept { return kind() == Kind::symint; }
  [[nodiscard]] bool is_dict() const noexcept { return kind() == Kind::dict; }
  /// A proxy SymFloat (a float computed from sizes unknown at trace time).
  [[nodiscard]] bool is_symfloat() const noexcept { return kind() == Kind::symfloat; }
  /// A list or dict shared by reference (ValueRef).
  [[nodiscard]] bool is_ref() const noexcept { return kind() == Kind::ref; }
  /// Another library's object (OpaqueObject).
  [[nodiscard]] bool is_opaque() const noexcept { return kind() == Kind::opaque; }
  /// The shared list or dict of a ref, else this value.
  [[nodiscard]] const Value& deref() const noexcept {
    return is_ref() ? *boost::variant2::get<ValueRef>(value) : *this;
  }

  // Checked accessors: each throws std::invalid_argument naming the expected and actual kind.
  [[nodiscard]] bool to_bool() const;
  /// An int (also from a bool); a proxy SymInt throws TraceError (its value is unknown).
  [[nodiscard]] std::int64_t to_int() const;
  /// An int or a proxy SymInt.
  [[nodiscard]] SymInt to_sym_int() const;
  /// A double, also from an int; a proxy SymFloat or SymInt throws TraceError (its value is
  /// unknown).
  [[nodiscard]] double to_double() const;
  /// A double, an int or a proxy SymFloat, as a SymFloat.
  [[nodiscard]] SymFloat to_sym_float() const;
  [[nodiscard]] Scalar to_scalar() const;
  [[nodiscard]] const std::string& to_string_ref() const;
  [[nodiscard]] DType to_dtype() const;
  [[nodiscard]] const Tensor& to_tensor() const;
  /// A list, also a shared one (a ref's).
  [[nodiscard]] const ValueList& to_list() const;
  /// A dict, also a shared one (a ref's).
  [[nodiscard]] const ValueDict& to_dict() const;
  [[nodiscard]] IntList to_int_list() const;
  [[nodiscard]] std::vector<double> to_double_list() const;
  [[nodiscard]] TensorList to_tensor_list() const;

  /// "None", "bool", "int", "float", "str", "dtype", "Tensor", "list", "SymInt", "SymFloat", "dict" (a
  /// ref's is its list's or dict's), or an opaque object's class name.
  [[nodiscard]] std::string_view type_name() const noexcept;

  Variant value;

 private:
  template <Arithmetic T>
  static Variant box(T v) noexcept {
    if constexpr (std::is_same_v<T, bool>) return Variant(v);
    else if constexpr (std::is_integral_v<T>) return Variant(static_cast<std::int64_t>(v));
    else return Variant(static_cast<double>(v));
  }
};

inline std::size_t ValueDict::size() const noexcept { return keys.size(); }

/// "None", "True", "3", "2.5", "'text'", "float32", a tensor, "[1, 2]", "{'out': ...}".
[[nodiscard]] std::string to_string(const Value& value);

}  // namespace symtrace

template <>
struct fmt::formatter<symtrace::Value> : fmt::formatter<std::string_view> {
  auto format(const symtrace::Value& v, format_context& ctx) const -> format_context::iterator;
};

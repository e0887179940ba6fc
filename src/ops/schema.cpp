#include "symtrace/ops/schema.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <stdexcept>

namespace symtrace {

namespace {

struct TypeName {
  std::string_view text;
  ArgType type;
};
constexpr TypeName kTypes[] = {
    // clang-format off
    {"Tensor|Scalar", ArgType::TensorOrScalar}, {"Tensor", ArgType::Tensor}, {"int", ArgType::int_},
    {"float", ArgType::float_}, {"bool", ArgType::bool_}, {"Scalar", ArgType::Scalar},
    {"str", ArgType::str}, {"ScalarType", ArgType::ScalarType}, {"Any", ArgType::Any},
    {"number", ArgType::number}};
// clang-format on

// A tiny recursive-descent parser over the schema text.
class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  OpSchema parse() {
    OpSchema schema;
    schema.name = identifier("op name", true);
    expect('(');
    bool kwarg_only = false;
    skip_space();
    if (peek() != ')') {
      for (;;) {
        skip_space();
        if (peek() == '*') {
          ++pos_;
          kwarg_only = true;
        } else {
          ArgSpec arg = argument();
          arg.kwarg_only = kwarg_only;
          if (!arg.default_value && !schema.args.empty() && schema.args.back().default_value && !kwarg_only)
            fail("argument '" + arg.name + "' without a default follows one with a default");
          schema.args.push_back(std::move(arg));
        }
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        break;
      }
    }
    expect(')');
    expect('-');
    expect('>');
    skip_space();
    if (text_.substr(pos_, 8) == "Tensor[]") {
      schema.returns = ReturnType::TensorList;
      pos_ += 8;
    } else if (text_.substr(pos_, 6) == "Tensor") {
      pos_ += 6;
    } else if (text_.substr(pos_, 3) == "int") {
      schema.returns = ReturnType::int_;
      pos_ += 3;
    } else if (text_.substr(pos_, 4) == "bool") {
      schema.returns = ReturnType::bool_;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "float") {
      schema.returns = ReturnType::float_;
      pos_ += 5;
    } else if (text_.substr(pos_, 6) == "number") {
      schema.returns = ReturnType::number;
      pos_ += 6;
    } else {
      fail("expected the return type Tensor, Tensor[], int, bool, float or number");
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the return type");
    return schema;
  }

 private:
  ArgSpec argument() {
    ArgSpec arg;
    skip_space();
    bool found = false;
    for (const auto& t : kTypes) {
      if (text_.substr(pos_, t.text.size()) == t.text &&
          (pos_ + t.text.size() == text_.size() || !std::isalnum(static_cast<unsigned char>(text_[pos_ + t.text.size()])))) {
        arg.type = t.type;
        pos_ += t.text.size();
        found = true;
        break;
      }
    }
    if (!found) fail("unknown argument type");
    if (text_.substr(pos_, 3) == "?[]") {  // a list of optional items: `Tensor?[]`
      arg.items_optional = true;
      ++pos_;
    }
    if (text_.substr(pos_, 2) == "[]") {
      arg.is_list = true;
      pos_ += 2;
    }
    if (peek() == '?') {
      arg.is_optional = true;
      ++pos_;
    }
    arg.name = identifier("argument name");
    skip_space();
    if (peek() == '=') {
      ++pos_;
      skip_space();
      arg.default_value = value();
      if (!OpSchema::accepts(arg, *arg.default_value))
        fail("the default of '" + arg.name + "' does not have its type " + type_string(arg));
    }
    return arg;
  }

  Value value() {
    skip_space();
    const char c = peek();
    if (c == '[') {
      ++pos_;
      ValueList list;
      skip_space();
      while (peek() != ']') {
        list.push_back(value());
        skip_space();
        if (peek() == ',') ++pos_;
        else if (peek() != ']') fail("expected ',' or ']' in a list default");
        skip_space();
      }
      ++pos_;
      return list;
    }
    if (c == '\'') {
      const auto end = text_.find('\'', pos_ + 1);
      if (end == std::string_view::npos) fail("unterminated string default");
      std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      return s;
    }
    std::size_t end = pos_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '.' ||
                                  text_[end] == '-' || text_[end] == '+' || text_[end] == '_'))
      ++end;
    const std::string_view word = text_.substr(pos_, end - pos_);
    if (word.empty()) fail("expected a default value");
    pos_ = end;
    if (word == "None") return Value();
    if (word == "True") return true;
    if (word == "False") return false;
    std::int64_t i = 0;
    auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), i);
    if (ec == std::errc() && p == word.data() + word.size()) return i;
    double d = 0;
    auto [q, ec2] = std::from_chars(word.data(), word.data() + word.size(), d);
    if (ec2 == std::errc() && q == word.data() + word.size()) return d;
    fail("cannot read the default value '" + std::string(word) + "'");
  }

  // An op name may be qualified (`operator.mul`); argument names may not.
  std::string identifier(const char* what, bool qualified = false) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   (qualified && text_[pos_] == '.' && pos_ > start)))
      ++pos_;
    if (start == pos_) fail(std::string("expected ") + what);
    return std::string(text_.substr(start, pos_ - start));
  }

  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument(fmt::format("invalid op schema '{}': {} at column {}", text_, why, pos_ + 1));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

bool accepts_one(ArgType type, const Value& v) noexcept {
  switch (type) {
    case ArgType::Tensor: return v.is_tensor() && v.to_tensor().defined();
    case ArgType::int_: return v.is_int() || v.is_symint();
    case ArgType::float_: return v.is_double() || v.is_int();
    case ArgType::bool_: return v.is_bool();
    case ArgType::Scalar: return v.is_number();
    case ArgType::str: return v.is_string();
    case ArgType::ScalarType: return v.is_dtype();
    case ArgType::TensorOrScalar: return v.is_number() || v.is_symint() || v.is_symfloat() || (v.is_tensor() && v.to_tensor().defined());
    case ArgType::Any: return true;
    case ArgType::number: return v.is_number() || v.is_symint() || v.is_symfloat();
  }
  return false;
}

std::string value_source(const Value& v) {
  if (v.is_string()) return fmt::format("'{}'", v.to_string_ref());
  return to_string(v);
}

}  // namespace

std::optional<std::size_t> OpSchema::find_arg(std::string_view arg) const noexcept {
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].name == arg) return i;
  return std::nullopt;
}

bool OpSchema::accepts(const ArgSpec& spec, const Value& value) noexcept {
  if (value.is_none()) return spec.is_optional;
  if (!spec.is_list) return accepts_one(spec.type, value);
  if (!value.is_list()) return false;
  for (const Value& v : boost::variant2::get<ValueList>(value.value))
    if (!(spec.items_optional && v.is_none()) && !accepts_one(spec.type, v)) return false;
  return true;
}

OpSchema parse_schema(std::string_view text) { return SchemaParser(text).parse(); }

std::string type_string(const ArgSpec& spec) {
  std::string out;
  for (const auto& t : kTypes)
    if (t.type == spec.type) out = std::string(t.text);
  if (spec.items_optional) out += "?";
  if (spec.is_list) out += "[]";
  if (spec.is_optional) out += "?";
  return out;
}

std::string to_string(const OpSchema& schema) {
  std::string out = schema.name + "(";
  bool star = false;
  for (std::size_t i = 0; i < schema.args.size(); ++i) {
    const ArgSpec& a = schema.args[i];
    if (i) out += ", ";
    if (a.kwarg_only && !star) {
      out += "*, ";
      star = true;
    }
    // Appended piece by piece: g++ 12 -O3 reports a false -Wrestrict on `"=" + std::string`.
    out += type_string(a);
    out += ' ';
    out += a.name;
    if (a.default_value) {
      out += '=';
      out += value_source(*a.default_value);
    }
  }
  switch (schema.returns) {
    case ReturnType::Tensor: return out + ") -> Tensor";
    case ReturnType::TensorList: return out + ") -> Tensor[]";
    case ReturnType::int_: return out + ") -> int";
    case ReturnType::bool_: return out + ") -> bool";
    case ReturnType::float_: return out + ") -> float";
    case ReturnType::number: return out + ") -> number";
  }
  return out;
}

}  // namespace symtrace

auto fmt::formatter<symtrace::OpSchema>::format(const symtrace::OpSchema& s, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(s), ctx);
}

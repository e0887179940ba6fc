// Argument values as Python would print them (None, True, 1.0, 'text', [1, %7]): the leaf
// formatting graph printing builds on, plus the few non-template queries of argument.hpp.
#include "symtrace/graph/argument.hpp"

#include "symtrace/core/dtype.hpp"
#include "symtrace/graph/node.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace symtrace {

static_assert(sizeof(Argument) == 16, "an Argument is a tag and one word: strings and lists are boxed");

Argument::Argument(const Node& node) noexcept : value(node.id()) {}

bool contains_node(const Argument& arg) noexcept {
  if (arg.is_node()) return true;
  if (const ArgumentList* list = arg.get_if<ArgumentList>()) {
    for (const Argument& item : *list) {
      if (contains_node(item)) return true;
    }
  }
  return false;
}

namespace detail {

void append_float(std::string& out, double value) {
  // Python spells the non-finite values without a sign on NaN; fmt would print "-nan".
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-inf" : "inf";
    return;
  }
  // fmt's shortest round-trip form switches to exponent notation at the same thresholds as
  // Python's repr (exp < -4 or exp >= 16), so only the ".0" of integral values is missing.
  const std::size_t start = out.size();
  fmt::format_to(std::back_inserter(out), "{}", value);
  if (out.find_first_of(".e", start) == std::string::npos) out += ".0";
}

void append_quoted(std::string& out, std::string_view text) {
  // Always single quotes (Python switches to double quotes for text holding a single quote;
  // one fixed form is easier to compare). Bytes >= 0x80 pass through, so UTF-8 stays readable.
  out += '\'';
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
        } else {
          out += c;
        }
    }
  }
  out += '\'';
}

}  // namespace detail

namespace {

void append_argument(std::string& out, const Argument& arg) {
  boost::variant2::visit(
      overloaded{
          [&](boost::variant2::monostate) { out += "None"; },
          [&](bool b) { out += b ? "True" : "False"; },
          [&](std::int64_t i) { fmt::format_to(std::back_inserter(out), "{}", i); },
          [&](double d) { detail::append_float(out, d); },
          [&](const detail::Boxed<std::string>& s) { detail::append_quoted(out, s.get()); },
          [&](DType d) {
            out += "symtrace.";
            out += name(d);
          },
          [&](NodeId id) { fmt::format_to(std::back_inserter(out), "{}", id); },
          [&](const detail::Boxed<ArgumentList>& box) {
            const ArgumentList& list = box.get();
            out += '[';
            for (std::size_t i = 0; i < list.size(); ++i) {
              if (i != 0) out += ", ";
              append_argument(out, list[i]);
            }
            out += ']';
          },
      },
      arg.value);
}

}  // namespace

std::string to_string(const Argument& arg) {
  std::string out;
  append_argument(out, arg);
  return out;
}

}  // namespace symtrace

auto fmt::formatter<symtrace::NodeId>::format(symtrace::NodeId id, format_context& ctx) const
    -> format_context::iterator {
  fmt::basic_memory_buffer<char, 16> text;
  if (id.is_valid()) {
    fmt::format_to(std::back_inserter(text), "%{}", id.value);
  } else {
    fmt::format_to(std::back_inserter(text), "%<invalid>");
  }
  return formatter<std::string_view>::format(std::string_view(text.data(), text.size()), ctx);
}

auto fmt::formatter<symtrace::Argument>::format(const symtrace::Argument& arg, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(arg), ctx);
}

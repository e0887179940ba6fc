#pragma once
// The parts of the graph document that other documents embed (the report document holds
// graph documents and shapes): writers, and readers that throw DocumentError naming the place
// (see Note [Reading hostile documents] in graph_json.cpp). Each public reader prefixes the
// place with its own name ("graph_from_json: ...", "report_from_json: ...").
#include "symtrace/core/dtype.hpp"
#include "symtrace/core/shape.hpp"
#include "symtrace/graph/graph.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace symtrace::detail {

using Json = nlohmann::ordered_json;

/// A document that cannot be read: "place: what is wrong, and what to do".
struct DocumentError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

template <class... A>
[[noreturn]] void document_error(const std::string& at, fmt::format_string<A...> what, A&&... args) {
  throw DocumentError(fmt::format("{}: {}", at, fmt::format(what, std::forward<A>(args)...)));
}

/// `text` parsed; `reader` names the caller in the error when it is not JSON.
[[nodiscard]] Json parse_document(std::string_view text, std::string_view reader);

/// `object[key]`, checked to be present and of `type` (number_integer: any integer).
[[nodiscard]] const Json& document_field(const Json& object, const std::string& at, const char* key, Json::value_t type);

/// True for an unsigned integer beyond the int64 range.
[[nodiscard]] bool too_large_for_int64(const Json& j);

[[nodiscard]] Json write_graph_document(const Graph& graph);
[[nodiscard]] Json write_shape_document(const Shape& shape);

/// A graph document at `at` read into a linted graph (depth: how deep it is nested in
/// subgraphs already).
[[nodiscard]] Graph read_graph_document(const Json& doc, const std::string& at, int depth = 0);
[[nodiscard]] Shape read_shape_document(const Json& j, const std::string& at);
[[nodiscard]] DType read_dtype_document(const Json& j, const std::string& at);

}  // namespace symtrace::detail

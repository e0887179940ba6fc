#include "symtrace/core/error.hpp"

#include "symtrace/core/thread_context.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace symtrace::detail {

namespace {
std::string located(std::source_location where, fmt::string_view format, fmt::format_args args) {
  return fmt::format("{}:{}: {}", where.file_name(), where.line(), fmt::vformat(format, args));
}
}  // namespace

// Note [User locations]: errors and failure records name a line of the user's code. An op
// called by symtrace's own code (a layer's forward calling conv2d) carries that code's location,
// which tells the user nothing; during a trace, the trace knows the call sites of the modules it
// is in, so such a location is replaced by the innermost call site in user code (the line of the
// forward that called the layer). What is symtrace's own code is told by the file name, which
// the build makes relative to the source root (`src/nn/conv.cpp`; meson.build's prefix maps):
// the library's sources and public headers, wherever they are installed, but not the zoo, whose
// models are written against the public API as a user's are.
bool is_library_location(std::source_location where) noexcept {
  static const std::string_view sources = [] {
    // This file's own name, less "core/error.cpp", is where the library's sources are.
    std::string_view self = std::source_location::current().file_name();
    constexpr std::string_view tail = "core/error.cpp";
    return self.ends_with(tail) ? self.substr(0, self.size() - tail.size()) : std::string_view("src/");
  }();
  const std::string_view file = where.file_name();
  if (file.starts_with(sources)) return !file.substr(sources.size()).starts_with("zoo/");
  constexpr std::string_view headers = "include/symtrace/";
  const std::size_t at = file.rfind(headers);
  return at != std::string_view::npos && !file.substr(at + headers.size()).starts_with("zoo/");
}

std::string proxy_origin(std::source_location made, std::source_location where) {
  if (made.line() == 0 || is_library_location(made)) return {};
  if (made.line() == where.line() && std::string_view(made.file_name()) == where.file_name()) return {};
  return fmt::format(" (computed at {}:{})", made.file_name(), made.line());
}

std::source_location user_location(std::source_location where) noexcept {
  if (!is_library_location(where)) return where;
  const Interposer* interposer = current_interposer();
  try {
    TraceLocation location;
    if (interposer != nullptr && interposer->locate(location) && location.user_site.line() != 0) return location.user_site;
  } catch (...) {  // NOLINT(bugprone-empty-catch): naming the module may allocate; the location stays as it was
  }
  return where;
}

namespace {

// Built in a frame of its own, so that no local is alive where the error is thrown: each frame
// with something to destroy costs the unwinder a landing pad and a restart (Note [Cheap throws]).
[[gnu::noinline]] TraceError make_trace_error(std::source_location where, fmt::string_view format,
                                              fmt::format_args args) {
  TraceLocation location;
  const Interposer* interposer = current_interposer();
  if (interposer == nullptr || !interposer->locate(location)) return TraceError(located(where, format, args), where);
  if (location.user_site.line() != 0 && is_library_location(where)) where = location.user_site;  // Note [User locations]
  std::string body = fmt::vformat(format, args);
  std::string in = location.path.empty() ? fmt::format(" in the root module ({})", location.type)
                                         : fmt::format(" in '{}' ({})", location.path, location.type);
  std::size_t clause = body.find(": ");
  body.insert(clause == std::string::npos ? body.size() : clause, in);
  return TraceError(fmt::format("{}:{}: {}", where.file_name(), where.line(), body), where, location.path);
}

}  // namespace

// Note [Cheap throws]: a robust trace throws once per failing module, and the unwinder's cost
// grows with the frames between the throw and the catch that have locals to destroy. The
// throwing helpers therefore throw from frames with nothing alive.
void vthrow_trace_error(std::source_location where, fmt::string_view format, fmt::format_args args) {
  throw make_trace_error(where, format, args);
}

void vthrow_op_error(std::string_view op, std::source_location where, fmt::string_view format,
                     fmt::format_args args) {
  where = user_location(where);  // Note [User locations]
  throw OpError(fmt::format("{}:{}: {}(): {}", where.file_name(), where.line(), op,
                            fmt::vformat(format, args)),
                std::string(op), where);
}

void vthrow_op_unsupported(std::string_view op, std::source_location where, fmt::string_view format,
                           fmt::format_args args) {
  where = user_location(where);  // Note [User locations]
  throw OpUnsupported(fmt::format("{}:{}: {}(): {}", where.file_name(), where.line(), op, fmt::vformat(format, args)),
                      std::string(op), where);
}

void vthrow_invalid_argument(std::source_location where, fmt::string_view format,
                             fmt::format_args args) {
  throw std::invalid_argument(located(where, format, args));
}

void throw_internal_error(const char* condition, const char* message, std::source_location where) {
  throw InternalError(fmt::format("{}:{}: internal error: {} (failed: {}); please report this",
                                  where.file_name(), where.line(), message, condition));
}

}  // namespace symtrace::detail

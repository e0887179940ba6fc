#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <atomic>
#include <string>

namespace symtrace::detail {

namespace {
std::string located(std::source_location where, fmt::string_view format, fmt::format_args args) {
  return fmt::format("{}:{}: {}", where.file_name(), where.line(), fmt::vformat(format, args));
}
std::atomic<TraceLocator> trace_locator{nullptr};
}  // namespace

void set_trace_locator(TraceLocator locator) noexcept { trace_locator.store(locator, std::memory_order_release); }

namespace {

// Built in a frame of its own, so that no local is alive where the error is thrown: each frame
// with something to destroy costs the unwinder a landing pad and a restart (Note [Cheap throws]).
[[gnu::noinline]] TraceError make_trace_error(std::source_location where, fmt::string_view format,
                                              fmt::format_args args) {
  TraceLocation location;
  TraceLocator locator = trace_locator.load(std::memory_order_acquire);
  if (locator == nullptr || !locator(location)) return TraceError(located(where, format, args), where);
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
  throw OpError(fmt::format("{}:{}: {}(): {}", where.file_name(), where.line(), op,
                            fmt::vformat(format, args)),
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

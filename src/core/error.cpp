#include "symtrace/core/error.hpp"

#include <fmt/format.h>

namespace symtrace::detail {

namespace {
std::string located(std::source_location where, fmt::string_view format, fmt::format_args args) {
  return fmt::format("{}:{}: {}", where.file_name(), where.line(), fmt::vformat(format, args));
}
}  // namespace

void vthrow_trace_error(std::source_location where, fmt::string_view format,
                        fmt::format_args args) {
  throw TraceError(located(where, format, args), where);
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

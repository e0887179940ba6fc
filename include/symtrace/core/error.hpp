#pragma once
/// \file
/// The exception hierarchy every layer throws, and the builders that give every message the
/// same shape: `file:line: what happened: why, and what to do`.
///
/// - `Error` (a `std::runtime_error`) is the base of symtrace's own errors.
/// - `TraceError` reports something that cannot be captured symbolically (a symbolic value
///   turned into a C++ value, a symbolic tensor used after its trace ended).
/// - `InternalError` reports a broken invariant: a symtrace bug, never an abort.
/// - `OpError` (a `std::invalid_argument`) reports bad input to an op: shapes, dims, dtypes.
///   It names the op and the caller's file:line.

#include <fmt/core.h>

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace symtrace {

/// Base class of the errors symtrace throws for its own reasons.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Something in user code cannot be captured as a graph; `where()` is the user's file:line.
class TraceError : public Error {
 public:
  TraceError(const std::string& message, std::source_location where, std::string module_path = {})
      : Error(message), where_(where), module_path_(std::move(module_path)) {}
  /// The user's source location the error is about.
  [[nodiscard]] std::source_location where() const noexcept { return where_; }
  /// The qualified path of the module being traced when it happened ("" at the root).
  [[nodiscard]] const std::string& module_path() const noexcept { return module_path_; }

 private:
  std::source_location where_;
  std::string module_path_;
};

/// A broken internal invariant: a bug in symtrace. Reported as an exception, never an abort.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// Bad input to an op (shape mismatch, bad dim, wrong dtype, unknown op name).
/// The message starts with the caller's `file:line: op(): `.
class OpError : public std::invalid_argument {
 public:
  OpError(const std::string& message, std::string op, std::source_location where)
      : std::invalid_argument(message), op_(std::move(op)), where_(where) {}
  /// The name of the op that refused its input.
  [[nodiscard]] const std::string& op() const noexcept { return op_; }
  /// The caller's source location.
  [[nodiscard]] std::source_location where() const noexcept { return where_; }

 private:
  std::string op_;
  std::source_location where_;
};

/// Input PyTorch accepts that symtrace's own op does not handle (a padding mode other than
/// constant, a rounding mode on tensors): not bad input, a limit of the op. The TorchScript
/// front end runs LibTorch's operator instead (docs/design.md, decision 14); elsewhere it is
/// an OpError like any other.
class OpUnsupported : public OpError {
 public:
  using OpError::OpError;
};

namespace detail {
/// Where the innermost active trace of this thread is: the module being traced through.
struct TraceLocation {
  std::string path;  ///< qualified path ("" for the root)
  std::string type;  ///< its type name
  /// The innermost module call of the trace made from user code (a layer's call in the
  /// forward that called it), or line 0 when there is none: what an error raised inside
  /// symtrace's own code names instead of that code (Note [User locations] in error.cpp).
  std::source_location user_site;
};
/// True for a location in symtrace's own code (its sources and public headers, not the zoo's
/// models, which are written against the public API as user code is). O(length of the path).
[[nodiscard]] bool is_library_location(std::source_location where) noexcept;
/// " (computed at model.cpp:40)" for a proxy made in user code at `made`, on another line than
/// `where`, the line a message names; else "". Messages say where a proxy came from rather than
/// name its node, which a rollback may have removed.
[[nodiscard]] std::string proxy_origin(std::source_location made, std::source_location where);
/// `where` when it is user code; else the innermost user call site of this thread's trace
/// (see TraceLocation), when there is one; else `where`.
[[nodiscard]] std::source_location user_location(std::source_location where) noexcept;

[[noreturn]] void vthrow_trace_error(std::source_location where, fmt::string_view format,
                                     fmt::format_args args);
[[noreturn]] void vthrow_op_error(std::string_view op, std::source_location where,
                                  fmt::string_view format, fmt::format_args args);
[[noreturn]] void vthrow_op_unsupported(std::string_view op, std::source_location where,
                                        fmt::string_view format, fmt::format_args args);
[[noreturn]] void vthrow_invalid_argument(std::source_location where, fmt::string_view format,
                                          fmt::format_args args);
[[noreturn]] void throw_internal_error(const char* condition, const char* message,
                                       std::source_location where);
}  // namespace detail

/// Throws `TraceError` with the message `file:line: <formatted>`; a `where` in symtrace's own
/// code becomes the user's call of it, as for OpError. During a trace, the module
/// being traced through is named after the first clause of the formatted text ("what
/// happened in 'encoder.block1' (GatedBlock): why, and what to do") and recorded as the
/// error's `module_path()`.
template <class... A>
[[noreturn]] void throw_trace_error(std::source_location where, fmt::format_string<A...> format,
                                    A&&... args) {
  detail::vthrow_trace_error(where, format, fmt::make_format_args(args...));
}

/// Throws `OpError` with the message `file:line: op(): <formatted>`. During a trace, a `where`
/// in symtrace's own code (a layer's forward calling the op) becomes the user's call of it
/// (Note [User locations] in error.cpp).
template <class... A>
[[noreturn]] void throw_op_error(std::string_view op, std::source_location where,
                                 fmt::format_string<A...> format, A&&... args) {
  detail::vthrow_op_error(op, where, format, fmt::make_format_args(args...));
}

/// Throws `OpUnsupported` (an OpError) with the message `file:line: op(): <formatted>`.
template <class... A>
[[noreturn]] void throw_op_unsupported(std::string_view op, std::source_location where,
                                       fmt::format_string<A...> format, A&&... args) {
  detail::vthrow_op_unsupported(op, where, format, fmt::make_format_args(args...));
}

/// Throws `std::invalid_argument` with the message `file:line: <formatted>`.
template <class... A>
[[noreturn]] void throw_invalid_argument(std::source_location where,
                                         fmt::format_string<A...> format, A&&... args) {
  detail::vthrow_invalid_argument(where, format, fmt::make_format_args(args...));
}

}  // namespace symtrace

/// Checks an internal invariant in every build type; throws `InternalError` naming file:line.
#define SYMTRACE_ASSERT(condition, message)                                      \
  do {                                                                           \
    if (!(condition)) [[unlikely]]                                               \
      ::symtrace::detail::throw_internal_error(#condition, message,              \
                                               std::source_location::current()); \
  } while (false)

#pragma once
/// \file
/// `make_source_location`: a `std::source_location` naming a file:line that is not C++ code,
/// such as the Python line a TorchScript node came from. Nodes, errors and failure records
/// keep a `std::source_location`; code that executes another language's program (the
/// TorchScript front end) makes one per location of that program, once, when it loads it.

#include <cstdint>
#include <source_location>
#include <string_view>

namespace symtrace::detail {

/// A source location whose `file_name()`, `function_name()`, `line()` and `column()` are the
/// given ones. The strings are copied into storage kept for the life of the program (one copy
/// per distinct location: loading a file twice adds nothing). Thread-safe.
///
/// With a standard library whose `std::source_location` cannot be made this way (checked on
/// first use), the result names `file` nowhere: it is the location of this function.
[[nodiscard]] std::source_location make_source_location(std::string_view file, std::uint32_t line,
                                                        std::string_view function = {},
                                                        std::uint32_t column = 0);

}  // namespace symtrace::detail

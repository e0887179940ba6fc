#pragma once
/// \file
/// The observe layer: RecordFunction-style callbacks on eager op calls, module calls and user
/// scopes.

#include "symtrace/observe/has_callbacks.hpp"
#include "symtrace/observe/record_function.hpp"

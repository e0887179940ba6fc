#pragma once
/// \file
/// The observe layer: RecordFunction-style callbacks on eager op calls, module calls and user
/// scopes, and the operator-call tracer built on them.

#include "symtrace/observe/has_callbacks.hpp"
#include "symtrace/observe/operator_call_tracer.hpp"
#include "symtrace/observe/record_function.hpp"
#include "symtrace/observe/trace_by_execution.hpp"

#pragma once
/// \file
/// Observing execution: RecordFunction-style callbacks on eager op calls, module calls and
/// user scopes (the registry lives in ops, below the dispatcher and the module base that fire
/// it), and the observe layer built on them: the operator-call tracer and tracing by execution.

#include "symtrace/core/thread_context.hpp"
#include "symtrace/observe/operator_call_tracer.hpp"
#include "symtrace/ops/record_function.hpp"
#include "symtrace/observe/trace_by_execution.hpp"

#pragma once
// A LeafMetaFn that gives a leaf what a RobustTracer gives a failed module's result: what runs
// of it tell (Note [A failed module's result by execution] in src/robust/executed_result.cpp),
// for tests that compare a robust trace with a plain one whose leaves are the failed modules.

#include <symtrace/symtrace.hpp>

#include <source_location>
#include <stdexcept>

namespace symtrace::testing {

struct ResultByRunning : RobustTracer {
  using RobustTracer::executed_result_meta;
};

/// The metadata runs of `module` on inputs of `args`' metadata give; the runs must tell it.
inline OutputMeta result_by_running(const Module& module, const ValueList& args) {
  std::optional<OutputMeta> meta = ResultByRunning::executed_result_meta(const_cast<Module&>(module), args,  // NOLINT
                                                                         std::source_location::current());
  if (!meta) throw std::logic_error("result_by_running: the runs did not tell the result");
  return std::move(*meta);
}

}  // namespace symtrace::testing

// PassManager: passes in order, each linted after when asked.
#include "symtrace/passes/pass_manager.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/graph/lint.hpp"

#include <fmt/format.h>

namespace symtrace {

namespace {

// Decided here, in the library, rather than in the header: an NDEBUG test in the header would
// give each translation unit its own default, and a program two definitions of the constructor
// when they differ.
#ifdef NDEBUG
constexpr bool lint_by_default = false;
#else
constexpr bool lint_by_default = true;
#endif

}  // namespace

PassManager::PassManager() : lint_(lint_by_default) {}

PassManager& PassManager::add(std::string name, GraphPass pass, std::source_location where) {
  if (!pass) throw_invalid_argument(where, "PassManager::add: the pass '{}' is empty; give it a function", name);
  for (const Entry& e : passes_) {
    if (e.name == name) throw_invalid_argument(where, "PassManager::add: a pass is already called '{}'; give each a name of its own", name);
  }
  passes_.push_back(Entry{std::move(name), std::move(pass)});
  return *this;
}

PassManager& PassManager::lint_after_each(bool on) noexcept {
  lint_ = on;
  return *this;
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> out;
  out.reserve(passes_.size());
  for (const Entry& e : passes_) out.push_back(e.name);
  return out;
}

std::vector<PassResult> PassManager::run(Graph& graph) const {
  std::vector<PassResult> results;
  results.reserve(passes_.size());
  for (const Entry& e : passes_) {
    results.push_back(PassResult{e.name, e.pass(graph)});
    if (!lint_) continue;
    try {
      graph.lint();
    } catch (const LintError& error) {
      throw LintError(fmt::format("the pass '{}' left a malformed graph: {}", e.name, error.what()));
    }
  }
  return results;
}

}  // namespace symtrace

#pragma once
/// \file
/// `PassManager`: runs a list of graph passes in order and says what each changed.
///
///     symtrace::PassManager pm;
///     pm.add("remove_inplace", [](symtrace::Graph& g) { return symtrace::remove_inplace(g); })
///       .add("cse", symtrace::eliminate_common_subexpressions)
///       .add("dead_code", symtrace::eliminate_dead_code);
///     for (const auto& r : pm.run(graph)) fmt::print("{}: {} changes\n", r.pass, r.changes);

#include "symtrace/graph/graph.hpp"

#include <cstddef>
#include <functional>
#include <source_location>
#include <string>
#include <vector>

namespace symtrace {

/// A graph pass: changes a graph in place and returns how many changes it made.
using GraphPass = std::function<std::size_t(Graph&)>;

/// What one pass of a run changed.
struct PassResult {
  std::string pass;
  std::size_t changes = 0;
  friend bool operator==(const PassResult&, const PassResult&) = default;
};

/// Runs passes in the order they were added. After each pass the graph is linted when
/// `lint_after_each` is on (by default when symtrace itself is built without NDEBUG, as
/// docs/design.md, decision 10, asks of debug builds): a pass that leaves a malformed graph is
/// caught at once, named in the LintError.
class PassManager {
 public:
  /// No passes; linting after each as symtrace's build decides (whatever NDEBUG is where this
  /// header is included, so that every part of a program agrees).
  PassManager();
  /// Adds `pass` under `name` (for the results and errors); returns *this to chain.
  PassManager& add(std::string name, GraphPass pass, std::source_location where = std::source_location::current());
  /// Lints after each pass or not.
  PassManager& lint_after_each(bool on) noexcept;
  [[nodiscard]] bool lints_after_each() const noexcept { return lint_; }
  /// The passes' names, in order.
  [[nodiscard]] std::vector<std::string> names() const;

  /// Runs every pass on `graph`, in order; returns what each changed. A pass that throws stops
  /// the run (the graph keeps what the passes before it did; transactional passes undo their
  /// own part); its exception propagates.
  std::vector<PassResult> run(Graph& graph) const;

 private:
  struct Entry {
    std::string name;
    GraphPass pass;
  };
  std::vector<Entry> passes_;
  bool lint_;
};

}  // namespace symtrace

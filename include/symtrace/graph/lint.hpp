#pragma once
/// \file
/// `LintError`: what `Graph::lint()` throws when a graph breaks an invariant.

#include "symtrace/core/error.hpp"

#include <string>

namespace symtrace {

/// A malformed graph. The message names the node and the broken invariant:
/// `graph lint: node %relu: argument %x is defined after its user; nodes must be in
/// topological order (move the user after its arguments)`.
class LintError : public Error {
 public:
  using Error::Error;
};

}  // namespace symtrace

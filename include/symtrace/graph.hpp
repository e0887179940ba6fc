#pragma once
/// \file
/// The `graph` layer in one include: Node, Argument, Graph, checkpoints, lint and printing.
/// The Boost.Graph view is opt-in: include `symtrace/graph/bgl.hpp` for it.

#include "symtrace/graph/argument.hpp"
#include "symtrace/graph/dot_escape.hpp"
#include "symtrace/graph/graph.hpp"
#include "symtrace/graph/lint.hpp"
#include "symtrace/graph/node.hpp"
#include "symtrace/graph/node_id.hpp"
#include "symtrace/graph/op_kind.hpp"
#include "symtrace/graph/printer.hpp"

#pragma once
/// \file
/// The `passes` layer in one include: graph transformations and the pass manager.

#include "symtrace/passes/cse.hpp"
#include "symtrace/passes/dead_code.hpp"
#include "symtrace/passes/erase_node.hpp"
#include "symtrace/passes/fuse_conv_bn.hpp"
#include "symtrace/passes/pass_manager.hpp"
#include "symtrace/passes/remove_inplace.hpp"
#include "symtrace/passes/remove_unnecessary_slices.hpp"
#include "symtrace/passes/subgraph_rewriter.hpp"

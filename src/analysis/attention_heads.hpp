#pragma once
// The heads of attention layers as channel groups (channel_groups.cpp calls it).

#include "symtrace/analysis/channel_groups.hpp"

#include <vector>

namespace symtrace::detail {

/// Adds to `groups` one group per `nn::MultiheadAttention` of `model` traced in `collection`:
/// its heads, each a channel of `width` head-size rows of the query, key and value projections
/// and columns of the output projection. A group of the graph analysis that held the output
/// projection's inputs (stopped by the heads' reshape) is replaced by it.
void add_attention_heads(const Module& model, const GraphCollection& collection, std::vector<ChannelGroup>& groups);

}  // namespace symtrace::detail

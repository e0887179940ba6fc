#pragma once
/// \file
/// The analysis layer: traces for analysis, parameters and MACs per module, channel-dependency
/// groups for structured pruning, and pruning along them.

#include "symtrace/analysis/analysis_trace.hpp"
#include "symtrace/analysis/channel_groups.hpp"
#include "symtrace/analysis/model_summary.hpp"
#include "symtrace/analysis/prune.hpp"

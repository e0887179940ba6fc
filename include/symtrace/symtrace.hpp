#pragma once
/// \file
/// The umbrella header: everything a user of symtrace needs, without Boost.Graph.

#include "symtrace/core/dtype.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"
#include "symtrace/core/random.hpp"
#include "symtrace/core/scalar.hpp"
#include "symtrace/core/shape.hpp"
#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/linalg.hpp"
#include "symtrace/ops/nn_functional.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/ops/pointwise.hpp"
#include "symtrace/ops/reduction.hpp"
#include "symtrace/ops/registry.hpp"
#include "symtrace/ops/schema.hpp"
#include "symtrace/ops/shape_ops.hpp"
#include "symtrace/graph.hpp"
#include "symtrace/nn.hpp"
#include "symtrace/zoo/zoo.hpp"

#pragma once
// Private: the op families, each registering its ops into the registry as it is built
// (one file each in src/ops/).

#include "symtrace/ops/registry.hpp"

namespace symtrace::detail {
void register_pointwise_ops(OpRegistry& registry);      // pointwise.cpp
void register_reduction_ops(OpRegistry& registry);      // reduction.cpp
void register_linalg_ops(OpRegistry& registry);         // linalg.cpp
void register_einsum_ops(OpRegistry& registry);         // einsum.cpp
void register_convolution_ops(OpRegistry& registry);    // convolution.cpp
void register_pooling_ops(OpRegistry& registry);        // pooling.cpp (and nearest upsampling)
void register_normalization_ops(OpRegistry& registry);  // normalization.cpp
void register_dropout_ops(OpRegistry& registry);        // dropout.cpp
void register_embedding_ops(OpRegistry& registry);      // embedding.cpp
void register_view_ops(OpRegistry& registry);           // views.cpp
void register_join_ops(OpRegistry& registry);           // joins.cpp (cat, stack, splits, pad, roll, repeat)
void register_indexing_ops(OpRegistry& registry);       // indexing.cpp (index_select, slice_scatter)
void register_sym_int_ops(OpRegistry& registry);        // sym_int_ops.cpp (size, numel, zeros, arange, ...)
void register_number_ops(OpRegistry& registry);         // number_ops.cpp (operator.add, ..., sym_int, math.floor)
void register_sorting_ops(OpRegistry& registry);        // sorting.cpp (topk, sort, unique_sorted)
void register_detection_ops(OpRegistry& registry);      // detection.cpp (torchvision's nms)
}  // namespace symtrace::detail

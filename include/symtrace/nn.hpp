#pragma once
/// \file
/// The `nn` layer in one include: Module, TypedModule, ModuleHolder, the built-in layers,
/// containers, state dicts and safetensors.

#include "symtrace/nn/activation.hpp"
#include "symtrace/nn/attention.hpp"
#include "symtrace/nn/batch_norm.hpp"
#include "symtrace/nn/conv.hpp"
#include "symtrace/nn/dropout.hpp"
#include "symtrace/nn/embedding.hpp"
#include "symtrace/nn/init.hpp"
#include "symtrace/nn/layer_norm.hpp"
#include "symtrace/nn/linear.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/nn/module_holder.hpp"
#include "symtrace/nn/module_list.hpp"
#include "symtrace/nn/pooling.hpp"
#include "symtrace/nn/rnn.hpp"
#include "symtrace/nn/safetensors.hpp"
#include "symtrace/nn/sequential.hpp"
#include "symtrace/nn/shape_layers.hpp"
#include "symtrace/nn/size2.hpp"
#include "symtrace/nn/state_dict.hpp"
#include "symtrace/nn/typed_module.hpp"

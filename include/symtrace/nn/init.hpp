#pragma once
/// \file
/// Parameter initialisation as in `torch.nn.init`, drawing from the thread's default
/// generator (`manual_seed` makes models reproducible). Each function fills a concrete
/// float32 tensor in place and returns it.

#include "symtrace/core/random.hpp"
#include "symtrace/core/tensor.hpp"

#include <cstdint>

namespace symtrace::nn::init {

/// Uniform in [low, high).
Tensor uniform_(const Tensor& t, double low, double high, Generator& gen = default_generator());
/// Normal with `mean` and standard deviation `std`.
Tensor normal_(const Tensor& t, double mean = 0.0, double std = 1.0, Generator& gen = default_generator());
/// Every element `value`.
Tensor constant_(const Tensor& t, double value);
Tensor zeros_(const Tensor& t);
Tensor ones_(const Tensor& t);
/// PyTorch's default for Linear and Conv2d weights and biases, kaiming_uniform_(a=sqrt(5)):
/// uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)).
Tensor fan_in_uniform_(const Tensor& t, std::int64_t fan_in, Generator& gen = default_generator());

}  // namespace symtrace::nn::init

#pragma once
// Test support: a module whose forward branches on data through cond(), shared by the tests
// of cond and of everything that must carry its subgraphs (export).

#include <symtrace/symtrace.hpp>

namespace symtrace::testing {

/// relu(fc(x)) when the sum is positive, else -x: a data-dependent branch written with cond.
class Gated : public TypedModule<Gated> {
 public:
  Gated() { fc = register_module("fc", nn::Linear(3, 3)); }
  Tensor forward(const Tensor& x) {
    return cond(
               x.sum() > 0, [this](const TensorList& in) -> Value { return fc(in[0]).relu(); },
               [](const TensorList& in) -> Value { return in[0].neg(); }, {x})
        .to_tensor();
  }
  nn::Linear fc{nullptr};
};

}  // namespace symtrace::testing

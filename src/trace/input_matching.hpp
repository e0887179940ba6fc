#pragma once
// Internal to the trace layer: a trace's inputs matched against the root's forward (defined in
// input_spec.cpp, used by Tracer::record_graph in tracer.cpp).

#include "symtrace/trace/input_spec.hpp"

#include <cstddef>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace {

class Module;

namespace detail {

/// The declared inputs of a forward, and how many of them, from the first, a trace gives.
struct GivenInputs {
  std::vector<std::string> names;  ///< every declared input, in order
  std::size_t count = 0;           ///< given: concrete ones and specs in order (trailing optional ones may be left out)
};

/// Checks `inputs` and `concrete_args` against `root`'s forward and says which inputs they
/// give; throws std::invalid_argument as Tracer::trace says when they do not match it.
GivenInputs match_inputs(const Module& root, const std::vector<InputSpec>& inputs, const ConcreteArgs& concrete_args,
                         std::source_location where);

/// The value `concrete_args` gives input `name`, or nullptr.
inline const Value* concrete_arg(const ConcreteArgs& concrete_args, std::string_view name) {
  for (const auto& [n, v] : concrete_args) {
    if (n == name) return &v;
  }
  return nullptr;
}

}  // namespace detail
}  // namespace symtrace

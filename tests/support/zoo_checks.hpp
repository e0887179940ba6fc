#pragma once
// Test support for whole models: a zoo model's example inputs as specs, finiteness,
// bit-identical state, a boxed call, and the trace / lint / interpret-equals-eager checks each
// zoo family runs on its models.

#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace symtrace::testing {

/// The example inputs of the zoo model `name`, as input specs.
inline std::vector<InputSpec> example_specs(const std::string& name) {
  std::vector<InputSpec> specs;
  for (const zoo::ExampleInput& input : zoo::info(name).inputs) specs.emplace_back(Shape(input.shape), input.dtype);
  return specs;
}

/// True when every element is finite.
inline bool all_finite(const Tensor& t) {
  for (float v : t.to_vector<float>())
    if (!std::isfinite(v)) return false;
  return true;
}

/// Same keys in the same order, and bit-identical values.
inline bool same_state(const Module& a, const Module& b) {
  const StateDict sa = a.state_dict(), sb = b.state_dict();
  if (sa.keys() != sb.keys()) return false;
  for (std::size_t i = 0; i < sa.size(); ++i) {
    const Tensor& x = sa.entries()[i].second;
    const Tensor& y = sb.entries()[i].second;
    if (x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
    if (x.dtype() != DType::float32 || !x.is_contiguous() || !y.is_contiguous()) {
      if (x.to_vector<double>() != y.to_vector<double>()) return false;
    } else if (!std::equal(x.data_ptr<float>(), x.data_ptr<float>() + *x.shape().numel(), y.data_ptr<float>())) {
      return false;
    }
  }
  return true;
}

/// The model called through its type-erased entry point on one tensor.
inline Tensor run(Module& model, const Tensor& x) { return model.call({x}).to_tensor(); }

/// `model` traced on one input spec with the default tracer; the graph must lint.
inline Graph trace_and_lint(Module& model, const InputSpec& spec) {
  Graph g = symbolic_trace(model, {spec});
  CHECK_NOTHROW(g.lint());
  return g;
}

/// Runs `g` (traced from `model`) on `x` with the interpreter and checks the result against
/// `eager` (model's own output on `x`, computed once by the caller): same shape, and a
/// largest error relative to the largest |eager| of at most 1e-5.
inline void check_graph_runs_equal_to_eager(Module& model, const Graph& g, const Tensor& x, const Tensor& eager) {
  const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  REQUIRE(traced.shape() == eager.shape());
  const double error = max_rel_error(traced, eager);
  CAPTURE(error);
  CHECK(error <= 1e-5);
}

/// "float32[?, 1000]": the dtype and shape of the value the graph returns (the output node's
/// argument), or "none" when it has no tensor metadata.
inline std::string result_meta(const Graph& g) {
  const Node* output = g.output_node();
  REQUIRE(output != nullptr);
  if (const TensorMeta* own = output->tensor_meta()) return to_string(*own);
  const std::vector<Node*> inputs = output->input_nodes();
  REQUIRE(inputs.size() == 1);
  const TensorMeta* meta = inputs.front()->tensor_meta();
  return meta != nullptr ? to_string(*meta) : std::string("none");
}

/// The number of nodes of kind `op` whose target is `target`.
inline std::size_t count_nodes(const Graph& g, OpKind op, std::string_view target) {
  std::size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op() == op && node.target() == target;
  return n;
}

}  // namespace symtrace::testing

#pragma once
// The symbolic-trace loop the benchmarks share: traces `model` once per iteration and reports
// the graph's node count and the microseconds per node.
#include <symtrace/symtrace.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <vector>

namespace symtrace::bench {

inline void trace_per_node(benchmark::State& state, Module& model, const std::vector<InputSpec>& specs) {
  std::size_t nodes = 0;
  for (auto _ : state) {
    Graph g = symbolic_trace(model, specs);
    nodes = g.size();
    benchmark::DoNotOptimize(g);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["us_per_node"] = benchmark::Counter(static_cast<double>(nodes) * 1e-6,
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

}  // namespace symtrace::bench

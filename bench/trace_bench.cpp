// Tracing the zoo: symbolic_trace per model (time per node), and recursive_trace on the failing
// variants against a clean trace of the same architecture timed in the same run (the one-pass
// claim: ModelOpt's recursive_trace costs 16x its clean trace on resnet50 with 16 failing blocks).
//
//   ninja -C build-rel bench/trace_bench && build-rel/bench/trace_bench
#include <symtrace/symtrace.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace symtrace;

std::vector<InputSpec> example_specs(const std::string& name) {
  std::vector<InputSpec> specs;
  for (const zoo::ExampleInput& input : zoo::info(name).inputs) specs.emplace_back(Shape(input.shape), input.dtype);
  return specs;
}

/// The median time of `runs` clean traces of `model`, in seconds.
double clean_trace_seconds(Module& model, const std::vector<InputSpec>& specs, int runs) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(symbolic_trace(model, specs));
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + runs / 2, times.end());
  return times[static_cast<std::size_t>(runs / 2)];
}

void BM_SymbolicTrace(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  const std::vector<InputSpec> specs = example_specs(name);
  std::size_t nodes = 0;
  for (auto _ : state) {
    Graph g = symbolic_trace(*model, specs);
    nodes = g.size();
    benchmark::DoNotOptimize(g);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["us_per_node"] = benchmark::Counter(static_cast<double>(nodes) * 1e-6,
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_RecursiveTrace(benchmark::State& state, const std::string& name, const std::string& clean) {
  auto model = zoo::create(name);
  auto clean_model = zoo::create(clean);
  const std::vector<InputSpec> specs = example_specs(name);
  std::size_t graphs = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    GraphCollection c = recursive_trace(*model, specs);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    graphs = c.size();
    benchmark::DoNotOptimize(c);
  }
  state.counters["graphs"] = static_cast<double>(graphs);
  // The clean architecture traced in the same run, after the measured loop.
  const double clean_seconds = clean_trace_seconds(*clean_model, example_specs(clean), 15);
  state.counters["x_clean_trace"] = seconds / static_cast<double>(state.iterations()) / clean_seconds;
}

}  // namespace

BENCHMARK_CAPTURE(BM_SymbolicTrace, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTrace, mobilenet_v2, std::string("mobilenet_v2"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTrace, vit_b16, std::string("vit_b16"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTrace, deep_mlp_1000, std::string("deep_mlp_1000"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, resnet50_fail1, std::string("resnet50_fail1"), std::string("resnet50"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, resnet50_fail16, std::string("resnet50_fail16"), std::string("resnet50"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, deep_mlp_1000, std::string("deep_mlp_1000"), std::string("deep_mlp_1000"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, deep_mlp_1000_fail16, std::string("deep_mlp_1000_fail16"),
                  std::string("deep_mlp_1000"))
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

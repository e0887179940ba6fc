// Tracing the zoo: symbolic_trace per model (time and graph bytes per node, deep_mlp from 1k to
// 100k blocks for the growth, and 8 wide), recursive_trace on the failing variants against a
// clean trace of the same architecture timed in the same run (the one-pass claim: ModelOpt's
// recursive_trace costs 16x its clean trace on resnet50 with 16 failing blocks) with an
// estimate of the least that ratio can be, and what running costs on top of the eager forward:
// tracing by execution, and the interpreter running a traced graph. Chains of modules nested
// 250 to 8,000 deep (zoo::deep_chain) show what a level of nesting costs as models get deeper:
// building, tracing (the innermost a leaf, or failing under recursive_trace), the coverage
// report and the interpreter, in µs per level.
// tools/bench runs this and prints the figures as one table.
//
//   ninja -C build-rel bench/trace_bench && build-rel/bench/trace_bench
#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/deep_chain.hpp>
#include <symtrace/zoo/mlp.hpp>
#include <symtrace/zoo/zoo.hpp>

#include "trace_per_node.hpp"

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace symtrace;

std::vector<InputSpec> example_specs(const std::string& name) {
  std::vector<InputSpec> specs;
  for (const zoo::ExampleInput& input : zoo::info(name).inputs) specs.emplace_back(Shape(input.shape), input.dtype);
  return specs;
}

/// The heap bytes one graph holds per node: heap growth over a trace while its graph is alive.
double graph_bytes_per_node(Module& model, const std::vector<InputSpec>& specs) {
  const std::size_t before = mallinfo2().uordblks;
  Graph g = symbolic_trace(model, specs);
  const std::size_t after = mallinfo2().uordblks;
  return static_cast<double>(after - before) / static_cast<double>(g.size());
}

void trace_model(benchmark::State& state, Module& model, const std::vector<InputSpec>& specs) {
  bench::trace_per_node(state, model, specs);
  state.counters["nodes_per_s"] =
      benchmark::Counter(state.counters["nodes"].value, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_node"] = graph_bytes_per_node(model, specs);
}

void BM_SymbolicTrace(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  trace_model(state, *model, example_specs(name));
}

/// The same models with named dims (Nx3xHxW, NxD for the MLP; vit_b16 Nx3x224x224): every size
/// an expression over them, to compare with BM_SymbolicTrace (docs/design.md's target: ≤ 1.5×).
void BM_SymbolicTraceNamedDims(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  std::vector<InputSpec> specs = example_specs(name);
  Shape& shape = specs.at(0).shape;
  shape[0] = Dim("N");
  if (shape.rank() == 2 && name.starts_with("deep_mlp")) shape[1] = Dim("D");
  if (shape.rank() == 4 && name != "vit_b16") {
    shape[2] = Dim("H", 32, 1024);
    shape[3] = Dim("W", 32, 1024);
  }
  trace_model(state, *model, specs);
}

/// deep_mlp with state.range(0) blocks: the growth from 1k to 100k blocks.
void BM_SymbolicTraceDeepMlp(benchmark::State& state) {
  auto model = zoo::deep_mlp(state.range(0));
  trace_model(state, *model, {InputSpec(Shape{1, 64})});
}

/// The same blocks 8 wide (256-byte weights instead of 16 KB): whether the growth from 1k to 10k
/// blocks comes from the weights lying between the modules or from the modules themselves.
void BM_SymbolicTraceNarrowMlp(benchmark::State& state) {
  auto model = std::make_shared<zoo::DeepMLPImpl>(state.range(0), 8);
  trace_model(state, *model, {InputSpec(Shape{1, 8})});
}

/// The median time of `runs` calls of `f`, in seconds.
template <typename F>
double median_seconds(F&& f, int runs) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + runs / 2, times.end());
  return times[static_cast<std::size_t>(runs / 2)];
}

/// Counters for a run that does the eager forward's work and more: the time it adds per node
/// of `graph` over the eager forward timed in the same run, and the ratio.
void report_overhead(benchmark::State& state, double seconds_per_run, double eager_seconds, std::size_t nodes) {
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["x_eager"] = seconds_per_run / eager_seconds;
  state.counters["overhead_us_per_node"] = (seconds_per_run - eager_seconds) * 1e6 / static_cast<double>(nodes);
}

/// trace_by_execution of a model on its example inputs against its eager forward.
void BM_TraceByExecution(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  model->eval();
  manual_seed(0);
  const std::vector<Tensor> inputs = zoo::example_inputs(zoo::info(name));
  const ValueList args(inputs.begin(), inputs.end());
  std::size_t nodes = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    ExecutionTrace t = trace_by_execution(*model, args);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nodes = t.graph.size();
    benchmark::DoNotOptimize(t);
  }
  const double eager = median_seconds([&] { benchmark::DoNotOptimize(model->call(args)); }, 15);
  report_overhead(state, seconds / static_cast<double>(state.iterations()), eager, nodes);
}

/// The interpreter running a model's traced graph against the eager forward.
void BM_Interpreter(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  model->eval();
  manual_seed(0);
  const std::vector<Tensor> inputs = zoo::example_inputs(zoo::info(name));
  const ValueList args(inputs.begin(), inputs.end());
  const Graph graph = symbolic_trace(*model, example_specs(name));
  Interpreter interpreter(*model, graph);
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(interpreter.run(args));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double eager = median_seconds([&] { benchmark::DoNotOptimize(model->call(args)); }, 15);
  report_overhead(state, seconds / static_cast<double>(state.iterations()), eager, graph.size());
}

/// The mean time of `runs` clean traces of `model`, in seconds: each graph is freed in the
/// time, as the robust loops below free what they make (the mean, as theirs).
double clean_trace_seconds(Module& model, const std::vector<InputSpec>& specs, int runs) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) benchmark::DoNotOptimize(symbolic_trace(model, specs));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
}

/// recursive_trace of `name` against a clean trace of `clean`. The failed blocks are not run for
/// their results (RobustTracer::set_result_by_execution): the robust tracer's own cost. With
/// `result_by_execution`, they are, as by default: that adds two eager runs of each failed
/// block, which `x_eager` gives in eager forwards of the whole model.
void BM_RecursiveTrace(benchmark::State& state, const std::string& name, const std::string& clean,
                       bool result_by_execution = false) {
  auto model = zoo::create(name);
  auto clean_model = zoo::create(clean);
  const std::vector<InputSpec> specs = example_specs(name);
  std::size_t graphs = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    {
      GraphCollection c;
      c.tracer().set_result_by_execution(result_by_execution);
      c.recursive_trace(*model, specs);
      graphs = c.size();
      benchmark::DoNotOptimize(c);
    }  // freed in the time, as the clean traces are
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["graphs"] = static_cast<double>(graphs);
  // The clean architecture traced in the same run, after the measured loop.
  const double clean_seconds = clean_trace_seconds(*clean_model, example_specs(clean), 201);
  state.counters["x_clean_trace"] = seconds / static_cast<double>(state.iterations()) / clean_seconds;
  if (result_by_execution) {
    model->eval();
    const std::vector<Tensor> inputs = zoo::example_inputs(zoo::info(name));
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(model->call(ValueList(inputs.begin(), inputs.end())));
    const double eager = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.counters["x_eager"] = seconds / static_cast<double>(state.iterations()) / eager;
  }
}

/// Five frames down, throws: the frames between a failing op and the module call that catches
/// its exception (the op, the user's forward, the typed entry point, Module::call, the hook).
[[gnu::noinline]] void throw_from_depth(int depth) {
  if (depth == 0) throw std::runtime_error("a failing op");
  throw_from_depth(depth - 1);
  benchmark::ClobberMemory();  // keeps the call from becoming a jump
}

/// An estimate of the least a recursive_trace of `name` can cost with its semantics, in the
/// same units as BM_RecursiveTrace: a clean trace of the architecture (each failing block is
/// traced up to its failure, late in the block), a copy of each other graph of the collection
/// (a copy skips the naming and checks that building a graph does) and one exception per
/// failure, thrown through five frames and caught; everything made is freed in the time.
/// Nothing of the robust tracer's own work is in it.
void BM_RecursiveTraceFloor(benchmark::State& state, const std::string& name, const std::string& clean) {
  auto model = zoo::create(name);
  auto clean_model = zoo::create(clean);
  const std::vector<InputSpec> specs = example_specs(clean);
  const GraphCollection collection = recursive_trace(*model, example_specs(name));
  std::vector<const Graph*> others;
  for (const GraphCollection::Entry& entry : collection) {
    if (entry.module != model.get()) others.push_back(&entry.graph);
  }
  const std::size_t failures = collection.failures().size();
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(symbolic_trace(*clean_model, specs));
    for (const Graph* graph : others) {
      Graph copy(*graph);
      benchmark::DoNotOptimize(copy);
    }
    for (std::size_t i = 0; i < failures; ++i) {
      try {
        throw_from_depth(5);
      } catch (const std::runtime_error& e) {
        benchmark::DoNotOptimize(e);
      }
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["graphs"] = static_cast<double>(others.size() + 1);
  state.counters["failures"] = static_cast<double>(failures);
  const double clean_seconds = clean_trace_seconds(*clean_model, specs, 201);
  state.counters["x_clean_trace"] = seconds / static_cast<double>(state.iterations()) / clean_seconds;
}

/// Counters of a run over a chain of `levels` modules: µs per level of the mean iteration.
void per_level(benchmark::State& state, std::int64_t levels) {
  state.counters["levels"] = static_cast<double>(levels);
  state.counters["us_per_level"] = benchmark::Counter(static_cast<double>(levels) * 1e-6,
                                                      benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
}

/// The ChainEnd's result metadata: its input's.
OutputMeta chain_end_meta(const Module&, const ValueList& args) { return OutputMeta::single(TensorMeta(args.at(0).to_tensor().meta())); }

/// Building a chain of state.range(0) modules (bottom up, as zoo::deep_chain does) and freeing it.
void BM_ChainBuild(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(zoo::deep_chain(state.range(0)));
  per_level(state, state.range(0));
}

/// symbolic_trace of a chain of state.range(0) modules, its failing innermost a registered leaf.
void BM_ChainSymbolicTrace(benchmark::State& state) {
  auto model = zoo::deep_chain(state.range(0));
  Tracer tracer;
  tracer.register_leaf<zoo::ChainEndImpl>(chain_end_meta);
  const std::vector<InputSpec> specs{InputSpec(Shape{1, 16})};
  for (auto _ : state) benchmark::DoNotOptimize(tracer.trace(*model, specs));
  per_level(state, state.range(0));
}

/// recursive_trace of a chain of state.range(0) modules, its innermost failing.
void BM_ChainRecursiveTrace(benchmark::State& state) {
  auto model = zoo::deep_chain(state.range(0));
  const std::vector<InputSpec> specs{InputSpec(Shape{1, 16})};
  for (auto _ : state) benchmark::DoNotOptimize(recursive_trace(*model, specs));
  per_level(state, state.range(0));
}

/// The coverage report (text) of a chain's recursive_trace.
void BM_ChainCoverageReport(benchmark::State& state) {
  auto model = zoo::deep_chain(state.range(0));
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape{1, 16})});
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string report = coverage_report(c, "deep_chain");
    bytes = report.size();
    benchmark::DoNotOptimize(report);
  }
  per_level(state, state.range(0));
  state.counters["bytes"] = static_cast<double>(bytes);
}

/// The interpreter running a chain's traced graph (the innermost a leaf, run eagerly).
void BM_ChainInterpreter(benchmark::State& state) {
  auto model = zoo::deep_chain(state.range(0));
  Tracer tracer;
  tracer.register_leaf<zoo::ChainEndImpl>(chain_end_meta);
  const Graph graph = tracer.trace(*model, {InputSpec(Shape{1, 16})});
  manual_seed(0);
  const ValueList args{randn({1, 16})};
  Interpreter interpreter(*model, graph);
  for (auto _ : state) benchmark::DoNotOptimize(interpreter.run(args));
  per_level(state, state.range(0));
}

}  // namespace

BENCHMARK_CAPTURE(BM_SymbolicTrace, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTrace, mobilenet_v2, std::string("mobilenet_v2"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTrace, vit_b16, std::string("vit_b16"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTrace, deep_mlp_1000, std::string("deep_mlp_1000"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTraceNamedDims, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTraceNamedDims, mobilenet_v2, std::string("mobilenet_v2"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTraceNamedDims, vit_b16, std::string("vit_b16"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SymbolicTraceNamedDims, deep_mlp_1000, std::string("deep_mlp_1000"))->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SymbolicTraceDeepMlp)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SymbolicTraceNarrowMlp)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, resnet50_fail1, std::string("resnet50_fail1"), std::string("resnet50"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, resnet50_fail16, std::string("resnet50_fail16"), std::string("resnet50"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, resnet50_fail16_result_by_execution, std::string("resnet50_fail16"),
                  std::string("resnet50"), true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTraceFloor, resnet50_fail16, std::string("resnet50_fail16"), std::string("resnet50"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, deep_mlp_1000, std::string("deep_mlp_1000"), std::string("deep_mlp_1000"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecursiveTrace, deep_mlp_1000_fail16, std::string("deep_mlp_1000_fail16"),
                  std::string("deep_mlp_1000"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TraceByExecution, deep_mlp_1000, std::string("deep_mlp_1000"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TraceByExecution, resnet18, std::string("resnet18"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Interpreter, deep_mlp_1000, std::string("deep_mlp_1000"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Interpreter, resnet18, std::string("resnet18"))->Unit(benchmark::kMillisecond);

BENCHMARK(BM_ChainBuild)->Arg(250)->Arg(1'000)->Arg(2'000)->Arg(4'000)->Arg(8'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainSymbolicTrace)->Arg(250)->Arg(1'000)->Arg(2'000)->Arg(4'000)->Arg(8'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainRecursiveTrace)->Arg(250)->Arg(1'000)->Arg(2'000)->Arg(4'000)->Arg(8'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainCoverageReport)->Arg(250)->Arg(1'000)->Arg(2'000)->Arg(4'000)->Arg(8'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainInterpreter)->Arg(250)->Arg(1'000)->Arg(2'000)->Arg(4'000)->Arg(8'000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

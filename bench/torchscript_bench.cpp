// A PyTorch model from its TorchScript file against the same architecture written in C++
// (the zoo's resnet50): loading (against LibTorch's own torch::jit::load of the file), the
// symbolic trace per node, and the eager forward. tools/bench makes the file
// (tests/torchscript/make_models.py) and names its folder in SYMTRACE_TORCHSCRIPT_MODELS.
#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace {

using namespace symtrace;

std::filesystem::path model_file(const std::string& name) {
  const char* dir = std::getenv("SYMTRACE_TORCHSCRIPT_MODELS");
  if (dir == nullptr) throw std::runtime_error("set SYMTRACE_TORCHSCRIPT_MODELS to the folder of the model files");
  return std::filesystem::path(dir) / (name + ".script.pt");
}

void BM_TorchJitLoad(benchmark::State& state, const std::string& name) {
  const auto path = model_file(name);
  for (auto _ : state) torchscript::detail::read_with_libtorch(path);
}

void BM_TorchscriptLoad(benchmark::State& state, const std::string& name) {
  const auto path = model_file(name);
  for (auto _ : state) {
    auto model = torchscript::load(path);
    benchmark::DoNotOptimize(model);
  }
}

void trace_per_node(benchmark::State& state, Module& model) {
  const std::vector<InputSpec> specs = {InputSpec(Shape{1, 3, 224, 224})};
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

void BM_TraceLoaded(benchmark::State& state, const std::string& name) {
  auto model = torchscript::load(model_file(name));
  trace_per_node(state, *model);
}

void BM_TraceZoo(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  model->eval();
  trace_per_node(state, *model);
}

void eager(benchmark::State& state, Module& model) {
  Generator gen(0);
  const Tensor x = randn({1, 3, 64, 64}, gen);
  for (auto _ : state) {
    Value out = model.call({x});
    benchmark::DoNotOptimize(out);
  }
}

void BM_EagerLoaded(benchmark::State& state, const std::string& name) {
  auto model = torchscript::load(model_file(name));
  eager(state, *model);
}

void BM_EagerZoo(benchmark::State& state, const std::string& name) {
  auto model = zoo::create(name);
  model->eval();
  eager(state, *model);
}

}  // namespace

BENCHMARK_CAPTURE(BM_TorchJitLoad, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchscriptLoad, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TraceLoaded, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TraceZoo, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EagerLoaded, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EagerZoo, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

// A PyTorch model from its TorchScript file against the same architecture written in C++
// (the zoo's resnet50): loading (against LibTorch's own torch::jit::load of the file, each
// load from a heap that has returned its free memory to the system), the
// symbolic trace per node, and the eager forward; and an eager forward whose ops all run
// through LibTorch's (the fallback) against LibTorch's own forward of the same file. tools/bench
// makes the files (tests/torchscript/make_models.py) and names their folder in
// SYMTRACE_TORCHSCRIPT_MODELS.
#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>
#include <symtrace/torchscript/load.hpp>

#include "trace_per_node.hpp"

#include <benchmark/benchmark.h>
#include <torch/script.h>

#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
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

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Times `load()` as a program that loads a model once pays for it: before each load (outside
// the timing) the heap's free memory goes back to the system, so both loaders fault in the
// pages they read the file into. Without that, a loop that loads and frees a model measures
// glibc's trimming policy: whether the memory freed at the end of one load is returned to the
// system, and faulted in again by the next, depends on where the heap's free chunks lie, and
// swings a load of resnet50 between 1 and 2 times its cost. `faults` counts the minor page
// faults per load.
template <class F>
void cold_load(benchmark::State& state, F&& load) {
  const long before = minor_faults();
  for (auto _ : state) {
    state.PauseTiming();
    malloc_trim(0);
    state.ResumeTiming();
    benchmark::DoNotOptimize(load());
  }
  state.counters["faults"] =
      benchmark::Counter(static_cast<double>(minor_faults() - before), benchmark::Counter::kAvgIterations);
}

void BM_TorchJitLoad(benchmark::State& state, const std::string& name) {
  const auto path = model_file(name);
  cold_load(state, [&] {
    torchscript::detail::read_with_libtorch(path);
    return 0;
  });
}

void BM_TorchscriptLoad(benchmark::State& state, const std::string& name) {
  const auto path = model_file(name);
  cold_load(state, [&] { return torchscript::load(path); });
}

void trace_per_node(benchmark::State& state, Module& model) {
  bench::trace_per_node(state, model, {InputSpec(Shape{1, 3, 224, 224})});
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

/// symtrace's eager forward of fallback_ops.script.pt, whose every op runs through LibTorch's
/// (symtrace has none of them), and `x_libtorch`: its time over LibTorch's own forward of the
/// same file on the same input, timed in the same run after the loop.
void BM_EagerFallback(benchmark::State& state) {
  const auto path = model_file("fallback_ops");
  auto model = torchscript::load(path);
  Generator gen(0);
  const Tensor x = randn({1, 16, 64, 64}, gen);
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    Value out = model->call({x});
    benchmark::DoNotOptimize(out);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  torch::jit::Module libtorch = torch::jit::load(path.string());
  libtorch.eval();
  const at::Tensor input = at::from_blob(x.data_ptr<float>(), {1, 16, 64, 64}).clone();
  const torch::NoGradGuard no_grad;
  constexpr int runs = 200;
  benchmark::DoNotOptimize(libtorch.forward({input}));  // warm
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) benchmark::DoNotOptimize(libtorch.forward({input}));
  const double theirs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
  state.counters["x_libtorch"] = seconds / static_cast<double>(state.iterations()) / theirs;
}

}  // namespace

BENCHMARK(BM_EagerFallback)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchJitLoad, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchscriptLoad, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TraceLoaded, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TraceZoo, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EagerLoaded, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EagerZoo, resnet50, std::string("resnet50"))->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

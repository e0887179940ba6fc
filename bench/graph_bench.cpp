// Graph construction cost: time and heap bytes per node for chains with fan-in, as a tracer
// builds them. The shape is deep_mlp's block (Linear -> LayerNorm -> GELU -> residual add): a
// call_module leaf per layer with its own module path, a shared-name call_function add using
// the block's input, a [1, 64] float32 tensor meta and a source location on every node.
// Counters: ns/node (wall time per node), bytes/node (heap growth measured by mallinfo2 over
// one build, so everything the graph allocates counts: nodes, edges, names, targets, metadata).
#include "symtrace/graph.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <malloc.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

struct Targets {
  std::vector<std::string> linear, norm, gelu;
  explicit Targets(std::size_t blocks) {
    for (std::size_t i = 0; i < blocks; ++i) {
      linear.push_back(fmt::format("blocks.{}.linear", i));
      norm.push_back(fmt::format("blocks.{}.norm", i));
      gelu.push_back(fmt::format("blocks.{}.act", i));
    }
  }
};

/// Builds a graph of `blocks` MLP blocks (4 nodes each) plus input and output.
void build(Graph& g, const Targets& t, std::size_t blocks, bool leaves) {
  const TensorMeta meta{DType::float32, Shape{1, 64}};
  Node* x = &g.placeholder("x");
  x->set_tensor_meta(meta);
  for (std::size_t i = 0; i < blocks; ++i) {
    Node* h;
    if (leaves) {
      h = &g.call_module(t.linear[i], {*x});
      h->set_tensor_meta(meta);
      h = &g.call_module(t.norm[i], {*h});
      h->set_tensor_meta(meta);
      h = &g.call_module(t.gelu[i], {*h});
    } else {
      h = &g.call_function("linear", {*x, 64});
      h->set_tensor_meta(meta);
      h = &g.call_function("layer_norm", {*h, Argument::list({64})});
      h->set_tensor_meta(meta);
      h = &g.call_function("gelu", {*h});
    }
    h->set_tensor_meta(meta);
    x = &g.call_function("add", {*h, *x});
    x->set_tensor_meta(meta);
  }
  g.output(*x);
}

void report(benchmark::State& state, std::size_t nodes, std::size_t bytes) {
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["ns/node"] = benchmark::Counter(static_cast<double>(nodes) * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["bytes/node"] = static_cast<double>(bytes) / static_cast<double>(nodes);
}

void BM_BuildGraph(benchmark::State& state, bool leaves) {
  auto blocks = static_cast<std::size_t>(state.range(0));
  Targets targets(blocks);
  std::size_t nodes = 4 * blocks + 2;
  std::size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::size_t before = mallinfo2().uordblks;
    state.ResumeTiming();
    auto g = std::make_unique<Graph>();
    build(*g, targets, blocks, leaves);
    state.PauseTiming();
    bytes = mallinfo2().uordblks - before;
    benchmark::DoNotOptimize(g->size());
    g.reset();  // destruction is not creation: not timed
    state.ResumeTiming();
  }
  report(state, nodes, bytes);
}

/// Robust tracing's pattern: a checkpoint per module call, most committed, some rolled back.
void BM_CheckpointRollback(benchmark::State& state) {
  auto blocks = static_cast<std::size_t>(state.range(0));
  Targets targets(blocks);
  for (auto _ : state) {
    Graph g;
    Node* x = &g.placeholder("x");
    for (std::size_t i = 0; i < blocks; ++i) {
      auto checkpoint = g.checkpoint();
      Node* h = &g.call_module(targets.linear[i], {*x});
      h = &g.call_module(targets.norm[i], {*h});
      h = &g.call_module(targets.gelu[i], {*h});
      Node& y = g.call_function("add", {*h, *x});
      if (i % 16 == 15) {
        checkpoint.rollback();  // a failing block becomes one leaf
        x = &g.call_module(targets.linear[i], {*x});
      } else {
        checkpoint.commit();
        x = &y;
      }
    }
    g.output(*x);
    benchmark::DoNotOptimize(g.size());
  }
  state.counters["ns/block"] = benchmark::Counter(static_cast<double>(blocks) * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK_CAPTURE(BM_BuildGraph, module_leaves, true)->Arg(2'500)->Arg(25'000)->Arg(250'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildGraph, functions, false)->Arg(2'500)->Arg(25'000)->Arg(250'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CheckpointRollback)->Arg(25'000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

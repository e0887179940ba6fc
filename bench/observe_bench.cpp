// Observers: what an eager op call pays for the registry when no callback is registered (the
// check every op and module call makes: one relaxed load and a branch), and the cost of an op
// call with one callback that counts calls.
//
//   ninja -C build-rel bench/observe_bench && build-rel/bench/observe_bench
#include <symtrace/symtrace.hpp>

#include <benchmark/benchmark.h>

namespace {

using namespace symtrace;

// The check as dispatch makes it, in a function of its own so the loop cannot hoist it.
[[gnu::noinline]] int checked_call(int x) {
  if (has_callbacks()) [[unlikely]]
    return x + 1;
  return x;
}
[[gnu::noinline]] int unchecked_call(int x) { return x; }

void BM_CallWithObserverCheck(benchmark::State& state) {
  clear_callbacks();
  int x = 0;
  for (auto _ : state) benchmark::DoNotOptimize(x = checked_call(x));
}

void BM_CallWithoutObserverCheck(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) benchmark::DoNotOptimize(x = unchecked_call(x));
}

void BM_EagerRelu(benchmark::State& state, bool with_callback) {
  clear_callbacks();
  long calls = 0;
  if (with_callback) {
    add_global_callback(RecordFunctionCallback([&](const RecordFunction&) {
                          ++calls;
                          return std::unique_ptr<ObserverContext>();
                        }).scopes({RecordScope::function}));
  }
  const Tensor x = ones({4});
  for (auto _ : state) benchmark::DoNotOptimize(relu(x));
  clear_callbacks();
  state.counters["callback_calls"] = static_cast<double>(calls);
}

}  // namespace

BENCHMARK(BM_CallWithObserverCheck);
BENCHMARK(BM_CallWithoutObserverCheck);
BENCHMARK_CAPTURE(BM_EagerRelu, no_callback, false);
BENCHMARK_CAPTURE(BM_EagerRelu, one_callback, true);

BENCHMARK_MAIN();

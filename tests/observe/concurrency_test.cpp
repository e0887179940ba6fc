// RecordFunction callbacks under threads: global callbacks added and removed on one thread
// while other threads run eager ops, module calls and traces. Every start gets its end, each
// worker's thread-local callback counts exactly its own events, and the traces are unchanged.
// tools/test --tsan runs this under ThreadSanitizer.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;

namespace {

/// Removes every callback when the test ends, whatever happens in it.
struct CleanCallbacks {
  CleanCallbacks() { clear_callbacks(); }
  ~CleanCallbacks() { clear_callbacks(); }
};

nn::Sequential small_model() { return nn::Sequential(nn::Linear(4, 3), nn::ReLU()); }

/// Waits (at most 20 s) until `counter` reaches `target`; says whether it did.
bool wait_for(const std::atomic<long>& counter, long target) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (counter.load() < target && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  return counter.load() >= target;
}

}  // namespace

TEST_CASE("global callbacks come and go while threads run ops, module calls and traces; every count adds up") {
  CleanCallbacks clean;
  std::atomic<bool> stop{false};
  std::atomic<long> starts{0};
  std::atomic<long> ends{0};
  std::atomic<long> work{0};  // iterations done by all workers
  std::mutex seen_mutex;
  std::set<std::string> seen;  // "scope:name" of every event the global callbacks started for

  // Eager workers: one model call (Sequential, Linear, ReLU: 3 module events; linear, relu: 2
  // op events) and one op of their own per iteration, counted by a thread-local callback.
  struct EagerCounts {
    long iterations = 0;
    long module_events = 0;
    long function_events = 0;
    bool removed = false;
  };
  std::vector<EagerCounts> eager(2);
  std::atomic<long> eager_running{0};  // eager workers that finished an iteration
  const auto eager_worker = [&](EagerCounts& counts) {
    nn::Sequential model = small_model();
    const Tensor x = ones({2, 4});
    const CallbackHandle local = add_thread_local_callback(RecordFunctionCallback([&](const RecordFunction& fn) {
      ++(fn.scope() == RecordScope::module ? counts.module_events : counts.function_events);
      return std::unique_ptr<ObserverContext>();
    }));
    while (!stop.load()) {
      const Tensor y = model(x);
      (void)relu(y);
      if (++counts.iterations == 1) ++eager_running;
      ++work;
    }
    counts.removed = remove_callback(local);
  };
  // A tracing worker: the graph must not change whatever callbacks are registered.
  nn::Sequential reference = small_model();
  const std::string reference_graph = to_string(symbolic_trace(*reference.ptr(), {InputSpec(Shape{2, 4})}));
  std::atomic<long> traces{0};  // waited for: on a loaded machine the eager workers alone could
                                // do all the work the test waits for before a trace completes
  long different_traces = 0;
  const auto trace_worker = [&] {
    nn::Sequential model = small_model();
    while (!stop.load()) {
      different_traces += to_string(symbolic_trace(*model.ptr(), {InputSpec(Shape{2, 4})})) != reference_graph;
      ++traces;
      ++work;
    }
  };

  std::thread a(eager_worker, std::ref(eager[0]));
  std::thread b(eager_worker, std::ref(eager[1]));
  std::thread c(trace_worker);
  REQUIRE(wait_for(work, 30));
  // Every worker is running: on a loaded machine the trace worker alone may do the work above
  // before an eager worker finishes its first call.
  REQUIRE(wait_for(eager_running, 2));
  REQUIRE(wait_for(traces, 1));
  const long traces_before = traces.load();
  int rounds_seen = 0;
  constexpr int rounds = 40;
  const auto global_callback = [&] {
    return RecordFunctionCallback(
        [&](const RecordFunction& fn) {
          ++starts;
          const std::string key = fmt::format("{}:{}", to_string(fn.scope()), fn.name());
          const std::lock_guard lock(seen_mutex);
          seen.insert(key);
          return std::unique_ptr<ObserverContext>();
        },
        [&](const RecordFunction&, ObserverContext*) { ++ends; });
  };
  for (int round = 0; round < rounds; ++round) {
    const CallbackHandle h = add_global_callback(global_callback());
    if (round % 4 == 0) {
      CHECK(disable_callback(h));
      CHECK(enable_callback(h));
    }
    rounds_seen += wait_for(starts, starts.load() + 1);  // a worker's event ran the new callback
    CHECK(remove_callback(h));
  }
  CHECK(wait_for(traces, traces_before + 1));  // a trace ended after the callbacks began to come and go
  {
    // One callback more, kept until it has seen every kind of event: each round above ends at
    // the first event it starts, which on a loaded machine may always be the trace worker's.
    const CallbackHandle h = add_global_callback(global_callback());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    const auto seen_all = [&] {
      const std::lock_guard lock(seen_mutex);
      return seen.size() >= 5;
    };
    while (!seen_all() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    CHECK(remove_callback(h));
  }
  stop = true;
  a.join();
  b.join();
  c.join();

  CHECK(rounds_seen == rounds);
  CHECK(starts.load() >= rounds);
  CHECK(ends.load() == starts.load());  // removed callbacks still end the events they started
  CHECK(fmt::format("{}", fmt::join(seen, ", ")) ==
        "function:linear, function:relu, module:Linear, module:ReLU, module:Sequential");
  for (const EagerCounts& counts : eager) {
    CHECK(counts.removed);
    CHECK(counts.iterations > 0);
    CHECK(counts.module_events == 3 * counts.iterations);
    CHECK(counts.function_events == 3 * counts.iterations);
  }
  CHECK(traces.load() > traces_before);
  CHECK(different_traces == 0);
  CHECK(!has_callbacks());
}

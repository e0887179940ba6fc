// RecordFunction callbacks: scopes, sampling, inputs/outputs/ids on request, thread-local and
// global registration (also while other threads run ops), handles, and errors.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

#include <atomic>
#include <chrono>
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

/// Records "scope:name" of each start and each end.
struct Log {
  std::vector<std::string> starts;
  std::vector<std::string> ends;
  RecordFunctionCallback callback() {
    return RecordFunctionCallback(
        [this](const RecordFunction& fn) {
          starts.push_back(fmt::format("{}:{}", to_string(fn.scope()), fn.name()));
          return std::unique_ptr<ObserverContext>();
        },
        [this](const RecordFunction& fn, ObserverContext*) {
          ends.push_back(fmt::format("{}:{}", to_string(fn.scope()), fn.name()));
        });
  }
};

nn::Sequential small_model() {
  manual_seed(0);
  return nn::Sequential(nn::Linear(4, 3), nn::ReLU());
}

}  // namespace

TEST_CASE("with no callback an event runs nothing, and has_callbacks says so") {
  CleanCallbacks clean;
  CHECK_FALSE(has_callbacks());
  const Tensor x = ones({2, 2});
  CHECK(relu(x).sum().item<float>() == 4.0f);
  CHECK_FALSE(has_callbacks());
}

TEST_CASE("scopes choose which events a callback sees: ops, module calls, user scopes") {
  CleanCallbacks clean;
  nn::Sequential model = small_model();
  const Tensor x = ones({2, 4});
  Log functions, modules, users, all;
  add_thread_local_callback(functions.callback().scopes({RecordScope::function}));
  add_thread_local_callback(modules.callback().scopes({RecordScope::module}));
  add_thread_local_callback(users.callback().scopes({RecordScope::user_scope}));
  add_thread_local_callback(all.callback());
  {
    SYMTRACE_RECORD_USER_SCOPE("forward pass");
    (void)model(x);
  }
  CHECK(modules.starts == std::vector<std::string>{"module:Sequential", "module:Linear", "module:ReLU"});
  CHECK(modules.ends == std::vector<std::string>{"module:Linear", "module:ReLU", "module:Sequential"});
  CHECK(functions.starts == std::vector<std::string>{"function:linear", "function:relu"});
  CHECK(users.starts == std::vector<std::string>{"user_scope:forward pass"});
  CHECK(users.ends == users.starts);
  CHECK(all.starts == std::vector<std::string>{"user_scope:forward pass", "module:Sequential", "module:Linear",
                                               "function:linear", "module:ReLU", "function:relu"});
  CHECK(all.ends.size() == all.starts.size());
  CHECK(all.ends.back() == "user_scope:forward pass");
}

TEST_CASE("sampling runs start and end as pairs for the sampled share of events") {
  CleanCallbacks clean;
  set_record_function_seed(42);
  struct Count : ObserverContext {
    int serial;
    explicit Count(int s) : serial(s) {}
  };
  int starts = 0;
  int ends = 0;
  int mismatched = 0;
  add_thread_local_callback(RecordFunctionCallback(
                                [&](const RecordFunction&) -> std::unique_ptr<ObserverContext> {
                                  return std::make_unique<Count>(starts++);
                                },
                                [&](const RecordFunction&, ObserverContext* context) {
                                  auto* count = dynamic_cast<Count*>(context);
                                  if (count == nullptr || count->serial != ends) ++mismatched;
                                  ++ends;
                                })
                                .sampling_prob(0.3)
                                .scopes({RecordScope::function}));
  const Tensor x = ones({2});
  constexpr int n = 10000;
  for (int i = 0; i < n; ++i) (void)relu(x);
  // Binomial(10000, 0.3): mean 3000, sd 45.8; the bounds are 5 sd.
  CHECK(starts > 2770);
  CHECK(starts < 3230);
  CHECK(ends == starts);
  CHECK(mismatched == 0);

  // The same seed gives the same choice.
  const int first = starts;
  set_record_function_seed(42);
  starts = ends = 0;
  for (int i = 0; i < n; ++i) (void)relu(x);
  CHECK(starts == first);
}

TEST_CASE("inputs, outputs and ids are handed over only to runs where a callback asked for them") {
  CleanCallbacks clean;
  const Tensor a = tensor({1.0f, -2.0f});
  const Tensor b = tensor({3.0f, 4.0f});
  std::vector<std::size_t> plain_inputs, plain_outputs;
  std::vector<std::uint64_t> plain_ids;
  const CallbackHandle plain = add_thread_local_callback(RecordFunctionCallback(
      [&](const RecordFunction& fn) {
        plain_inputs.push_back(fn.inputs().size());
        plain_ids.push_back(fn.id());
        return std::unique_ptr<ObserverContext>();
      },
      [&](const RecordFunction& fn, ObserverContext*) { plain_outputs.push_back(fn.outputs().size()); }));
  (void)add(a, b);
  CHECK(plain_inputs == std::vector<std::size_t>{0});
  CHECK(plain_outputs == std::vector<std::size_t>{0});
  CHECK(plain_ids == std::vector<std::uint64_t>{0});
  remove_callback(plain);

  std::vector<Tensor> seen_inputs;
  Tensor seen_output;
  add_thread_local_callback(RecordFunctionCallback(
                                [&](const RecordFunction& fn) {
                                  for (const Value& v : fn.inputs()) {
                                    if (v.is_tensor()) seen_inputs.push_back(v.to_tensor());
                                  }
                                  return std::unique_ptr<ObserverContext>();
                                },
                                [&](const RecordFunction& fn, ObserverContext*) {
                                  REQUIRE(fn.outputs().size() == 1);
                                  seen_output = fn.outputs()[0].to_tensor();
                                })
                                .needs_inputs()
                                .needs_outputs());
  const Tensor sum = add(a, b);
  REQUIRE(seen_inputs.size() == 2);
  CHECK(seen_inputs[0].to_vector<float>() == std::vector<float>{1.0f, -2.0f});
  CHECK(seen_inputs[1].to_vector<float>() == std::vector<float>{3.0f, 4.0f});
  CHECK(seen_output.to_vector<float>() == sum.to_vector<float>());
  CHECK(sum.to_vector<float>() == std::vector<float>{4.0f, 2.0f});
}

TEST_CASE("ids increase and an op's parent is the module call it runs in") {
  CleanCallbacks clean;
  nn::Sequential model = small_model();
  struct Event {
    std::string name;
    std::uint64_t id, parent;
  };
  std::vector<Event> events;
  add_thread_local_callback(RecordFunctionCallback([&](const RecordFunction& fn) {
                              events.push_back({std::string(fn.name()), fn.id(), fn.parent_id()});
                              return std::unique_ptr<ObserverContext>();
                            }).needs_ids());
  (void)model(ones({1, 4}));
  REQUIRE(events.size() == 5);  // Sequential, Linear, linear, ReLU, relu
  CHECK(events[0].parent == 0);
  for (std::size_t i = 1; i < events.size(); ++i) CHECK(events[i].id > events[i - 1].id);
  CHECK(events[1].parent == events[0].id);  // Linear inside Sequential
  CHECK(events[2].parent == events[1].id);  // linear inside Linear
  CHECK(events[3].parent == events[0].id);  // ReLU inside Sequential, after Linear ended
  CHECK(events[4].parent == events[3].id);
}

TEST_CASE("a should-run predicate picks events, asked once per event before the start") {
  CleanCallbacks clean;
  int asked = 0;
  Log log;
  add_thread_local_callback(log.callback().should_run([&](const RecordFunction& fn) {
    ++asked;
    return fn.name() == "relu";
  }));
  const Tensor x = ones({2});
  (void)relu(add(x, x));
  CHECK(asked == 2);
  CHECK(log.starts == std::vector<std::string>{"function:relu"});
  CHECK(log.ends == log.starts);
}

TEST_CASE("thread-local callbacks see their own thread only; global ones see every thread") {
  CleanCallbacks clean;
  std::atomic<int> global_calls{0};
  std::atomic<int> local_calls{0};
  add_global_callback(RecordFunctionCallback([&](const RecordFunction&) {
                        ++global_calls;
                        return std::unique_ptr<ObserverContext>();
                      }).scopes({RecordScope::function}));
  add_thread_local_callback(RecordFunctionCallback([&](const RecordFunction&) {
                              ++local_calls;
                              return std::unique_ptr<ObserverContext>();
                            }).scopes({RecordScope::function}));
  std::thread other([] {
    const Tensor x = ones({2});
    for (int i = 0; i < 10; ++i) (void)relu(x);
  });
  other.join();
  CHECK(global_calls == 10);
  CHECK(local_calls == 0);
  (void)relu(ones({2}));
  CHECK(global_calls == 11);
  CHECK(local_calls == 1);
}

TEST_CASE("global callbacks come and go while two threads run ops, and every start gets its end") {
  CleanCallbacks clean;
  std::atomic<bool> stop{false};
  std::atomic<long> starts{0};
  std::atomic<long> ends{0};
  std::atomic<long> ops{0};
  const auto worker = [&] {
    const Tensor x = ones({4});
    while (!stop.load()) {
      (void)relu(x);
      ++ops;
    }
  };
  std::thread a(worker);
  std::thread b(worker);
  // Waits (at most 10 s) until `counter` passes `target`.
  const auto wait_for = [](const std::atomic<long>& counter, long target) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (counter.load() < target && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return counter.load() >= target;
  };
  REQUIRE(wait_for(ops, 100));  // both workers are running
  int rounds_seen = 0;
  for (int round = 0; round < 300; ++round) {
    const CallbackHandle h = add_global_callback(RecordFunctionCallback(
        [&](const RecordFunction&) {
          ++starts;
          return std::unique_ptr<ObserverContext>();
        },
        [&](const RecordFunction&, ObserverContext*) { ++ends; }));
    if (round % 3 == 0) {
      CHECK(disable_callback(h));
      CHECK(enable_callback(h));
    }
    rounds_seen += wait_for(starts, starts.load() + 1);  // a worker's op ran the new callback
    CHECK(remove_callback(h));
  }
  stop = true;
  a.join();
  b.join();
  CHECK(rounds_seen == 300);
  CHECK(starts.load() >= 300);
  CHECK(starts.load() == ends.load());
  CHECK_FALSE(has_callbacks());
}

TEST_CASE("ops a callback runs are not observed, and a user scope keeps its own copy of its name") {
  CleanCallbacks clean;
  std::vector<std::string> names;
  add_thread_local_callback(RecordFunctionCallback([&](const RecordFunction& fn) {
                              names.emplace_back(fn.name());
                              if (fn.scope() == RecordScope::function) {
                                (void)fn.inputs()[0].to_tensor().sum();  // an op inside the callback
                              }
                              return std::unique_ptr<ObserverContext>(); },
                                                   [&](const RecordFunction& fn, ObserverContext*) { names.emplace_back(fn.name()); })
                                .needs_inputs());
  {
    SYMTRACE_RECORD_USER_SCOPE(fmt::format("block {}", 3));  // a temporary name
    (void)relu(ones({2}));
  }
  CHECK(names == std::vector<std::string>{"block 3", "relu", "relu", "block 3"});
}

TEST_CASE("handles remove, disable and enable exactly the callback they name") {
  CleanCallbacks clean;
  Log first, second;
  const CallbackHandle h1 = add_global_callback(first.callback().scopes({RecordScope::function}));
  const CallbackHandle h2 = add_thread_local_callback(second.callback().scopes({RecordScope::function}));
  CHECK(h1 != 0);
  CHECK(h2 != h1);
  const Tensor x = ones({2});

  CHECK(disable_callback(h1));
  (void)relu(x);
  CHECK(first.starts.empty());
  CHECK(second.starts.size() == 1);
  CHECK(enable_callback(h1));
  (void)relu(x);
  CHECK(first.starts.size() == 1);

  bool removed_elsewhere = true;
  std::thread([&] { removed_elsewhere = remove_callback(h2); }).join();
  CHECK_FALSE(removed_elsewhere);  // another thread's thread-local callback
  CHECK(remove_callback(h2));
  CHECK_FALSE(remove_callback(h2));
  CHECK_FALSE(disable_callback(h2));
  CHECK(remove_callback(h1));
  CHECK_FALSE(enable_callback(h1));
  CHECK_FALSE(remove_callback(0));
  (void)relu(x);
  CHECK(first.starts.size() == 1);
  CHECK(second.starts.size() == 2);
  CHECK_FALSE(has_callbacks());
}

TEST_CASE("a start that throws ends the callbacks started before it, and the op's error stays the op's") {
  CleanCallbacks clean;
  Log log;
  add_thread_local_callback(log.callback().scopes({RecordScope::function}));
  add_thread_local_callback(RecordFunctionCallback([](const RecordFunction&) -> std::unique_ptr<ObserverContext> {
                              throw std::runtime_error("observer failed");
                            }).scopes({RecordScope::function}));
  CHECK_THROWS_WITH_AS((void)relu(ones({2})), "observer failed", std::runtime_error);
  CHECK(log.starts == std::vector<std::string>{"function:relu"});
  CHECK(log.ends == log.starts);
  clear_callbacks();

  // An op that fails inside an observed run: its error propagates, the end still runs.
  Log second;
  add_thread_local_callback(second.callback().scopes({RecordScope::function}));
  CHECK_THROWS_AS((void)add(ones({2}), ones({3})), OpError);
  CHECK(second.starts == std::vector<std::string>{"function:add"});
  CHECK(second.ends == second.starts);
}

TEST_CASE("a callback with nothing to run, a sampling rate outside [0, 1] and no scopes are refused") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(RecordFunctionCallback(nullptr, nullptr),
                       fmt::format("{}:{}: a RecordFunctionCallback needs a start or an end function; both are empty",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  Log log;
  CHECK_THROWS_WITH_AS(log.callback().sampling_prob(1.5),
                       doctest::Contains("sampling_prob(1.5) is not a probability: give a value in [0, 1]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(log.callback().scopes({}),
                       doctest::Contains("scopes({}) would observe nothing: name at least one RecordScope"),
                       std::invalid_argument);
}

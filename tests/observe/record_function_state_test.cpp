// RecordFunction's switches (this thread's and the global one), state carried into a worker
// thread (ThreadLocalState), the ids an event gets (sequence number, thread ids) and the
// RECORD_FUNCTION-style macros: the behaviours LibTorch's own record-function tests check.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;

namespace {

/// Removes every callback and turns the switches back on when the test ends.
struct CleanCallbacks {
  CleanCallbacks() { clear_callbacks(); }
  ~CleanCallbacks() {
    clear_callbacks();
    enable_record_function(true);
    enable_record_function_globally(true);
  }
};

/// An event as a callback saw it, with its ids.
struct Seen {
  std::string name;
  RecordScope scope = RecordScope::function;
  std::uint64_t id = 0, parent = 0, sequence_nr = 0, thread = 0, forward_thread = 0;
  std::size_t inputs = 0;
};

/// A callback that appends each event it starts for to `out` (not thread-safe: one thread at a time).
RecordFunctionCallback logging(std::vector<Seen>& out) {
  return RecordFunctionCallback([&out](const RecordFunction& fn) {
           out.push_back({std::string(fn.name()), fn.scope(), fn.id(), fn.parent_id(), fn.sequence_nr(),
                          fn.thread_id(), fn.forward_thread_id(), fn.inputs().size()});
           return std::unique_ptr<ObserverContext>();
         })
      .needs_ids()
      .needs_inputs();
}

std::vector<std::string> names(const std::vector<Seen>& events) {
  std::vector<std::string> out;
  for (const Seen& e : events) out.push_back(e.name);
  return out;
}

}  // namespace

TEST_CASE("RecordFunctionGuard turns every callback off on its thread and back on after, also past an exception") {
  CleanCallbacks clean;
  std::vector<Seen> local, global;
  add_thread_local_callback(logging(local));
  add_global_callback(logging(global).scopes({RecordScope::user_scope}));
  const Tensor x = ones({2});
  CHECK(is_record_function_enabled());
  {
    const DisableRecordFunctionGuard off;
    CHECK_FALSE(is_record_function_enabled());
    (void)relu(x);
    SYMTRACE_RECORD_USER_SCOPE("hidden");
    {
      const RecordFunctionGuard on;  // guards nest: on again inside the off one
      CHECK(is_record_function_enabled());
      (void)exp(x);
    }
    CHECK_FALSE(is_record_function_enabled());
    (void)neg(x);
  }
  CHECK(is_record_function_enabled());
  (void)abs(x);
  CHECK(names(local) == std::vector<std::string>{"exp", "abs"});
  CHECK(global.empty());

  local.clear();
  try {
    const DisableRecordFunctionGuard off;
    (void)relu(x);
    throw std::runtime_error("leaving the scope by an exception");
  } catch (const std::runtime_error&) {
  }
  CHECK(is_record_function_enabled());
  (void)relu(x);
  CHECK(names(local) == std::vector<std::string>{"relu"});
}

TEST_CASE("the global switch turns callbacks off on every thread, and its guard puts the previous value back") {
  CleanCallbacks clean;
  std::atomic<int> calls{0};
  add_global_callback(RecordFunctionCallback([&](const RecordFunction&) {
                        ++calls;
                        return std::unique_ptr<ObserverContext>();
                      }).scopes({RecordScope::function}));
  const auto run_elsewhere = [] {
    std::thread worker([] { (void)relu(ones({2})); });
    worker.join();
  };
  {
    const GlobalRecordFunctionGuard off(false);
    CHECK_FALSE(is_record_function_enabled());
    (void)relu(ones({2}));
    run_elsewhere();
    CHECK(calls == 0);
    {
      const RecordFunctionGuard on;  // this thread's switch cannot override the global one
      (void)relu(ones({2}));
      CHECK(calls == 0);
    }
  }
  CHECK(is_record_function_enabled());
  (void)relu(ones({2}));
  run_elsewhere();
  CHECK(calls == 2);
}

TEST_CASE("a worker sees this thread's callbacks, switch and current event only when the state is carried") {
  CleanCallbacks clean;
  std::vector<Seen> events;  // written by one thread at a time: the worker runs while this one waits
  add_thread_local_callback(logging(events));
  std::vector<Seen> worker_own;
  const std::uint64_t here = record_function_thread_id();

  SUBCASE("not carried: the worker's events are not this thread's to observe") {
    std::thread worker([] { (void)relu(ones({2})); });
    worker.join();
    CHECK(events.empty());
  }
  SUBCASE("carried: the worker's events are observed, as children of the event current at the capture") {
    std::uint64_t scope_id = 0;
    std::uint64_t worker_thread = 0;
    {
      SYMTRACE_RECORD_USER_SCOPE("hand over");
      REQUIRE(events.size() == 1);
      scope_id = events[0].id;
      const ThreadLocalState state;
      std::thread worker([&] {
        worker_thread = record_function_thread_id();
        const ThreadLocalStateGuard carried(state);
        (void)relu(ones({2}));
        add_thread_local_callback(logging(worker_own));  // added under the guard: stays the worker's
        (void)neg(ones({2}));
      });
      worker.join();
    }
    REQUIRE(names(events) == std::vector<std::string>{"hand over", "relu", "neg"});
    CHECK(worker_thread != here);
    for (std::size_t i : {1U, 2U}) {
      CHECK(events[i].parent == scope_id);
      CHECK(events[i].thread == worker_thread);
      CHECK(events[i].forward_thread == here);
    }
    CHECK(events[0].forward_thread == 0);  // top level
    CHECK(names(worker_own) == std::vector<std::string>{"neg"});
  }
  SUBCASE("carried: a switch turned off here is off in the worker") {
    const ThreadLocalState state = [] {
      const DisableRecordFunctionGuard off;
      return ThreadLocalState();
    }();
    std::thread worker([&] {
      const ThreadLocalStateGuard carried(state);
      (void)relu(ones({2}));
    });
    worker.join();
    CHECK(events.empty());
  }
  // The carried callbacks left the worker with its guard; this thread still has its own.
  events.clear();
  (void)relu(ones({2}));
  CHECK(names(events) == std::vector<std::string>{"relu"});
}

TEST_CASE("sequence numbers count each thread's events from one; each thread has its own id") {
  CleanCallbacks clean;
  std::vector<Seen> main_events, worker_events;
  add_thread_local_callback(logging(main_events));
  nn::Sequential model(nn::Linear(4, 3), nn::ReLU());
  const Tensor x = ones({1, 4});
  (void)model(x);
  std::thread worker([&] {
    add_thread_local_callback(logging(worker_events));
    (void)relu(ones({2}));
    (void)neg(ones({2}));
  });
  worker.join();
  (void)relu(x);
  REQUIRE(main_events.size() == 6);  // Sequential, Linear, linear, ReLU, relu; relu
  REQUIRE(worker_events.size() == 2);
  for (std::size_t i = 1; i < main_events.size(); ++i) {
    CHECK(main_events[i].sequence_nr == main_events[i - 1].sequence_nr + 1);
    CHECK(main_events[i].id > main_events[i - 1].id);
  }
  CHECK(worker_events[0].sequence_nr == 1);
  CHECK(worker_events[1].sequence_nr == 2);
  CHECK(main_events[0].thread == record_function_thread_id());
  CHECK(worker_events[0].thread != main_events[0].thread);
  CHECK(worker_events[0].thread == worker_events[1].thread);
  CHECK(main_events[1].forward_thread == main_events[0].thread);  // Linear inside Sequential
  CHECK(worker_events[0].forward_thread == 0);
}

TEST_CASE("the macros record a block as an event of their scope, with the inputs given") {
  CleanCallbacks clean;
  std::vector<Seen> events;
  add_thread_local_callback(logging(events));
  const ValueList inputs{Value(ones({2})), Value(std::int64_t{3})};
  {
    SYMTRACE_RECORD_FUNCTION("my_kernel", inputs);
    SYMTRACE_RECORD_TORCHSCRIPT_FUNCTION("__torch__.Model.helper", {});
    SYMTRACE_RECORD_WITH_SCOPE(RecordScope::custom_class, std::string("__torch__.torch.classes.ns.Foo.get"), {});
  }
  REQUIRE(events.size() == 3);
  CHECK(events[0].name == "my_kernel");
  CHECK(events[0].scope == RecordScope::function);
  CHECK(events[0].inputs == 2);
  CHECK(events[1].scope == RecordScope::torchscript_function);
  CHECK(events[1].parent == events[0].id);
  CHECK(events[2].scope == RecordScope::custom_class);
  CHECK(events[2].name == "__torch__.torch.classes.ns.Foo.get");  // a temporary name is copied
  CHECK(to_string(RecordScope::torchscript_function) == "torchscript_function");
  CHECK(to_string(RecordScope::custom_class) == "custom_class");
}

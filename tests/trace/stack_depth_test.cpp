// Deep models: tracing runs wherever the eager forward runs, and a model nested deeper than the
// thread's stack can hold is a StackDepthError naming the depth, never a crash (Note [Stack
// guard] in src/core/stack_guard.cpp).

#include "support/checks.hpp"

#include <symtrace/core/stack_guard.hpp>
#include <symtrace/trace/tracing_state.hpp>
#include <symtrace/zoo/deep_chain.hpp>

#include <fmt/format.h>
#include <pthread.h>

#include <exception>
#include <functional>
#include <string>

using namespace symtrace;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

/// Runs `f` on a new thread whose stack is at least `bytes` large (a sanitizer's runtime may make
/// it larger) and waits for it; rethrows what it threw. Returns the stack size the thread had.
std::size_t run_on_stack(std::size_t bytes, const std::function<void()>& f) {
  struct Job {
    const std::function<void()>* f;
    std::exception_ptr error;
    std::size_t stack_size;
  } job{&f, nullptr, 0};
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, bytes) == 0);
  pthread_t thread;
  const int created = pthread_create(
      &thread, &attr,
      [](void* p) -> void* {
        auto* j = static_cast<Job*>(p);
        pthread_attr_t own;
        if (pthread_getattr_np(pthread_self(), &own) == 0) {
          void* low = nullptr;
          if (pthread_attr_getstack(&own, &low, &j->stack_size) != 0) j->stack_size = 0;
          pthread_attr_destroy(&own);
        }
        try {
          (*j->f)();
        } catch (...) {
          j->error = std::current_exception();
        }
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  REQUIRE(created == 0);
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
  return job.stack_size;
}

/// A stack size as StackDepthError's advice writes it: whole MiB, MiB to one decimal from 1 MiB
/// on, KiB (rounded up) below.
std::string stack_size_text(std::size_t bytes) {
  constexpr std::size_t mib = std::size_t{1} << 20;
  if (bytes >= mib && bytes % mib == 0) return fmt::format("{} MiB", bytes / mib);
  if (bytes >= mib) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / static_cast<double>(mib));
  return fmt::format("{} KiB", (bytes + 1023) / 1024);
}

/// Runs `f` on this thread, the main one (doctest's: 8 MiB by default); under AddressSanitizer,
/// whose frames are several times larger, on a thread with a stack as many times larger.
void run_on_main_stack(const std::function<void()>& f) {
  if (sanitized) {
    run_on_stack(std::size_t{64} << 20, f);
  } else {
    f();
  }
}

/// The path of the innermost module of a chain of `n`: "inner" n - 1 times.
std::string innermost_path(int n) {
  std::string path = "inner";
  for (int i = 2; i < n; ++i) path += ".inner";
  return path;
}

/// The ChainEnd's result metadata: its input's.
OutputMeta same_as_input(const Module&, const ValueList& args) { return OutputMeta::single(TensorMeta(args.at(0).to_tensor().meta())); }

constexpr int deep = 10'000;

}  // namespace

TEST_CASE("symbolic_trace of a chain of 10,000 modules runs on the main thread, where its eager forward runs, and its graph computes the forward") {
  manual_seed(0);
  const auto model = zoo::deep_chain(deep);
  const Tensor x = randn({2, 16});
  const std::string end = innermost_path(deep);
  run_on_main_stack([&] {
    const Tensor eager = model->call({x}).to_tensor();

    Tracer tracer;
    tracer.register_leaf<zoo::ChainEndImpl>(same_as_input);
    const Graph graph = tracer.trace(*model, {InputSpec(x)});
    // x, then per link relu, add, mul; the end as a leaf; the output.
    CHECK(graph.size() == 1 + 3 * (deep - 1) + 1 + 1);
    const Node* leaf = nullptr;
    for (const Node& node : graph.nodes()) {
      if (node.op() == OpKind::call_module) leaf = &node;
    }
    REQUIRE(leaf != nullptr);
    CHECK(leaf->target() == end);
    graph.lint();
    CHECK(testing::max_abs_diff(Interpreter(*model, graph).run({x}).to_tensor(), eager) <= 1e-5);
  });
}

TEST_CASE("recursive_trace of a chain of 10,000 modules runs on the main thread, where its eager forward runs, and finds its failing innermost module") {
  // A robust trace keeps a checkpoint per level: about 790 bytes a level here (-O2), so 8 MiB
  // hold some 10,500 levels. Before the stack guard and the smaller frames (Note [Small frames
  // per level]), 8,000 levels overflowed the stack; before the smaller RobustTracer::call_module
  // frame, 10,000 levels were a StackDepthError at 9,991.
  constexpr int levels = deep;
  manual_seed(0);
  const auto model = zoo::deep_chain(levels);
  const Tensor x = randn({2, 16});
  const std::string end = innermost_path(levels);
  run_on_main_stack([&] {
    const GraphCollection c = recursive_trace(*model, {InputSpec(x)});
    REQUIRE(c.failures().size() == 1);
    CHECK(c.failures()[0].module == end);
    CHECK(c.failures()[0].type == "ChainEnd");
    CHECK(c.failures()[0].where.line() == static_cast<unsigned>(zoo::ChainEndImpl::data_branch_line));
    CHECK(c.size() == 2);                                                   // the model, and the end's Linear on its own
    CHECK(c.find(*model)->size() == static_cast<std::size_t>(3 * levels));  // as symbolic_trace's
    CHECK(c.hierarchy().size() == static_cast<std::size_t>(levels + 1));
    CHECK(c.hierarchy().count(ModuleStatus::traced) == static_cast<std::size_t>(levels - 1));
  });
}

TEST_CASE("tracing a chain deeper than a small thread stack holds is a StackDepthError naming the depth") {
  manual_seed(0);
  const auto model = zoo::deep_chain(deep);
  const Tensor x = randn({1, 16});
  const std::size_t stack = sanitized ? std::size_t{1} << 20 : std::size_t{256} << 10;
  struct Outcome {
    std::string message;
    std::size_t depth = 0;
    std::size_t stack_size = 0;  // the thread's: ThreadSanitizer's runtime enlarges small stacks
  };
  // What `f` threw on the small stack (it must throw StackDepthError), and that the thread
  // traces a shallow chain afterwards: nothing of the deep trace is left behind.
  const auto on_small_stack = [&](const std::function<void()>& f) {
    Outcome outcome;
    const std::size_t stack_size = run_on_stack(stack, [&] {
      try {
        f();
      } catch (const StackDepthError& e) {
        outcome = Outcome{e.what(), e.depth()};
      }
      const auto shallow = zoo::deep_chain(3);
      const GraphCollection c = recursive_trace(*shallow, {InputSpec(x)});
      CHECK(c.failures().size() == 1);
      CHECK(TracingState::current() == nullptr);
    });
    REQUIRE(stack_size >= stack);
    outcome.stack_size = stack_size;
    return outcome;
  };
  const auto check_trace_error = [&](const Outcome& o) {
    CAPTURE(o.message);
    CHECK(o.depth > 10);
    CHECK(o.depth < static_cast<std::size_t>(deep));
    CHECK(o.message.find("deep_chain.cpp:") != std::string::npos);
    CHECK(o.message.find(fmt::format(": a call of ChainLink nested {} modules deep in 'inner.inner.inner.<{} more>.inner.inner' "
                                     "(ChainLink): the thread's stack ({}) is nearly used up and a deeper call would "
                                     "overflow it; run the model on a thread with a larger stack (ulimit -s for the main "
                                     "thread, pthread_attr_setstacksize for another) or make it shallower",
                                     o.depth + 1, o.depth - 6, stack_size_text(o.stack_size))) != std::string::npos);
  };
  SUBCASE("symbolic_trace") {
    check_trace_error(on_small_stack([&] {
      Tracer tracer;
      tracer.register_leaf<zoo::ChainEndImpl>(same_as_input);
      (void)tracer.trace(*model, {InputSpec(x)});
    }));
  }
  SUBCASE("recursive_trace: the error ends the run, no module is failed for it") {
    GraphCollection c;
    check_trace_error(on_small_stack([&] { c.recursive_trace(*model, {InputSpec(x)}); }));
    CHECK(c.size() == 0);
    CHECK(c.failures().empty());
  }
  SUBCASE("the eager forward: a call through a ModuleHolder is checked too") {
    const Outcome o = on_small_stack([&] { (void)model->call({x}); });
    CAPTURE(o.message);
    CHECK(o.depth == 0);  // not in a trace
    CHECK(o.message.find("deep_chain.cpp:") != std::string::npos);
    CHECK(o.message.find(fmt::format(": a call of ChainLink ran out of stack: the thread's stack ({}) is nearly used up",
                                     stack_size_text(o.stack_size))) != std::string::npos);
  }
}

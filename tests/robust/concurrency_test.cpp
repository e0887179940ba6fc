// Traces on several threads at once (docs/design.md, decision 9: tracing state is per
// thread): different zoo models each on its own thread, and one shared model traced by symbolic_trace and
// recursive_trace from several threads, give exactly what one thread gives. Small models, so
// the suite stays quick under ThreadSanitizer (tools/test --tsan), which checks these runs for
// data races.
#include "support/zoo_checks.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;
using testing::example_specs;

namespace {

/// Everything a collection holds, as text: each traced module's path and graph, each failure
/// and the coverage report.
std::string describe(const GraphCollection& c, const std::string& model_name) {
  std::string out;
  for (const GraphCollection::Entry& e : c) out += fmt::format("graph of '{}':\n{}", e.path, to_string(e.graph));
  for (const ModuleFailure& f : c.failures()) out += fmt::format("failure: {}\n", to_string(f));
  return out + coverage_report(c, model_name);
}

/// The text of symbolic_trace(model), or of the error it throws.
std::string symbolic_text(Module& model, const std::vector<InputSpec>& inputs) {
  try {
    return to_string(symbolic_trace(model, inputs));
  } catch (const std::exception& e) {
    return fmt::format("error: {}", e.what());
  }
}

/// Runs `work(i)` on `n` threads at once and waits for all of them.
template <class F> void on_threads(int n, F work) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(work, i);
  for (std::thread& t : threads) t.join();
}

}  // namespace

TEST_CASE("different zoo models traced on their own threads at once give the graphs one thread gives") {
  // Traceable models go through symbolic_trace; mixed_failures, which is not, through
  // recursive_trace. Each thread also builds its own model.
  const std::vector<std::string> names = {"deep_mlp_100", "rnn", "unet_small", "mixed_failures"};
  const auto trace = [](const std::string& name, Module& model) {
    return name == "mixed_failures" ? describe(recursive_trace(model, example_specs(name)), name)
                                    : to_string(symbolic_trace(model, example_specs(name)));
  };
  std::vector<std::string> alone;
  for (const std::string& name : names) alone.push_back(trace(name, *zoo::create(name)));

  std::vector<std::vector<std::string>> threaded(names.size());
  on_threads(static_cast<int>(names.size()), [&](int i) {
    const std::string& name = names[static_cast<std::size_t>(i)];
    auto model = zoo::create(name);
    for (int round = 0; round < 2; ++round) threaded[static_cast<std::size_t>(i)].push_back(trace(name, *model));
  });
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    REQUIRE(threaded[i].size() == 2);
    CHECK(threaded[i][0] == alone[i]);
    CHECK(threaded[i][1] == alone[i]);
  }
}

TEST_CASE("one model traced by symbolic_trace and recursive_trace from several threads at once gives one result") {
  // unet_small traces whole; mixed_failures makes symbolic_trace throw and recursive_trace
  // collect failures. Every thread reads the same model instance.
  for (const std::string& name : std::vector<std::string>{"unet_small", "mixed_failures"}) {
    CAPTURE(name);
    const std::shared_ptr<Module> model = zoo::create(name);
    const std::vector<InputSpec> inputs = example_specs(name);
    const std::string symbolic_alone = symbolic_text(*model, inputs);
    const std::string recursive_alone = describe(recursive_trace(*model, inputs), name);
    CHECK(symbolic_alone.starts_with(name == "unet_small" ? "graph():" : "error: "));

    constexpr int threads = 4;
    std::vector<std::vector<std::string>> results(threads);
    on_threads(threads, [&](int i) {
      for (int round = 0; round < 2; ++round) {
        // Even threads begin with symbolic_trace, odd ones with recursive_trace, so both kinds
        // overlap on the same modules.
        const bool symbolic_first = (i + round) % 2 == 0;
        results[static_cast<std::size_t>(i)].push_back(symbolic_first ? symbolic_text(*model, inputs)
                                                                      : describe(recursive_trace(*model, inputs), name));
      }
    });
    for (int i = 0; i < threads; ++i) {
      CAPTURE(i);
      const auto& r = results[static_cast<std::size_t>(i)];
      REQUIRE(r.size() == 2);
      CHECK(r[0] == (i % 2 == 0 ? symbolic_alone : recursive_alone));
      CHECK(r[1] == (i % 2 == 0 ? recursive_alone : symbolic_alone));
    }
  }
}

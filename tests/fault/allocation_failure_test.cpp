// Allocation failure is survived, as SQLite's malloc-failure loops check it: this executable
// replaces the global operator new (every form) with one that fails the k-th allocation made
// while it is armed, and runs a trace for k = 1, 2, ... until a run makes fewer than k
// allocations. Each run either completes with the result of a run without the fault, or ends
// with std::bad_alloc reaching the caller; never a crash, a leak (LeakSanitizer under
// tools/test --sanitize), std::terminate, another exception, or a graph that fails lint; and
// the model is unchanged afterwards (its state dict and its eager forward's result).
//
// The replacement lives in this executable only: the other test binaries allocate normally.
// Under AddressSanitizer it still takes precedence over the runtime's operator new (the
// executable's definition wins over the shared runtime's); the first test case checks that
// the replacement is the one in use. Every k is run, in every build (a few hundred runs).
// A run that ends in std::terminate prints its k; SYMTRACE_FAULT_FROM=k starts the loops
// there, to look at it in a debugger.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace {

/// The fault: armed with k, the k-th allocation from then on fails (once).
struct Fault {
  bool armed = false;
  bool hit = false;
  long countdown = 0;
  long allocations = 0;  // made while armed
};
Fault fault;

void arm(long k) noexcept { fault = Fault{true, false, k, 0}; }
/// Disarms; returns whether the fault was hit.
bool disarm() noexcept {
  fault.armed = false;
  return fault.hit;
}

/// Whether this allocation is the one to fail.
bool should_fail() noexcept {
  if (!fault.armed) return false;
  ++fault.allocations;
  if (--fault.countdown != 0) return false;
  fault.hit = true;
  return true;
}

void* allocate(std::size_t size) {
  if (should_fail()) throw std::bad_alloc();
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
  if (should_fail()) throw std::bad_alloc();
  const auto a = static_cast<std::size_t>(align);
  void* p = std::aligned_alloc(a, std::max(a, (size + a - 1) / a * a));  // a multiple of the alignment
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

// NOLINTBEGIN(misc-new-delete-overloads): every form is replaced, deletes by free().
void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, std::align_val_t align) { return allocate_aligned(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return allocate_aligned(size, align); }
// The nothrow forms fail by returning nullptr, as they must.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return allocate_aligned(size, align);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return allocate_aligned(size, align);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
// NOLINTEND(misc-new-delete-overloads)

using namespace symtrace;

namespace {

/// The first k: 1, or SYMTRACE_FAULT_FROM (to look at one failing allocation in a debugger).
long first_k() {
  const char* from = std::getenv("SYMTRACE_FAULT_FROM");
  return from != nullptr ? std::max(1L, std::atol(from)) : 1;
}

/// What a model is: its state dict's values and its eager forward's result, deep-copied.
struct ModelSnapshot {
  std::vector<std::string> keys;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  std::vector<std::vector<double>> values;
  std::vector<double> output;

  ModelSnapshot(Module& model, const ValueList& inputs) {
    for (const auto& [key, tensor] : model.state_dict()) {
      keys.push_back(key);
      shapes.push_back(tensor.shape());
      dtypes.push_back(tensor.dtype());
      values.push_back(tensor.to_vector<double>());
    }
    output = model.call(inputs).to_tensor().to_vector<double>();
  }
  bool operator==(const ModelSnapshot&) const = default;
};

/// The collection as text: every graph with its path, and every failure.
std::string describe(const GraphCollection& c) {
  std::string out;
  for (const GraphCollection::Entry& e : c) out += fmt::format("'{}':\n{}", e.path, to_string(e.graph));
  for (const ModuleFailure& f : c.failures()) out += fmt::format("failed '{}': {}\n", f.module, to_string(f));
  return out;
}

void lint_all(const GraphCollection& c) {
  for (const GraphCollection::Entry& e : c) e.graph.lint();
}

/// Runs `run` with the k-th allocation failing, for k = 1, 2, ... until a run
/// completes without reaching its k-th allocation; `prepare` runs before each, unarmed.
/// `after(threw)` checks
/// what a faulted run left (threw: std::bad_alloc reached the caller, else the run completed in
/// spite of the fault). Returns the number of runs and the allocations of the last one.
/// The k of the run in progress, for the report of a run that ends in std::terminate.
long current_k = 0;

[[noreturn]] void report_terminate() noexcept {
  std::fprintf(stderr, "std::terminate while allocation %ld was failing (%s); rerun from it with SYMTRACE_FAULT_FROM=%ld\n",
               current_k, fault.hit ? "it had failed" : "it had not failed yet", current_k);
  std::abort();
}

template <class Prepare, class Run, class After>
std::pair<long, long> for_each_failing_allocation(Prepare&& prepare, Run&& run, After&& after) {
  long runs = 0;
  std::set_terminate(report_terminate);
  for (long k = first_k();; ++k) {
    ++runs;
    current_k = k;
    prepare();
    bool threw = false;
    std::string other;
    arm(k);
    try {
      run();
    } catch (const std::bad_alloc&) {
      threw = true;
    } catch (const std::exception& e) {
      other = e.what();
    } catch (...) {
      other = "an exception not derived from std::exception";
    }
    const bool hit = disarm();
    CAPTURE(k);
    if (!other.empty()) {
      FAIL(fmt::format("allocation {} failed and the run threw another exception: {}", k, other));
      return {runs, fault.allocations};
    }
    REQUIRE_MESSAGE(!(threw && !hit), "std::bad_alloc without the fault");
    if (!hit) return {runs, fault.allocations};
    after(threw);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("the replaced operator new is the one in use, and it fails the k-th allocation once") {
  arm(2);
  auto* first = new int(1);
  int* second = nullptr;
  CHECK_THROWS_AS(second = new int(2), std::bad_alloc);
  auto* third = new (std::nothrow) int(3);
  CHECK(disarm());
  CHECK(fault.allocations == 3);
  CHECK(second == nullptr);
  CHECK(third != nullptr);
  delete first;
  delete third;
  arm(1);
  CHECK(new (std::nothrow) int(4) == nullptr);
  CHECK(disarm());
}

TEST_CASE("recursive_trace of mixed_failures survives every allocation failing, one at a time") {
  const std::shared_ptr<Module> model = zoo::create("mixed_failures");
  const zoo::ModelInfo& info = zoo::info("mixed_failures");
  Generator gen(7);
  const std::vector<Tensor> examples = zoo::example_inputs(info, gen);
  const ValueList inputs(examples.begin(), examples.end());
  const std::vector<InputSpec> specs(examples.begin(), examples.end());
  const ModelSnapshot before(*model, inputs);
  const std::string expected = describe(recursive_trace(*model, specs));
  REQUIRE(!expected.empty());

  const auto start = std::chrono::steady_clock::now();
  GraphCollection c;
  const auto [runs, allocations] = for_each_failing_allocation(
      [&] { c = GraphCollection(); },
      [&] { c.recursive_trace(*model, specs); },
      [&](bool threw) {
        if (threw) {  // the collection's docs: empty after an exception
          CHECK(c.size() == 0);
          CHECK(c.failures().empty());
          CHECK(c.hierarchy().size() == 0);
        } else {
          lint_all(c);
          CHECK(describe(c) == expected);
        }
      });
  MESSAGE(fmt::format("recursive_trace(mixed_failures): {} runs, {} allocations, {:.1f} s", runs, allocations,
                      seconds_since(start)));
  lint_all(c);
  CHECK(describe(c) == expected);
  CHECK(ModelSnapshot(*model, inputs) == before);
}

TEST_CASE("symbolic_trace of resnet18 survives every allocation failing, one at a time") {
  const std::shared_ptr<Module> model = zoo::create("resnet18");
  const zoo::ModelInfo& info = zoo::info("resnet18");
  Generator gen(7);
  const std::vector<Tensor> examples = zoo::example_inputs(info, gen);
  const ValueList inputs(examples.begin(), examples.end());
  const std::vector<InputSpec> specs(examples.begin(), examples.end());
  const ModelSnapshot before(*model, inputs);
  const std::string expected = to_string(symbolic_trace(*model, specs));

  const auto start = std::chrono::steady_clock::now();
  Graph g;
  const auto [runs, allocations] = for_each_failing_allocation(
      [&] { g = Graph(); },
      [&] { g = symbolic_trace(*model, specs); },
      [&](bool threw) {
        if (!threw) {
          g.lint();
          CHECK(to_string(g) == expected);
        }
      });
  MESSAGE(fmt::format("symbolic_trace(resnet18): {} runs, {} allocations, {:.1f} s", runs, allocations,
                      seconds_since(start)));
  g.lint();
  CHECK(to_string(g) == expected);
  CHECK(ModelSnapshot(*model, inputs) == before);
}

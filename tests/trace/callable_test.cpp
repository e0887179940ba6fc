// register_callable: user functions recorded as one opaque call_function node (fx's `wrap`),
// run eagerly as themselves and by the Interpreter by name.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

using namespace symtrace;
using testing::max_rel_error;

namespace {

std::atomic<int> g_median_calls{0};

/// Subtracts the median of all elements: reads tensor data, so a trace cannot see through it.
Tensor subtract_median(const Tensor& x) {
  ++g_median_calls;
  std::vector<float> v = x.contiguous().to_vector<float>();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return x - static_cast<double>(v[v.size() / 2]);
}

const Callable median_center = register_callable(
    "test.median_center(Tensor x) -> Tensor", [](const OpCall& call) -> Value { return subtract_median(call.tensor(0)); },
    Callable::same_as_argument(0));

const Callable scale = register_callable(
    "test.scale(Tensor x, float factor=2.0) -> Tensor",
    [](const OpCall& call) -> Value { return call.tensor(0) * call.real(1); }, Callable::same_as_argument(0));

/// Claims a shape its function does not return.
const Callable liar = register_callable(
    "test.liar(Tensor x) -> Tensor", [](const OpCall& call) -> Value { return call.tensor(0).sum(); },
    Callable::same_as_argument(0));

class Centered : public TypedModule<Centered> {
 public:
  Centered() { fc = register_module("fc", nn::Linear(4, 4)); }
  static constexpr int call_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return scale({median_center({fc(x)}).to_tensor()}, {{"factor", 0.5}}).to_tensor().relu(); }
  nn::Linear fc{nullptr};
};

/// Scales by a factor held in another library's object (an OpaqueObject, as a TorchScript
/// file's packed weights are held).
const Callable scale_by = register_callable(
    "test.scale_by(Tensor x, Any factor) -> Tensor",
    [](const OpCall& call) -> Value {
      const float* factor = boost::variant2::get<OpaqueObject>(call.args[1].value).get<float>();
      return call.tensor(0) * static_cast<double>(*factor);
    },
    Callable::same_as_argument(0));

class ScaledBy : public TypedModule<ScaledBy> {
 public:
  static constexpr int call_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return scale_by({x, factor}).to_tensor(); }
  Value factor = OpaqueObject::of(std::make_shared<const float>(3.0f), "mylib.Factor");
};

/// The same computation written inline: it reads data, so it cannot be traced.
class Inline : public TypedModule<Inline> {
 public:
  Tensor forward(const Tensor& x) { return subtract_median(x); }
};

}  // namespace

TEST_CASE("a callable runs eagerly as itself and is recorded as one call_function node") {
  Centered model;
  const Tensor x = randn({3, 4});
  const int before = g_median_calls;
  const Tensor eager = model.call({x}).to_tensor();
  CHECK(g_median_calls == before + 1);

  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 4})});
  CHECK(g_median_calls == before + 1);  // tracing does not run the function
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[?, 4] [num_users=1] = placeholder[target=x]
    %fc : float32[?, 4] [num_users=1] = call_module[target=fc](args = (%x,), kwargs = {})
    %median_center : float32[?, 4] [num_users=1] = call_function[target=test.median_center](args = (%fc,), kwargs = {})
    %scale : float32[?, 4] [num_users=1] = call_function[target=test.scale](args = (%median_center, 0.5), kwargs = {})
    %relu : float32[?, 4] [num_users=1] = call_method[target=relu](args = (%scale,), kwargs = {})
    return relu
)");
  CHECK(g.find_node("median_center")->where().line() == Centered::call_line);
  // The Interpreter finds the callable by its target and runs it.
  const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  CHECK(g_median_calls == before + 2);
  CHECK(max_rel_error(traced, eager) == 0.0);
  // Without the callable the same code reads data and cannot be traced.
  Inline plain;
  CHECK_THROWS_AS(symbolic_trace(plain, {x}), TraceError);
}

TEST_CASE("a callable's arguments are bound to its schema and checked") {
  const Tensor x = tensor({1.f, 2.f});
  CHECK(scale({x}).to_tensor().to_vector<float>() == std::vector<float>{2, 4});  // the default factor
  CHECK(scale({x, 3.0}).to_tensor().to_vector<float>() == std::vector<float>{3, 6});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(scale({x, "big"}), doctest::Contains(fmt::format("callable_test.cpp:{}: test.scale(): argument 'factor' must be float, got str ('big')", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS(scale({x}, {{"size", 1}}), doctest::Contains("got an unexpected keyword argument 'size'"), OpError);
  // The registry finds callables after the built-in ops; Interpreter-style calls work too.
  REQUIRE(OpRegistry::instance().find("test.scale") != nullptr);
  CHECK(call("test.scale", {x}, {{"factor", 0.5}}).to_tensor().to_vector<float>() == std::vector<float>{0.5f, 1});
}

TEST_CASE("a callable whose function disagrees with its meta function is an error naming the callable") {
  CHECK_THROWS_WITH_AS(liar({tensor({1.f, 2.f})}),
                       doctest::Contains("test.liar(): the callable returned float32[] but its meta function said float32[2]; make the meta function describe what the function returns"),
                       OpError);
}

TEST_CASE("registering refuses taken names, bad schemas, numbers as results and missing functions") {
  auto fn = [](const OpCall& call) -> Value { return call.tensor(0); };
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)register_callable("test.median_center(Tensor x) -> Tensor", fn, Callable::same_as_argument(0)),
                       doctest::Contains(fmt::format("callable_test.cpp:{}: cannot register 'test.median_center': a callable of that name is already registered", line).c_str()),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)register_callable("relu(Tensor x) -> Tensor", fn, Callable::same_as_argument(0)),
                       doctest::Contains("cannot register 'relu': a built-in op has that name; choose another (e.g. qualify it: 'mylib.relu')"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)register_callable("test.bad(Tensr x) -> Tensor", fn, Callable::same_as_argument(0)),
                       doctest::Contains("register_callable(): invalid op schema 'test.bad(Tensr x) -> Tensor': unknown argument type"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)register_callable("test.count(Tensor x) -> int", fn, Callable::same_as_argument(0)),
                       doctest::Contains("a callable returns Tensor or Tensor[], not a number"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)register_callable("test.nometa(Tensor x) -> Tensor", fn, {}),
                       doctest::Contains("give both the function and its meta function"), std::invalid_argument);
  CHECK(OpRegistry::instance().find("test.nometa") == nullptr);
}

TEST_CASE("another library's object passes through an eager call, and a trace refuses to record it, at the call") {
  ScaledBy model;
  CHECK(model.forward(ones({2})).to_vector<float>() == std::vector<float>{3.0f, 3.0f});
  CHECK(to_string(model.factor) == "<mylib.Factor object>");
  CHECK(model.factor.type_name() == "mylib.Factor");
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2})}),
                       doctest::Contains(fmt::format(":{}: an object of class mylib.Factor (another library's, which "
                                                     "symtrace holds without looking into it) cannot be recorded in a graph",
                                                     ScaledBy::call_line)
                                             .c_str()),
                       TraceError);
}

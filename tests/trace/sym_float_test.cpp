// SymFloat: sizes scaled by floats (`int(H * 0.5)`) are recorded, keep their named dims when
// the scale is a short binary fraction, run in the interpreter as they ran eagerly, and refuse
// to become C++ doubles.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <type_traits>

using namespace symtrace;

// The operators pick the result a Python user expects: an int from ints, a float otherwise.
static_assert(std::is_same_v<decltype(SymInt(3) * 2), SymInt>);
static_assert(std::is_same_v<decltype(SymInt(3) * SymInt(2)), SymInt>);
static_assert(std::is_same_v<decltype(SymInt(3) * 0.5), SymFloat>);
static_assert(std::is_same_v<decltype(0.5 * SymInt(3)), SymFloat>);
static_assert(std::is_same_v<decltype(SymFloat(1.5) + 2), SymFloat>);
static_assert(std::is_same_v<decltype(SymInt(3) / 2), SymInt>);  // floor division, as for sizes
static_assert(std::is_same_v<decltype(sym_float(SymInt(3)) / 2), SymFloat>);
static_assert(std::is_same_v<decltype(SymInt(3) < 2.5), SymBool>);

namespace {

/// Reduces each row to its sum, repeated over a length scaled from the input's by `scale`
/// (`int(L * scale)`, truncated as Python's int()).
struct Scaled : TypedModule<Scaled> {
  explicit Scaled(double scale) : scale(scale) {}
  double scale;
  Tensor forward(const Tensor& x) {
    const SymInt length = sym_int(x.size(1) * scale);
    return x.sum({1}, true).expand({x.size(0), length});
  }
};

/// floor, ceil and a quotient: floor(L * 0.75), ceil(L / 4), and (L + 1) * 0.5 truncated.
struct Rounded : TypedModule<Rounded> {
  Tensor forward(const Tensor& x) {
    const SymFloat l = sym_float(x.size(1));
    const SymInt a = sym_floor(l * 0.75), b = sym_ceil(l / 4), c = sym_int((x.size(1) + 1) * 0.5);
    return zeros({a + b + c}) + x.sum();
  }
};

/// Converts a scaled size to a C++ double (the error names the line the float was made on).
struct ToDouble : TypedModule<ToDouble> {
  static constexpr int made_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    const SymFloat half = x.size(1) * 0.5;
    return x * static_cast<double>(half);
  }
};

/// Scales by a float computed from a size: the tensor op takes the proxy.
struct ScaleByLength : TypedModule<ScaleByLength> {
  Tensor forward(const Tensor& x) { return x * (x.size(1) * 0.25); }
};

Shape scaled_result_shape(const Graph& g) {
  const Node* output = g.output_node();
  REQUIRE(output != nullptr);
  const TensorMeta* meta = output->input_nodes().front()->tensor_meta();
  REQUIRE(meta != nullptr);
  return meta->shape;
}

}  // namespace

TEST_CASE("known SymFloat arithmetic is plain double arithmetic, and Python's int(), floor and ceil") {
  CHECK(*(SymInt(7) * 0.5).maybe() == 3.5);
  CHECK(*(SymFloat(1.5) + 2).maybe() == 3.5);
  CHECK(*(3 / sym_float(SymInt(2))).maybe() == 1.5);
  CHECK(*sym_int(SymFloat(-3.5)).maybe() == -3);  // toward zero
  CHECK(*sym_floor(SymFloat(-3.5)).maybe() == -4);
  CHECK(*sym_ceil(SymFloat(3.25)).maybe() == 4);
  CHECK(*(SymInt(3) < 3.5).maybe());
  CHECK_THROWS_WITH_AS((void)(SymFloat(1.0) / 0), doctest::Contains("float division by zero"), std::invalid_argument);
}

TEST_CASE("int(L * 0.5) of a named dim is recorded as fx records it and keeps L in the output shape") {
  Scaled model(0.5);
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), Dim("L")})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[N, L] [num_users=3] = placeholder[target=x]
    %size : int [num_users=1] = call_method[target=size](args = (%x, 1), kwargs = {})
    %mul : float [num_users=1] = call_function[target=operator.mul](args = (%size, 0.5), kwargs = {})
    %sym_int : int [num_users=1] = call_function[target=sym_int](args = (%mul,), kwargs = {})
    %sum : float32[N, 1] [num_users=1] = call_method[target=sum](args = (%x, [1], True), kwargs = {})
    %size_1 : int [num_users=1] = call_method[target=size](args = (%x, 0), kwargs = {})
    %expand : float32[N, L//2] [num_users=1] = call_method[target=expand](args = (%sum, [%size_1, %sym_int]), kwargs = {})
    return expand
)");
  for (std::int64_t length : {1, 6, 7}) {
    CAPTURE(length);
    const Tensor x = randn({3, length});
    const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
    const Tensor eager = model.call({x}).to_tensor();
    CHECK(traced.shape() == Shape{3, length / 2});
    CHECK(traced.shape() == eager.shape());
    CHECK(testing::max_rel_error(traced, eager) < 1e-6);
  }
}

TEST_CASE("a scale that is a short binary fraction keeps the expression; any other scale is computed when run") {
  struct Case {
    double scale;
    const char* shape;
  };
  for (const Case c : {Case{0.75, "[N, (3*L)//4]"}, Case{1.5, "[N, L + L//2]"}, Case{2.0, "[N, 2*L]"},
                       Case{0.3, "[N, ?]"}}) {
    CAPTURE(c.scale);
    Scaled model(c.scale);
    const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), Dim("L")})});
    CHECK(to_string(scaled_result_shape(g)) == c.shape);
    for (std::int64_t length : {1, 5, 10, 13}) {
      CAPTURE(length);
      const Tensor x = randn({2, length});
      const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
      CHECK(traced.shape() == model.call({x}).to_tensor().shape());
      CHECK(traced.shape()[1].value() == static_cast<std::int64_t>(static_cast<double>(length) * c.scale));
    }
  }
}

TEST_CASE("floor, ceil, true division and int() of sums give the sizes Python gives, as expressions") {
  Rounded model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{3, Dim("L")})});
  CHECK_NOTHROW(g.lint());
  // floor(3L/4) + ceil(L/4) + int((L + 1)/2), in canonical order
  CHECK(to_string(scaled_result_shape(g)) == "[(3*L)//4 + (L + 1)//2 + (L + 3)//4]");
  std::size_t floats = 0;
  for (const Node& n : g.nodes())
    if (const Argument* type = n.meta(meta_keys::type); type != nullptr && *type == Argument("float")) ++floats;
  CHECK(floats == 4);  // sym_float, mul, truediv, and the mul of (L + 1)
  for (std::int64_t length : {1, 2, 3, 9, 14}) {
    CAPTURE(length);
    const Tensor x = randn({3, length});
    const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
    const std::int64_t expected = (3 * length) / 4 + (length + 3) / 4 + (length + 1) / 2;
    CHECK(traced.shape() == Shape{expected});
    CHECK(testing::max_rel_error(traced, model.call({x}).to_tensor()) < 1e-5);
  }
}

TEST_CASE("a tensor scaled by a float computed from a size takes the proxy as its operand") {
  ScaleByLength model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{2, Dim("L")})});
  CHECK_NOTHROW(g.lint());
  const Node* mul = nullptr;
  for (const Node& n : g.nodes())
    if (n.target() == "mul") mul = &n;
  REQUIRE(mul != nullptr);
  CHECK(mul->tensor_meta()->dtype == DType::float32);
  const Tensor x = randn({2, 6});
  CHECK(testing::max_rel_error(Interpreter(model, g).run({x}).to_tensor(), x * 1.5) < 1e-6);
}

TEST_CASE("with example shapes SymFloat arithmetic records nothing") {
  Scaled model(0.5);
  const Graph g = symbolic_trace(model, {randn({2, 8})});
  for (const Node& n : g.nodes()) CHECK(n.meta(meta_keys::type) == nullptr);
  CHECK(to_string(scaled_result_shape(g)) == "[2, 4]");
}

TEST_CASE("a comparison of a scaled size that the dims' ranges decide is a plain bool") {
  struct Positive : TypedModule<Positive> {
    Tensor forward(const Tensor& x) {
      if (x.size(1) * 0.5 > 0) return x.relu();  // L >= 1: always
      return x;
    }
  };
  Positive model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{2, Dim("L")})});
  std::size_t relus = 0;
  for (const Node& n : g.nodes()) relus += n.target() == "relu" ? 1 : 0;
  CHECK(relus == 1);
}

TEST_CASE("converting an unknown SymFloat to a C++ double is a TraceError at that line") {
  ToDouble model;
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2, Dim("L")})}),
                       doctest::Contains(fmt::format(":{}: a float computed from sizes unknown at trace time",
                                                     ToDouble::made_line)
                                             .c_str()),
                       TraceError);
}

TEST_CASE("a graph with float size arithmetic round-trips through JSON and runs the same") {
  Rounded model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{3, Dim("L")})});
  const Graph back = graph_from_json(graph_to_json(g));
  CHECK(to_string(back) == to_string(g));
  const Tensor x = randn({3, 11});
  CHECK(testing::max_rel_error(Interpreter(model, back).run({x}).to_tensor(), model.call({x}).to_tensor()) < 1e-5);
}

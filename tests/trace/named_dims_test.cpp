// Named dims in traces (docs/design.md, decision 13): shapes as expressions, SymInt
// arithmetic on them, comparisons the ranges decide, size guards with their file:line, the
// interpreter's checks, rollback, and the graph JSON round trip.

#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/graph/dim_bindings.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

using namespace symtrace;

namespace {

void check_close(const Tensor& traced, const Tensor& eager) {
  REQUIRE(traced.shape() == eager.shape());
  CHECK(testing::max_rel_error(traced, eager) < 1e-5);
}

Shape result_shape(const Graph& g) {
  const Node* output = g.output_node();
  REQUIRE(output != nullptr);
  REQUIRE(output->input_nodes().size() == 1);
  const TensorMeta* meta = output->input_nodes().front()->tensor_meta();
  REQUIRE(meta != nullptr);
  return meta->shape;
}

std::size_t count_calls(const Graph& g, std::string_view target) {
  std::size_t n = 0;
  for (const Node& node : g.nodes())
    if (node.target() == target) ++n;
  return n;
}

struct Flatten : TypedModule<Flatten> {
  Tensor forward(const Tensor& x) { return x.reshape({x.size(0), -1}); }
};

struct AddTwo : TypedModule<AddTwo> {
  AddTwo() : TypedModule(std::vector<std::string>{"a", "b"}) {}
  static constexpr int add_line = __LINE__ + 1;
  Tensor forward(const Tensor& a, const Tensor& b) { return a + b; }
};

struct Chunks : TypedModule<Chunks> {
  static constexpr int view_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return x.view({-1, 32}); }
};

struct SizeArithmetic : TypedModule<SizeArithmetic> {
  Tensor forward(const Tensor& x) {
    const SymInt n = x.size(0);
    return x.reshape({n * 2, x.size(1) / 2, -1});
  }
};

struct BranchOnSize : TypedModule<BranchOnSize> {
  std::int64_t bound = 0;
  static constexpr int branch_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    if (x.size(0) > bound) return x.relu();
    return x;
  }
};

struct SliceAndCat : TypedModule<SliceAndCat> {
  Tensor forward(const Tensor& x) { return cat({x.slice(1, 1, std::nullopt), x.slice(1, 0, 1)}, 1); }
};

}  // namespace

TEST_CASE("reshape({x.size(0), -1}) of float32[N, 3, 4] is float32[N, 12]") {
  Flatten model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 3, 4})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[N, 3, 4] [num_users=2] = placeholder[target=x]
    %size : int [num_users=1] = call_method[target=size](args = (%x, 0), kwargs = {})
    %reshape : float32[N, 12] [num_users=1] = call_method[target=reshape](args = (%x, [%size, -1]), kwargs = {})
    return reshape
)");
  CHECK(g.size_guards().empty());
  const Tensor x = randn({5, 3, 4});
  check_close(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor());
}

TEST_CASE("SymInt arithmetic on a named dim records the same expressions") {
  SizeArithmetic model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), Dim("L", 2, 512), 5})});
  // The -1 is the element count over the others, N*L*5 / (2*N*(L//2)): no polynomial divides
  // it exactly, so it stays anonymous (what torch.export would guard as L even).
  CHECK(to_string(result_shape(g)) == "[2*N, L//2, ?]");
  const Tensor x = randn({3, 8, 5});
  check_close(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor());
}

TEST_CASE("two named dims broadcast together are guarded equal, and the interpreter names the broken guard") {
  AddTwo model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4}), InputSpec(Shape{Dim("M"), 4})});
  REQUIRE(g.size_guards().size() == 1);
  const Graph::SizeGuard& guard = g.size_guards()[0];
  CHECK(to_string(guard.fact) == "N == M");
  CHECK(guard.where.line() == AddTwo::add_line);
  CHECK(std::string(guard.where.file_name()).ends_with("named_dims_test.cpp"));
  CHECK(to_string(result_shape(g)) == "[N, 4]");

  const Tensor a = randn({3, 4}), b = randn({3, 4});
  check_close(Interpreter(model, g).run({a, b}).to_tensor(), a + b);
  const std::string broken = fmt::format("the input sizes (M = 2, N = 3) break the guard N == M that {}:{} recorded",
                                         guard.where.file_name(), AddTwo::add_line);
  CHECK_THROWS_WITH_AS(Interpreter(model, g).run({a, randn({2, 4})}), doctest::Contains(broken.c_str()),
                       std::invalid_argument);
}

TEST_CASE("a named dim against a known size: 1 broadcasts, n > 1 is a guard, and the same name twice needs none") {
  AddTwo model;
  SUBCASE("against 1") {
    const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4}), InputSpec(Shape{1, 4})});
    CHECK(g.size_guards().empty());
    CHECK(to_string(result_shape(g)) == "[N, 4]");
  }
  SUBCASE("against 6") {
    const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4}), InputSpec(Shape{6, 4})});
    REQUIRE(g.size_guards().size() == 1);
    CHECK(to_string(g.size_guards()[0].fact) == "N == 6");
    CHECK(to_string(result_shape(g)) == "[6, 4]");
  }
  SUBCASE("the same name") {
    const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4}), InputSpec(Shape{Dim("N"), 4})});
    CHECK(g.size_guards().empty());
    CHECK_THROWS_WITH_AS(Interpreter(model, g).run({randn({3, 4}), randn({2, 4})}),
                         doctest::Contains("input 'b' has size 2 at dim 0, which the graph names N, but N is 3 in "
                                           "input 'a' (dim 0)"),
                         std::invalid_argument);
  }
  SUBCASE("a range that refutes the fact fails the trace") {
    CHECK_THROWS_WITH_AS(
        symbolic_trace(model, {InputSpec(Shape{Dim("N", 1, 4), 4}), InputSpec(Shape{6, 4})}),
        doctest::Contains("N == 6 holds for no size the dims' ranges allow (N in 1..4)"), OpError);
  }
}

TEST_CASE("a view that needs divisibility records the guard with the line of the view") {
  Chunks model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), Dim("L")})});
  CHECK(to_string(result_shape(g)) == "[(L*N)//32, 32]");
  REQUIRE(g.size_guards().size() == 1);
  CHECK(to_string(g.size_guards()[0].fact) == "(L*N) % 32 == 0");
  CHECK(g.size_guards()[0].where.line() == Chunks::view_line);
  CHECK_NOTHROW(Interpreter(model, g).run({randn({4, 8})}));
  CHECK_THROWS_WITH_AS(Interpreter(model, g).run({randn({3, 5})}),
                       doctest::Contains(fmt::format("(L = 5, N = 3) break the guard (L*N) % 32 == 0 that {}:{}",
                                                     __FILE__, Chunks::view_line)
                                             .c_str()),
                       std::invalid_argument);
}

TEST_CASE("a comparison of sizes that the ranges decide is a plain bool; one they do not is a TraceError") {
  BranchOnSize model;
  SUBCASE("N >= 1 decides x.size(0) > 0") {
    model.bound = 0;
    const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4})});
    CHECK(g.size_guards().empty());
    CHECK(count_calls(g, "relu") == 1);
  }
  SUBCASE("N in 1..4 decides x.size(0) > 4") {
    model.bound = 4;
    const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N", 1, 4), 4})});
    CHECK(count_calls(g, "relu") == 0);
  }
  SUBCASE("N >= 1 does not decide x.size(0) > 4") {
    model.bound = 4;
    CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4})}),
                         doctest::Contains(fmt::format(":{}: ", BranchOnSize::branch_line).c_str()), TraceError);
  }
}

TEST_CASE("slicing a named dim clamps by its range: x[:, 1:] of [N, L] is [N, L - 1]") {
  SliceAndCat model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), Dim("L", 2, 100)})});
  CHECK(to_string(result_shape(g)) == "[N, L]");
  bool saw = false;
  for (const Node& n : g.nodes())
    if (n.tensor_meta() != nullptr && to_string(n.tensor_meta()->shape) == "[N, L - 1]") saw = true;
  CHECK(saw);
  const Tensor x = randn({2, 7});
  check_close(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor());
}

TEST_CASE("the interpreter refuses a size outside a named dim's range") {
  Flatten model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N", 2, 8), 3, 4})});
  CHECK_THROWS_WITH_AS(Interpreter(model, g).run({randn({9, 3, 4})}),
                       doctest::Contains("input 'x' has size 9 at dim 0, which the graph names N: outside N's range 2..8"),
                       std::invalid_argument);
  CHECK_NOTHROW(Interpreter(model, g).run({randn({8, 3, 4})}));
}

TEST_CASE("inputs that name one dim with two ranges are refused") {
  AddTwo model;
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{Dim("N", 1, 8), 4}), InputSpec(Shape{Dim("N"), 4})}),
                       doctest::Contains("the inputs name two dims 'N', with the ranges 1..8 and 1.."),
                       std::invalid_argument);
}

TEST_CASE("graph JSON keeps named dims, their ranges and the size guards exactly") {
  AddTwo model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N", 1, 16), Dim("H", 4, 64)}),
                                         InputSpec(Shape{Dim("M", 1, 16), Dim("H", 4, 64)})});
  const std::string json = graph_to_json(g, -1);
  CHECK(json.find(R"("dims":{"H":[4,64],"M":[1,16],"N":[1,16]})") != std::string::npos);
  const Graph back = graph_from_json(json);
  CHECK(to_string(back) == to_string(g));
  REQUIRE(back.size_guards().size() == 1);
  CHECK(back.size_guards()[0].fact == g.size_guards()[0].fact);  // the same interned expressions
  CHECK(back.size_guards()[0].where.line() == AddTwo::add_line);
  CHECK(graph_to_json(back, -1) == json);
  CHECK_THROWS_WITH_AS(Interpreter(model, back).run({randn({3, 8}), randn({2, 8})}),
                       doctest::Contains("break the guard N == M"), std::invalid_argument);
}

TEST_CASE("size guards of a module that fails are rolled back with its nodes") {
  struct Fails : TypedModule<Fails> {
    Fails() : TypedModule(std::vector<std::string>{"a", "b"}) {}
    Tensor forward(const Tensor& a, const Tensor& b) {
      Tensor s = a + b;                       // the guard N == M
      if ((s.sum() > 0).to_bool()) return s;  // data-dependent: the module fails
      return s;
    }
  };
  struct Parent : TypedModule<Parent> {
    std::shared_ptr<Fails> child = register_module("child", std::make_shared<Fails>());
    Parent() : TypedModule(std::vector<std::string>{"a", "b"}) {}
    Tensor forward(const Tensor& a, const Tensor& b) { return (*child)(a, b).relu(); }
  };
  Parent model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{Dim("N"), 4}), InputSpec(Shape{Dim("M"), 4})});
  const Graph* root = c.find("");
  REQUIRE(root != nullptr);
  CHECK(root->size_guards().empty());
}

TEST_CASE("ops on named dims give the shapes their runs give: pad, transposed convolution, slices") {
  struct Ops : TypedModule<Ops> {
    Tensor w = randn({4, 2, 3, 3});
    Tensor forward(const Tensor& x) {
      const Tensor padded = pad(x, {1, 2, 0, 3});                         // [N, 4, H + 3, W + 3]
      const Tensor up = conv_transpose2d(padded, w, {}, {1, 1}, {2, 2});  // k=3, s=1, p=2: [N, 2, H + 1, W + 1]
      return up.slice(2, 1, std::nullopt).slice(2, 1, std::nullopt).slice(3, -3, std::nullopt);
    }
  };
  Ops model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 4, Dim("H", 3, 64), Dim("W", 1, 64)})});
  const Shape traced = result_shape(g);
  CHECK(to_string(traced).starts_with("[N, 2, H - 1, "));
  for (const IntList& sizes : std::vector<IntList>{{1, 4, 3, 1}, {2, 4, 5, 2}, {1, 4, 9, 7}}) {
    const Tensor x = randn(sizes);
    const Tensor eager = model.call({x}).to_tensor();
    check_close(Interpreter(model, g).run({x}).to_tensor(), eager);
    const SymBindings b = bind_input_dims(g, {Shape(sizes)});
    for (std::size_t d = 0; d < traced.rank(); ++d) CHECK(traced[d].expr()->evaluate(b) == eager.shape()[d].raw());
  }
}

TEST_CASE("a layer_norm over a named dim is guarded to be its size") {
  struct Norm : TypedModule<Norm> {
    Tensor forward(const Tensor& x) { return layer_norm(x, {8}); }
  };
  Norm norm;
  const Graph g = symbolic_trace(norm, {InputSpec(Shape{Dim("N"), Dim("D")})});
  REQUIRE(g.size_guards().size() == 1);
  CHECK(to_string(g.size_guards()[0].fact) == "D == 8");
}

TEST_CASE("a transposed convolution whose size formula has a negative constant keeps the formula") {
  struct Up : TypedModule<Up> {
    Tensor w = randn({2, 3, 3, 3});
    Tensor forward(const Tensor& x) { return conv_transpose2d(x, w, {}, {1, 1}, {2, 2}); }
  };
  Up model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{1, 2, Dim("H", 3, 64), Dim("W", 3, 64)})});
  CHECK(to_string(result_shape(g)) == "[1, 3, H - 2, W - 2]");
  const Tensor x = randn({1, 2, 7, 9});
  check_close(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor());
}

TEST_CASE("expanding a named dim that may be 1 to a proxy size gives the proxy's size") {
  struct Expand : TypedModule<Expand> {
    Expand() : TypedModule(std::vector<std::string>{"x", "y"}) {}
    Tensor forward(const Tensor& x, const Tensor& y) { return x.expand({y.size(0), 4}); }
  };
  Expand model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("N"), 1}), InputSpec(Shape{Dim("M"), 2})});
  CHECK(to_string(result_shape(g)) == "[M, 4]");
  const Graph proven = symbolic_trace(model, {InputSpec(Shape{Dim("N", 2, 9), 1}), InputSpec(Shape{Dim("M"), 2})});
  CHECK(to_string(result_shape(proven)) == "[N, 4]");
}

TEST_CASE("a chain of slices stays a short formula and evaluates in time") {
  struct Slices : TypedModule<Slices> {
    Tensor forward(const Tensor& x) {
      Tensor y = x;
      for (int i = 0; i < 40; ++i) y = y.slice(1, 1, std::nullopt);
      return y;
    }
  };
  Slices model;
  const Graph g = symbolic_trace(model, {InputSpec(Shape{2, Dim("L")})});
  const SymExpr l = *result_shape(g)[1].expr();
  CHECK(l.evaluate({{"L", 100}}) == 60);
  CHECK(l.evaluate({{"L", 10}}) == 0);
  CHECK(to_string(l).size() < 20'000);
}

TEST_CASE("every slice of a named dim has the length its runs have (starts, ends and steps of each sign)") {
  struct Slice : TypedModule<Slice> {
    std::optional<std::int64_t> start, end;
    std::int64_t step = 1;
    Tensor forward(const Tensor& x) { return x.slice(0, start, end, step); }
  };
  Slice model;
  std::vector<std::optional<std::int64_t>> bounds{std::nullopt};
  for (std::int64_t v = -6; v <= 6; ++v) bounds.emplace_back(v);
  int checked = 0;
  for (const auto& start : bounds) {
    for (const auto& end : bounds) {
      for (std::int64_t step : {1, 2, 3}) {
        model.start = start;
        model.end = end;
        model.step = step;
        const Graph g = symbolic_trace(model, {InputSpec(Shape{Dim("L", 0, 100)})});
        const SymExpr length = *result_shape(g)[0].expr();
        for (std::int64_t size = 0; size <= 8; ++size) {
          CAPTURE(size);
          CAPTURE(to_string(length));
          CHECK(length.evaluate({{"L", size}}) == model.call({randn({size})}).to_tensor().shape()[0].raw());
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 14 * 14 * 3 * 9);
}

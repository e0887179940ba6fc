// SymInt: sizes are plain numbers when known and recorded proxies when not; arithmetic,
// comparisons, shapes built from proxies, and the errors of turning a proxy into a C++ value.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/rnn.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <string>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// Flattens all but the batch dim, with the batch size read from the input.
class Flatten : public TypedModule<Flatten> {
 public:
  Tensor forward(const Tensor& x) {
    const SymInt b = x.size(0);
    return x.reshape({b, -1});
  }
};

/// Size arithmetic feeding new shapes: a zeros of twice the batch, and a view with a computed
/// row count.
class SizeArithmetic : public TypedModule<SizeArithmetic> {
 public:
  Tensor forward(const Tensor& x) {
    const SymInt b = x.size(0);
    const SymInt rows = b * x.size(1) / 2;
    const Tensor pad = zeros({2 * b - b + 0, x.size(1)});  // b again, through three nodes
    const Tensor padded = x + pad;
    const SymInt remainder = b % 3;
    return padded.view({rows, 2}) + remainder;
  }
};

/// Branches on the batch size: traceable only when it is known.
class BatchBranch : public TypedModule<BatchBranch> {
 public:
  static constexpr int branch_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    if (x.size(0) > 1) return x.relu();
    return x;
  }
};

/// Converts the batch size to a C++ integer.
class BatchToInt : public TypedModule<BatchToInt> {
 public:
  static constexpr int size_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    const SymInt b = x.size(0);
    const auto n = static_cast<std::int64_t>(b);  // reports the line the proxy was made on
    return x * static_cast<double>(n);
  }
};

/// The class-token pattern of ViT: expand a parameter to the input's batch.
class ClassToken : public TypedModule<ClassToken> {
 public:
  ClassToken() { token = register_parameter("token", randn({1, 1, 4})); }
  Tensor forward(const Tensor& x) { return cat({token.expand({x.size(0), -1, -1}), x}, 1); }
  Tensor token;
};

/// numel and sizes() of a partly unknown shape.
class Counts : public TypedModule<Counts> {
 public:
  Tensor forward(const Tensor& x) {
    const SymIntList sizes = x.sizes();
    return x.reshape({x.numel()}).reshape(sizes);
  }
};

}  // namespace

TEST_CASE("known sizes are plain numbers: a trace with example shapes records no size nodes") {
  Flatten model;
  const Tensor x = randn({2, 3, 4});
  CHECK(x.size(0).is_known());
  CHECK(x.size(-1).maybe() == 4);
  CHECK(x.numel().maybe() == 24);
  CHECK(x.sizes().to_int_list() == IntList{2, 3, 4});
  Graph g = symbolic_trace(model, {x});
  CHECK(to_string(g) == R"(graph():
    %x : float32[2, 3, 4] [num_users=1] = placeholder[target=x]
    %reshape : float32[2, 12] [num_users=1] = call_method[target=reshape](args = (%x, [2, -1]), kwargs = {})
    return reshape
)");
}

TEST_CASE("an unknown size is a proxy: size() is recorded and the proxy becomes an argument") {
  Flatten model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3, 4})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[?, 3, 4] [num_users=2] = placeholder[target=x]
    %size : int [num_users=1] = call_method[target=size](args = (%x, 0), kwargs = {})
    %reshape : float32[?, ?] [num_users=1] = call_method[target=reshape](args = (%x, [%size, -1]), kwargs = {})
    return reshape
)");
  CHECK(g.find_node("size")->where().line() != 0);
  for (std::int64_t batch : {1, 5}) {
    const Tensor x = randn({batch, 3, 4});
    const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
    CHECK(traced.shape() == Shape{batch, 12});
    CHECK(max_rel_error(traced, model.call({x}).to_tensor()) == 0.0);
  }
}

TEST_CASE("arithmetic on proxies is recorded as operator nodes and evaluates like the eager code") {
  SizeArithmetic model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 4})});
  CHECK_NOTHROW(g.lint());
  CHECK(to_string(g) == R"(graph():
    %x : float32[?, 4] [num_users=2] = placeholder[target=x]
    %size : int [num_users=4] = call_method[target=size](args = (%x, 0), kwargs = {})
    %mul : int [num_users=1] = call_function[target=operator.mul](args = (%size, 4), kwargs = {})
    %floordiv : int [num_users=1] = call_function[target=operator.floordiv](args = (%mul, 2), kwargs = {})
    %mul_1 : int [num_users=1] = call_function[target=operator.mul](args = (2, %size), kwargs = {})
    %sub : int [num_users=1] = call_function[target=operator.sub](args = (%mul_1, %size), kwargs = {})
    %add : int [num_users=1] = call_function[target=operator.add](args = (%sub, 0), kwargs = {})
    %zeros : float32[?, 4] [num_users=1] = call_function[target=zeros](args = ([%add, 4], symtrace.float32), kwargs = {})
    %add_1 : float32[?, 4] [num_users=1] = call_function[target=add](args = (%x, %zeros), kwargs = {})
    %mod : int [num_users=1] = call_function[target=operator.mod](args = (%size, 3), kwargs = {})
    %view : float32[?, 2] [num_users=1] = call_method[target=view](args = (%add_1, [%floordiv, 2]), kwargs = {})
    %add_2 : float32[?, 2] [num_users=1] = call_function[target=add](args = (%view, %mod), kwargs = {})
    return add_2
)");
  for (std::int64_t batch : {1, 4, 7}) {
    CAPTURE(batch);
    const Tensor x = randn({batch, 4});
    const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
    const Tensor eager = model.call({x}).to_tensor();
    CHECK(traced.shape() == Shape{batch * 2, 2});
    CHECK(max_rel_error(traced, eager) == 0.0);
  }
}

TEST_CASE("known SymInt arithmetic follows Python's // and %, and refuses division by zero") {
  const SymInt a = -7;
  CHECK((a / 2).maybe() == -4);
  CHECK((a % 3).maybe() == 2);
  CHECK((SymInt(7) % -3).maybe() == -2);
  CHECK((SymInt(7) / 2).maybe() == 3);
  CHECK((3 - SymInt(5)).maybe() == -2);
  CHECK((SymInt(2) < 3).maybe() == true);
  CHECK((4 == SymInt(4)).maybe() == true);
  CHECK(static_cast<bool>(SymInt(4) >= 5) == false);
  CHECK(to_string(SymInt(12)) == "12");
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)(a / 0), doctest::Contains(fmt::format("sym_int_test.cpp:{}: SymInt division: integer division or modulo by zero", line).c_str()), std::invalid_argument);
  CHECK_THROWS_AS((void)(a % 0), std::invalid_argument);
  constexpr std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
  CHECK_THROWS_WITH_AS((void)(SymInt(lowest) / -1), "SymInt division overflows 64 bits", std::overflow_error);
  CHECK((SymInt(lowest) % -1).maybe() == 0);
  CHECK_THROWS_AS((void)(SymInt(std::numeric_limits<std::int64_t>::max()) + 1), std::overflow_error);
  CHECK_THROWS_AS((void)(SymInt(lowest) * 2), std::overflow_error);
}

TEST_CASE("a parameter viewed with a proxy size is recorded and runs for any size") {
  struct Positions : TypedModule<Positions> {
    Positions() { table = register_parameter("table", randn({12})); }
    Tensor forward(const Tensor& x) { return x + table.view({x.size(0), 12 / x.size(0)}); }
    Tensor table;
  };
  Positions model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), Dim::unknown()})});
  CHECK_NOTHROW(g.lint());
  CHECK(g.find_node("view") != nullptr);
  for (std::int64_t rows : {2, 3, 4}) {
    const Tensor x = randn({rows, 12 / rows});
    CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
  }
}

TEST_CASE("a branch on a known size is plain C++; on an unknown size it is a TraceError at the comparison") {
  BatchBranch model;
  Graph known = symbolic_trace(model, {InputSpec(Shape{3, 2})});
  CHECK(known.find_node("relu") != nullptr);
  CHECK(known.find_node("gt") == nullptr);
  CHECK(symbolic_trace(model, {InputSpec(Shape{1, 2})}).find_node("relu") == nullptr);

  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 2})}),
                       doctest::Contains(fmt::format("sym_int_test.cpp:{}: a comparison of sizes unknown at trace time was converted to bool in the root module (BatchBranch): control flow that depends on the value of a size cannot be traced; give the trace example shapes (known dims), make the module a leaf (Tracer::register_leaf) or use where() or cond()", BatchBranch::branch_line).c_str()),
                       TraceError);
}

TEST_CASE("converting an unknown SymInt to a C++ integer is a TraceError naming where the size was read") {
  BatchToInt model;
  CHECK_NOTHROW(symbolic_trace(model, {InputSpec(Shape{2, 2})}));
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 2})}),
                       doctest::Contains(fmt::format("sym_int_test.cpp:{}: a size unknown at trace time was converted to a C++ integer in the root module (BatchToInt): C++ code that depends on the value of a size cannot be traced", BatchToInt::size_line).c_str()),
                       TraceError);
}

TEST_CASE("proxies size expand() and sizes()/numel() round trips, with the graph equal to eager") {
  SUBCASE("expand to the batch") {
    ClassToken model;
    Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3, 4})});
    CHECK_NOTHROW(g.lint());
    const Node* expand = g.find_node("expand");
    REQUIRE(expand != nullptr);
    CHECK(to_string(*expand->tensor_meta()) == "float32[?, 1, 4]");
    CHECK(g.output_node()->args().front().get_if<NodeId>() != nullptr);
    const Tensor x = randn({2, 3, 4});
    CHECK(Interpreter(model, g).run({x}).to_tensor().shape() == Shape{2, 4, 4});
    CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);
  }
  SUBCASE("numel and sizes") {
    Counts model;
    Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3})});
    CHECK_NOTHROW(g.lint());
    CHECK(g.find_node("numel") != nullptr);
    CHECK(g.find_node("size") != nullptr);  // dim 0 only: dim 1 is known
    CHECK(g.find_node("size_1") == nullptr);
    CHECK(to_string(*g.find_node("reshape_1")->tensor_meta()) == "float32[?, 3]");
    const Tensor x = randn({5, 3});
    CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), x) == 0.0);
  }
}

TEST_CASE("chunk, split and unbind give lists whose length comes from metadata, or a TraceError") {
  struct Pieces : TypedModule<Pieces> {
    Tensor forward(const Tensor& x) {
      const TensorList halves = x.chunk(2, 1);
      const TensorList rows = x.unbind(1);
      return halves[0] + halves[1] + rows.size();
    }
  };
  Pieces model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 4})});  // dim 1 known: 2 chunks, 4 rows
  CHECK(g.find_node("getitem_1") != nullptr);
  CHECK(to_string(*g.find_node("getitem")->tensor_meta()) == "float32[?, 2]");
  CHECK(g.find_node("unbind") != nullptr);
  CHECK(g.find_node("getitem_5") != nullptr);  // two chunks and four rows
  const Tensor x = randn({3, 4});
  CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model.call({x}).to_tensor()) == 0.0);

  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{3, Dim::unknown()})}),
                       doctest::Contains("chunk() in the root module (Pieces): the number of outputs depends on dimension 1 of shape [3, ?], which is unknown; give example shapes or use split_with_sizes() with explicit sizes"),
                       TraceError);
}

TEST_CASE("a proxy SymInt used after its trace ended is a TraceError") {
  struct Leaks : TypedModule<Leaks> {
    SymInt* out = nullptr;
    Tensor forward(const Tensor& x) {
      *out = x.size(0);
      return x;
    }
  };
  SymInt leaked;
  Leaks model;
  model.out = &leaked;
  (void)symbolic_trace(model, {InputSpec(Shape{Dim::unknown()})});
  REQUIRE(leaked.is_symbolic());
  CHECK_THROWS_AS((void)(leaked * 2), TraceError);
  CHECK_THROWS_AS((void)zeros({leaked}), TraceError);
  CHECK_THROWS_AS((void)leaked.value(), TraceError);
  // In another trace it is refused too, and that trace's graph is left as it was.
  Flatten other;
  struct Uses : TypedModule<Uses> {
    SymInt* in = nullptr;
    Tensor forward(const Tensor& x) { return x.reshape({*in, -1}); }
  };
  Uses uses;
  uses.in = &leaked;
  CHECK_THROWS_WITH_AS(symbolic_trace(uses, {InputSpec(Shape{2, 2})}),
                       doctest::Contains("a symbolic tensor of another trace was used"), TraceError);
}

TEST_CASE("rnn traces with an unknown batch (zeros sized by a proxy) but not with an unknown length") {
  zoo::ElmanRNNImpl model;
  model.eval();
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 6}, DType::int64)});
  CHECK_NOTHROW(g.lint());
  CHECK(g.find_node("zeros") != nullptr);
  for (std::int64_t batch : {1, 3}) {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < batch * 6; ++i) ids.push_back((i * 37 + 11) % model.config.vocab);
    const Tensor tokens = tensor(ids, {batch, 6});
    CHECK(max_rel_error(Interpreter(model, g).run({tokens}).to_tensor(), model.call({tokens}).to_tensor()) <= 1e-6);
  }
  CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2, Dim::unknown()}, DType::int64)}),
                       doctest::Contains(fmt::format("rnn.cpp:{}: a comparison of sizes unknown at trace time", zoo::ElmanRNNImpl::length_loop_line).c_str()),
                       TraceError);
}

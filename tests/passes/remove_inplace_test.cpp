// remove_inplace: golden graphs of each rewrite (in-place ops on temporaries, a write into a
// slice becoming slice_scatter), the rewritten graph computing what the original computes,
// and every refusal pinned, with the graph left as it was.
#include "support/zoo_checks.hpp"

#include <symtrace/symtrace.hpp>

using namespace symtrace;

namespace {

/// Writes into a slice of a temporary, through a full slice, and in place on the temporary.
struct WritesImpl : TypedModule<WritesImpl> {
  Tensor forward(const Tensor& x) {
    Tensor y = x.mul(2.0);
    y.slice(1, 0, 2).copy_(x.slice(1, 2, 4));  // y[:, 0:2] = x[:, 2:4]
    y.slice(0, 0, std::nullopt).add_(1.0);     // y[:] += 1
    Tensor w = y.relu_();
    return w.add(y);
  }
};

/// A chain of in-place ops, a fill_ and a copy_ that broadcasts and casts.
struct ChainImpl : TypedModule<ChainImpl> {
  Tensor forward(const Tensor& x, const Tensor& ids) {
    Tensor y = x.exp();
    y.add_(1.0);
    y.mul_(x);
    Tensor z = x.neg();
    z.fill_(0.5);
    Tensor c = x.sigmoid();
    c.copy_(ids.slice(1, 0, 1));  // int64 [2, 1] into float32 [2, 3]
    return y.add(z).add(c);
  }
};

struct WriteInputImpl : TypedModule<WriteInputImpl> {
  static constexpr int line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return x.add_(1.0).exp(); }
};

struct WriteThroughTransposeImpl : TypedModule<WriteThroughTransposeImpl> {
  Tensor forward(const Tensor& x) {
    Tensor y = x.exp();
    y.transpose(0, 1).relu_();
    return y.add(1.0);
  }
};

struct StaleViewImpl : TypedModule<StaleViewImpl> {
  Tensor forward(const Tensor& x) {
    Tensor y = x.exp();
    Tensor v = y.transpose(0, 1);
    y.add_(1.0);
    return v.add(1.0);
  }
};

struct CountedBufferImpl : TypedModule<CountedBufferImpl> {
  CountedBufferImpl() { count = register_buffer("count", zeros({1})); }
  Tensor forward(const Tensor& x) {
    count.add_(1.0);
    return x.add(count);
  }
  Tensor count;
};

void check_same_numerics(Module& m, const Graph& g, const ValueList& inputs) {
  const Tensor traced = Interpreter(m, g).run(inputs).to_tensor();
  const Tensor eager = m.call(inputs).to_tensor();
  testing::check_tensor(traced, eager.dtype(), eager.shape().sizes(), eager.to_vector<double>());
}

}  // namespace

TEST_CASE("in-place ops become functional ops and a write into a slice becomes slice_scatter") {
  auto m = std::make_shared<WritesImpl>();
  Graph g = symbolic_trace(*m, {InputSpec(Shape{2, 4})});
  CHECK(remove_inplace(g) == 3);
  CHECK(to_string(g) ==
        "graph():\n"
        "    %x : float32[2, 4] [num_users=2] = placeholder[target=x]\n"
        "    %mul : float32[2, 4] [num_users=2] = call_method[target=mul](args = (%x, 2.0), kwargs = {})\n"
        "    %slice : float32[2, 2] [num_users=0] = call_method[target=slice](args = (%mul, 1, 0, 2, 1), kwargs = {})\n"
        "    %slice_1 : float32[2, 2] [num_users=1] = call_method[target=slice](args = (%x, 1, 2, 4, 1), kwargs = {})\n"
        "    %slice_scatter : float32[2, 4] [num_users=2] = call_function[target=slice_scatter](args = (%mul, "
        "%slice_1, 1, 0, 2, 1), kwargs = {})\n"
        "    %slice_2 : float32[2, 4] [num_users=1] = call_method[target=slice](args = (%slice_scatter, 0, 0, None, "
        "1), kwargs = {})\n"
        "    %add_1 : float32[2, 4] [num_users=1] = call_method[target=add](args = (%slice_2, 1.0), kwargs = {})\n"
        "    %slice_scatter_1 : float32[2, 4] [num_users=1] = call_function[target=slice_scatter](args = "
        "(%slice_scatter, %add_1, 0, 0, None, 1), kwargs = {})\n"
        "    %relu : float32[2, 4] [num_users=1] = call_method[target=relu](args = (%slice_scatter_1,), kwargs = {})\n"
        "    %add : float32[2, 4] [num_users=1] = call_method[target=add](args = (%relu, %relu), kwargs = {})\n"
        "    return add\n");
  CHECK_NOTHROW(g.lint());
  for (const Node& n : g.nodes()) {
    if (n.op() != OpKind::placeholder && n.op() != OpKind::output) CHECK_FALSE(has_side_effects(n));
  }
  check_same_numerics(*m, g, {randn({2, 4})});
  // The dead slice left behind goes with dead code elimination.
  CHECK(eliminate_dead_code(g) == 1);
  check_same_numerics(*m, g, {randn({2, 4})});
}

TEST_CASE("chains of in-place ops, fill_ and a broadcasting, casting copy_ keep the numerics") {
  auto m = std::make_shared<ChainImpl>();
  Graph g = symbolic_trace(*m, {InputSpec(Shape{2, 3}), InputSpec(Shape{2, 4}, DType::int64)});
  CHECK(remove_inplace(g) == 4);
  CHECK_NOTHROW(g.lint());
  CHECK(testing::count_nodes(g, OpKind::call_method, "add") == 3);
  CHECK(testing::count_nodes(g, OpKind::call_method, "mul") == 1);
  CHECK(testing::count_nodes(g, OpKind::call_function, "full") == 1);
  CHECK(testing::count_nodes(g, OpKind::call_function, "to") == 1);
  CHECK(testing::count_nodes(g, OpKind::call_function, "expand") == 1);
  const Tensor ids = tensor(std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  check_same_numerics(*m, g, {randn({2, 3}), ids});
  CHECK(remove_inplace(g) == 0);
}

TEST_CASE("writes the rewrite cannot carry are refused, naming the node and why, and nothing changes") {
  SUBCASE("a graph input") {
    auto m = std::make_shared<WriteInputImpl>();
    Graph g = symbolic_trace(*m, {InputSpec(Shape{2})});
    const std::string before = to_string(g);
    CHECK_THROWS_WITH_AS(
        remove_inplace(g),
        doctest::Contains(fmt::format("remove_inplace: %add_ (add_ at tests/passes/remove_inplace_test.cpp:{}) writes "
                                      "into the graph input %x: the caller sees that change after the graph runs",
                                      WriteInputImpl::line)
                              .c_str()),
        std::invalid_argument);
    CHECK(to_string(g) == before);
  }
  SUBCASE("a buffer") {
    auto m = std::make_shared<CountedBufferImpl>();
    Graph g = symbolic_trace(*m, {InputSpec(Shape{2})});
    const std::string before = to_string(g);
    CHECK_THROWS_WITH_AS(remove_inplace(g), doctest::Contains("writes into 'count' (get_attr): a parameter or buffer"),
                         std::invalid_argument);
    CHECK(to_string(g) == before);
  }
  SUBCASE("through a view other than a slice, the viewed tensor used after") {
    auto m = std::make_shared<WriteThroughTransposeImpl>();
    Graph g = symbolic_trace(*m, {InputSpec(Shape{2, 3})});
    const std::string before = to_string(g);
    CHECK_THROWS_WITH_AS(remove_inplace(g),
                         doctest::Contains("writes into %exp through %transpose (transpose), and %exp is used after "
                                           "the write: only a write into one slice can be carried back"),
                         std::invalid_argument);
    CHECK(to_string(g) == before);
  }
  SUBCASE("another view made before the write and read after it") {
    auto m = std::make_shared<StaleViewImpl>();
    Graph g = symbolic_trace(*m, {InputSpec(Shape{2, 3})});
    const std::string before = to_string(g);
    CHECK_THROWS_WITH_AS(remove_inplace(g),
                         doctest::Contains("writes into %exp, and %transpose (transpose), another view of %exp made "
                                           "before the write, is used after it and would miss the change"),
                         std::invalid_argument);
    CHECK(to_string(g) == before);
  }
  SUBCASE("fill_ into a tensor of unknown sizes") {
    Graph g;
    Node& x = g.placeholder("x");
    Node& e = g.call_function("exp", {x});
    e.set_tensor_meta(TensorMeta{DType::float32, Shape::unknown(2)});
    Node& f = g.call_method("fill_", {e, 1.0});
    f.set_tensor_meta(TensorMeta{DType::float32, Shape::unknown(2)});
    g.output(e);
    const std::string before = to_string(g);
    CHECK_THROWS_WITH_AS(remove_inplace(g),
                         doctest::Contains(") writes into a tensor of shape float32[?, ?] with unknown sizes, so `full` "
                                           "cannot make it; trace with input shapes"),
                         std::invalid_argument);
    CHECK(to_string(g) == before);
  }
  SUBCASE("a float written into an int64 tensor") {
    Graph g;
    Node& x = g.placeholder("x");
    Node& e = g.call_function("neg", {x});
    e.set_tensor_meta(TensorMeta{DType::int64, Shape{3}});
    Node& a = g.call_method("add_", {e, 0.5});
    a.set_tensor_meta(TensorMeta{DType::int64, Shape{3}});
    g.output(e);
    CHECK_THROWS_WITH_AS(remove_inplace(g),
                         doctest::Contains(") writes a floating-point result into an integer tensor (int64), which add "
                                           "would not keep; cast the operand to int64 first"),
                         std::invalid_argument);
  }
}

namespace {

/// Calls the in-place op `op` on a temporary (2x), then reads the temporary.
struct InplaceOnTemporaryImpl : TypedModule<InplaceOnTemporaryImpl> {
  std::string op;
  std::function<ValueList(const Tensor& y, const Tensor& x)> args;
  Tensor forward(const Tensor& x) {
    Tensor y = x.mul(2.0);
    (void)symtrace::call(op, args(y, x));
    return y.add(x);
  }
};

}  // namespace

TEST_CASE("every in-place op of the registry becomes its functional form, and the graph computes the same") {
  // The arguments each in-place op is called with after the tensor it writes (`y`, from x of
  // shape [2, 3]). A new in-place op in the registry needs a line here.
  const Tensor rows = tensor(std::vector<std::int64_t>{1, 0}, {2});
  const std::map<std::string, std::function<ValueList(const Tensor&, const Tensor&)>> cases = {
      {"add_", [](const Tensor& y, const Tensor& x) { return ValueList{Value(y), Value(x.exp())}; }},
      {"mul_", [](const Tensor& y, const Tensor&) { return ValueList{Value(y), Value(-1.5)}; }},
      {"relu_", [](const Tensor& y, const Tensor&) { return ValueList{Value(y)}; }},
      {"fill_", [](const Tensor& y, const Tensor&) { return ValueList{Value(y), Value(0.25)}; }},
      {"copy_", [](const Tensor& y, const Tensor& x) { return ValueList{Value(y), Value(x.neg())}; }},
      {"index_put_",
       [&](const Tensor& y, const Tensor& x) {
         return ValueList{Value(y), Value(ValueList{Value(rows)}), Value(x.sigmoid()), Value(true)};
       }},
  };
  std::vector<std::string> inplace;
  for (const OpDef* op : OpRegistry::instance().ops()) {
    if (op->has(OpFlags::inplace) && !op->has(OpFlags::external)) inplace.push_back(op->name());
  }
  REQUIRE(inplace.size() == cases.size());
  for (const std::string& name : inplace) {
    CAPTURE(name);
    REQUIRE(cases.count(name) == 1);
    auto m = std::make_shared<InplaceOnTemporaryImpl>();
    m->op = name;
    m->args = cases.at(name);
    Graph g = symbolic_trace(*m, {InputSpec(Shape{2, 3})});
    REQUIRE(testing::count_nodes(g, OpKind::call_function, name) == 1);
    const Tensor x = randn({2, 3});
    const Tensor before = Interpreter(*m, g).run({x}).to_tensor();
    CHECK(remove_inplace(g) == 1);
    CHECK_NOTHROW(g.lint());
    for (const Node& n : g.nodes()) {
      const OpDef* op = n.op() == OpKind::call_function ? OpRegistry::instance().find(n.target()) : nullptr;
      CHECK_FALSE((op != nullptr && op->has(OpFlags::inplace)));
    }
    const Tensor after = Interpreter(*m, g).run({x}).to_tensor();
    const Tensor eager = m->call({x}).to_tensor();
    CHECK(testing::max_rel_error(before, eager) <= 1e-6);
    CHECK(testing::max_rel_error(after, eager) <= 1e-6);
  }
}

// A failed module whose forward returns lists (Note [A failed module's result by execution]):
// its leaf result takes the structure two eager runs on synthetic inputs agree on, and the
// calls those runs make give inputs to the children the trace never reached, which the
// collection then traces as roots.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

using namespace symtrace;
using testing::max_rel_error;

namespace {

/// x * 2 + 1.
class Head : public TypedModule<Head> {
 public:
  Tensor forward(const Tensor& x) { return x * 2.0 + 1.0; }
};

/// Picks x or -x by its data (so it fails when traced, before calling `head`), then returns
/// the head's result on it and the rows whose first column is positive: a list of two tensors,
/// the second of a size the data decides.
class Selects : public TypedModule<Selects> {
 public:
  static constexpr int bad_line = __LINE__ + 3;
  Selects() { head = register_module("head", std::make_shared<Head>()); }
  std::vector<Tensor> forward(const Tensor& x) {
    const Tensor picked = x.sum().to_bool() ? x : -x;
    const Tensor y = head->call({picked}).to_tensor();
    return {y, index(x, {x.select(1, 0) > 0.0})};
  }
  std::shared_ptr<Head> head;
};

/// Adds the two results of `selects` up (their rows summed): the caller of a failed module
/// that indexes its result.
class Outer : public TypedModule<Outer> {
 public:
  Outer() { selects = register_module("selects", std::make_shared<Selects>()); }
  Tensor forward(const Tensor& x) {
    const std::vector<Tensor> r = selects->call({x}).to_tensor_list();
    return r[0].sum({0}) + r[1].sum({0});
  }
  std::shared_ptr<Selects> selects;
};

}  // namespace

TEST_CASE("a failed module returning a list is a leaf of the structure its runs agree on, and its children "
          "get the inputs of the runs' calls") {
  Outer model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{6, 4})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module == "selects");
  CHECK(c.failures()[0].message.find(fmt::format(":{}: a symbolic tensor was read as data (to_bool()) in 'selects'",
                                                 Selects::bad_line)) != std::string::npos);

  // The root's graph: the leaf's result is a list of two float32 tensors of rank 2; the first
  // dim is never taken as known (a count from the data lies there), the second the runs agree on.
  const Graph* root = c.find(model);
  REQUIRE(root != nullptr);
  CHECK_NOTHROW(root->lint());
  const Node* first = root->find_node("getitem");
  const Node* second = root->find_node("getitem_1");
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);
  CHECK(to_string(*first->tensor_meta()) == "float32[?, 4]");
  CHECK(to_string(*second->tensor_meta()) == "float32[?, 4]");
  Generator gen(3);
  for (int i = 0; i < 3; ++i) {
    const Tensor x = randn({6, 4}, gen);
    CHECK(max_rel_error(Interpreter(model, *root).run({x}).to_tensor(), model(x)) <= 1e-6);
  }

  // The trace never reached `head` (selects failed first); the runs called it with x's shape,
  // and it is traced as a root on that, its first dim unknown as a result's is (a count from
  // the data lies there).
  const std::optional<ObservedCall> seen = c.records().observed_call(*model.selects->head);
  REQUIRE(seen.has_value());
  REQUIRE(seen->tensors.size() == 1);
  CHECK(to_string(seen->tensors[0]) == "float32[?, 4]");
  const Graph* head = c.find(*model.selects->head);
  REQUIRE(head != nullptr);
  CHECK(to_string(*head) == R"(graph():
    %x : float32[?, 4] [num_users=1] = placeholder[target=x]
    %mul : float32[?, 4] [num_users=1] = call_function[target=mul](args = (%x, 2.0), kwargs = {})
    %add : float32[?, 4] [num_users=1] = call_function[target=add](args = (%mul, 1.0), kwargs = {})
    return add
)");
}

namespace {

/// Returns (x flipped by its data's sign, the sum of x's rows): a tuple, after a data-dependent
/// branch, as a GRU returns (output, h_n).
class PairByData : public TypedModule<PairByData> {
 public:
  std::tuple<Tensor, Tensor> forward(const Tensor& x) {
    const Tensor picked = x.sum().to_bool() ? x : -x;
    return {picked.relu(), picked.sum({1})};
  }
};

/// Returns {"scores": x * 2, "rows": x.sum(1)} after a data-dependent branch, as a backbone
/// returns a dict of feature maps.
class DictByData : public TypedModule<DictByData> {
 public:
  Value forward(const Tensor& x) {
    const Tensor picked = x.sum().to_bool() ? x : -x;
    return ValueDict{{Value("scores"), Value("rows")}, {Value(picked * 2.0), Value(picked.sum({1}))}};
  }
};

/// Unpacks the pair, iterates the dict's values, and reads sizes of both: code that needs the
/// failed modules' structure and shapes.
class UsesResults : public TypedModule<UsesResults> {
 public:
  UsesResults() {
    pair = register_module("pair", std::make_shared<PairByData>());
    dict = register_module("dict", std::make_shared<DictByData>());
  }
  Tensor forward(const Tensor& x) {
    const auto [out, rows] = unpack2(pair->call({x}));
    const Value d = dict->call({out});
    Tensor total = rows.unsqueeze(1);
    for (const Value& v : d.to_dict().values) total = total + v.to_tensor().reshape({out.size(0), -1}).sum({1}).unsqueeze(1);
    return total.expand({out.size(0), out.size(1)}) + out;
  }
  static std::pair<Tensor, Tensor> unpack2(const Value& v) {
    const TensorList l = v.to_tensor_list();
    return {l.at(0), l.at(1)};
  }
  std::shared_ptr<PairByData> pair;
  std::shared_ptr<DictByData> dict;
};

}  // namespace

TEST_CASE("failed modules returning a tuple and a dict are leaves of that structure and shapes, named dims kept, "
          "and the code after them is traced") {
  UsesResults model;
  RobustTracer tracer;
  const Graph g = tracer.trace(model, {InputSpec(Shape{SymExpr::symbol("N"), 5})});
  CHECK_NOTHROW(g.lint());
  REQUIRE(tracer.failures().size() == 2);  // the two modules, not their caller
  CHECK(tracer.failures()[0].module == "pair");
  CHECK(tracer.failures()[1].module == "dict");
  CHECK(tracer.failures()[0].result_by_execution);
  CHECK(tracer.failures()[1].result_by_execution);
  // The tuple's items and the dict's values have the shapes the modules really return, N kept.
  CHECK(to_string(*g.find_node("getitem")->tensor_meta()) == "float32[N, 5]");
  CHECK(to_string(*g.find_node("getitem_1")->tensor_meta()) == "float32[N]");
  CHECK(to_string(*g.find_node("expand")->tensor_meta()) == "float32[N, 5]");
  Generator gen(5);
  for (std::int64_t n : {2, 7}) {
    const Tensor x = randn({n, 5}, gen);
    CHECK(max_rel_error(Interpreter(model, g).run({x}).to_tensor(), model(x)) <= 1e-5);
  }
}

TEST_CASE("equal calls of a failed module reuse its runs, and the runs can be turned off") {
  class Counting : public TypedModule<Counting> {
   public:
    Tensor forward(const Tensor& x) {
      ++runs;
      return x.sum().to_bool() ? x.relu() : x;
    }
    int runs = 0;
  };
  class Thrice : public TypedModule<Thrice> {
   public:
    Thrice() { inner = register_module("inner", std::make_shared<Counting>()); }
    Tensor forward(const Tensor& x) { return inner->call({inner->call({inner->call({x})})}).to_tensor(); }
    std::shared_ptr<Counting> inner;
  };
  Thrice model;
  RobustTracer tracer;
  const Graph g = tracer.trace(model, {InputSpec(Shape{2, 3})});
  CHECK(to_string(*g.find_node("inner_2")->tensor_meta()) == "float32[2, 3]");
  // The symbolic attempt at its first call, then the two runs for its result; the later calls,
  // leaves at once, reuse them.
  CHECK(model.inner->runs == 3);

  RobustTracer off;
  off.set_result_by_execution(false);
  model.inner->runs = 0;
  const Graph unknown = off.trace(model, {InputSpec(Shape{2, 3})});
  CHECK(to_string(*unknown.find_node("inner_2")->tensor_meta()) == "float32[...]");
  CHECK(model.inner->runs == 1);  // the symbolic attempt only
  CHECK_FALSE(off.failures()[0].result_by_execution);
}

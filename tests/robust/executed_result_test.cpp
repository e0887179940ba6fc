// A failed module whose forward returns lists (Note [A failed module's result by execution]):
// its leaf result takes the structure two eager runs on synthetic inputs agree on, and the
// calls those runs make give inputs to the children the trace never reached, which the
// collection then traces as roots.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
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

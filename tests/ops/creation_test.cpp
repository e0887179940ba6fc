// Creation ops a trace records: arange (PyTorch's length rule, and an end that is a size only
// the run knows), empty, zeros_like, full_like, new_empty. Expected values: PyTorch 1.13 (CPU).
#include "support/checks.hpp"

#include <string>

using namespace symtrace;
using testing::check_tensor;
using testing::error_at;

namespace {

/// 0, 2, 4, ... for each row: an arange to the batch size.
class RowPositions : public TypedModule<RowPositions> {
 public:
  Tensor forward(const Tensor& x) { return arange(x.size(0)) * 2; }
};

/// 0.5, 1, ..., up to the batch size: a float range whose end is a size.
class HalfSteps : public TypedModule<HalfSteps> {
 public:
  Tensor forward(const Tensor& x) { return arange(0.5, x.size(0), 0.5); }
};

/// Fresh tensors shaped and typed after the input.
class FreshTensors : public TypedModule<FreshTensors> {
 public:
  Tensor forward(const Tensor& x) {
    const Tensor filled = full_like(x, 1.5) + zeros_like(x);
    return cat({filled, new_empty(x, {x.size(0), 2})}, 1);
  }
};

}  // namespace

TEST_CASE("arange follows PyTorch: ceil((end - start) / step) elements, int64 for integer bounds") {
  check_tensor(call("arange", {1, 10, 3}).to_tensor(), DType::int64, {3}, {1, 4, 7});
  check_tensor(call("arange", {10, 0, -3}).to_tensor(), DType::int64, {4}, {10, 7, 4, 1});
  check_tensor(call("arange", {3, 3}).to_tensor(), DType::int64, {0}, {});
  check_tensor(call("arange", {0, 5}, {{"dtype", DType::float32}}).to_tensor(), DType::float32, {5}, {0, 1, 2, 3, 4});
  check_tensor(arange(SymInt(5)), DType::int64, {5}, {0, 1, 2, 3, 4});
  SUBCASE("a float bound or step gives float32, each value start + i * step in double") {
    check_tensor(call("arange", {0, 1, 0.1}).to_tensor(), DType::float32, {10},
                 {0, 0.1, 0.2, 0.30000001, 0.40000001, 0.5, 0.60000002, 0.69999999, 0.80000001, 0.89999998});
    check_tensor(call("arange", {1.5, -1, -0.5}).to_tensor(), DType::float32, {5}, {1.5, 1, 0.5, 0, -0.5});
    check_tensor(call("arange", {-1.0, 1.0, 0.3}).to_tensor(), DType::float32, {7},
                 {-1, -0.69999999, -0.40000001, -0.1, 0.2, 0.5, 0.80000001});
    // (2.6 - 0.5) / 0.7 is 3.0000000000000004 in double: four elements, the last one at the end.
    check_tensor(call("arange", {0.5, 2.6, 0.7}).to_tensor(), DType::float32, {4}, {0.5, 1.2, 1.9, 2.5999999});
    check_tensor(arange(0.5, SymInt(4), 0.5), DType::float32, {7}, {0.5, 1, 1.5, 2, 2.5, 3, 3.5});
  }
  SUBCASE("an int64 dtype converts the bounds to int64 first") {
    check_tensor(call("arange", {0.0, 5.5, 1.5}, {{"dtype", DType::int64}}).to_tensor(), DType::int64, {5},
                 {0, 1, 2, 3, 4});
  }
}

TEST_CASE("arange refuses a step of the wrong sign or zero, tensor bounds and a bool dtype") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(call("arange", {0, 5, -1}), doctest::Contains(error_at(line, "arange").c_str()), OpError);
  CHECK_THROWS_WITH_AS(call("arange", {0, 5, -1}),
                       doctest::Contains("the step -1 goes away from end: start=0 end=5; use a step of the other sign"),
                       OpError);
  CHECK_THROWS_WITH_AS(call("arange", {5, 0, 1}), doctest::Contains("the step 1 goes away from end"), OpError);
  CHECK_THROWS_WITH_AS(call("arange", {0, 1, 0}), doctest::Contains("step must be nonzero"), OpError);
  CHECK_THROWS_WITH_AS(call("arange", {0.0, 1.0, 0.0}), doctest::Contains("step must be nonzero"), OpError);
  CHECK_THROWS_WITH_AS(call("arange", {0.0, INFINITY}), doctest::Contains("the bounds must be finite"), OpError);
  CHECK_THROWS_WITH_AS(call("arange", {zeros({1}), 3}),
                       doctest::Contains("argument 'start' must be a number or a size, got a tensor of shape [1]"),
                       OpError);
  CHECK_THROWS_WITH_AS(call("arange", {0, 3}, {{"dtype", DType::bool_}}),
                       doctest::Contains("cannot make a bool range"), OpError);
}

TEST_CASE("arange to a size the run gives traces as an unknown length and runs with the real one") {
  SUBCASE("an integer range") {
    RowPositions model;
    Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3})});
    CHECK_NOTHROW(g.lint());
    const std::string text = to_string(g);
    CAPTURE(text);
    CHECK(text.find("%arange : int64[?] [num_users=1] = call_function[target=arange](args = (0, %size, 1, None), "
                    "kwargs = {})") != std::string::npos);
    check_tensor(Interpreter(model, g).run({zeros({4, 3})}).to_tensor(), DType::int64, {4}, {0, 2, 4, 6});
    for (std::int64_t rows : {1, 0}) {
      const Tensor x = zeros({rows, 3});
      check_tensor(Interpreter(model, g).run({x}).to_tensor(), DType::int64, {rows},
                   model.call({x}).to_tensor().to_vector<double>());
    }
  }
  SUBCASE("a float range") {
    HalfSteps model;
    Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3})});
    const std::string text = to_string(g);
    CAPTURE(text);
    CHECK(text.find("%arange : float32[?] [num_users=1] = call_function[target=arange](args = (0.5, %size, 0.5, "
                    "None), kwargs = {})") != std::string::npos);
    check_tensor(Interpreter(model, g).run({zeros({4, 3})}).to_tensor(), DType::float32, {7},
                 {0.5, 1, 1.5, 2, 2.5, 3, 3.5});
  }
}

TEST_CASE("empty, zeros_like, full_like and new_empty make zero- or value-filled tensors of the asked dtype") {
  check_tensor(empty({2, 3}), DType::float32, {2, 3}, {0, 0, 0, 0, 0, 0});
  check_tensor(empty({2, 0}, DType::int64), DType::int64, {2, 0}, {});
  const Tensor x = tensor({1, 2, 3, 4}, {2, 2});
  check_tensor(zeros_like(x), DType::int64, {2, 2}, {0, 0, 0, 0});
  check_tensor(zeros_like(x, DType::float32), DType::float32, {2, 2}, {0, 0, 0, 0});
  check_tensor(full_like(x, 2.7), DType::int64, {2, 2}, {2, 2, 2, 2});  // converted to self's dtype
  check_tensor(full_like(x, 2.7, DType::float32), DType::float32, {2, 2}, {2.7, 2.7, 2.7, 2.7});
  check_tensor(full_like(tensor({1.f, 2.f}), 3), DType::float32, {2}, {3, 3});
  check_tensor(full_like(tensor({true, false}), 2), DType::bool_, {2}, {1, 1});
  check_tensor(new_empty(x, {3}), DType::int64, {3}, {0, 0, 0});
  check_tensor(new_empty(x, {1, 2}, DType::bool_), DType::bool_, {1, 2}, {0, 0});
  CHECK_FALSE(zeros_like(x).shares_storage_with(x));
}

TEST_CASE("creation ops refuse negative sizes, naming the size list") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)empty({2, -1}), doctest::Contains(error_at(line, "empty").c_str()), OpError);
  CHECK_THROWS_WITH_AS((void)empty({2, -1}), doctest::Contains("size -1 at dim 1 of shape [2, -1] is negative"),
                       OpError);
  CHECK_THROWS_WITH_AS((void)new_empty(zeros({1}), {-3}),
                       doctest::Contains("new_empty(): size -3 at dim 0 of shape [-3]"), OpError);
}

TEST_CASE("zeros_like, full_like and new_empty trace with the input's unknown dims") {
  FreshTensors model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 3})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%full_like : float32[?, 3] [num_users=1] = call_function[target=full_like](args = (%x, 1.5, "
                  "None), kwargs = {})") != std::string::npos);
  CHECK(text.find("%zeros_like : float32[?, 3] [num_users=1] = call_function[target=zeros_like](args = (%x, None), "
                  "kwargs = {})") != std::string::npos);
  CHECK(text.find("%new_empty : float32[?, 2] [num_users=1] = call_method[target=new_empty](args = (%x, [%size, 2], "
                  "None), kwargs = {})") != std::string::npos);
  CHECK(text.find("%cat : float32[?, 5]") != std::string::npos);
  const Tensor x = randn({2, 3});
  const Tensor traced = Interpreter(model, g).run({x}).to_tensor();
  check_tensor(traced, DType::float32, {2, 5}, {1.5, 1.5, 1.5, 0, 0, 1.5, 1.5, 1.5, 0, 0});
  CHECK(testing::max_rel_error(traced, model.call({x}).to_tensor()) == 0.0);
}

#include "support/checks.hpp"

using namespace symtrace;

TEST_CASE("values hold each kind and print it as Python would") {
  CHECK(to_string(Value()) == "None");
  CHECK(to_string(Value(true)) == "True");
  CHECK(to_string(Value(3)) == "3");
  CHECK(to_string(Value(2.5)) == "2.5");
  CHECK(to_string(Value(1.0)) == "1.0");
  CHECK(to_string(Value(1e-5)) == "1e-05");
  CHECK(to_string(Value(-INFINITY)) == "-inf");
  CHECK(to_string(Scalar(3.0)) == "3.0");
  CHECK(to_string(Scalar(3)) == "3");
  CHECK(to_string(Value("x")) == "'x'");
  CHECK(to_string(Value(DType::int64)) == "int64");
  CHECK(to_string(Value(IntList{1, 2})) == "[1, 2]");
  CHECK(to_string(Value(ValueList{Value(1), Value(), Value("a")})) == "[1, None, 'a']");
  CHECK(Value(7).kind() == Value::Kind::integer);
  CHECK(Value(7u).is_int());
  CHECK(Value(1.0f).is_double());
  CHECK(Value(std::optional<std::int64_t>{}).is_none());
  CHECK(Value(std::optional<std::int64_t>{4}).to_int() == 4);
}

TEST_CASE("checked accessors name the expected and the actual type") {
  CHECK_THROWS_WITH_AS((void)Value("x").to_int(), "expected a value of type int, got str ('x')", std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)Value(1.5).to_tensor(), "expected a value of type Tensor, got float (1.5)",
                       std::invalid_argument);
  CHECK(Value(3).to_double() == 3.0);
  CHECK(Value(true).to_int() == 1);
  CHECK_THROWS_AS((void)Value(2.0).to_int(), std::invalid_argument);
}

TEST_CASE("lists convert to int, float and tensor lists") {
  const Tensor a = zeros({2});
  const Tensor b = ones({3});
  const Value v(TensorList{a, b});
  const TensorList back = v.to_tensor_list();
  REQUIRE(back.size() == 2);
  CHECK(back[1].shares_storage_with(b));
  CHECK(Value(IntList{3, -1}).to_int_list() == IntList{3, -1});
  CHECK(Value(std::vector<double>{0.5, 2}).to_double_list() == std::vector<double>{0.5, 2});
  CHECK_THROWS_AS((void)Value(ValueList{Value(1), Value("a")}).to_int_list(), std::invalid_argument);
}

#include "support/checks.hpp"

using namespace symtrace;

TEST_CASE("a schema parses types, lists, optionals, defaults and keyword-only arguments") {
  const OpSchema s = parse_schema(
      "conv(Tensor input, Tensor? bias=None, int[] stride=[1, 1], float eps=1e-05, *, str mode='same', "
      "float[]? scales=None) -> Tensor");
  CHECK(s.name == "conv");
  REQUIRE(s.args.size() == 6);
  CHECK(s.args[0].type == ArgType::Tensor);
  CHECK_FALSE(s.args[0].default_value.has_value());
  CHECK(s.args[1].is_optional);
  CHECK(s.args[1].default_value->is_none());
  CHECK(s.args[2].is_list);
  CHECK(s.args[2].default_value->to_int_list() == IntList{1, 1});
  CHECK(s.args[3].default_value->to_double() == 1e-5);
  CHECK(s.args[4].kwarg_only);
  CHECK(s.args[4].default_value->to_string_ref() == "same");
  CHECK(s.args[5].type == ArgType::float_);
  CHECK(s.args[5].is_list);
  CHECK(s.args[5].is_optional);
  CHECK_FALSE(s.returns_list());
  CHECK(s.find_arg("eps") == 3u);
  CHECK_FALSE(s.find_arg("nope").has_value());
}

TEST_CASE("every registered schema prints back to text that parses to the same schema") {
  for (const OpDef* op : OpRegistry::instance().ops()) {
    const std::string text = to_string(op->schema);
    CAPTURE(text);
    const OpSchema again = parse_schema(text);
    CHECK(to_string(again) == text);
    CHECK(again.args.size() == op->schema.args.size());
  }
  CHECK(to_string(parse_schema("chunk(Tensor self, int chunks, int dim=0) -> Tensor[]")) ==
        "chunk(Tensor self, int chunks, int dim=0) -> Tensor[]");
  CHECK(to_string(parse_schema("f(Tensor|Scalar a, *, bool b=True) -> Tensor")) ==
        "f(Tensor|Scalar a, *, bool b=True) -> Tensor");
  // Size arithmetic: qualified names (fx's `operator.mul`) and number results.
  const OpSchema mul = parse_schema("operator.mul(int a, int b) -> int");
  CHECK(mul.name == "operator.mul");
  CHECK(mul.returns == ReturnType::int_);
  CHECK(mul.returns_number());
  CHECK(to_string(mul) == "operator.mul(int a, int b) -> int");
  CHECK(parse_schema("operator.lt(int a, int b) -> bool").returns == ReturnType::bool_);
  // Numbers of either kind, proxies included: an int or a float as the operands decide.
  const OpSchema add = parse_schema("operator.add(number a, number b) -> number");
  CHECK(add.returns == ReturnType::number);
  CHECK(add.returns_number());
  CHECK(to_string(add) == "operator.add(number a, number b) -> number");
  CHECK(parse_schema("operator.truediv(number a, number b) -> float").returns == ReturnType::float_);
  CHECK(OpSchema::accepts(add.args[0], Value(2.5)));
  CHECK(OpSchema::accepts(add.args[0], Value(true)));
  CHECK_FALSE(OpSchema::accepts(add.args[0], Value("2")));
  CHECK_FALSE(OpSchema::accepts(add.args[0], Value(zeros({1}))));
  CHECK(parse_schema("f(Tensor x) -> Tensor[]").returns_list());
  const OpSchema floats = parse_schema("f(float x=1.0, float[] s=[2.0, 0.5]) -> Tensor");
  CHECK(to_string(floats) == "f(float x=1.0, float[] s=[2.0, 0.5]) -> Tensor");
  CHECK(parse_schema(to_string(floats)).args[0].default_value->is_double());
}

TEST_CASE("schema syntax errors name the schema and the column") {
  CHECK_THROWS_WITH_AS(parse_schema("f(Tensr x) -> Tensor"),
                       "invalid op schema 'f(Tensr x) -> Tensor': unknown argument type at column 3",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_schema("f(Tensor x) -> double"),
                       doctest::Contains("expected the return type Tensor, Tensor[], int, bool, float or number"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_schema("f(Tensor x.y) -> Tensor"), doctest::Contains("expected ')' at column 11"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_schema(".f(Tensor x) -> Tensor"), doctest::Contains("expected op name at column 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_schema("f(int a=1, int b) -> Tensor"),
                       doctest::Contains("argument 'b' without a default follows one with a default"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_schema("f(str s='abc) -> Tensor"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_schema("f(Tensor x, bool keepdim=0) -> Tensor"),
                       doctest::Contains("the default of 'keepdim' does not have its type bool"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_schema("f(int x=None) -> Tensor"),
                       doctest::Contains("the default of 'x' does not have its type int"), std::invalid_argument);
}

TEST_CASE("schema type checks accept exactly the declared kinds") {
  const OpSchema s = parse_schema("f(Tensor a, Tensor|Scalar b, int[] c, Scalar? d, float e) -> Tensor");
  CHECK(OpSchema::accepts(s.args[0], Value(zeros({1}))));
  CHECK_FALSE(OpSchema::accepts(s.args[0], Value(Tensor())));
  CHECK_FALSE(OpSchema::accepts(s.args[0], Value(1)));
  CHECK(OpSchema::accepts(s.args[1], Value(1.5)));
  CHECK(OpSchema::accepts(s.args[1], Value(zeros({1}))));
  CHECK(OpSchema::accepts(s.args[2], Value(IntList{1, 2})));
  CHECK_FALSE(OpSchema::accepts(s.args[2], Value(ValueList{Value(1), Value(2.0)})));
  CHECK(OpSchema::accepts(s.args[3], Value()));
  CHECK_FALSE(OpSchema::accepts(s.args[2], Value()));
  CHECK(OpSchema::accepts(s.args[4], Value(2)));
}

#include "support/checks.hpp"

using namespace symtrace;

TEST_CASE("dtypes print and parse under PyTorch's names") {
  CHECK(fmt::format("{}", DType::float32) == "float32");
  CHECK(fmt::format("{}", DType::int64) == "int64");
  CHECK(fmt::format("{}", DType::bool_) == "bool");
  CHECK(fmt::format("[{:>9}]", DType::int64) == "[    int64]");
  CHECK(parse_dtype("float") == DType::float32);
  CHECK(parse_dtype("long") == DType::int64);
  CHECK(parse_dtype("bool") == DType::bool_);
  CHECK_FALSE(parse_dtype("float16").has_value());
}

TEST_CASE("type promotion follows bool < int64 < float32") {
  CHECK(promote_types(DType::bool_, DType::int64) == DType::int64);
  CHECK(promote_types(DType::int64, DType::float32) == DType::float32);
  CHECK(promote_types(DType::float32, DType::bool_) == DType::float32);
  CHECK(promote_types(DType::bool_, DType::bool_) == DType::bool_);
  CHECK(element_size(DType::float32) == 4);
  CHECK(element_size(DType::int64) == 8);
  CHECK(element_size(DType::bool_) == 1);
}

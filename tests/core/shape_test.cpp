#include "support/checks.hpp"

using namespace symtrace;

TEST_CASE("a shape prints known dims as numbers and unknown dims as ?") {
  const Shape s{2, Dim::unknown(), 4};
  CHECK(to_string(s) == "[2, ?, 4]");
  CHECK(fmt::format("{}", Shape{}) == "[]");
  CHECK(s.rank() == 3);
  CHECK_FALSE(s.is_fully_known());
  CHECK(Shape{2, 3}.is_fully_known());
}

TEST_CASE("numel is known when every dim is, or when a dim is known to be zero") {
  CHECK(Shape{2, 3, 4}.numel() == 24);
  CHECK(Shape{}.numel() == 1);
  CHECK_FALSE(Shape{2, Dim::unknown()}.numel().has_value());
  CHECK(Shape{0, Dim::unknown()}.numel() == 0);
  CHECK(Shape{Dim::unknown(), 0}.numel() == 0);
  // A count that does not fit in 64 bits (a shape read from a file can hold anything) is unknown.
  CHECK_FALSE(Shape{std::int64_t{1} << 40, std::int64_t{1} << 40}.numel().has_value());
  CHECK(Shape{std::int64_t{1} << 40, std::int64_t{1} << 40, 0}.numel() == 0);
}

TEST_CASE("dim arithmetic propagates unknown") {
  CHECK(Dim(2) + Dim(3) == Dim(5));
  CHECK_FALSE((Dim(2) + Dim::unknown()).is_known());
  CHECK(Dim(4) * Dim(5) == Dim(20));
  CHECK_FALSE((Dim::unknown() * Dim(3)).is_known());
  CHECK(Dim(-7) == Dim::unknown());
}

TEST_CASE("value() of an unknown dim is an internal error, sizes() names it") {
  CHECK_THROWS_AS((void)Dim::unknown().value(), InternalError);
  CHECK_THROWS_AS((void)Shape({1, Dim::unknown()}).sizes(), InternalError);
  CHECK(Shape{1, 2}.sizes() == IntList{1, 2});
}

TEST_CASE("shapes with more than four dims spill to the heap and stay equal-comparable") {
  Shape big{1, 2, 3, 4, 5, 6};
  Shape copy = big;
  CHECK(copy == big);
  copy.erase(0);
  CHECK(to_string(copy) == "[2, 3, 4, 5, 6]");
  copy.insert(2, Dim::unknown());
  CHECK(to_string(copy) == "[2, 3, ?, 4, 5, 6]");
}

// SymExpr: sizes as canonical expressions over named dims. Equal expressions are one handle;
// every canonical form evaluates as the expression it came from (checked on random expressions
// against plain integer arithmetic); printing does not depend on the order of construction.
#include "symtrace/core/sym_expr.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;

namespace {

std::int64_t py_floordiv(std::int64_t a, std::int64_t k) {
  std::int64_t q = a / k;
  if (a % k != 0 && a < 0) --q;
  return q;
}

}  // namespace

TEST_CASE("a convolution's output size is one canonical expression, whichever way it is written") {
  const SymExpr h = SymExpr::symbol("H");
  const SymExpr out = floordiv(h + SymExpr(2) * 3 - 7, 2) + 1;
  CHECK(out == floordiv(h - 1, 2) + 1);
  CHECK(out == floordiv(h + 1, 2));
  CHECK(to_string(out) == "(H + 1)//2");
  for (std::int64_t v : {7, 8, 224, 225}) CHECK(out.evaluate({{"H", v}}) == py_floordiv(v + 6 - 7, 2) + 1);
  CHECK(out.symbols() == std::vector<std::string>{"H"});
}

TEST_CASE("like terms combine, products distribute, and what cancels is the constant 0") {
  const SymExpr n = SymExpr::symbol("N");
  CHECK(n + n == SymExpr(2) * n);
  CHECK(n - n == SymExpr());
  CHECK((n - n).constant_value() == 0);
  CHECK((n - n).id() == 0);
  CHECK((n + 1) * (n - 1) == n * n - 1);
  CHECK(to_string((n + 1) * (n - 1)) == "N*N - 1");
  CHECK(to_string(SymExpr(3) * n - 4) == "3*N - 4");
  CHECK(to_string(-n + 2) == "-N + 2");
  CHECK(to_string(SymExpr(7)) == "7");
  CHECK(SymExpr(7).constant_value() == 7);
  CHECK_FALSE(n.is_constant());
}

TEST_CASE("floor divisions split off what the divisor divides, nest, and fold constants") {
  const SymExpr h = SymExpr::symbol("H");
  const SymExpr w = SymExpr::symbol("W");
  CHECK(floordiv(SymExpr(2) * h + 3, 2) == h + 1);
  CHECK(floordiv(SymExpr(4) * h + 2, 4) == h);
  CHECK(floordiv(SymExpr(2) * h + 1, 4) == floordiv(h, 2));
  CHECK(floordiv(floordiv(h, 2), 2) == floordiv(h, 4));
  CHECK(floordiv(h, 1) == h);
  CHECK(floordiv(SymExpr(17), 5) == SymExpr(3));
  CHECK(floordiv(SymExpr(-17), 5) == SymExpr(-4));
  CHECK(to_string(floordiv(h, 4)) == "H//4");
  CHECK(to_string(SymExpr(3) * floordiv(h, 4)) == "3*(H//4)");
  CHECK(to_string(floordiv(h, 4) * floordiv(w, 4)) == "(H//4)*(W//4)");
  CHECK(to_string(w - floordiv(h, 4)) == "W - H//4");
  CHECK(to_string(-floordiv(h, 4)) == "-(H//4)");
  CHECK(to_string(SymExpr(1) - floordiv(h, 4)) == "-(H//4) + 1");
  CHECK(mod(SymExpr(4) * h, 4) == SymExpr());
  CHECK(to_string(mod(h, 4)) == "H % 4");  // stored as H - 4*(H//4), printed as written
  for (std::int64_t v : {-9, -1, 0, 3, 31, 32, 33}) CHECK(mod(h, 4).evaluate({{"H", v}}) == v - 4 * py_floordiv(v, 4));
}

TEST_CASE("a min or max of expressions a constant apart is one of them; otherwise it is commutative") {
  const SymExpr n = SymExpr::symbol("N");
  const SymExpr h = SymExpr::symbol("H");
  CHECK(min(n, n + 2) == n);
  CHECK(max(n, n + 2) == n + 2);
  CHECK(min(n, n) == n);
  CHECK(min(SymExpr(3), SymExpr(5)) == SymExpr(3));
  CHECK(min(n, h) == min(h, n));
  CHECK(max(n, h) == max(h, n));
  CHECK(min(n, h) != max(n, h));
  CHECK(to_string(min(n, 4)) == "min(4, N)");
  CHECK(to_string(max(h, n) * 2) == "2*max(H, N)");
  CHECK(min(n, 4).evaluate({{"N", 9}}) == 4);
  CHECK(max(n, h).evaluate({{"N", 2}, {"H", 5}}) == 5);
}

TEST_CASE("printing sorts by content, not by the order the dims were first named") {
  const SymExpr w = SymExpr::symbol("W_late_first");
  const SymExpr h = SymExpr::symbol("H_late_first");
  CHECK(to_string(w + h) == "H_late_first + W_late_first");
  CHECK(to_string(h + w) == "H_late_first + W_late_first");
  const SymExpr n = SymExpr::symbol("N");
  CHECK(to_string(n * w * h + n) == "H_late_first*N*W_late_first + N");
}

TEST_CASE("bad dims, divisors, bindings and overflows are refused, saying what was wrong") {
  CHECK_THROWS_WITH_AS((void)SymExpr::symbol("3x"), doctest::Contains("'3x' cannot name a dim"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)SymExpr::symbol(""), doctest::Contains("'' cannot name a dim"), std::invalid_argument);
  const SymExpr n = SymExpr::symbol("N");
  CHECK_THROWS_WITH_AS((void)floordiv(n, 0), doctest::Contains("floor division of a size by 0"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)mod(n, -2), doctest::Contains("modulo of a size by -2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)(n + 1).evaluate({{"H", 2}}), doctest::Contains("needs a value for 'N'"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)(SymExpr(std::numeric_limits<std::int64_t>::max()) + 1),
                       doctest::Contains("a size expression overflows 64 bits"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)(n * std::numeric_limits<std::int64_t>::max()).evaluate({{"N", 2}}),
                       doctest::Contains("overflows"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)SymExpr::from_id(std::numeric_limits<std::uint32_t>::max()),
                       doctest::Contains("no size expression has the id"), std::invalid_argument);
  CHECK(SymExpr::from_id((n + 1).id()) == n + 1);
}

TEST_CASE("random expressions: each canonical form evaluates as the expression it came from, reads back from its text, "
          "and lies within its bounds") {
  // Unbounded dims: the ranges fold nothing, so every rule of the canonical form is exercised.
  constexpr SymRange any{-SymRange::unbounded, SymRange::unbounded};
  const SymExpr h = SymExpr::symbol("H", any);
  const SymExpr w = SymExpr::symbol("W", any);
  const auto range_of = [&](std::string_view) { return any; };
  struct Built {
    SymExpr expr;
    std::function<std::int64_t(std::int64_t, std::int64_t)> eval;
  };
  std::mt19937 rng(7);
  std::function<Built(int)> build = [&](int depth) -> Built {
    const int pick = depth == 0 ? static_cast<int>(rng() % 3) : static_cast<int>(rng() % 10);
    if (pick == 0) return {h, [](std::int64_t a, std::int64_t) { return a; }};
    if (pick == 1) return {w, [](std::int64_t, std::int64_t b) { return b; }};
    if (pick == 2) {
      const std::int64_t c = static_cast<std::int64_t>(rng() % 11) - 5;
      return {SymExpr(c), [c](std::int64_t, std::int64_t) { return c; }};
    }
    Built x = build(depth - 1);
    if (pick >= 6) {
      const std::int64_t k = static_cast<std::int64_t>(rng() % 6) + 1;
      if (pick == 6) return {floordiv(x.expr, k), [x, k](std::int64_t a, std::int64_t b) { return py_floordiv(x.eval(a, b), k); }};
      if (pick == 7) {
        return {mod(x.expr, k), [x, k](std::int64_t a, std::int64_t b) {
                  const std::int64_t v = x.eval(a, b);
                  return v - k * py_floordiv(v, k);
                }};
      }
    }
    Built y = build(depth - 1);
    switch (pick) {
      case 3: return {x.expr + y.expr, [x, y](std::int64_t a, std::int64_t b) { return x.eval(a, b) + y.eval(a, b); }};
      case 4: return {x.expr - y.expr, [x, y](std::int64_t a, std::int64_t b) { return x.eval(a, b) - y.eval(a, b); }};
      case 5:
        if (depth > 1) {  // products of products would overflow the reference's int64
          const std::int64_t c = static_cast<std::int64_t>(rng() % 7) - 3;
          return {x.expr * c, [x, c](std::int64_t a, std::int64_t b) { return x.eval(a, b) * c; }};
        }
        return {x.expr * y.expr, [x, y](std::int64_t a, std::int64_t b) { return x.eval(a, b) * y.eval(a, b); }};
      case 8: return {min(x.expr, y.expr), [x, y](std::int64_t a, std::int64_t b) { return std::min(x.eval(a, b), y.eval(a, b)); }};
      default: return {max(x.expr, y.expr), [x, y](std::int64_t a, std::int64_t b) { return std::max(x.eval(a, b), y.eval(a, b)); }};
    }
  };
  int checked = 0;
  for (int i = 0; i < 400; ++i) {
    const Built e = build(4);
    CAPTURE(to_string(e.expr));
    CHECK(SymExpr::parse(to_string(e.expr), range_of) == e.expr);
    const SymRange b = e.expr.bounds();
    for (std::int64_t a : {-7, 0, 1, 5, 32, 33}) {
      for (std::int64_t c : {-3, 2, 17}) {
        const std::int64_t v = e.expr.evaluate({{"H", a}, {"W", c}});
        CHECK(v == e.eval(a, c));
        CHECK(b.contains(v));
        ++checked;
      }
    }
  }
  CHECK(checked == 400 * 18);
}

TEST_CASE("threads building the same expressions get the same handles") {
  std::vector<std::uint32_t> ids(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    threads.emplace_back([&ids, t] {
      SymExpr e = SymExpr::symbol("Threaded");
      for (int i = 0; i < 200; ++i) e = floordiv(e + i, 2) + min(e, SymExpr(i)) - e;
      ids[t] = e.id();
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(std::all_of(ids.begin(), ids.end(), [&](std::uint32_t id) { return id == ids[0]; }));
}

TEST_CASE("a dim's range bounds its expressions and folds the mins and maxes it decides") {
  const SymExpr n = SymExpr::symbol("N");  // 1..
  const SymExpr h = SymExpr::symbol("H", {32, 1024});
  CHECK(n.bounds() == SymRange{1, SymRange::unbounded});
  CHECK((floordiv(h - 1, 2) + 1).bounds() == SymRange{16, 512});
  CHECK((h * n).bounds() == SymRange{32, SymRange::unbounded});
  CHECK((-h).bounds() == SymRange{-1024, -32});
  CHECK(min(h, SymExpr(2000)) == h);
  CHECK(max(h, SymExpr(7)) == h);
  CHECK(to_string(min(h, SymExpr(100))) == "min(100, H)");
  CHECK(max(n, SymExpr(0)) == n);
  CHECK(SymFact{n, SymRel::gt, SymExpr(0)}.decide() == true);
  CHECK(SymFact{n, SymRel::gt, SymExpr(4)}.decide() == std::nullopt);
  CHECK(SymFact{h, SymRel::lt, SymExpr(32)}.decide() == false);
  CHECK(SymFact{h, SymRel::eq, SymExpr(5)}.decide() == false);
  CHECK(SymFact{h * h, SymRel::ge, SymExpr(1024)}.decide() == true);
  // The range is part of the dim: N in 1..8 is another dim than N.
  CHECK(SymExpr::symbol("N", {1, 8}) != n);
  CHECK(to_string(SymExpr::symbol("N", {1, 8})) == "N");
  CHECK_THROWS_WITH_AS((void)SymExpr::symbol("N", {5, 4}), "dim 'N' has the empty range 5..4: give lo <= hi",
                       std::invalid_argument);
  CHECK(to_string(SymRange{32, 1024}) == "32..1024");
  CHECK(to_string(SymRange{}) == "1..");
}

TEST_CASE("modulo prints as it was written, and facts and expressions read back from their text") {
  const SymExpr h = SymExpr::symbol("H", {32, 1024});
  const SymExpr w = SymExpr::symbol("W");
  const auto range_of = [&](std::string_view name) { return name == "H" ? SymRange{32, 1024} : SymRange{}; };
  CHECK(to_string(mod(h, 32)) == "H % 32");
  CHECK(to_string(mod(h * w, 4)) == "(H*W) % 4");
  CHECK(to_string(mod(h, 2) + w) == "W + H % 2");
  const SymFact f{mod(h * w, 32), SymRel::eq, SymExpr(0)};
  CHECK(to_string(f) == "(H*W) % 32 == 0");
  CHECK(SymFact::parse(to_string(f), range_of) == f);
  CHECK(SymExpr::parse("(H + 2*3 - 7)//2 + 1", range_of) == floordiv(h - 1, 2) + 1);
  CHECK(SymExpr::parse("-(H//4) + max(W, 3)", range_of) == max(w, SymExpr(3)) - floordiv(h, 4));
  CHECK(SymFact{h, SymRel::ne, w}.holds({{"H", 32}, {"W", 5}}));
  CHECK_THROWS_WITH_AS((void)SymExpr::parse("H +", range_of),
                       "bad size expression 'H +': at position 4, expected a number, a dim's name, min, max or '(', "
                       "found 'the end'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)SymExpr::parse("H // W", range_of),
                       "bad size expression 'H // W': at position 6, expected a positive integer divisor, found 'W'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)SymFact::parse("H + 1", range_of),
                       "bad size fact 'H + 1': expected two sizes compared by ==, !=, <, <=, > or >=",
                       std::invalid_argument);
}

TEST_CASE("exact division of polynomials: by a constant or by one term") {
  const SymExpr n = SymExpr::symbol("N"), h = SymExpr::symbol("H"), w = SymExpr::symbol("W");
  CHECK(divide_exactly(n * h * w * 2, n * w) == h * 2);
  CHECK(divide_exactly(n * 12, SymExpr(4)) == n * 3);
  CHECK(divide_exactly(n * 12 + 4, SymExpr(4)) == n * 3 + 1);
  CHECK(divide_exactly(n * 6, SymExpr(4)) == std::nullopt);
  CHECK(divide_exactly(n * h + h, h) == n + 1);
  CHECK(divide_exactly(n * h + 1, h) == std::nullopt);
  CHECK(divide_exactly(n, n + 1) == std::nullopt);
}

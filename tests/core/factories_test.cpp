#include "support/checks.hpp"

using namespace symtrace;
using testing::check_tensor;

TEST_CASE("constant factories fill every element") {
  check_tensor(zeros({2, 2}), DType::float32, {2, 2}, {0, 0, 0, 0});
  check_tensor(ones({3}, DType::int64), DType::int64, {3}, {1, 1, 1});
  check_tensor(full({2}, 2.5), DType::float32, {2}, {2.5, 2.5});
  check_tensor(full({2}, true), DType::bool_, {2}, {1, 1});
  check_tensor(full({1}, 7, DType::float32), DType::float32, {1}, {7});
  check_tensor(zeros({0, 3}), DType::float32, {0, 3}, {});
  check_tensor(scalar_tensor(3), DType::int64, {}, {3});
}

TEST_CASE("arange counts like Python's range, in int64 or float32") {
  check_tensor(arange(4), DType::int64, {4}, {0, 1, 2, 3});
  check_tensor(arange(1, 10, 3), DType::int64, {3}, {1, 4, 7});
  check_tensor(arange(5, 0, -2), DType::int64, {3}, {5, 3, 1});
  check_tensor(arange(0.0, 1.0, 0.25), DType::float32, {4}, {0, 0.25, 0.5, 0.75});
  check_tensor(arange(3, 3, 1), DType::int64, {0}, {});
  check_tensor(arange(3, DType::float32), DType::float32, {3}, {0, 1, 2});
  CHECK_THROWS_WITH_AS((void)arange(0.0, 1e300, 1.0), doctest::Contains("would make 1e+300 elements, too many to allocate"), std::invalid_argument);
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)arange(0, 5, 0), doctest::Contains(fmt::format("factories_test.cpp:{}: arange(): step must be finite and nonzero", line).c_str()), std::invalid_argument);
}

TEST_CASE("tensor() takes values with an optional shape that they must fill") {
  check_tensor(tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}), DType::float32, {2, 2}, {1, 2, 3, 4});
  check_tensor(tensor({1, 2, 3}), DType::int64, {3}, {1, 2, 3});
  check_tensor(tensor(std::vector<bool>{true, false, true}), DType::bool_, {3}, {1, 0, 1});
  check_tensor(tensor({9.0}), DType::float32, {1}, {9});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)tensor({1.f, 2.f, 3.f}, {2, 2}), doctest::Contains(fmt::format("factories_test.cpp:{}: tensor(): 3 values do not fill shape [2, 2] (4 elements)", line).c_str()), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)zeros({2, -1}), doctest::Contains("zeros(): size -1 at dim 1 of shape [2, -1] is negative"), std::invalid_argument);
}

TEST_CASE("random tensors are deterministic for a seed and differ between seeds") {
  Generator g1(42), g2(42), g3(43);
  const Tensor a = randn({1000}, g1);
  const Tensor b = randn({1000}, g2);
  const Tensor c = randn({1000}, g3);
  CHECK(a.to_vector<float>() == b.to_vector<float>());
  CHECK(a.to_vector<float>() != c.to_vector<float>());
  manual_seed(5);
  const Tensor d = rand({4});
  manual_seed(5);
  CHECK(rand({4}).to_vector<float>() == d.to_vector<float>());
}

TEST_CASE("randn has mean 0 and variance 1, rand lies in [0, 1)") {
  Generator gen(7);
  const auto n = randn({20000}, gen).to_vector<double>();
  double mean = 0, var = 0;
  for (double v : n) mean += v;
  mean /= static_cast<double>(n.size());
  for (double v : n) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n.size());
  CHECK(std::abs(mean) < 0.03);
  CHECK(std::abs(var - 1) < 0.05);
  const auto u = rand({20000}, gen).to_vector<double>();
  CHECK(*std::min_element(u.begin(), u.end()) >= 0.0);
  CHECK(*std::max_element(u.begin(), u.end()) < 1.0);
}

TEST_CASE("the first samples for seed 0 are pinned, so models are reproducible across builds") {
  // std::mt19937_64's output is fixed by the standard and the distributions are symtrace's own.
  Generator gen(0);
  const auto v = randn({3}, gen).to_vector<float>();
  REQUIRE(v.size() == 3);
  CHECK(v[0] == doctest::Approx(1.91280448).epsilon(1e-6));
  CHECK(v[1] == doctest::Approx(-0.0944795609).epsilon(1e-6));
  CHECK(v[2] == doctest::Approx(-2.07940793).epsilon(1e-6));
  Generator fresh(0);
  CHECK(fresh.uniform() == doctest::Approx(0.159793317).epsilon(1e-7));
}

#include "support/checks.hpp"

using namespace symtrace;
using testing::transposed;
using testing::check_tensor;

TEST_CASE("dropout gives the same mask after the same manual_seed") {
  const Tensor x = ones({64});
  manual_seed(7);
  const auto first = dropout(x, 0.5).to_vector<float>();
  manual_seed(7);
  const auto second = dropout(x, 0.5).to_vector<float>();
  CHECK(first == second);
  const auto third = dropout(x, 0.5).to_vector<float>();  // the generator has moved on
  CHECK(first != third);
}

TEST_CASE("dropout zeroes about p of the elements and scales the kept ones by 1/(1-p)") {
  Generator gen(1234);
  const Tensor x = add(rand({100, 100}, gen), 1.0);  // in [1, 2): never zero before dropout
  const auto in = x.to_vector<float>();
  for (const double p : {0.3, 0.8}) {
    CAPTURE(p);
    manual_seed(42);
    const Tensor y = dropout(x, p);
    CHECK(y.shape() == x.shape());
    const auto out = y.to_vector<float>();
    int zeroed = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0.0f) {
        ++zeroed;
      } else if (std::abs(out[i] - in[i] / (1 - p)) > 1e-5 * in[i] / (1 - p)) {
        FAIL_CHECK(fmt::format("element {}: kept {} but input / (1 - p) is {}", i, out[i], in[i] / (1 - p)));
      }
    }
    // 10000 draws: the standard deviation of the count is at most 50, so 250 is 5 sigma.
    CHECK(std::abs(zeroed - p * 10000) < 250);
  }
}

TEST_CASE("dropout is the identity when not training or when p is 0") {
  const Tensor x = tensor({1.f, -2.f, 3.f, 4.f}, {2, 2});
  check_tensor(dropout(x, 0.5, false), DType::float32, {2, 2}, {1, -2, 3, 4});
  check_tensor(dropout(x, 1.0, false), DType::float32, {2, 2}, {1, -2, 3, 4});
  check_tensor(dropout(x, 0.0), DType::float32, {2, 2}, {1, -2, 3, 4});
}

TEST_CASE("dropout with p = 1 zeroes every element") {
  check_tensor(dropout(tensor({1.f, -2.f, 3.f, 4.f}, {2, 2}), 1.0), DType::float32, {2, 2}, {0, 0, 0, 0});
}

TEST_CASE("dropout draws its mask in logical row-major order on a non-contiguous input") {
  // The transpose of [[1, 2], [3, 4], [5, 6]] is [[1, 3, 5], [2, 4, 6]]. Each output element is
  // either 0 or twice the transposed input at its position, and the mask is the one the same seed
  // gives for the contiguous copy.
  const Tensor x = transposed(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {3, 2}));
  REQUIRE_FALSE(x.is_contiguous());
  manual_seed(3);
  const auto strided = dropout(x, 0.5).to_vector<float>();
  manual_seed(3);
  const auto contiguous = dropout(tensor({1.f, 3.f, 5.f, 2.f, 4.f, 6.f}, {2, 3}), 0.5).to_vector<float>();
  CHECK(strided == contiguous);
  const std::vector<float> logical{1, 3, 5, 2, 4, 6};
  for (std::size_t i = 0; i < strided.size(); ++i) CHECK((strided[i] == 0.0f || strided[i] == 2 * logical[i]));
}

TEST_CASE("dropout handles size-0 and size-1 dims") {
  check_tensor(dropout(zeros({0, 3}), 0.5), DType::float32, {0, 3}, {});
  check_tensor(dropout(zeros({3, 0}), 1.0), DType::float32, {3, 0}, {});
  check_tensor(dropout(scalar_tensor(2.f), 1.0), DType::float32, {}, {0});
  manual_seed(5);
  const Tensor y = dropout(full({1, 1, 4}, 3.f), 0.75);
  CHECK(y.shape() == Shape{1, 1, 4});
  for (const float v : y.to_vector<float>()) CHECK((v == 0.0f || v == doctest::Approx(12.0)));
}

TEST_CASE("dropout rejects a probability outside [0, 1]") {
  const Tensor x = zeros({2, 3});
  for (const double p : {1.5, -0.1}) {
    CAPTURE(p);
    static constexpr int line = __LINE__ + 1;
    const auto bad = [&] { return dropout(x, p); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("_test.cpp:{}: dropout(): ", line).c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("dropout probability p must be between 0 and 1, got {} "
                                                              "(input of shape [2, 3])",
                                                              p)
                                                      .c_str()),
                         OpError);
  }
}

TEST_CASE("dropout rejects an integer input") {
  static constexpr int line = __LINE__ + 1;
  const auto bad = [] { return dropout(zeros({4}, DType::int64), 0.5, false); };
  const auto expected = fmt::format(
      "_test.cpp:{}: dropout(): argument 'input' must be a floating-point tensor, got int64 of shape [4]", line);
  CHECK_THROWS_WITH_AS(bad(), doctest::Contains(expected.c_str()), OpError);
}

TEST_CASE("dropout's meta function agrees with its kernel over random shapes") {
  Generator gen(1234);
  SUBCASE("deterministic calls (train=False or p=0)") {
    for (int i = 0; i < 50; ++i) {
      const Tensor x = randn(testing::random_shape(gen, 0, 4), gen);
      const bool train = (gen.bits() & 1) != 0;
      const double p = train ? 0.0 : gen.uniform();
      testing::check_meta_agrees("dropout", {x, p, train}, {}, gen);
    }
  }
  SUBCASE("random calls keep the shape") {
    for (int i = 0; i < 50; ++i) {
      const Tensor x = randn(testing::random_shape(gen, 0, 4), gen);
      testing::check_meta_agrees("dropout", {x}, {{"p", static_cast<double>(gen.uniform())}}, gen);
    }
  }
}

#include "support/checks.hpp"

#include <numeric>

using namespace symtrace;
using testing::error_at;
using testing::uniform_int;
using testing::iota;
using testing::range;
using testing::check_meta_agrees;
using testing::check_tensor;
using testing::random_shape;

namespace {

// Either `dim` or its negative form.
std::int64_t maybe_negative(std::int64_t dim, std::int64_t rank, Generator& gen) {
  return gen.bits() & 1 ? dim - rank : dim;
}

Tensor random_tensor(const IntList& shape, Generator& gen) {
  const Tensor x = randn(shape, gen);
  switch (gen.bits() % 3) {
    case 0: return x;
    case 1: return x.to(DType::int64);
    default: return x.gt(0);
  }
}

Tensor symbolic(Shape shape, std::uint32_t node = 1) {
  return Tensor::symbolic(TensorMeta{DType::float32, std::move(shape)}, SymbolicRef{1, node});
}

OutputMeta meta_of(std::string_view op, ValueList args) {
  const OpDef& def = OpRegistry::instance().get(op);
  const ValueList bound = bind_arguments(def, std::move(args), {}, std::source_location::current());
  return infer_meta(def, bound);
}

std::vector<Shape> shapes_of(const TensorList& tensors) {
  std::vector<Shape> out;
  for (const Tensor& t : tensors) out.push_back(t.shape());
  return out;
}

}  // namespace

// ---- cat -----------------------------------------------------------------------------------

TEST_CASE("cat joins tensors along a dim into a new tensor") {
  const Tensor a = iota({2, 2});
  const Tensor b = tensor({10.f, 11.f}, {2, 1});
  const Tensor c = cat({a, b}, 1);
  check_tensor(c, DType::float32, {2, 3}, {0, 1, 10, 2, 3, 11});
  CHECK_FALSE(c.shares_storage_with(a));
  check_tensor(cat({a, b}, -1), DType::float32, {2, 3}, {0, 1, 10, 2, 3, 11});
  check_tensor(cat({a, tensor({4.f, 5.f}, {1, 2})}), DType::float32, {3, 2}, range(0, 6));
  check_tensor(cat({a.transpose(0, 1), b.transpose(0, 1)}), DType::float32, {3, 2}, {0, 2, 1, 3, 10, 11});
  const Tensor single = cat({a});
  check_tensor(single, DType::float32, {2, 2}, range(0, 4));
  CHECK_FALSE(single.shares_storage_with(a));
}

TEST_CASE("cat promotes dtypes and accepts size-0 pieces") {
  check_tensor(cat({tensor({1, 2}), tensor({0.5f})}), DType::float32, {3}, {1, 2, 0.5});
  check_tensor(cat({tensor({true, false}), tensor({7})}), DType::int64, {3}, {1, 0, 7});
  check_tensor(cat({iota({2, 0}), iota({2, 2})}, 1), DType::float32, {2, 2}, range(0, 4));
  check_tensor(cat({iota({0, 2}), iota({0, 2})}), DType::float32, {0, 2}, {});
}

TEST_CASE("cat leaves out 1-D empty tensors, as PyTorch's legacy rule does, and keeps their dtype") {
  const Tensor none = Tensor::empty(Shape{0});
  check_tensor(cat({none, iota({2, 2}), none}), DType::float32, {2, 2}, range(0, 4));
  check_tensor(cat({tensor({1, 2}, {1, 2}), none}, 1), DType::float32, {1, 2}, {1, 2});  // int64 and float32
  check_tensor(cat({none, none}), DType::float32, {0}, {});
  // Traced: the same shapes, named dims kept.
  const OutputMeta meta = meta_of("cat", {TensorList{none, symbolic(Shape{Dim("N"), 3})}, 0});
  CHECK(meta.outputs[0].shape == Shape{Dim("N"), 3});
  // Only 1-D ones: an empty [0, 2] must match the others' rank.
  CHECK_THROWS_WITH_AS(cat({iota({0, 2}), iota({2, 2, 1})}),
                       doctest::Contains("tensor 0 has shape [0, 2] and tensor 1 has shape [2, 2, 1]"), OpError);
  CHECK_THROWS_WITH_AS(cat({none, iota({2}), iota({2, 2})}),
                       doctest::Contains("tensor 1 has shape [2] and tensor 2 has shape [2, 2]"), OpError);
}

TEST_CASE("cat errors name the shapes involved") {
  const Tensor a = iota({2, 2});
  SUBCASE("empty list") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return cat({}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "cat").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("needs at least one tensor, got an empty list"), OpError);
  }
  SUBCASE("rank mismatch") {
    const Tensor v = iota({2});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return cat({a, v}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "cat").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("tensor 0 has shape [2, 2] and tensor 1 has shape [2]"), OpError);
  }
  SUBCASE("other dims differ") {
    const Tensor b = iota({3, 3});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return cat({a, b}, 0); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "cat").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("tensors must have the same size except in dimension 0, but "
                                                  "dimension 1 is 2 in tensor 0 (shape [2, 2]) and 3 in tensor 1 "
                                                  "(shape [3, 3])"),
                         OpError);
  }
  SUBCASE("0-dim tensors") {
    const Tensor s = iota({});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return cat({s, s}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "cat").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("0-dim tensors (shape []) cannot be concatenated"), OpError);
  }
  SUBCASE("dim out of range") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return cat({a, a}, 2); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "cat").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 2 is out of range for a tensor of shape [2, 2]"), OpError);
  }
}

// ---- stack ---------------------------------------------------------------------------------

TEST_CASE("stack joins equal shapes along a new dim") {
  const Tensor a = tensor({1, 2, 3});
  const Tensor b = tensor({4, 5, 6});
  check_tensor(stack({a, b}), DType::int64, {2, 3}, {1, 2, 3, 4, 5, 6});
  check_tensor(stack({a, b}, 1), DType::int64, {3, 2}, {1, 4, 2, 5, 3, 6});
  check_tensor(stack({a, b}, -1), DType::int64, {3, 2}, {1, 4, 2, 5, 3, 6});
  check_tensor(stack({a, tensor({0.5f, 1.5f, 2.5f})}), DType::float32, {2, 3}, {1, 2, 3, 0.5, 1.5, 2.5});
  check_tensor(stack({iota({}), iota({})}), DType::float32, {2}, {0, 0});
  check_tensor(stack({iota({2, 2}).transpose(0, 1)}, 2), DType::float32, {2, 2, 1}, {0, 2, 1, 3});
  check_tensor(stack({iota({0, 2}), iota({0, 2}), iota({0, 2})}, 1), DType::float32, {0, 3, 2}, {});
}

TEST_CASE("stack rejects tensors of different shapes") {
  const Tensor a = iota({2, 3});
  SUBCASE("same rank") {
    const Tensor b = iota({2, 4});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return stack({a, b}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "stack").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("stack needs tensors of equal shapes, but dimension 1 is 3 in "
                                                  "tensor 0 (shape [2, 3]) and 4 in tensor 1 (shape [2, 4])"),
                         OpError);
  }
  SUBCASE("different rank") {
    const Tensor b = iota({6});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return stack({a, b}, 0); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "stack").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("tensor 0 has shape [2, 3] and tensor 1 has shape [6]"), OpError);
  }
  SUBCASE("dim out of range") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return stack({a, a}, 3); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "stack").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("dimension 3 is out of range for inserting into a tensor of shape "
                                                  "[2, 3]"),
                         OpError);
  }
}

// ---- chunk, split, split_with_sizes, unbind ------------------------------------------------

TEST_CASE("chunk makes pieces of ceil(n / chunks), possibly fewer than asked") {
  const Tensor x = iota({5, 2});
  const TensorList three = x.chunk(3);
  REQUIRE(three.size() == 3);
  check_tensor(three[0], DType::float32, {2, 2}, range(0, 4));
  check_tensor(three[1], DType::float32, {2, 2}, range(4, 8));
  check_tensor(three[2], DType::float32, {1, 2}, range(8, 10));
  for (const Tensor& piece : three) CHECK(piece.shares_storage_with(x));
  const TensorList columns = chunk(x, 2, -1);
  REQUIRE(columns.size() == 2);
  check_tensor(columns[1], DType::float32, {5, 1}, {1, 3, 5, 7, 9});
  CHECK(shapes_of(iota({6}).chunk(4)) == std::vector<Shape>{Shape{2}, Shape{2}, Shape{2}});
  CHECK(shapes_of(iota({2}).chunk(5)) == std::vector<Shape>{Shape{1}, Shape{1}});
  CHECK(shapes_of(iota({0, 2}).chunk(3)) == std::vector<Shape>(3, Shape{0, 2}));
}

TEST_CASE("split makes pieces of split_size, the last one smaller") {
  const Tensor x = iota({5});
  const TensorList pieces = x.split(2);
  REQUIRE(pieces.size() == 3);
  check_tensor(pieces[0], DType::float32, {2}, {0, 1});
  check_tensor(pieces[1], DType::float32, {2}, {2, 3});
  check_tensor(pieces[2], DType::float32, {1}, {4});
  CHECK(shapes_of(split(x, 5)) == std::vector<Shape>{Shape{5}});
  CHECK(shapes_of(x.split(10)) == std::vector<Shape>{Shape{5}});
  CHECK(shapes_of(iota({0}).split(2)) == std::vector<Shape>{Shape{0}});
  CHECK(shapes_of(iota({0}).split(0)) == std::vector<Shape>{Shape{0}});
  const TensorList rows = iota({2, 3}).transpose(0, 1).split(2, 0);
  REQUIRE(rows.size() == 2);
  check_tensor(rows[0], DType::float32, {2, 2}, {0, 3, 1, 4});
  check_tensor(rows[1], DType::float32, {1, 2}, {2, 5});
}

TEST_CASE("split_with_sizes makes pieces of the given sizes, which may be 0") {
  const Tensor x = iota({2, 3});
  const TensorList pieces = split(x, IntList{1, 0, 2}, 1);
  REQUIRE(pieces.size() == 3);
  check_tensor(pieces[0], DType::float32, {2, 1}, {0, 3});
  check_tensor(pieces[1], DType::float32, {2, 0}, {});
  check_tensor(pieces[2], DType::float32, {2, 2}, {1, 2, 4, 5});
  CHECK(pieces[2].shares_storage_with(x));
  const TensorList method = x.split(IntList{2}, 0);
  REQUIRE(method.size() == 1);
  check_tensor(method[0], DType::float32, {2, 3}, range(0, 6));
}

TEST_CASE("unbind returns the slices along a dim as views") {
  const Tensor x = iota({2, 3});
  const TensorList rows = x.unbind();
  REQUIRE(rows.size() == 2);
  check_tensor(rows[0], DType::float32, {3}, {0, 1, 2});
  check_tensor(rows[1], DType::float32, {3}, {3, 4, 5});
  const TensorList columns = unbind(x, -1);
  REQUIRE(columns.size() == 3);
  check_tensor(columns[2], DType::float32, {2}, {2, 5});
  CHECK(columns[2].shares_storage_with(x));
  CHECK(iota({0, 3}).unbind().empty());
  const TensorList scalars = iota({2}).unbind();
  REQUIRE(scalars.size() == 2);
  check_tensor(scalars[1], DType::float32, {}, {1});
}

TEST_CASE("in-place ops on split pieces write through to the input") {
  const Tensor x = iota({2, 4});
  x.chunk(2, 1)[1].fill_(-1);
  x.unbind(0)[0].add_(10.f);
  x.split(IntList{1, 3}, 1)[0].mul_(2.f);
  check_tensor(x, DType::float32, {2, 4}, {20, 11, 9, 9, 8, 5, -1, -1});
}

TEST_CASE("split errors name the sizes and the shape") {
  const Tensor x = iota({2, 3});
  SUBCASE("chunks not positive") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.chunk(0); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "chunk").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("chunks must be positive, got 0 (shape [2, 3])"), OpError);
  }
  SUBCASE("negative split_size") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.split(-1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "split").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("split_size must be non-negative, got -1 (shape [2, 3])"), OpError);
  }
  SUBCASE("split_size 0 of a non-empty dim") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.split(0, 1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "split").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("split_size can only be 0 when dimension 1 is empty, but shape is "
                                                  "[2, 3]"),
                         OpError);
  }
  SUBCASE("sizes do not sum to the dim") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.split(IntList{1, 1}, 1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "split_with_sizes").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("split sizes [1, 1] sum to 2, but dimension 1 of shape [2, 3] is 3"),
                         OpError);
  }
  SUBCASE("negative size") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return x.split(IntList{4, -1}, 1); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "split_with_sizes").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("split sizes [4, -1] must be non-negative (shape [2, 3])"), OpError);
  }
  SUBCASE("0-dim") {
    const Tensor s = iota({});
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return s.unbind(); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "unbind").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("cannot unbind a 0-dim tensor (shape [])"), OpError);
  }
}

// ---- Unknown dims --------------------------------------------------------------------------

TEST_CASE("splitting along an unknown dim throws TraceError, since the number of pieces is unknown") {
  const Dim u = Dim::unknown();
  const Tensor x = symbolic(Shape{u, 4});
  SUBCASE("chunk") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return infer_meta(OpRegistry::instance().get("chunk"), ValueList{x, 2, 0}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(fmt::format("joins_test.cpp:{}: chunk(): ", line).c_str()),
                         TraceError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the number of outputs depends on dimension 0 of shape [?, 4], "
                                                  "which is unknown; give example shapes"),
                         TraceError);
  }
  SUBCASE("split and unbind") {
    CHECK_THROWS_AS(meta_of("split", {x, 2}), TraceError);
    CHECK_THROWS_AS(meta_of("unbind", {x, -2}), TraceError);
  }
  SUBCASE("a known dim splits while other dims stay unknown") {
    const OutputMeta chunks = meta_of("chunk", {x, 3, 1});
    CHECK(chunks.is_list);
    CHECK(std::vector<Shape>{chunks.outputs[0].shape, chunks.outputs[1].shape} ==
          std::vector<Shape>{Shape{u, 2}, Shape{u, 2}});
    const OutputMeta sized = meta_of("split_with_sizes", {x, IntList{3, 5}, 0});
    REQUIRE(sized.outputs.size() == 2);
    CHECK(sized.outputs[1].shape == Shape{5, 4});
    CHECK(meta_of("unbind", {x, 1}).outputs.size() == 4);
  }
}

TEST_CASE("join meta functions propagate unknown dims") {
  const Dim u = Dim::unknown();
  CHECK(meta_of("cat", {TensorList{symbolic(Shape{u, 3}), iota({2, 3})}}).outputs[0].shape == Shape{u, 3});
  CHECK(meta_of("cat", {TensorList{symbolic(Shape{u, 3}), symbolic(Shape{2, u}, 2)}, 1}).outputs[0].shape ==
        Shape{2, u});
  CHECK(meta_of("cat", {TensorList{iota({4, 3}), iota({2, 3})}}).outputs[0].shape == Shape{6, 3});
  CHECK(meta_of("stack", {TensorList{symbolic(Shape{u, 3}), symbolic(Shape{2, u}, 2)}}).outputs[0].shape ==
        Shape{2, 2, 3});
  CHECK_THROWS_WITH_AS(meta_of("cat", {TensorList{symbolic(Shape{u, 3}), iota({2, 4})}}),
                       doctest::Contains("dimension 1 is 3 in tensor 0 (shape [?, 3]) and 4 in tensor 1"), OpError);
}

TEST_CASE("only the splitting ops are flagged as views") {
  const auto& registry = OpRegistry::instance();
  for (const char* name : {"chunk", "split", "split_with_sizes", "unbind"})
    CHECK_MESSAGE(registry.get(name).has(OpFlags::view), name);
  for (const char* name : {"cat", "stack"}) CHECK_MESSAGE(!registry.get(name).has(OpFlags::view), name);
}

// ---- Meta agrees with the kernel -----------------------------------------------------------

TEST_CASE("meta agrees with the kernel for cat and stack over random shapes and dtypes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const IntList base = random_shape(gen, 1, 3, 0, 3);
    const auto rank = static_cast<std::int64_t>(base.size());
    const std::int64_t d = uniform_int(gen, 0, rank - 1);
    TensorList pieces;
    for (std::int64_t k = uniform_int(gen, 1, 3); k > 0; --k) {
      IntList shape = base;
      shape[static_cast<std::size_t>(d)] = uniform_int(gen, 0, 3);
      pieces.push_back(random_tensor(shape, gen));
    }
    check_meta_agrees("cat", {pieces, maybe_negative(d, rank, gen)}, {}, gen);
    TensorList same;
    for (std::int64_t k = uniform_int(gen, 1, 3); k > 0; --k) same.push_back(random_tensor(base, gen));
    check_meta_agrees("stack", {same, uniform_int(gen, -rank - 1, rank)}, {}, gen);
  }
}

TEST_CASE("meta agrees with the kernel for chunk, split, split_with_sizes and unbind over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 1, 3, 0, 5), gen);
    const std::int64_t rank = x.dim();
    const std::int64_t d = uniform_int(gen, 0, rank - 1);
    const std::int64_t n = x.shape()[static_cast<std::size_t>(d)].value();
    check_meta_agrees("chunk", {x, uniform_int(gen, 1, 5), maybe_negative(d, rank, gen)}, {}, gen);
    check_meta_agrees("split", {x, n == 0 ? uniform_int(gen, 0, 2) : uniform_int(gen, 1, 6), maybe_negative(d, rank, gen)}, {}, gen);
    IntList sizes;
    for (std::int64_t left = n; left > 0;) {
      sizes.push_back(uniform_int(gen, 0, left));
      left -= sizes.back();
    }
    check_meta_agrees("split_with_sizes", {x, sizes, maybe_negative(d, rank, gen)}, {}, gen);
    check_meta_agrees("unbind", {x, maybe_negative(d, rank, gen)}, {}, gen);
  }
}

// ---- pad, roll -----------------------------------------------------------------------------

TEST_CASE("pad adds constant borders from the last dim backwards, and negative amounts crop") {
  const Tensor x = iota({2, 3});
  check_tensor(pad(x, {1, 0}), DType::float32, {2, 4}, {0, 0, 1, 2, 0, 3, 4, 5});
  check_tensor(pad(x, {0, 1, 1, 0}, -1.0), DType::float32, {3, 4},
               {-1, -1, -1, -1, 0, 1, 2, -1, 3, 4, 5, -1});
  check_tensor(pad(x, {-1, 1}), DType::float32, {2, 3}, {1, 2, 0, 4, 5, 0});
  check_tensor(pad(tensor({1, 2}), {1, 1}, 7.0), DType::int64, {4}, {7, 1, 2, 7});
  CHECK_FALSE(pad(x, {0, 0}).shares_storage_with(x));
}

TEST_CASE("pad errors name the padding and the shape") {
  const Tensor x = iota({2, 3});
  SUBCASE("odd length") {
    static constexpr int line = __LINE__ + 1;
    auto bad = [&] { return pad(x, {1}); };
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains(error_at(line, "pad").c_str()), OpError);
    CHECK_THROWS_WITH_AS(bad(), doctest::Contains("the padding [1] must have an even length"), OpError);
  }
  SUBCASE("more pairs than dims") {
    CHECK_THROWS_WITH_AS(pad(x, {1, 1, 1, 1, 1, 1}),
                         doctest::Contains("has 3 pairs, more than the 2 dims of shape [2, 3]"), OpError);
  }
  SUBCASE("cropping below zero") {
    CHECK_THROWS_WITH_AS(pad(x, {-2, -2}), doctest::Contains("makes dimension 1 of shape [2, 3] negative"), OpError);
  }
  SUBCASE("an unknown mode") {
    CHECK_THROWS_WITH_AS(call("pad", {x, IntList{1, 1}, std::string("mirror")}),
                         doctest::Contains("mode 'mirror' is not one of 'constant', 'reflect', 'replicate' and "
                                           "'circular'"),
                         OpError);
  }
}

// Values on random inputs are compared with LibTorch's in tests/torchscript/native_ops_test.cpp.
TEST_CASE("pad reflects, replicates or wraps around the elements next to each edge") {
  const Tensor x = iota({1, 4});
  check_tensor(pad(x, {2, 1}, "reflect"), DType::float32, {1, 7}, {2, 1, 0, 1, 2, 3, 2});
  check_tensor(pad(x, {2, 1}, "replicate"), DType::float32, {1, 7}, {0, 0, 0, 1, 2, 3, 3});
  check_tensor(pad(x, {2, 1}, "circular"), DType::float32, {1, 7}, {2, 3, 0, 1, 2, 3, 0});
  // Crops first, then wraps around what is left (PyTorch's order).
  check_tensor(pad(x, {-1, 2}, "circular"), DType::float32, {1, 5}, {1, 2, 3, 1, 2});
  check_tensor(pad(iota({1, 2, 2}), {1, 0, 0, 1}, "replicate"), DType::float32, {1, 3, 3}, {0, 0, 1, 2, 2, 3, 2, 2, 3});
  check_tensor(pad(arange(3).reshape({1, 3}), {1, 1}, "reflect"), DType::int64, {1, 5}, {1, 0, 1, 2, 1});
}

TEST_CASE("pad's edge modes keep named dims and refuse paddings PyTorch refuses") {
  const Tensor s = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim("N"), 3, 8}}, SymbolicRef{1, 1});
  CHECK(infer_meta(OpRegistry::instance().get("pad"), ValueList{s, IntList{2, 3}, std::string("reflect"), Value()})
            .outputs[0]
            .shape == Shape{Dim("N"), 3, 13});
  const Tensor x = iota({2, 3});
  static constexpr int line = __LINE__ + 1;
  const auto too_far = [&] { return pad(x, {3, 0}, "reflect"); };
  const std::string expected = error_at(line, "pad") +
                               "mode 'reflect' pads dimension 1 of shape [2, 3] by (3, 0), which needs it to have at "
                               "least 4 elements; the padding must be smaller than the dimension";
  CHECK_THROWS_WITH_AS(too_far(), doctest::Contains(expected.c_str()), OpError);
  CHECK_THROWS_WITH_AS(pad(x, {4, 0}, "circular"),
                       doctest::Contains("which needs it to have at least 4 elements; the padding must not wrap "
                                         "around more than once"),
                       OpError);
  CHECK_THROWS_WITH_AS(pad(iota({3}), {1, 1}, "replicate"),
                       doctest::Contains("mode 'replicate' pads the last 1, 2 or 3 dims of an input with 1 or 2 more "
                                         "dims, got padding [1, 1] (1 pairs) for shape [3]"),
                       OpError);
  CHECK_THROWS_WITH_AS(pad(x, {1, 1}, "reflect", 2.0),
                       doctest::Contains("mode 'reflect' takes no value, got value=2"), OpError);
  CHECK_THROWS_WITH_AS(pad(iota({1, 4}), {-3, 2}, "circular"),
                       doctest::Contains("mode 'circular' padding [-3, 2] crops dimension 1 of shape [1, 4] below the "
                                         "amount it pads on the other side"),
                       OpUnsupported);
  CHECK_THROWS_WITH_AS(pad(x, {-1, 1}, "replicate"),
                       doctest::Contains("mode 'replicate' with a negative padding [-1, 1] is not supported"),
                       OpUnsupported);
}

TEST_CASE("roll moves elements along dims, wrapping around") {
  const Tensor x = iota({2, 3});
  check_tensor(roll(x, {1}, {1}), DType::float32, {2, 3}, {2, 0, 1, 5, 3, 4});
  check_tensor(roll(x, {-1}, {-1}), DType::float32, {2, 3}, {1, 2, 0, 4, 5, 3});
  check_tensor(roll(x, {1, 4}, {0, 1}), DType::float32, {2, 3}, {5, 3, 4, 2, 0, 1});
  check_tensor(roll(x, {0}, {0}), DType::float32, {2, 3}, range(0, 6));
  CHECK_THROWS_WITH_AS(roll(x, {1, 1}, {0}), doctest::Contains("shifts [1, 1] and dims [0] must have the same length"),
                       OpError);
  CHECK_THROWS_WITH_AS(roll(x, {1}, {}), doctest::Contains("symtrace rolls along given dims only"), OpError);
}

TEST_CASE("meta agrees with the kernel for pad and roll over random shapes") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = randn(random_shape(gen, 1, 3, 1, 4), gen);
    const std::int64_t rank = x.dim();
    IntList amounts;
    for (std::int64_t k = uniform_int(gen, 1, rank); k > 0; --k) {
      amounts.push_back(uniform_int(gen, 0, 2));
      amounts.push_back(uniform_int(gen, 0, 2));
    }
    check_meta_agrees("pad", {x, amounts, std::string("constant"), 0.5}, {}, gen);
    const std::int64_t d = uniform_int(gen, 0, rank - 1);
    check_meta_agrees("roll", {x, IntList{uniform_int(gen, -5, 5)}, IntList{maybe_negative(d, rank, gen)}}, {}, gen);
  }
}

// ---- repeat --------------------------------------------------------------------------------

namespace {

/// Tiles the input once per row it has: a repeat count the run gives.
class TileByRows : public TypedModule<TileByRows> {
 public:
  Tensor forward(const Tensor& x) { return repeat(x, {x.size(0), 1}); }
};

}  // namespace

// Expected values: PyTorch 1.13's Tensor.repeat.
TEST_CASE("repeat tiles a tensor along each dim, more repeats than dims adding leading dims") {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  check_tensor(repeat(x, {2, 2}), DType::int64, {4, 6},
               {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  check_tensor(repeat(x, {2, 1, 2}), DType::int64, {2, 2, 6},
               {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  check_tensor(repeat(tensor({7, 8}), {3, 1, 2}), DType::int64, {3, 1, 4}, {7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8});
  check_tensor(repeat(scalar_tensor(5), {2, 3}), DType::int64, {2, 3}, {5, 5, 5, 5, 5, 5});
  check_tensor(repeat(scalar_tensor(5), {}), DType::int64, {}, {5});
  check_tensor(repeat(x, {0, 2}), DType::int64, {0, 6}, {});
  check_tensor(repeat(x, {1, 1}), DType::int64, {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK_FALSE(repeat(x, {1, 1}).shares_storage_with(x));
  SUBCASE("a strided input is read through its strides") {
    check_tensor(repeat(testing::transposed(iota({2, 3})), {1, 2}), DType::float32, {3, 4},
                 {0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5});
    check_tensor(repeat(tensor({true, false}), {2}), DType::bool_, {4}, {1, 0, 1, 0});
  }
}

TEST_CASE("repeat refuses fewer repeats than dims and negative repeats") {
  const Tensor x = iota({2, 3});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(repeat(x, {2}), doctest::Contains(error_at(line, "repeat").c_str()), OpError);
  CHECK_THROWS_WITH_AS(repeat(x, {2}),
                       doctest::Contains("needs a repeat for each of the 2 dims of shape [2, 3], got [2]"), OpError);
  CHECK_THROWS_WITH_AS(repeat(x, {-1, 2}),
                       doctest::Contains("repeat -1 at dim 0 of [-1, 2] is negative (shape [2, 3])"), OpError);
}

TEST_CASE("repeat keeps unknown dims unknown and takes a repeat count the run gives") {
  const Dim u = Dim::unknown();
  CHECK(meta_of("repeat", {symbolic(Shape{u, 3}), IntList{2, 1, 2}}).outputs[0].shape == Shape{2, u, 6});
  CHECK(meta_of("repeat", {symbolic(Shape{u, 3}), IntList{0, 2}}).outputs[0].shape == Shape{0, 6});
  TileByRows model;
  Graph g = symbolic_trace(model, {InputSpec(Shape{u, 3})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%repeat : float32[?, 3] [num_users=1] = call_method[target=repeat](args = (%x, [%size, 1]), "
                  "kwargs = {})") != std::string::npos);
  const Tensor x = iota({2, 3});
  check_tensor(Interpreter(model, g).run({x}).to_tensor(), DType::float32, {4, 3},
               {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
}

TEST_CASE("meta agrees with the kernel for repeat over random shapes and repeat counts") {
  Generator gen(1234);
  for (int trial = 0; trial < 50; ++trial) {
    const Tensor x = random_tensor(random_shape(gen, 0, 3, 0, 3), gen);
    IntList repeats;
    for (std::int64_t k = x.dim() + uniform_int(gen, 0, 2); k > 0; --k) repeats.push_back(uniform_int(gen, 0, 3));
    check_meta_agrees("repeat", {x, repeats}, {}, gen);
  }
}

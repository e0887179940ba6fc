#include "support/checks.hpp"

using namespace symtrace;

TEST_CASE("a concrete tensor owns contiguous data with row-major strides") {
  const Tensor t = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  CHECK(t.is_concrete());
  CHECK_FALSE(t.is_symbolic());
  CHECK(t.dtype() == DType::float32);
  CHECK(t.shape() == Shape{2, 3});
  CHECK(t.dim() == 2);
  CHECK(t.size(-1).maybe() == 3);
  CHECK(t.numel().maybe() == 6);
  CHECK(std::vector<std::int64_t>(t.strides().begin(), t.strides().end()) == IntList{3, 1});
  CHECK(t.is_contiguous());
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("tensors print with nested brackets, dtype and shape, eliding long dims") {
  CHECK(to_string(tensor({1, 2, 3, 4}, {2, 2})) == "tensor([[1, 2], [3, 4]], dtype=int64, shape=[2, 2])");
  CHECK(to_string(tensor({true, false})) == "tensor([True, False], dtype=bool, shape=[2])");
  CHECK(fmt::format("{}", tensor({0.5f})) == "tensor([0.5000], dtype=float32, shape=[1])");
  CHECK(fmt::format("{}", scalar_tensor(0.5f)) == "tensor(0.5000, dtype=float32, shape=[])");
  CHECK(to_string(arange(10)) == "tensor([0, 1, 2, ..., 7, 8, 9], dtype=int64, shape=[10])");
  CHECK(to_string(zeros({0, 2})) == "tensor([], dtype=float32, shape=[0, 2])");
  CHECK(to_string(Tensor()) == "Tensor(undefined)");
}

TEST_CASE("a symbolic tensor carries metadata only and refuses to be read as data") {
  const Tensor s = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 3}}, SymbolicRef{7, 2});
  CHECK(s.is_symbolic());
  CHECK(s.symbolic_ref() == SymbolicRef{7, 2});
  CHECK(to_string(s) == "Tensor(%2, float32[?, 3])");
  CHECK(s.size(1).maybe() == 3);  // a known dim is a plain number, even outside a trace
  // An unknown dim needs its trace to record a size node; this tensor's trace is not active.
  static constexpr int size_line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)s.size(0), doctest::Contains(fmt::format("tensor_test.cpp:{}: size() got a symbolic tensor but no trace is active", size_line).c_str()), TraceError);
  static constexpr int item_line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)s.item<float>(), doctest::Contains(fmt::format("tensor_test.cpp:{}: a symbolic tensor was read as data (item())", item_line).c_str()), TraceError);
  CHECK_THROWS_AS((void)s.to_vector<float>(), TraceError);
  CHECK_THROWS_AS((void)s.data_ptr<float>(), TraceError);
  CHECK_THROWS_AS((void)s.numel(), TraceError);
  static constexpr int strides_line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)s.is_contiguous(), doctest::Contains(fmt::format("tensor_test.cpp:{}: a symbolic tensor was read as data (strides())", strides_line).c_str()), TraceError);
}

TEST_CASE("data access checks dtype, element count and definedness") {
  const Tensor t = tensor({1, 2});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)t.data_ptr<float>(), doctest::Contains(fmt::format("tensor_test.cpp:{}: data_ptr<float32>() of a int64 tensor", line).c_str()), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)t.item<std::int64_t>(), doctest::Contains("item() needs a tensor with one element, got shape [2]"), std::invalid_argument);
  CHECK(tensor({5}).item<std::int64_t>() == 5);
  CHECK(tensor({2.5f}).item<std::int64_t>() == 2);
  CHECK_THROWS_WITH_AS((void)Tensor().dtype(), doctest::Contains("undefined Tensor"), std::invalid_argument);
  CHECK_THROWS_AS((void)t.size(2), std::invalid_argument);
}

TEST_CASE("copies of a tensor handle share data, as at::Tensor does") {
  Tensor a = zeros({3});
  Tensor b = a;
  b.data_ptr<float>()[1] = 4;
  CHECK(a.to_vector<float>() == std::vector<float>{0, 4, 0});
  CHECK(a.shares_storage_with(b));
  CHECK_FALSE(a.shares_storage_with(zeros({3})));
}

TEST_CASE("views over shared storage are bounds-checked") {
  const Tensor base = arange(6);
  const Tensor v = Tensor::view_of(base, Shape{3}, detail::Strides{2}, 1);  // elements 1, 3, 5
  CHECK(v.to_vector<std::int64_t>() == IntList{1, 3, 5});
  CHECK_FALSE(v.is_contiguous());
  CHECK_THROWS_AS((void)Tensor::view_of(base, Shape{4}, detail::Strides{2}, 1), InternalError);
}

TEST_CASE("empty tensors are contiguous whatever their strides, as in PyTorch") {
  CHECK(zeros({2, 0}).is_contiguous());
  CHECK(zeros({0, 3}).is_contiguous());
}

TEST_CASE("empty refuses unknown sizes and sizes whose product overflows") {
  CHECK_THROWS_WITH_AS((void)Tensor::empty(Shape{1LL << 40, 1LL << 40}), doctest::Contains("cannot allocate a tensor of shape [1099511627776, 1099511627776]: its size overflows 64 bits"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)Tensor::empty(Shape{2, Dim::unknown()}), doctest::Contains("cannot allocate a tensor of shape [2, ?]"), std::invalid_argument);
}

TEST_CASE("to_bool is the truth value of one element and a TraceError on a symbolic tensor") {
  CHECK(tensor({0.5f}).to_bool());
  CHECK_FALSE(tensor({0}).to_bool());
  CHECK(scalar_tensor(true).to_bool());
  CHECK_THROWS_WITH_AS((void)tensor({1, 2}).to_bool(), doctest::Contains("to_bool() needs a tensor with one element, got shape [2]"),
                       std::invalid_argument);
  const Tensor s = Tensor::symbolic(TensorMeta{DType::float32, Shape{}}, SymbolicRef{1, 1});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)s.to_bool(), doctest::Contains(fmt::format("tensor_test.cpp:{}: a symbolic tensor was read as data (to_bool())", line).c_str()),
                       TraceError);
}

TEST_CASE("set_ gives every handle of a tensor another tensor's data and shape; views taken before keep the old") {
  Tensor t = symtrace::testing::iota({2, 3});
  const Tensor handle = t;
  const Tensor view = t.narrow(1, 0, 1);
  const Tensor source = symtrace::testing::iota({4});
  (void)t.set_(source);
  CHECK(handle.meta().shape == Shape{4});
  CHECK(handle.to_vector<float>() == std::vector<float>{0, 1, 2, 3});
  CHECK(view.to_vector<float>() == std::vector<float>{0, 3});
  (void)t.set_(t.narrow(0, 1, 2));  // a view of itself
  CHECK(handle.to_vector<float>() == std::vector<float>{1, 2});
  const Tensor s = Tensor::symbolic(TensorMeta{DType::float32, Shape{2}}, SymbolicRef{1, 1});
  CHECK_THROWS_WITH_AS((void)t.set_(s), doctest::Contains("set_() needs concrete tensors"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)Tensor().set_(t), doctest::Contains("set_() needs two defined tensors"), std::invalid_argument);
  CHECK(handle.to_vector<float>() == std::vector<float>{1, 2});
}

TEST_CASE("from_blob views memory owned elsewhere and keeps its owner alive while any tensor uses it") {
  auto released = std::make_shared<bool>(false);
  Tensor t;
  {
    auto buffer = std::shared_ptr<float[]>(new float[6]{1, 2, 3, 4, 5, 6}, [released](const float* p) {
      *released = true;
      delete[] p;
    });
    t = Tensor::from_blob(buffer.get(), Shape{2, 3}, DType::float32, buffer);
  }
  CHECK_FALSE(*released);  // the tensor holds the owner
  CHECK(t.is_contiguous());
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor row = t.select(0, 1);
  (void)t.mul_(2.0);  // writes into the foreign memory, seen through every view
  CHECK(row.to_vector<float>() == std::vector<float>{8, 10, 12});
  t = Tensor();
  CHECK_FALSE(*released);  // the view still uses it
  CHECK(row.sum().item<float>() == 30.f);
  row = Tensor();
  CHECK(*released);
}

TEST_CASE("from_blob refuses a null or misaligned pointer and unknown sizes") {
  alignas(8) std::int64_t data[3] = {1, 2, 3};
  CHECK_THROWS_WITH_AS((void)Tensor::from_blob(nullptr, Shape{3}, DType::float32, nullptr),
                       doctest::Contains("from_blob() of a null pointer"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)Tensor::from_blob(reinterpret_cast<std::byte*>(data) + 1, Shape{2}, DType::int64, nullptr),
                       doctest::Contains("int64 data must be aligned to 8 bytes"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)Tensor::from_blob(data, Shape{Dim::unknown(), Dim(2)}, DType::int64, nullptr),
                       doctest::Contains("every size must be known"), std::invalid_argument);
  CHECK(Tensor::from_blob(data, Shape{3}, DType::int64, nullptr).to_vector<std::int64_t>() == IntList{1, 2, 3});
}

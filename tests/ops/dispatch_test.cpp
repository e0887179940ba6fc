#include "support/checks.hpp"

#include <stdexcept>

using namespace symtrace;
using testing::check_tensor;

TEST_CASE("the registry knows every op of the foundation set, each with a meta function and a kernel") {
  const char* required[] = {
      "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "pow", "clamp", "relu", "relu6",
      "gelu", "silu", "hardsigmoid", "hardswish", "sigmoid", "tanh", "softmax", "log_softmax", "eq", "ne", "lt", "le", "gt", "ge", "where",
      "sum", "mean", "amax", "argmax", "matmul", "linear", "conv2d", "max_pool2d", "avg_pool2d",
      "adaptive_avg_pool2d", "batch_norm", "layer_norm", "dropout", "embedding", "upsample_nearest2d",
      "reshape", "view", "flatten", "permute", "transpose", "unsqueeze", "squeeze", "expand", "contiguous",
      "cat", "stack", "chunk", "split", "split_with_sizes", "unbind", "slice", "narrow", "select",
      "index_select", "add_", "mul_", "relu_", "copy_", "fill_", "slice_scatter", "to"};
  for (const char* name : required) {
    CAPTURE(name);
    const OpDef* op = OpRegistry::instance().find(name);
    REQUIRE(op != nullptr);
    CHECK(bool(op->meta));
    CHECK(bool(op->kernel));
  }
  const auto& ops = OpRegistry::instance().ops();
  CHECK(std::is_sorted(ops.begin(), ops.end(), [](const OpDef* a, const OpDef* b) { return a->name() < b->name(); }));
  CHECK(OpRegistry::instance().get("add_").has(OpFlags::inplace));
  CHECK(OpRegistry::instance().get("batch_norm").has(OpFlags::mutates_arguments));
  CHECK(OpRegistry::instance().get("dropout").has(OpFlags::random));
  CHECK_FALSE(OpRegistry::instance().get("relu").has(OpFlags::inplace));
}

TEST_CASE("an unknown op name is an error naming it, the caller's line and close names") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(call("reluu", {zeros({1})}), doctest::Contains(fmt::format("dispatch_test.cpp:{}: reluu(): unknown op 'reluu': it is not in the registry; did you mean relu or relu6 or relu_?", line).c_str()), OpError);
  CHECK_THROWS_WITH_AS((void)OpRegistry::instance().get("zzzzzzzz"), doctest::Contains("unknown op 'zzzzzzzz': it is not in the registry (see OpRegistry::ops())"), OpError);
}

TEST_CASE("boxed calls bind keywords and defaults by the schema") {
  const Tensor x = tensor({-1.f, 0.5f, 8.f});
  check_tensor(call("clamp", {x}, {{"max", 1}}).to_tensor(), DType::float32, {3}, {-1, 0.5, 1});
  check_tensor(call("clamp", {x, 0}).to_tensor(), DType::float32, {3}, {0, 0.5, 8});
  check_tensor(call("gelu", {tensor({0.f})}, {{"approximate", "tanh"}}).to_tensor(), DType::float32, {1}, {0});
}

TEST_CASE("boxed call errors name the op, the argument and the schema") {
  const Tensor x = zeros({2});
  CHECK_THROWS_WITH_AS(call("add", {x}), doctest::Contains("add(): missing argument 'other' (add(Tensor|Scalar self, Tensor|Scalar other) -> Tensor)"), OpError);
  CHECK_THROWS_WITH_AS(call("relu", {x}, {{"alpha", 1}}), doctest::Contains("relu(): got an unexpected keyword argument 'alpha'"), OpError);
  CHECK_THROWS_WITH_AS(call("clamp", {x, 0}, {{"min", 1}}), doctest::Contains("clamp(): got argument 'min' twice"), OpError);
  CHECK_THROWS_WITH_AS(call("relu", {x, 1}), doctest::Contains("relu(): takes at most 1 positional arguments"), OpError);
  CHECK_THROWS_WITH_AS(call("add", {x, "two"}), doctest::Contains("add(): argument 'other' must be Tensor|Scalar, got str ('two')"), OpError);
  CHECK_THROWS_WITH_AS(call("relu", {Tensor()}), doctest::Contains("relu(): argument 'self' is an undefined Tensor"), OpError);
}

TEST_CASE("a symbolic argument with no trace active is a TraceError at the caller's line") {
  const Tensor s = Tensor::symbolic(TensorMeta{DType::float32, Shape{2}}, SymbolicRef{99, 1});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(relu(s), doctest::Contains(fmt::format("dispatch_test.cpp:{}: relu() got a symbolic tensor but no trace is active", line).c_str()), TraceError);
  CHECK_THROWS_AS(s + 1, TraceError);
}

namespace {
// A stand-in for the trace layer: records which op and call style reached it.
struct RecordingInterposer : Interposer {
  RecordingInterposer() : Interposer(/*sees_concrete_calls=*/true) {}
  Value call_op(const OpCall& call) override {
    seen = fmt::format("{} {}", call.op.name(), call.style == CallStyle::method ? "method" : "function");
    const OutputMeta meta = call.op.meta(call);
    return Tensor::symbolic(meta.outputs[0], SymbolicRef{99, 2});
  }
  Value call_module(Module&, const ValueList&, std::source_location) override {
    throw std::logic_error("no module call expected");
  }
  bool intercepts(const Tensor& tensor) const override { return tensor.impl_ptr() == claimed.impl_ptr(); }
  std::string seen;
  Tensor claimed;
};
}  // namespace

TEST_CASE("the thread's interposer receives calls with a symbolic argument, with their call style") {
  RecordingInterposer interposer;
  InterposerScope scope(interposer);
  const Tensor s = Tensor::symbolic(TensorMeta{DType::int64, Shape{Dim::unknown(), 3}}, SymbolicRef{99, 1});
  const Tensor r = s.relu();
  CHECK(interposer.seen == "relu method");
  CHECK(r.is_symbolic());
  CHECK(to_string(r.shape()) == "[?, 3]");
  const Tensor q = s * 2.5;
  CHECK(interposer.seen == "mul function");
  CHECK(q.dtype() == DType::float32);
  CHECK(contains_symbolic(Value(TensorList{zeros({1}), s})));
  CHECK_FALSE(contains_symbolic(Value(TensorList{zeros({1})})));
}

TEST_CASE("an all-concrete call reaches the interposer only when it reads a tensor the interposer claims") {
  RecordingInterposer interposer;
  interposer.claimed = ones({2});
  const Tensor other = ones({2});
  InterposerScope scope(interposer);
  const Tensor eager = other + 1;
  CHECK(interposer.seen.empty());
  CHECK(eager.is_concrete());
  CHECK(eager.to_vector<float>() == std::vector<float>{2, 2});
  const Tensor recorded = cat({other, interposer.claimed});  // the claimed tensor inside a list
  CHECK(interposer.seen == "cat function");
  CHECK(recorded.is_symbolic());
  CHECK(recorded.shape() == Shape{4});
}

TEST_CASE("infer_meta runs only the meta function and reports the errors the kernel path would") {
  const OpDef& add = OpRegistry::instance().get("add");
  const Tensor a = Tensor::symbolic(TensorMeta{DType::float32, Shape{Dim::unknown(), 1}}, SymbolicRef{5, 1});
  const Tensor b = Tensor::symbolic(TensorMeta{DType::int64, Shape{4}}, SymbolicRef{5, 2});
  const ValueList args{a, b};
  const OutputMeta m = infer_meta(add, args);
  REQUIRE(m.outputs.size() == 1);
  CHECK(m.outputs[0] == TensorMeta{DType::float32, Shape{Dim::unknown(), 4}});
  const ValueList bad{zeros({2, 3}), zeros({4})};
  CHECK_THROWS_WITH_AS((void)infer_meta(add, bad), doctest::Contains("add(): shapes [2, 3] and [4] cannot be broadcast"), OpError);
}

TEST_CASE("an eager op whose result is larger than this machine's memory is refused before its kernel allocates") {
  // Two 1.2 MB inputs, a 360 GB result: an OpError naming the op, its result and the bytes.
  const Tensor column = zeros({300000, 1});
  const Tensor row = zeros({1, 300000});
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)matmul(column, row),
                       doctest::Contains(fmt::format(":{}: matmul(): its result float32[300000, 300000] needs "
                                                     "360000000000 bytes (335.3 GiB), more than the ",
                                                     line)
                                             .c_str()),
                       OpError);
  CHECK_THROWS_WITH_AS((void)(column + row), doctest::Contains("add(): its result float32[300000, 300000] needs"), OpError);
  // A view allocates nothing: expanding is fine.
  CHECK(column.expand({300000, 300000}).shape() == Shape{300000, 300000});
}

TEST_CASE("Tensor::empty refuses a tensor larger than this machine's memory before allocating it") {
  CHECK(max_tensor_bytes() > 0);
  CHECK_THROWS_WITH_AS((void)Tensor::empty(Shape{1, 3, 100000, 100000}),
                       doctest::Contains("cannot allocate a float32 tensor of shape [1, 3, 100000, 100000]: it needs "
                                         "120000000000 bytes (111.8 GiB), more than the "),
                       std::invalid_argument);
}

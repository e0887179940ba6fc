// Lesson 1: tensors, ops, and what symtrace knows about an op without running it.
//
// Every op symtrace records in a graph is an entry of its op registry: a schema, a meta
// function that computes output dtype and shape from input metadata (unknown dims included),
// and an eager CPU kernel. This lesson runs a small convolutional block eagerly, then asks the
// meta functions what the same block produces for inputs whose batch size and image size are
// unknown -- the question a symbolic trace asks for every node -- and shows the error a bad
// call gets. It checks each result and exits non-zero on any mismatch.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

using namespace symtrace;
using namespace lesson;

namespace {

// conv3x3 -> batch_norm (inference) -> relu -> global average pool -> linear: a ResNet stem.
struct Block {
  Tensor conv_w, bn_w, bn_b, bn_mean, bn_var, fc_w, fc_b;
  explicit Block(Generator& gen)
      : conv_w(randn({8, 3, 3, 3}, gen) * 0.2), bn_w(ones({8})), bn_b(zeros({8})), bn_mean(zeros({8})),
        bn_var(ones({8})), fc_w(randn({10, 8}, gen) * 0.3), fc_b(zeros({10})) {}

  Tensor forward(const Tensor& x) const {
    Tensor y = conv2d(x, conv_w, {}, {1, 1}, {1, 1});
    y = batch_norm(y, bn_w, bn_b, bn_mean, bn_var, /*training=*/false);
    y = relu(y);
    y = adaptive_avg_pool2d(y, {1, 1}).flatten(1);
    return linear(y, fc_w, fc_b);
  }
};

}  // namespace

int main() {
  // 1. Eager: concrete tensors in, concrete tensors out. Same seed, same numbers, everywhere.
  Generator gen(0);
  const Block block(gen);
  const Tensor image = randn({2, 3, 16, 16}, gen);
  const Tensor logits = block.forward(image);
  fmt::print("logits: {}\n", logits.shape());
  expect(logits.shape() == Shape{2, 10}, "logits shape");

  const Tensor probs = softmax(logits, 1);
  const Tensor total = probs.sum({1});
  fmt::print("softmax rows sum to {}\n", total);
  for (float v : total.to_vector<float>()) expect(std::abs(v - 1.0f) < 1e-5f, "softmax row sum");
  const Tensor best = logits.argmax(1);
  fmt::print("argmax: {}\n", best);
  expect(best.dtype() == DType::int64 && best.shape() == Shape{2}, "argmax shape and dtype");

  // 2. Meta functions: the same question for inputs of unknown batch and image size.
  //    This is what a symbolic trace records for every node, without touching any data.
  const OpRegistry& ops = OpRegistry::instance();
  const Tensor unknown = Tensor::symbolic({DType::float32, Shape{Dim::unknown(), 3, Dim::unknown(), Dim::unknown()}},
                                          SymbolicRef{1, 1});
  const ValueList conv_args = bind_arguments(ops.get("conv2d"), {unknown, block.conv_w},
                                             {{"padding", IntList{1, 1}}}, std::source_location::current());
  const TensorMeta conv_out = infer_meta(ops.get("conv2d"), conv_args).outputs[0];
  fmt::print("conv2d on {}{} gives {}\n", unknown.dtype(), unknown.shape(), conv_out);
  expect(to_string(conv_out.shape) == "[?, 8, ?, ?]", "conv2d meta keeps unknown dims unknown");

  const Tensor pooled = Tensor::symbolic({DType::float32, Shape{Dim::unknown(), 8}}, SymbolicRef{1, 2});
  const ValueList fc_args{pooled, block.fc_w, block.fc_b};
  const TensorMeta fc_out = infer_meta(ops.get("linear"), fc_args).outputs[0];
  fmt::print("linear on {} gives {}\n", pooled.meta(), fc_out);
  expect(to_string(fc_out.shape) == "[?, 10]", "linear meta");

  // 3. Bad input gets a clear error naming the op, the shapes and this file's line.
  try {
    (void)linear(randn({2, 7}, gen), block.fc_w, block.fc_b);
    expect(false, "linear with 7 input features must fail");
  } catch (const OpError& e) {
    fmt::print("error, as expected: {}\n", e.what());
    expect(std::string(e.what()).find("01_tensors_and_ops.cpp:") != std::string::npos, "error names the file");
    expect(e.op() == "linear", "error names the op");
  }

  fmt::print("{} ops in the registry; {}\n", ops.ops().size(), failures == 0 ? "all checks passed" : "CHECKS FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (numbers depend only on the seed):
//   logits: [2, 10]
//   softmax rows sum to tensor([1.0000, 1.0000], dtype=float32, shape=[2])
//   argmax: tensor([..., ...], dtype=int64, shape=[2])
//   conv2d on float32[?, 3, ?, ?] gives float32[?, 8, ?, ?]
//   linear on float32[?, 8] gives float32[?, 10]
//   error, as expected: .../01_tensors_and_ops.cpp:NN: linear(): ... [2, 7] ... [10, 8] ...
//   NN ops in the registry; all checks passed

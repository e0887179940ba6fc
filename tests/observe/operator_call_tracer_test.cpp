// OperatorCallTracer: the closed set of ops a run calls, on every thread, with the ops inside
// composite ops and the training paths counted apart.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <string>
#include <thread>
#include <vector>

using namespace symtrace;

namespace {

/// A composite op: its function is written with other ops (mul, then add).
const Callable scale_shift = register_callable(
    "test.scale_shift(Tensor x) -> Tensor",
    [](const OpCall& call) -> Value { return call.tensor(0).mul(2.0).add(1.0); }, Callable::same_as_argument(0));

OperatorUse find_use(const std::vector<OperatorUse>& uses, std::string_view name) {
  for (const OperatorUse& u : uses)
    if (u.name == name) return u;
  return OperatorUse{std::string(name) + " (not called)"};
}

}  // namespace

TEST_CASE("an operator-call tracer lists exactly the ops resnet50 calls, in inference and in training") {
  clear_callbacks();
  const std::shared_ptr<Module> model = zoo::create("resnet50");
  const Tensor x = randn({2, 3, 32, 32});
  model->eval();
  std::vector<OperatorUse> inference;
  {
    OperatorCallTracer tracer;
    (void)model->call({x});
    INFO(fmt::format("{}", fmt::join(tracer.called_operators(), " ")));
    CHECK(tracer.called_operators() == std::vector<std::string>{"adaptive_avg_pool2d", "add", "batch_norm", "conv2d",
                                                                "flatten", "linear", "max_pool2d", "relu_"});
    inference = tracer.uses();
  }
  CHECK_FALSE(has_callbacks());
  CHECK(find_use(inference, "conv2d") == OperatorUse{"conv2d", 53, 0, 0});
  CHECK(find_use(inference, "batch_norm") == OperatorUse{"batch_norm", 53, 0, 0});
  CHECK(find_use(inference, "add") == OperatorUse{"add", 16, 0, 0});
  CHECK(find_use(inference, "linear") == OperatorUse{"linear", 1, 0, 0});

  model->train();
  OperatorCallTracer tracer;
  (void)model->call({x});
  const std::vector<OperatorUse> training = tracer.uses();
  INFO(fmt::format("{}", fmt::join(tracer.called_operators(), " ")));
  // Training adds the running-statistics counter's add_ and takes batch_norm's training path.
  CHECK(tracer.called_operators() == std::vector<std::string>{"adaptive_avg_pool2d", "add", "add_", "batch_norm",
                                                              "conv2d", "flatten", "linear", "max_pool2d", "relu_"});
  CHECK(find_use(training, "batch_norm") == OperatorUse{"batch_norm", 53, 0, 53});
  CHECK(find_use(training, "add_") == OperatorUse{"add_", 53, 0, 0});
}

TEST_CASE("dropout's training path is needed only in training") {
  clear_callbacks();
  const Tensor x = ones({4, 8});
  OperatorCallTracer tracer;
  (void)dropout(x, 0.5, false);
  CHECK(tracer.uses() == std::vector<OperatorUse>{{"dropout", 1, 0, 0}});
  (void)dropout(x, 0.5, true);
  CHECK(tracer.uses() == std::vector<OperatorUse>{{"dropout", 2, 0, 1}});
  tracer.clear();
  CHECK(tracer.called_operators().empty());
}

TEST_CASE("ops called inside a composite op are collected and counted as nested") {
  clear_callbacks();
  OperatorCallTracer tracer;
  const Value y = scale_shift({ones({3})});
  CHECK(y.to_tensor().to_vector<float>() == std::vector<float>{3, 3, 3});
  (void)ones({3}).mul(5.0);
  CHECK(tracer.uses() == std::vector<OperatorUse>{{"add", 1, 1, 0}, {"mul", 2, 1, 0}, {"test.scale_shift", 1, 0, 0}});
}

TEST_CASE("an operator-call tracer sees every thread, and ops recorded by a trace are not calls") {
  clear_callbacks();
  OperatorCallTracer tracer;
  std::thread worker([] { (void)relu(ones({2})); });
  worker.join();
  nn::Linear fc(4, 2);
  (void)symbolic_trace(*fc.ptr(), {InputSpec(Shape{1, 4})});  // records, calls nothing
  (void)ones({2}).exp();
  CHECK(tracer.called_operators() == std::vector<std::string>{"exp", "relu"});
}

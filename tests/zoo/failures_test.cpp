// MixedFailures: the zoo entry and its untraceable children (paths and type names pinned),
// an eager run, reproducibility, and each failing child's data-dependent behaviour.

#include "support/checks.hpp"

#include <symtrace/zoo/failures.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <cmath>
#include <set>

using namespace symtrace;

namespace {

// Records the modules called through the interposer, then runs them.
struct RecordingHook : Interposer {
  Value call_op(const OpCall&) override { throw std::logic_error("no symbolic op call expected"); }
  Value call_module(Module& m, const ValueList& args, std::source_location where) override {
    called.insert(&m);
    return m.run_forward(args, where);
  }
  std::set<const Module*> called;
};

}  // namespace

TEST_CASE("mixed_failures lists the children a tracer cannot trace, with their type names") {
  const zoo::ModelInfo& info = zoo::info("mixed_failures");
  CHECK(info.untraceable == std::vector<std::string>{"gate", "repeat", "opaque", "topk", "heads"});
  for (const char* pattern : {"data-dependent if (gate)", "loop bound from data (repeat)",
                              "opaque library call (opaque)", "tensor size from data (topk)",
                              "ModuleList indexed but never called (heads)", "never called (unused)"})
    CHECK_MESSAGE(info.description.find(pattern) != std::string::npos, pattern);
  REQUIRE(info.inputs.size() == 1);
  CHECK(info.inputs[0].shape == IntList{1, 3, 32, 32});
  const auto model = info.create();
  CHECK(model->type_name() == "MixedFailures");
  CHECK(model->get_submodule("gate").type_name() == "GatedConv");
  CHECK(model->get_submodule("repeat").type_name() == "RepeatedConv");
  CHECK(model->get_submodule("opaque").type_name() == "OpaqueMedianCenter");
  CHECK(model->get_submodule("topk").type_name() == "PositiveChannelMask");
  CHECK(model->get_submodule("heads").type_name() == "ModuleList");
  CHECK_FALSE(model->get_submodule("heads").is_callable());
  CHECK(model->get_submodule("unused").type_name() == "Linear");
  for (const std::string& path : info.untraceable) CHECK(model->get_submodule(path).is_callable() == (path != "heads"));
}

TEST_CASE("mixed_failures has 7,918 parameters under 14 keys") {
  const auto model = zoo::create("mixed_failures");
  CHECK(model->num_parameters() == (3 * 16 * 9 + 16) + 3 * (16 * 16 * 9 + 16) + 3 * (16 * 10 + 10));
  CHECK(model->num_parameters() == 7'918);
  CHECK(model->state_dict().keys() ==
        std::vector<std::string>{"stem.0.weight", "stem.0.bias", "gate.conv_a.weight", "gate.conv_a.bias",
                                 "gate.conv_b.weight", "gate.conv_b.bias", "repeat.conv.weight", "repeat.conv.bias",
                                 "heads.0.weight", "heads.0.bias", "heads.1.weight", "heads.1.bias",
                                 "unused.weight", "unused.bias"});
}

TEST_CASE("mixed_failures runs eagerly, deterministically for a fixed seed") {
  manual_seed(20);
  const auto a = zoo::create("mixed_failures");
  const Tensor x = randn({1, 3, 32, 32});
  manual_seed(20);
  const auto b = zoo::create("mixed_failures");
  const Tensor ya = a->call({x}).to_tensor();
  CHECK(ya.shape() == Shape{1, 10});
  for (const float v : ya.to_vector<float>()) CHECK(std::isfinite(v));
  CHECK(ya.to_vector<float>() == b->call({x}).to_tensor().to_vector<float>());
  const StateDict sa = a->state_dict(), sb = b->state_dict();
  for (const auto& [key, tensor] : sa) CHECK(tensor.to_vector<float>() == sb.at(key).to_vector<float>());
}

TEST_CASE("the parent calls the heads one by one and never the list or the unused module") {
  manual_seed(21);
  zoo::MixedFailures model;
  RecordingHook hook;
  {
    InterposerScope scope(hook);
    (void)model(randn({2, 3, 8, 8}));
  }
  for (Module* child : {static_cast<Module*>(model->gate.get()), static_cast<Module*>(model->repeat.get()),
                        static_cast<Module*>(model->opaque.get()), static_cast<Module*>(model->topk.get()),
                        model->heads->ptr(0).get(), model->heads->ptr(1).get()})
    CHECK(hook.called.contains(child));
  CHECK_FALSE(hook.called.contains(model->heads.get()));
  CHECK_FALSE(hook.called.contains(model->unused.get()));
}

TEST_CASE("the gate picks its conv by the sign of the input's mean") {
  manual_seed(22);
  zoo::GatedConv gate(2);
  const Tensor x = rand({1, 2, 4, 4}) + 0.5;
  CHECK(testing::max_abs_diff(gate(x), gate->conv_a(x)) == 0);
  CHECK(testing::max_abs_diff(gate(-x), gate->conv_b(-x)) == 0);
}

TEST_CASE("the repeated conv runs once or twice depending on the input's largest magnitude") {
  manual_seed(23);
  zoo::RepeatedConv repeat(2);
  const auto once = [&](const Tensor& t) { return relu(repeat->conv(t)); };
  const Tensor small = rand({1, 2, 4, 4}) * 0.5;
  const Tensor large = small * 4.0;
  CHECK(testing::max_abs_diff(repeat(small), once(small)) == 0);
  CHECK(testing::max_abs_diff(repeat(large), once(once(large))) == 0);
}

TEST_CASE("the opaque function subtracts the median it computes from the data") {
  zoo::OpaqueMedianCenter opaque;
  testing::check_tensor(opaque(tensor({1.0f, 5.0f, 2.0f, 4.0f, 3.0f})), DType::float32, {5}, {-2, 2, -1, 1, 0});
  testing::check_tensor(zoo::subtract_median(tensor({7.0f, -1.0f}, {2, 1})), DType::float32, {2, 1}, {0, -8});
  CHECK(zoo::subtract_median(zeros({0, 3})).shape() == Shape{0, 3});
}

TEST_CASE("the channel mask keeps as many channels as have a positive mean") {
  zoo::PositiveChannelMask topk;
  // Channel means over batch and space: 1, -1, 2, -3: two are positive, so channels 0 and 1 stay.
  const Tensor x = tensor({1.0f, -1.0f, 2.0f, -3.0f}, {1, 4, 1, 1});
  testing::check_tensor(topk(x), DType::float32, {1, 4, 1, 1}, {1, -1, 0, 0});
  // One positive mean (channel 2) keeps the first channel, not the positive one.
  testing::check_tensor(topk(tensor({-2.0f, -1.0f, 3.0f, -4.0f}, {1, 4, 1, 1})), DType::float32, {1, 4, 1, 1},
                        {-2, 0, 0, 0});
  testing::check_tensor(topk(-ones({1, 4, 1, 1})), DType::float32, {1, 4, 1, 1}, {0, 0, 0, 0});
}

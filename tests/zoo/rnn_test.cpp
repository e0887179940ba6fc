// The hand-unrolled Elman RNN: parameters and keys, the declared "tokens" input, one cell
// call per time step (the loop bound is the sequence length), equality with a hand-unrolled
// computation, reproducibility.

#include "support/checks.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/zoo/rnn.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <cmath>
#include <map>
#include <string>

using namespace symtrace;

namespace {

// Counts the calls of each module type passing the thread's interposer, then runs the module.
struct CountingHook : Interposer {
  Value call_op(const OpCall&) override { throw std::logic_error("no symbolic op call expected"); }
  Value call_module(Module& m, const ValueList& args, std::source_location where) override {
    ++calls[m.type_name()];
    return m.run_forward(args, where);
  }
  std::map<std::string, int> calls;
};

Tensor tokens_2x5() { return tensor<std::int64_t>({3, 999, 0, 41, 7, 12, 5, 5, 800, 1}, {2, 5}); }

}  // namespace

TEST_CASE("rnn has 217,832 parameters under embed, cell.ih, cell.hh and head") {
  const auto model = zoo::create("rnn");
  CHECK(model->num_parameters() == 1000 * 64 + (64 * 128 + 128) + (128 * 128 + 128) + (128 * 1000 + 1000));
  CHECK(model->num_parameters() == 217'832);
  CHECK(model->state_dict().keys() == std::vector<std::string>{"embed.weight", "cell.ih.weight", "cell.ih.bias",
                                                               "cell.hh.weight", "cell.hh.bias", "head.weight",
                                                               "head.bias"});
  CHECK(model->type_name() == "ElmanRNN");
  CHECK(model->get_submodule("cell").type_name() == "ElmanCell");
}

TEST_CASE("rnn declares its input 'tokens' and the zoo gives int64 ids below 1000") {
  const zoo::ModelInfo& info = zoo::info("rnn");
  const auto model = info.create();
  CHECK(model->input_names() == std::vector<std::string>{"tokens"});
  REQUIRE(info.inputs.size() == 1);
  CHECK(info.inputs[0].name == "tokens");
  CHECK(info.inputs[0].dtype == DType::int64);
  CHECK(info.inputs[0].shape == IntList{1, 16});
  CHECK(info.inputs[0].high == 1000);
  CHECK(info.untraceable.empty());
  Generator gen(9);
  const auto inputs = zoo::example_inputs(info, gen);
  const Tensor y = model->call({inputs.at(0)}).to_tensor();
  CHECK(y.shape() == Shape{1, 1000});
}

TEST_CASE("rnn runs the cell once per time step, as a hand-unrolled computation does") {
  manual_seed(10);
  zoo::ElmanRNN model;
  model->eval();
  const Tensor tokens = tokens_2x5();
  CountingHook hook;
  Tensor y;
  {
    InterposerScope scope(hook);
    y = model(tokens);
  }
  CHECK(y.shape() == Shape{2, 1000});
  CHECK(hook.calls["ElmanCell"] == 5);
  CHECK(hook.calls["Embedding"] == 1);
  CHECK(hook.calls["Linear"] == 5 * 2 + 1);

  const Tensor x = embedding(model->embed->weight, tokens);
  const auto& ih = *model->cell->ih;
  const auto& hh = *model->cell->hh;
  const auto step = [&](const Tensor& xt, const Tensor& h) {
    return tanh(linear(xt, ih.weight, ih.bias) + linear(h, hh.weight, hh.bias));
  };
  Tensor h = zeros({2, 128});
  h = step(x.select(1, 0), h);
  h = step(x.select(1, 1), h);
  h = step(x.select(1, 2), h);
  h = step(x.select(1, 3), h);
  const Tensor after_four = linear(h, model->head->weight, model->head->bias);
  h = step(x.select(1, 4), h);
  const Tensor expected = linear(h, model->head->weight, model->head->bias);
  CHECK(testing::max_abs_diff(y, expected) < 1e-5);
  CHECK(testing::max_abs_diff(y, after_four) > 1e-3);  // the fifth step matters
}

TEST_CASE("the loop bound follows the sequence length") {
  manual_seed(11);
  zoo::ElmanRNN model;
  for (const std::int64_t steps : {1, 3, 9}) {
    CountingHook hook;
    InterposerScope scope(hook);
    const Tensor y = model(zeros({4, steps}, DType::int64));
    CHECK(y.shape() == Shape{4, 1000});
    CHECK(hook.calls["ElmanCell"] == steps);
  }
}

TEST_CASE("the same seed gives bit-identical RNN weights and outputs") {
  manual_seed(12);
  zoo::ElmanRNN a;
  manual_seed(12);
  zoo::ElmanRNN b;
  const StateDict sa = a->state_dict(), sb = b->state_dict();
  for (const auto& [key, tensor] : sa) CHECK(tensor.to_vector<float>() == sb.at(key).to_vector<float>());
  const Tensor ya = a(tokens_2x5());
  CHECK(ya.to_vector<float>() == b(tokens_2x5()).to_vector<float>());
  for (const float v : ya.to_vector<float>()) REQUIRE(std::isfinite(v));
}

TEST_CASE("an RNN with a non-positive size is rejected") {
  CHECK_THROWS_WITH_AS(zoo::ElmanRNN(zoo::RNNConfig{.hidden = 0}),
                       doctest::Contains("ElmanRNN(vocab=1000, embed=64, hidden=0): sizes must be positive"),
                       std::invalid_argument);
}

// "Without example shapes" is as far as the RNN allows: an unknown batch traces (the initial
// state is zeros sized by a `size` node instead of a graph constant), an unknown length does
// not (the time loop compares the step with the unknown length).
TEST_CASE("rnn traces with and without example shapes, lints, and its graph runs equal to eager") {
  manual_seed(30);
  const auto model = zoo::create("rnn");
  model->eval();
  const zoo::ModelInfo& info = zoo::info("rnn");
  Generator gen(31);
  const Tensor tokens = zoo::example_inputs(info, gen).at(0);  // int64 1x16
  zoo::ModelInfo batch3_info = info;
  batch3_info.inputs.at(0).shape = {3, 16};
  const Tensor batch3 = zoo::example_inputs(batch3_info, gen).at(0);

  const Graph shaped = testing::trace_and_lint(*model, tokens);
  // placeholder, embed, the initial state (a constant), 16 steps x (select, ih, hh, add,
  // tanh), head, output.
  CHECK(shaped.size() == 1 + 1 + 1 + 16 * 5 + 1 + 1);
  CHECK(testing::count_nodes(shaped, OpKind::call_module, "cell.ih") == 16);
  CHECK(shaped.num_constants() == 1);
  CHECK(shaped.find_node("size") == nullptr);
  CHECK(testing::result_meta(shaped) == "float32[1, 1000]");

  const Graph unknown_batch = testing::trace_and_lint(*model, InputSpec(Shape{Dim::unknown(), 16}, DType::int64));
  CHECK(unknown_batch.size() == shaped.size() + 1);  // size, and zeros instead of the constant
  CHECK(unknown_batch.num_constants() == 0);
  CHECK(testing::count_nodes(unknown_batch, OpKind::call_method, "size") == 1);
  CHECK(testing::count_nodes(unknown_batch, OpKind::call_function, "zeros") == 1);
  CHECK(testing::result_meta(unknown_batch) == "float32[?, 1000]");

  CHECK_THROWS_WITH_AS(
      symbolic_trace(*model, {InputSpec(Shape{1, Dim::unknown()}, DType::int64)}),
      doctest::Contains(fmt::format("rnn.cpp:{}: a comparison of sizes unknown at trace time",
                                    zoo::ElmanRNNImpl::length_loop_line)
                            .c_str()),
      TraceError);

  const Tensor eager = testing::run(*model, tokens);
  testing::check_graph_runs_equal_to_eager(*model, shaped, tokens, eager);
  testing::check_graph_runs_equal_to_eager(*model, unknown_batch, tokens, eager);
  testing::check_graph_runs_equal_to_eager(*model, unknown_batch, batch3, testing::run(*model, batch3));
  CHECK_THROWS_AS(Interpreter(*model, shaped).run({batch3}), std::invalid_argument);  // it knew batch 1
}

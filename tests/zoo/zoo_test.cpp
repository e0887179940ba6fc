// The zoo registry: names, lookup errors, creation, example inputs.

#include "support/checks.hpp"

#include <symtrace/zoo/zoo.hpp>

#include <fmt/format.h>

#include <set>

using namespace symtrace;

TEST_CASE("the zoo lists every reference model once, in a fixed order") {
  const std::vector<std::string> names = zoo::names();
  const std::set<std::string> unique(names.begin(), names.end());
  CHECK(unique.size() == names.size());
  for (const char* expected :
       {"resnet18", "resnet50", "resnet50_fail1", "resnet50_fail4", "resnet50_fail16", "mobilenet_v2",
        "unet_small", "vit_b16", "vit_tiny", "deep_mlp_100", "deep_mlp_1000", "deep_mlp_10000",
        "deep_mlp_1000_fail16", "deep_chain_1000", "rnn", "mixed_failures"})
    CHECK_MESSAGE(unique.contains(expected), expected);
  CHECK(names.front() == "resnet18");
}

TEST_CASE("every zoo entry has a one-line description and example inputs") {
  for (const zoo::ModelInfo& m : zoo::models()) {
    CAPTURE(m.name);
    CHECK_FALSE(m.description.empty());
    CHECK(m.description.find('\n') == std::string::npos);
    REQUIRE_FALSE(m.inputs.empty());
    for (const zoo::ExampleInput& in : m.inputs) {
      CHECK_FALSE(in.name.empty());
      CHECK_FALSE(in.shape.empty());
      if (in.dtype == DType::int64) CHECK(in.high > 0);
    }
  }
}

TEST_CASE("an unknown model name is refused with the closest name and the list") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)zoo::create("resnet5"),
                       doctest::Contains(fmt::format("zoo_test.cpp:{}: unknown zoo model 'resnet5': did you mean "
                                                     "'resnet50'? the models are resnet18, resnet50, ",
                                                     line)
                                             .c_str()),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)zoo::info("transformer_xl"),
                       doctest::Contains("unknown zoo model 'transformer_xl': the models are resnet18"),
                       std::invalid_argument);
}

TEST_CASE("created models are new instances in eval mode, and their declared inputs match the entry") {
  manual_seed(0);
  const auto a = zoo::create("mixed_failures");
  const auto b = zoo::create("mixed_failures");
  CHECK(a != b);
  for (const NamedModule& nm : a->named_modules()) CHECK_FALSE(nm.module->is_training());
  for (const zoo::ModelInfo& m : zoo::models()) {
    if (m.name.starts_with("deep_mlp_10000") || m.name.starts_with("vit_b16") || m.name.starts_with("resnet50"))
      continue;  // large: their entries are checked by the family tests
    CAPTURE(m.name);
    const auto model = m.create();
    REQUIRE(model->is_callable());
    std::vector<std::string> declared;
    for (const zoo::ExampleInput& in : m.inputs) declared.push_back(in.name);
    CHECK(model->input_names() == declared);
    CHECK(model->num_parameters() == m.parameters);
    for (const std::string& path : m.untraceable) CHECK_NOTHROW((void)model->get_submodule(path));
  }
}

TEST_CASE("example inputs follow the entry: float normals and int64 ids below high") {
  Generator gen(7);
  const zoo::ModelInfo& rnn = zoo::info("rnn");
  const std::vector<Tensor> inputs = zoo::example_inputs(rnn, gen);
  REQUIRE(inputs.size() == rnn.inputs.size());
  CHECK(inputs[0].dtype() == DType::int64);
  CHECK(inputs[0].shape() == Shape(rnn.inputs[0].shape));
  for (std::int64_t id : inputs[0].to_vector<std::int64_t>()) {
    CHECK(id >= 0);
    CHECK(id < rnn.inputs[0].high);
  }
  const std::vector<Tensor> images = zoo::example_inputs(zoo::info("resnet50"), gen);
  CHECK(images[0].meta() == TensorMeta{DType::float32, Shape{1, 3, 224, 224}});
  Generator g1(3), g2(3);
  CHECK(testing::max_abs_diff(zoo::example_inputs(rnn, g1)[0], zoo::example_inputs(rnn, g2)[0]) == 0);
}

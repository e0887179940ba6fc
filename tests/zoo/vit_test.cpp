// ViT-B/16 and ViT-Ti/16 (bench/fx/models.py): parameter counts, state-dict keys,
// the attention's reshape/permute against a per-head computation, eager runs at a small image
// size, reproducibility, and the zoo entries of the sequence family.

#include "support/checks.hpp"
#include "support/zoo_checks.hpp"

#include <symtrace/zoo/vit.hpp>
#include <symtrace/zoo/zoo.hpp>

#include <cmath>

using namespace symtrace;

namespace {

bool all_finite(const Tensor& t) {
  for (const float v : t.to_vector<float>())
    if (!std::isfinite(v)) return false;
  return true;
}

// ViT-B/16's blocks at a 32x32 image: 2x2 patches + the class token = 5 tokens.
zoo::ViTConfig small_b16() { return {.image_size = 32}; }

}  // namespace

TEST_CASE("vit_b16 has 86,567,656 parameters and PyTorch's state-dict keys") {
  const auto model = zoo::create("vit_b16");
  CHECK(model->num_parameters() == 86'567'656);
  CHECK(zoo::info("vit_b16").parameters == model->num_parameters());
  CHECK_FALSE(model->is_training());
  const StateDict state = model->state_dict();
  CHECK(state.size() == 4 + 12 * 12 + 4);
  const auto keys = state.keys();
  CHECK(std::vector<std::string>(keys.begin(), keys.begin() + 4) ==
        std::vector<std::string>{"cls_token", "pos_embed", "patch_embed.weight", "patch_embed.bias"});
  CHECK(keys.back() == "head.bias");
  CHECK(state.at("blocks.11.attn.qkv.weight").shape() == Shape{2304, 768});
  CHECK(state.at("blocks.0.mlp.fc1.weight").shape() == Shape{3072, 768});
  CHECK(state.at("blocks.5.ln2.bias").shape() == Shape{768});
  CHECK(state.at("pos_embed").shape() == Shape{1, 197, 768});
  CHECK(state.at("patch_embed.weight").shape() == Shape{768, 3, 16, 16});
  CHECK(state.at("cls_token").to_vector<float>() == std::vector<float>(768, 0.0f));
  const auto& norm = dynamic_cast<nn::LayerNormImpl&>(model->get_submodule("blocks.3.ln1"));
  CHECK(norm.options.eps == 1e-6);
  CHECK(model->get_submodule("blocks.3.attn").type_name() == "Attention");
  CHECK(model->get_submodule("blocks.3.mlp").type_name() == "MLP");
}

TEST_CASE("vit_tiny has 5,717,416 parameters in the same layout") {
  const auto model = zoo::create("vit_tiny");
  CHECK(model->num_parameters() == 5'717'416);
  const StateDict state = model->state_dict();
  CHECK(state.size() == 4 + 12 * 12 + 4);
  CHECK(state.at("blocks.11.attn.qkv.weight").shape() == Shape{576, 192});
  CHECK(dynamic_cast<zoo::AttentionImpl&>(model->get_submodule("blocks.0.attn")).heads == 3);
}

TEST_CASE("the ViT-B/16 architecture runs eagerly on a 32x32 image") {
  manual_seed(0);
  zoo::ViT model(small_b16());
  model->eval();
  // Only the position embeddings shrink: 5 tokens instead of 197.
  CHECK(model->num_parameters() == 86'567'656 - (197 - 5) * 768);
  CHECK(model->pos_embed.shape() == Shape{1, 5, 768});
  const Tensor y = model(randn({1, 3, 32, 32}));
  CHECK(y.shape() == Shape{1, 1000});
  CHECK(all_finite(y));
}

TEST_CASE("attention splits qkv into heads as the Python model's reshape and permute do") {
  manual_seed(1);
  zoo::Attention attn(8, 2);
  const Tensor x = randn({2, 3, 8});
  const Tensor packed = attn->qkv(x);  // [2, 3, 24]: q | k | v, each head_dim 4 per head
  TensorList heads;
  for (std::int64_t h = 0; h < 2; ++h) {
    const Tensor q = packed.narrow(2, 0 + 4 * h, 4), k = packed.narrow(2, 8 + 4 * h, 4),
                 v = packed.narrow(2, 16 + 4 * h, 4);
    heads.push_back(softmax(matmul(q, k.transpose(1, 2)) * 0.5, -1).matmul(v));
  }
  const Tensor expected = attn->proj(cat(heads, 2));
  CHECK(testing::max_abs_diff(attn(x), expected) < 1e-5);
}

TEST_CASE("the class token and position embeddings enter as in the Python model") {
  manual_seed(2);
  zoo::ViT model(zoo::ViTConfig{.image_size = 16, .patch = 8, .dim = 8, .depth = 0, .heads = 2, .mlp = 16, .num_classes = 3});
  model->cls_token.copy_(randn({1, 1, 8}));
  const Tensor x = randn({2, 3, 16, 16});
  // With no blocks, the head reads norm(cls_token + pos_embed[:, 0]) for every image.
  const Tensor token = model->norm(model->cls_token.select(1, 0) + model->pos_embed.select(1, 0));
  const Tensor expected = model->head(token.expand({2, 8}));
  CHECK(testing::max_abs_diff(model(x), expected) < 1e-5);
}

TEST_CASE("the same seed gives bit-identical ViT weights and outputs") {
  const zoo::ViTConfig config{.image_size = 32, .dim = 192, .depth = 2, .heads = 3, .mlp = 768};
  manual_seed(3);
  zoo::ViT a(config);
  const Tensor x = randn({1, 3, 32, 32});
  manual_seed(3);
  zoo::ViT b(config);
  const StateDict sa = a->state_dict(), sb = b->state_dict();
  REQUIRE(sa.size() == sb.size());
  for (const auto& [key, tensor] : sa) CHECK(tensor.to_vector<float>() == sb.at(key).to_vector<float>());
  CHECK(a(x).to_vector<float>() == b(x).to_vector<float>());
}

TEST_CASE("a ViT config that does not tile the image or split the heads is rejected") {
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(zoo::vit({.image_size = 30}),
                       fmt::format("{}:{}: ViT: patch 16 does not divide image_size 30; choose a patch that "
                                   "tiles the image",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(zoo::vit({.dim = 100}),
                       doctest::Contains("ViT: heads 12 do not divide dim 100; choose dim = heads * head_dim"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(zoo::vit({.depth = -1}), doctest::Contains("sizes must be positive (depth >= 0)"),
                       std::invalid_argument);
}

TEST_CASE("the sequence family's zoo entries come in order with their example inputs") {
  const auto all = zoo::names();
  const auto first = std::find(all.begin(), all.end(), "vit_b16");
  REQUIRE(all.end() - first >= 9);
  CHECK(std::vector<std::string>(first, first + 9) ==
        std::vector<std::string>{"vit_b16", "vit_tiny", "deep_mlp_100", "deep_mlp_1000", "deep_mlp_10000",
                                 "deep_mlp_1000_fail16", "deep_chain_1000", "rnn", "mixed_failures"});
  const auto shape_of = [](std::string_view name) { return zoo::info(name).inputs.at(0).shape; };
  CHECK(shape_of("vit_b16") == IntList{1, 3, 224, 224});
  CHECK(shape_of("vit_tiny") == IntList{1, 3, 224, 224});
  CHECK(shape_of("deep_mlp_10000") == IntList{1, 64});
  CHECK(shape_of("mixed_failures") == IntList{1, 3, 32, 32});
  for (const char* clean : {"vit_b16", "vit_tiny", "deep_mlp_100", "deep_mlp_1000", "deep_mlp_10000", "rnn"}) {
    CHECK(zoo::info(clean).untraceable.empty());
    CHECK(zoo::info(clean).inputs.size() == 1);
  }
}

namespace {

// Traced with the example image, every size is a number and no `size` node is recorded; the
// class token's expand to the known batch has no symbolic argument, so it runs at trace time
// and the graph reads its result as the constant `_tensor_constant0` (a view of cls_token).
// Traced with a rank-4 input of unknown sizes, the expand reads the batch (x.size(0)) and is
// recorded; adding pos_embed makes the token count known again, so each attention reads only
// B (N and C are known): 1 + 12 `size` nodes. The image stays 224x224, the size the position
// embeddings were made for; `other_batch` (when not 0) also runs the unknown-shape graph on
// that many images, which costs a ViT-B/16 about 8 s per image, so only vit_tiny does it.
void check_vit_traces(std::string_view name, std::uint64_t seed, std::int64_t dim, std::int64_t other_batch) {
  manual_seed(seed);
  const auto model = zoo::create(name);
  model->eval();
  const zoo::ModelInfo& info = zoo::info(name);
  Generator gen(seed + 1);
  const Tensor x = zoo::example_inputs(info, gen).at(0);  // 1x3x224x224

  const Graph shaped = testing::trace_and_lint(*model, x);
  // placeholder; patch_embed, flatten, transpose; cls_token, expand, cat; pos_embed, add;
  // 12 blocks x (ln1, 14 attention nodes, add, ln2, fc1, act, fc2, add); norm, select, head;
  // output. torch.fx gives 302 nodes: these 265 and 37 `size` calls, which known shapes make
  // plain numbers here.
  constexpr std::size_t attention = 14;  // qkv, reshape, permute, 3 selects, transpose, matmul,
                                         // mul, softmax, matmul, transpose, reshape, proj
  CHECK(shaped.size() == 1 + 3 + 3 + 2 + 12 * (1 + attention + 1 + 1 + 3 + 1) + 3 + 1);
  CHECK(shaped.find_node("size") == nullptr);
  CHECK(testing::count_nodes(shaped, OpKind::call_method, "size") == 0);
  // An op on a parameter alone is recorded, as in fx: the class token is not folded into a constant.
  CHECK(shaped.num_constants() == 0);
  CHECK(testing::count_nodes(shaped, OpKind::get_attr, "cls_token") == 1);
  CHECK(testing::count_nodes(shaped, OpKind::call_method, "expand") == 1);
  CHECK(testing::result_meta(shaped) == "float32[1, 1000]");

  const Graph unknown = testing::trace_and_lint(*model, InputSpec(Shape::unknown(4), info.inputs[0].dtype));
  REQUIRE(unknown.find_node("size") != nullptr);
  CHECK(testing::count_nodes(unknown, OpKind::call_method, "size") == 1 + 12);
  CHECK(unknown.num_constants() == 0);
  CHECK(testing::count_nodes(unknown, OpKind::get_attr, "cls_token") == 1);
  CHECK(testing::count_nodes(unknown, OpKind::call_method, "expand") == 1);
  CHECK(unknown.size() == shaped.size() + 1 + 12);  // the size calls
  const Node* embedded = unknown.find_node("add");
  REQUIRE(embedded != nullptr);
  REQUIRE(embedded->tensor_meta() != nullptr);
  CHECK(to_string(*embedded->tensor_meta()) == fmt::format("float32[?, 197, {}]", dim));
  CHECK(testing::result_meta(unknown) == "float32[?, 1000]");

  const Tensor eager = testing::run(*model, x);
  testing::check_graph_runs_equal_to_eager(*model, shaped, x, eager);
  testing::check_graph_runs_equal_to_eager(*model, unknown, x, eager);
  if (other_batch != 0) {
    const Tensor batch = randn({other_batch, 3, 224, 224}, gen);
    testing::check_graph_runs_equal_to_eager(*model, unknown, batch, testing::run(*model, batch));
    CHECK_THROWS_AS(Interpreter(*model, shaped).run({batch}), std::invalid_argument);  // it knew batch 1
  }
}

}  // namespace

TEST_CASE("vit_b16 traces with and without example shapes, lints, and its graph runs equal to eager") {
  check_vit_traces("vit_b16", 30, 768, 0);
}

TEST_CASE("vit_tiny traces with and without example shapes, lints, and its graph runs equal to eager") {
  check_vit_traces("vit_tiny", 32, 192, 2);
}

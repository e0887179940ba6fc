// Structured pruning along the channel groups.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include "support/checks.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

/// conv1 (3 -> 4) -> batch norm -> relu -> conv2 (4 -> 2).
class Chain : public TypedModule<Chain> {
 public:
  Chain() {
    conv1 = register_module("conv1", nn::Conv2d(3, 4, 1));
    bn = register_module("bn", nn::BatchNorm2d(4));
    conv2 = register_module("conv2", nn::Conv2d(4, 2, 1));
  }
  Tensor forward(const Tensor& x) { return conv2(relu(bn(conv1(x)))); }
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Conv2d conv2{nullptr};
};

/// conv (3 -> 4) -> layer norm over [4, 5, 5] -> conv (4 -> 2).
class NormOverChannels : public TypedModule<NormOverChannels> {
 public:
  NormOverChannels() {
    conv1 = register_module("conv1", nn::Conv2d(3, 4, 1));
    norm = register_module("norm", nn::LayerNorm(IntList{4, 5, 5}));
    conv2 = register_module("conv2", nn::Conv2d(4, 2, 1));
  }
  Tensor forward(const Tensor& x) { return conv2(norm(conv1(x))); }
  nn::Conv2d conv1{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::Conv2d conv2{nullptr};
};

/// A ResNeXt-style block: stem (3 -> 8), reduce (8 -> 12), a grouped 3x3 convolution
/// (12 -> 18, groups 3), expand (18 -> 8), added to the stem's output.
class GroupedBlock : public TypedModule<GroupedBlock> {
 public:
  GroupedBlock() {
    stem = register_module("stem", nn::Conv2d(3, 8, 1));
    reduce = register_module("reduce", nn::Conv2d(8, 12, 1));
    bn1 = register_module("bn1", nn::BatchNorm2d(12));
    grouped = register_module("grouped", nn::Conv2d(12, 18, 3, {.padding = 1, .groups = 3, .bias = false}));
    bn2 = register_module("bn2", nn::BatchNorm2d(18));
    expand = register_module("expand", nn::Conv2d(18, 8, 1));
    head = register_module("head", nn::Conv2d(8, 2, 1));
  }
  Tensor forward(const Tensor& x) {
    const Tensor s = stem(x);
    return head(relu(expand(relu(bn2(grouped(relu(bn1(reduce(s))))))) + s));
  }
  nn::Conv2d stem{nullptr}, reduce{nullptr}, grouped{nullptr}, expand{nullptr}, head{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
};

/// embed (linear 6 -> 8), attention over it (4 heads of 2), head (linear 8 -> 3). `mode` 1
/// uses the attention weights; mode 2 gives the attention a mask per head; mode 3 reads its
/// output projection's weight outside it; mode 4 holds that weight as a parameter of its own.
class Attend : public TypedModule<Attend> {
 public:
  explicit Attend(int m) : mode(m) {
    embed = register_module("embed", nn::Linear(6, 8));
    attn = register_module("attn", nn::MultiheadAttention(8, 4, {.batch_first = true}));
    head = register_module("head", nn::Linear(8, 3));
    if (mode == 4) alias = register_parameter("alias", attn->out_proj->weight);
  }
  Tensor forward(const Tensor& x) {  // [2, 5, 6]
    const Tensor e = embed(x);
    std::optional<Tensor> mask;
    if (mode == 2) mask = rand({2 * 4, x.shape()[1].value(), x.shape()[1].value()});
    auto [out, weights] = attn(e, e, e, std::optional<Tensor>(), std::optional<bool>(true), mask, std::optional<bool>(true));
    Tensor y = head(out);
    if (mode == 1) y = y + weights->sum({2}).unsqueeze(2);
    if (mode == 3) y = y + attn->out_proj->weight.sum();
    if (mode == 4) y = y + alias.sum();
    return y;
  }
  int mode;
  Tensor alias;
  nn::Linear embed{nullptr}, head{nullptr};
  nn::MultiheadAttention attn{nullptr};
};

ChannelGroups groups_of(Module& model, const Shape& input) {
  return channel_groups(model, trace_for_analysis(model, {input}));
}

/// resnet18's parameter count with the given widths per stage (every group of a stage, inner
/// and residual, at the same width).
std::int64_t resnet18_parameters(const std::array<std::int64_t, 4>& k) {
  std::int64_t n = 3 * k[0] * 49 + 2 * k[0];  // stem conv and norm
  std::int64_t in = k[0];
  for (std::size_t s = 0; s < 4; ++s) {
    const std::int64_t w = k[s];
    n += in * w * 9 + 2 * w + w * w * 9 + 2 * w;  // block 0
    if (s > 0) n += in * w + 2 * w;               // its downsample
    n += 2 * (w * w * 9 + 2 * w);                 // block 1
    in = w;
  }
  return n + k[3] * 1000 + 1000;  // fc
}

}  // namespace

TEST_CASE("channels_to_keep drops the channels with the smallest L1 norm, and pruning a dead channel changes nothing") {
  Chain net;
  net.eval();
  // Channel 2 of conv1 is dead: zero weights and bias.
  (void)net.conv1->weight.narrow(0, 2, 1).fill_(0.0);
  (void)net.conv1->bias.narrow(0, 2, 1).fill_(0.0);
  const Tensor x = randn({1, 3, 5, 5});
  const Tensor before = net.call({x}).to_tensor();
  const ChannelGroups g = groups_of(net, Shape{1, 3, 5, 5});
  REQUIRE(g.num_prunable() == 1);
  const ChannelGroup& group = g.groups[1];
  REQUIRE(group.prunable);
  const std::vector<std::int64_t> keep = channels_to_keep(net, group, 0.25);
  CHECK(keep == std::vector<std::int64_t>{0, 1, 3});
  const std::vector<ChannelSelection> plan{{&group, keep}};
  prune_channels(net, plan);
  CHECK(net.conv1->out_channels == 3);
  CHECK(to_string(net.conv1->weight.meta().shape) == "[3, 3, 1, 1]");
  CHECK(to_string(net.get_tensor("conv1.weight").meta().shape) == "[3, 3, 1, 1]");  // the same handle
  CHECK(net.bn->num_features == 3);
  CHECK(to_string(net.bn->running_var.meta().shape) == "[3]");
  CHECK(net.conv2->in_channels == 3);
  CHECK(to_string(net.conv2->weight.meta().shape) == "[2, 3, 1, 1]");
  CHECK(net.num_parameters() == (3 * 3 + 3) + 2 * 3 + (3 * 2 + 2));
  const Tensor after = net.call({x}).to_tensor();
  CHECK(max_abs_diff(after, before) < 1e-6);
}

TEST_CASE("resnet18 with 30% of every group pruned runs, traces, and has the parameter count of its new widths") {
  const std::shared_ptr<Module> model = zoo::create("resnet18");
  CHECK(resnet18_parameters({64, 128, 256, 512}) == model->num_parameters());
  const ChannelGroups g = groups_of(*model, Shape{1, 3, 64, 64});
  std::vector<ChannelSelection> plan;
  for (const ChannelGroup& group : g.groups) {
    if (group.prunable) plan.push_back({&group, channels_to_keep(*model, group, 0.3)});
  }
  REQUIRE(plan.size() == 12);
  prune_channels(*model, plan);
  // floor(0.3 C) channels go: 64 -> 45, 128 -> 90, 256 -> 180, 512 -> 359.
  CHECK(model->num_parameters() == resnet18_parameters({45, 90, 180, 359}));
  CHECK(model->get_submodule("layer3.1.conv1").extra_repr().starts_with("180, 180, kernel_size=(3, 3)"));
  const Tensor x = randn({1, 3, 64, 64});
  const Tensor eager = model->call({x}).to_tensor();
  CHECK(to_string(eager.meta().shape) == "[1, 1000]");
  const Graph graph = symbolic_trace(*model, {InputSpec(x)});
  graph.lint();
  CHECK(max_rel_error(Interpreter(*model, graph).run({x}).to_tensor(), eager) < 1e-5);
  // The analysis of the pruned model finds the same groups at their new widths.
  const ChannelGroups again = groups_of(*model, Shape{1, 3, 64, 64});
  REQUIRE(again.groups.size() == g.groups.size());
  for (std::size_t i = 0; i < g.groups.size(); ++i) {
    CAPTURE(i);
    CHECK(again.groups[i].members == g.groups[i].members);
    CHECK(again.groups[i].channels == (g.groups[i].prunable ? g.groups[i].channels - g.groups[i].channels * 3 / 10
                                                            : g.groups[i].channels));
  }
}

TEST_CASE("mobilenet_v2 pruned along its groups keeps its depthwise convolutions depthwise") {
  const std::shared_ptr<Module> model = zoo::create("mobilenet_v2");
  const ChannelGroups g = groups_of(*model, Shape{1, 3, 64, 64});
  std::vector<ChannelSelection> plan;
  for (const ChannelGroup& group : g.groups) {
    if (group.prunable) plan.push_back({&group, channels_to_keep(*model, group, 0.5)});
  }
  prune_channels(*model, plan);
  const auto& dw = dynamic_cast<const nn::Conv2dImpl&>(model->get_submodule("features.5.conv.1.0"));
  CHECK(dw.options.groups == 96);
  CHECK(dw.in_channels == 96);
  CHECK(dw.out_channels == 96);
  const Tensor x = randn({1, 3, 64, 64});
  const Tensor eager = model->call({x}).to_tensor();
  const Graph graph = symbolic_trace(*model, {InputSpec(x)});
  CHECK(max_rel_error(Interpreter(*model, graph).run({x}).to_tensor(), eager) < 1e-5);
}

TEST_CASE("a bad selection is refused before anything changes") {
  Chain net;
  const ChannelGroups g = groups_of(net, Shape{1, 3, 5, 5});
  const ChannelGroup& fixed = g.groups.front();  // the image's channels
  REQUIRE_FALSE(fixed.prunable);
  const ChannelGroup& group = g.groups[1];
  const std::vector<float> weights = net.conv1->weight.to_vector<float>();
  auto refused = [&](std::vector<ChannelSelection> plan, const char* message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(prune_channels(net, plan), doctest::Contains(message), std::invalid_argument);
    CHECK(net.conv1->weight.to_vector<float>() == weights);
    CHECK(net.num_parameters() == 16 + 8 + 10);
  };
  refused({{&fixed, {0, 1}}}, "the group of selection 0 cannot be pruned: comes from the graph's input 'x'");
  refused({{&group, {}}}, "selection 0 keeps no channel");
  refused({{&group, {1, 0}}}, "selection 0 keeps channel 0 at position 1: indices must increase and lie in [0, 4)");
  refused({{&group, {0, 4}}}, "selection 0 keeps channel 4 at position 1");
  refused({{&group, {0}}, {&group, {1}}}, "selection 1 repeats a group");
  ChannelGroup stale = group;
  stale.members.push_back(GroupMember{"conv2.missing", 0, 0, ChannelRole::param});
  refused({{&stale, {0}}}, "conv2.missing");
  CHECK_THROWS_WITH_AS((void)channels_to_keep(net, group, 1.0), doctest::Contains("amount 1 is not in [0, 1)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)channels_to_keep(net, fixed, 0.5), doctest::Contains("the group cannot be pruned"),
                       std::invalid_argument);
}

TEST_CASE("channels a layer norm normalises together are not cut: the others' results would change") {
  NormOverChannels net;
  const ChannelGroups g = groups_of(net, Shape{1, 3, 5, 5});
  CHECK(g.num_prunable() == 0);
  const ChannelGroup& group = g.groups[1];
  // The norm's weight goes with the channels, but its statistics take all of them.
  CHECK(group.members == std::vector<GroupMember>{{"conv1.weight", 0, 0, ChannelRole::out},
                                                  {"conv1.bias", 0, 0, ChannelRole::out},
                                                  {"norm.weight", 0, 0, ChannelRole::param},
                                                  {"norm.bias", 0, 0, ChannelRole::param},
                                                  {"conv2.weight", 1, 0, ChannelRole::in}});
  CHECK(group.reason.starts_with("normalised together by layer_norm at "));
  CHECK(group.reason.ends_with(": cutting some channels changes what the others compute"));
  const std::vector<ChannelSelection> plan{{&group, {1, 3}}};
  CHECK_THROWS_WITH_AS(prune_channels(net, plan), doctest::Contains("cannot be pruned"), std::invalid_argument);
}

TEST_CASE("among channels of equal norm, the lower index is kept") {
  Chain net;
  (void)net.conv1->weight.fill_(1.0);
  (void)net.conv1->bias.fill_(1.0);
  const ChannelGroups g = groups_of(net, Shape{1, 3, 5, 5});
  CHECK(channels_to_keep(net, g.groups[1], 0.5) == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("zoo models pruned at 0.3 compute what they computed with the cut channels masked") {
  for (const std::string name : {"resnet18", "resnet50_fail4", "mobilenet_v2", "unet_small", "vit_tiny"}) {
    CAPTURE(name);
    const std::shared_ptr<Module> model = zoo::create(name);
    model->eval();
    const zoo::ModelInfo& info = zoo::info(name);
    ValueList args;
    std::vector<InputSpec> inputs;
    for (const Tensor& x : zoo::example_inputs(info)) {
      args.emplace_back(x);
      inputs.emplace_back(x);
    }
    const ChannelGroups g = channel_groups(*model, trace_for_analysis(*model, inputs));
    std::vector<ChannelSelection> plan;
    for (const ChannelGroup& group : g.groups)
      if (group.prunable) plan.push_back({&group, channels_to_keep(*model, group, 0.3)});
    REQUIRE_FALSE(plan.empty());
    const std::int64_t before = model->num_parameters();
    mask_channels(*model, plan);
    CHECK(model->num_parameters() == before);  // masking changes values, not sizes
    const Tensor masked = model->call(args).to_tensor();
    prune_channels(*model, plan);
    CHECK(model->num_parameters() < before);
    const Tensor pruned = model->call(args).to_tensor();
    CHECK(pruned.shape() == masked.shape());
    CHECK(max_rel_error(pruned, masked) <= 1e-5);
  }
}

TEST_CASE("mask_channels checks the selections as prune_channels does and leaves the model unchanged on error") {
  Chain net;
  const ChannelGroups g = groups_of(net, Shape{1, 3, 5, 5});
  const Tensor before = net.conv2->weight.contiguous();
  const std::vector<ChannelSelection> bad{{&g.groups[1], {2, 1}}};
  CHECK_THROWS_WITH_AS(mask_channels(net, bad), doctest::Contains("mask_channels(): selection 0 keeps channel 1"),
                       std::invalid_argument);
  CHECK(max_rel_error(net.conv2->weight, before) == 0);
  const std::vector<ChannelSelection> keep_two{{&g.groups[1], {0, 3}}};
  mask_channels(net, keep_two);
  // conv2 reads channels 1 and 2 no more; conv1 still makes them.
  CHECK(net.conv2->weight.narrow(1, 1, 2).abs().sum().item<float>() == 0.0f);
  CHECK(net.conv2->weight.narrow(1, 0, 1).abs().sum().item<float>() > 0.0f);
}

TEST_CASE("a grouped convolution keeps its groups: the same positions of every group are cut, on both sides") {
  GroupedBlock net;
  net.eval();
  // Give the batch norms statistics of their own, so a wrong cut shows.
  for (const char* bn : {"bn1", "bn2"}) {
    for (const char* stat : {"running_mean", "running_var", "weight", "bias"}) {
      Tensor t = net.get_tensor(fmt::format("{}.{}", bn, stat));
      (void)t.copy_(rand(t.meta().shape.sizes()) + 0.5);
    }
  }
  const Tensor x = randn({2, 3, 6, 6});
  const ChannelGroups g = groups_of(net, Shape{2, 3, 6, 6});
  const ChannelGroup* in = nullptr;
  const ChannelGroup* out = nullptr;
  for (const ChannelGroup& group : g.groups) {
    if (group.producers() == std::vector<std::string>{"reduce"}) in = &group;
    if (group.producers() == std::vector<std::string>{"grouped"}) out = &group;
  }
  REQUIRE(in != nullptr);
  REQUIRE(out != nullptr);
  CHECK(in->prunable);
  CHECK(in->period == 4);
  CHECK(out->prunable);
  CHECK(out->period == 6);
  // floor(0.3 x 4) = 1 of every 4 input channels, floor(0.3 x 6) = 1 of every 6 output channels.
  const std::vector<std::int64_t> keep_in = channels_to_keep(net, *in, 0.3);
  const std::vector<std::int64_t> keep_out = channels_to_keep(net, *out, 0.5);
  REQUIRE(keep_in.size() == 9);
  REQUIRE(keep_out.size() == 9);
  for (std::size_t i = 0; i < 9; ++i) {
    CHECK(keep_in[i] == keep_in[i % 3] + 4 * static_cast<std::int64_t>(i / 3));
    CHECK(keep_out[i] == keep_out[i % 3] + 6 * static_cast<std::int64_t>(i / 3));
  }
  std::vector<ChannelSelection> plan{{in, keep_in}, {out, keep_out}};
  for (const ChannelGroup& group : g.groups)
    if (group.prunable && &group != in && &group != out) plan.push_back({&group, channels_to_keep(net, group, 0.3)});
  mask_channels(net, plan);
  const Tensor masked = net.call({x}).to_tensor();
  prune_channels(net, plan);
  CHECK(net.grouped->options.groups == 3);
  CHECK(net.grouped->in_channels == 9);
  CHECK(net.grouped->out_channels == 9);
  CHECK(to_string(net.grouped->weight.meta().shape) == "[9, 3, 3, 3]");
  const Tensor pruned = net.call({x}).to_tensor();
  CHECK(max_rel_error(pruned, masked) <= 1e-5);
  const Graph graph = symbolic_trace(net, {InputSpec(x)});
  CHECK(max_rel_error(Interpreter(net, graph).run({x}).to_tensor(), pruned) < 1e-5);
}

TEST_CASE("a selection that keeps other positions in one group of a grouped convolution than in another is refused") {
  GroupedBlock net;
  const ChannelGroups g = groups_of(net, Shape{1, 3, 6, 6});
  const ChannelGroup* in = nullptr;
  for (const ChannelGroup& group : g.groups)
    if (group.producers() == std::vector<std::string>{"reduce"}) in = &group;
  REQUIRE(in != nullptr);
  const std::vector<float> weights = net.grouped->weight.to_vector<float>();
  for (const std::vector<std::int64_t>& keep : {std::vector<std::int64_t>{0, 1, 2, 4, 5, 6, 8, 9, 11},
                                                std::vector<std::int64_t>{0, 1, 2, 4, 5, 6}}) {
    const std::vector<ChannelSelection> plan{{in, keep}};
    CHECK_THROWS_WITH_AS(prune_channels(net, plan),
                         doctest::Contains("prune_channels(): selection 0 keeps other channels in one block of 4 than "
                                           "in another: its group is cut alike in every group of a grouped convolution"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(mask_channels(net, plan), doctest::Contains("mask_channels(): selection 0 keeps other channels"),
                         std::invalid_argument);
  }
  CHECK(net.grouped->weight.to_vector<float>() == weights);
  CHECK(net.grouped->in_channels == 12);
}

TEST_CASE("an attention layer's heads are a group: whole heads are cut, the head size stays, the others compute as before") {
  Attend net(0);
  net.eval();
  const Tensor x = randn({2, 5, 6});
  const ChannelGroups g = groups_of(net, Shape{2, 5, 6});
  const auto heads = std::find_if(g.groups.begin(), g.groups.end(), [](const ChannelGroup& c) { return c.width > 1; });
  REQUIRE(heads != g.groups.end());
  CHECK(heads->prunable);
  CHECK(heads->channels == 4);
  CHECK(heads->width == 2);
  CHECK(heads->members == std::vector<GroupMember>{{"attn.in_proj_weight", 0, 0, ChannelRole::out},
                                                   {"attn.in_proj_bias", 0, 0, ChannelRole::out},
                                                   {"attn.in_proj_weight", 0, 8, ChannelRole::out},
                                                   {"attn.in_proj_bias", 0, 8, ChannelRole::out},
                                                   {"attn.in_proj_weight", 0, 16, ChannelRole::out},
                                                   {"attn.in_proj_bias", 0, 16, ChannelRole::out},
                                                   {"attn.out_proj.weight", 1, 0, ChannelRole::in}});
  // The graph's own group of out_proj's inputs (stopped by the heads' reshape) is replaced.
  CHECK(std::count_if(g.groups.begin(), g.groups.end(), [](const ChannelGroup& c) {
          return std::any_of(c.members.begin(), c.members.end(), [](const GroupMember& m) {
            return m.tensor == "attn.out_proj.weight" && m.dim == 1;
          });
        }) == 1);
  const std::vector<ChannelSelection> plan{{&*heads, {1, 3}}};
  mask_channels(net, plan);
  const Tensor masked = net.call({x}).to_tensor();
  prune_channels(net, plan);
  CHECK(net.attn->num_heads == 2);
  CHECK(net.attn->in_proj_weight.shape() == Shape{12, 8});
  CHECK(net.attn->out_proj->weight.shape() == Shape{8, 4});
  const Tensor pruned = net.call({x}).to_tensor();
  CHECK(max_rel_error(pruned, masked) <= 1e-5);
  const Graph graph = symbolic_trace(net, {InputSpec(x)});
  CHECK(max_rel_error(Interpreter(net, graph).run({x}).to_tensor(), pruned) < 1e-5);
  // channels_to_keep cuts floor(0.5 x 4) heads of the pruned model's 2: one.
  const ChannelGroups again = groups_of(net, Shape{2, 5, 6});
  const auto left = std::find_if(again.groups.begin(), again.groups.end(), [](const ChannelGroup& c) { return c.width > 1; });
  REQUIRE(left != again.groups.end());
  CHECK(left->channels == 2);
  CHECK(channels_to_keep(net, *left, 0.5).size() == 1);
}

TEST_CASE("heads whose attention weights or projections are used outside the layer, or that get a mask per head, are refused") {
  // Mode 2 runs 8 long, as long as the embedding: a per-head mask [N * heads, 8, 8] ends in the
  // embedding's size, as a query does.
  const std::vector<const char*> reasons{"", "the attention weights of 'attn' are used by ",
                                         "a mask per head ([8, 8, 8]) reaches 'attn'",
                                         "'attn.out_proj.weight' is used outside 'attn' by ",
                                         "'attn' shares its data with 'alias'"};
  for (int mode : {1, 2, 3, 4}) {
    CAPTURE(mode);
    Attend net(mode);
    const ChannelGroups g = groups_of(net, Shape{2, mode == 2 ? 8 : 5, 6});
    const auto heads = std::find_if(g.groups.begin(), g.groups.end(), [](const ChannelGroup& c) { return c.width > 1; });
    REQUIRE(heads != g.groups.end());
    CHECK_FALSE(heads->prunable);
    CHECK_MESSAGE(heads->reason.starts_with(reasons[static_cast<std::size_t>(mode)]), heads->reason);
  }
}

/// stem (3 -> 12) read by two grouped convolutions of different widths: `groups` a and b.
class TwoGroupings : public TypedModule<TwoGroupings> {
 public:
  TwoGroupings(std::int64_t a, std::int64_t b) {
    stem = register_module("stem", nn::Conv2d(3, 12, 1));
    first = register_module("first", nn::Conv2d(12, 12, 3, {.padding = 1, .groups = a}));
    second = register_module("second", nn::Conv2d(12, 12, 3, {.padding = 1, .groups = b}));
    head = register_module("head", nn::Conv2d(12, 2, 1));
  }
  Tensor forward(const Tensor& x) {
    const Tensor s = relu(stem(x));
    return head(relu(first(s)) + relu(second(s)));
  }
  nn::Conv2d stem{nullptr}, first{nullptr}, second{nullptr}, head{nullptr};
};

TEST_CASE("channels read by grouped convolutions of two widths are cut alike in blocks of their common size") {
  // groups 2 and 3 on 12 channels: blocks of 6 and 4, cut alike every gcd(6, 4) = 2 channels.
  TwoGroupings net(2, 3);
  net.eval();
  const ChannelGroups g = groups_of(net, Shape{1, 3, 6, 6});
  const auto stem = std::find_if(g.groups.begin(), g.groups.end(),
                                 [](const ChannelGroup& c) { return c.producers() == std::vector<std::string>{"stem"}; });
  REQUIRE(stem != g.groups.end());
  CHECK(stem->prunable);
  CHECK(stem->period == 2);
  const std::vector<std::int64_t> keep = channels_to_keep(net, *stem, 0.5);
  CHECK(keep.size() == 6);
  std::vector<ChannelSelection> plan{{&*stem, keep}};
  const Tensor x = randn({1, 3, 6, 6});
  mask_channels(net, plan);
  const Tensor masked = net.call({x}).to_tensor();
  prune_channels(net, plan);
  CHECK(net.first->in_channels == 6);
  CHECK(net.second->in_channels == 6);
  CHECK(net.second->options.groups == 3);
  CHECK(max_rel_error(net.call({x}).to_tensor(), masked) <= 1e-5);

  // groups 4 and 3 on 12 channels: blocks of 3 and 4, nothing in common.
  TwoGroupings coprime(4, 3);
  const ChannelGroups h = groups_of(coprime, Shape{1, 3, 6, 6});
  const auto fixed = std::find_if(h.groups.begin(), h.groups.end(),
                                  [](const ChannelGroup& c) { return c.producers() == std::vector<std::string>{"stem"}; });
  REQUIRE(fixed != h.groups.end());
  CHECK_FALSE(fixed->prunable);
  CHECK_MESSAGE(fixed->reason.find("(groups=4)") != std::string::npos, fixed->reason);
  CHECK_MESSAGE(fixed->reason.find("(groups=3)") != std::string::npos, fixed->reason);
  CHECK(fixed->reason.ends_with(": their groups have no common size, so no cut keeps the channels alike in every group"));
}

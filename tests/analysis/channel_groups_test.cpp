// Channel-dependency groups for structured pruning, from the op registry's declared properties.
#include "symtrace/symtrace.hpp"
#include "symtrace/zoo/zoo.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

std::vector<InputSpec> zoo_inputs(std::string_view name) {
  std::vector<InputSpec> specs;
  for (const zoo::ExampleInput& in : zoo::info(name).inputs) specs.emplace_back(Shape(in.shape), in.dtype);
  return specs;
}

ChannelGroups groups_of(Module& model, const std::vector<InputSpec>& inputs) {
  return channel_groups(model, trace_for_analysis(model, inputs));
}

/// "C=64 P out a,b | in c,d+16 | reason": one line per group, the members that are layers.
std::string describe(const ChannelGroup& g) {
  std::vector<std::string> ins;
  for (const GroupMember& m : g.members) {
    if (m.role == ChannelRole::in) ins.push_back(m.offset ? fmt::format("{}+{}", m.tensor, m.offset) : m.tensor);
  }
  return fmt::format("C={} {} out {} | in {}{}", g.channels, g.prunable ? "P" : "-", fmt::join(g.producers(), ","),
                     fmt::join(ins, ","), g.prunable ? "" : " | " + g.reason);
}

std::vector<std::string> describe(const ChannelGroups& groups) {
  std::vector<std::string> out;
  for (const ChannelGroup& g : groups.groups) out.push_back(describe(g));
  return out;
}

const ChannelGroup& group_producing(const ChannelGroups& groups, std::string_view layer) {
  for (const ChannelGroup& g : groups.groups) {
    const std::vector<std::string> p = g.producers();
    if (std::find(p.begin(), p.end(), layer) != p.end()) return g;
  }
  FAIL("no group produced by '" << std::string(layer) << "'");
  return groups.groups.front();
}

bool has_member(const ChannelGroup& g, const GroupMember& m) {
  return std::find(g.members.begin(), g.members.end(), m) != g.members.end();
}

/// Two convolutions joined along the channels, a parameter scaling the channels, a grouped
/// convolution, and a residual add of two branches.
class Joins : public TypedModule<Joins> {
 public:
  Joins() {
    a = register_module("a", nn::Conv2d(3, 4, 1));
    b = register_module("b", nn::Conv2d(3, 6, 1));
    mix = register_module("mix", nn::Conv2d(10, 8, 1));
    grouped = register_module("grouped", nn::Conv2d(8, 8, 3, {.padding = 1, .groups = 2}));
    head = register_module("head", nn::Conv2d(8, 5, 1));
    scale = register_parameter("scale", ones({1, 10, 1, 1}));
  }
  Tensor forward(const Tensor& x) {
    const Tensor joined = cat({a(x), b(x)}, 1) * scale;
    const Tensor m = mix(joined);
    return head(relu(grouped(m)) + m);
  }
  nn::Conv2d a{nullptr}, b{nullptr}, mix{nullptr}, grouped{nullptr}, head{nullptr};
  Tensor scale;
};

/// One convolution called twice: its weight holds the channels of both calls.
class Twice : public TypedModule<Twice> {
 public:
  Twice() {
    c = register_module("c", nn::Conv2d(4, 4, 1));
    head = register_module("head", nn::Conv2d(4, 2, 1));
  }
  Tensor forward(const Tensor& x) { return head(c(c(x))); }
  nn::Conv2d c{nullptr}, head{nullptr};
};

/// Layers whose channels meet a computed bias, a parameter that is also returned, a layer
/// norm over the channels without a weight, and a one-channel mask broadcast over them.
class Traps : public TypedModule<Traps> {
 public:
  Traps() {
    a = register_module("a", nn::Conv2d(3, 4, 1));
    b = register_module("b", nn::Conv2d(3, 4, 1));
    c = register_module("c", nn::Conv2d(3, 4, 1));
    mask = register_module("mask", nn::Conv2d(3, 1, 1));
    d = register_module("d", nn::Conv2d(3, 4, 1));
    w = register_parameter("w", ones({5, 4}));
    gamma = register_parameter("gamma", ones({1, 4, 1, 1}));
    head = register_module("head", nn::Conv2d(4, 2, 1));
  }
  std::vector<Tensor> forward(const Tensor& x) {
    const Tensor pa = linear(a(x).mean({2, 3}), w, x.mean({0, 1, 2}));  // a -> w: a bias computed from the input
    const Tensor pb = head(b(x) * gamma);                               // gamma is also returned
    const Tensor pc = layer_norm(c(x), {4, 5, 5});                      // normalised over c's channels, no weight
    const Tensor pd = head(sigmoid(mask(x)) * d(x));                    // the mask broadcasts over d's channels
    return {pa, pb, pc, pd, gamma};
  }
  nn::Conv2d a{nullptr}, b{nullptr}, c{nullptr}, mask{nullptr}, d{nullptr}, head{nullptr};
  Tensor w, gamma;
};

/// Grouped convolutions a cut cannot keep equal: one reads two concatenated groups of
/// channels, one has a single input channel per group.
class GroupedTraps : public TypedModule<GroupedTraps> {
 public:
  GroupedTraps() {
    a = register_module("a", nn::Conv2d(3, 4, 1));
    b = register_module("b", nn::Conv2d(3, 4, 1));
    joined = register_module("joined", nn::Conv2d(8, 8, 1, {.groups = 2}));
    c = register_module("c", nn::Conv2d(3, 4, 1));
    expand = register_module("expand", nn::Conv2d(4, 8, 1, {.groups = 4}));
    head = register_module("head", nn::Conv2d(16, 2, 1));
  }
  Tensor forward(const Tensor& x) { return head(cat({joined(cat({a(x), b(x)}, 1)), expand(c(x))}, 1)); }
  nn::Conv2d a{nullptr}, b{nullptr}, joined{nullptr}, c{nullptr}, expand{nullptr}, head{nullptr};
};

}  // namespace

TEST_CASE("a grouped convolution's channels are cut alike in each group, or refused when they cannot be") {
  GroupedTraps net;
  const ChannelGroups g = groups_of(net, {Shape{1, 3, 5, 5}});
  for (const char* part : {"a", "b"}) {
    const ChannelGroup& group = group_producing(g, part);
    CHECK_FALSE(group.prunable);
    CHECK(group.reason.starts_with("grouped by conv2d at "));
    CHECK(group.reason.ends_with(" (groups=2), reading concatenated channels"));
  }
  const ChannelGroup& c = group_producing(g, "c");
  CHECK_FALSE(c.prunable);
  CHECK(c.reason.ends_with(" (groups=4): one channel per group, which no cut keeps alike in every group"));
  CHECK(describe(group_producing(g, "joined")) == "C=8 P out joined | in head.weight");
  CHECK(group_producing(g, "joined").period == 4);
  CHECK(describe(group_producing(g, "expand")) == "C=8 P out expand | in head.weight+8");
  CHECK(group_producing(g, "expand").period == 2);
}

TEST_CASE("groups a cut would break are fixed, with the reason") {
  Twice twice;
  const ChannelGroups t = groups_of(twice, {Shape{1, 4, 5, 5}});
  CHECK(t.num_prunable() == 0);
  CHECK(describe(group_producing(t, "c")) ==
        "C=4 - out c | in c.weight,head.weight | comes from the graph's input 'x'");

  Traps traps;
  const ChannelGroups g = groups_of(traps, {Shape{1, 3, 5, 5}});
  CHECK(group_producing(g, "a").prunable);  // a's channels meet w's inputs: a plain pair
  const ChannelGroup& b = group_producing(g, "b");
  CHECK_FALSE(b.prunable);
  CHECK(b.reason == "'gamma' is used where its dims cannot be followed (reaches the graph's output)");
  const ChannelGroup& c = group_producing(g, "c");
  CHECK_FALSE(c.prunable);
  CHECK(c.reason.starts_with("normalised over the channels by layer_norm at "));
  CHECK(c.reason.ends_with(" without a weight to cut with them"));
  // d's channels decide the product's, not the mask's single channel: d and b meet at head.
  const ChannelGroup& d = group_producing(g, "d");
  CHECK(d.channels == 4);
  CHECK(describe(d).starts_with("C=4 - out b,d | in head.weight"));
  const ChannelGroup& m = group_producing(g, "mask");
  CHECK(m.channels == 1);
  CHECK_MESSAGE(m.reason.starts_with("broadcast across other channels by mul at "), m.reason);
  // The linear's outputs get a bias computed in the graph: they cannot be cut.
  bool found = false;
  for (const ChannelGroup& group : g.groups) {
    if (group.producers() != std::vector<std::string>{""} || group.channels != 5) continue;  // w is the model's own
    found = true;
    CHECK_FALSE(group.prunable);
    CHECK_MESSAGE(group.reason.starts_with("a bias computed in the graph is added by linear at "), group.reason);
  }
  CHECK(found);
}

TEST_CASE("resnet18: a group per block's inner convolution and one per stage, tied by the residual adds") {
  const std::shared_ptr<Module> model = zoo::create("resnet18");
  const ChannelGroups g = groups_of(*model, zoo_inputs("resnet18"));
  CHECK(g.groups.size() == 14);
  CHECK(g.num_prunable() == 12);
  CHECK(g.hidden.empty());
  const std::vector<std::string> d = describe(g);
  CHECK(d == std::vector<std::string>{
                 "C=3 - out  | in conv1.weight | comes from the graph's input 'x'",
                 "C=64 P out conv1,layer1.0.conv2,layer1.1.conv2 | in layer1.0.conv1.weight,layer1.1.conv1.weight,"
                 "layer2.0.conv1.weight,layer2.0.downsample.0.weight",
                 "C=64 P out layer1.0.conv1 | in layer1.0.conv2.weight",
                 "C=64 P out layer1.1.conv1 | in layer1.1.conv2.weight",
                 "C=128 P out layer2.0.conv1 | in layer2.0.conv2.weight",
                 "C=128 P out layer2.0.conv2,layer2.0.downsample.0,layer2.1.conv2 | in layer2.1.conv1.weight,"
                 "layer3.0.conv1.weight,layer3.0.downsample.0.weight",
                 "C=128 P out layer2.1.conv1 | in layer2.1.conv2.weight",
                 "C=256 P out layer3.0.conv1 | in layer3.0.conv2.weight",
                 "C=256 P out layer3.0.conv2,layer3.0.downsample.0,layer3.1.conv2 | in layer3.1.conv1.weight,"
                 "layer4.0.conv1.weight,layer4.0.downsample.0.weight",
                 "C=256 P out layer3.1.conv1 | in layer3.1.conv2.weight",
                 "C=512 P out layer4.0.conv1 | in layer4.0.conv2.weight",
                 "C=512 P out layer4.0.conv2,layer4.0.downsample.0,layer4.1.conv2 | in layer4.1.conv1.weight,fc.weight",
                 "C=512 P out layer4.1.conv1 | in layer4.1.conv2.weight",
                 "C=1000 - out fc | in  | reaches the graph's output",
             });
  // Every batch norm goes with the convolution before it: its four per-channel tensors.
  const ChannelGroup& stage2 = group_producing(g, "layer2.0.downsample.0");
  for (const char* t : {"layer2.0.downsample.1.weight", "layer2.0.downsample.1.bias", "layer2.0.downsample.1.running_mean",
                        "layer2.0.downsample.1.running_var", "layer2.0.bn2.weight", "layer2.1.bn2.running_var"}) {
    CAPTURE(t);
    CHECK(has_member(stage2, GroupMember{t, 0, 0, ChannelRole::param}));
  }
  CHECK(has_member(stage2, GroupMember{"layer2.0.downsample.0.weight", 0, 0, ChannelRole::out}));
  CHECK(has_member(stage2, GroupMember{"layer3.0.conv1.weight", 1, 0, ChannelRole::in}));
}

TEST_CASE("mobilenet_v2: depthwise convolutions tie their input channels to their output channels") {
  const std::shared_ptr<Module> model = zoo::create("mobilenet_v2");
  const ChannelGroups g = groups_of(*model, zoo_inputs("mobilenet_v2"));
  // The stem, 16 expansions, 7 stages of projections (tied by residual adds), the last conv;
  // the image channels and the classifier's outputs are fixed.
  CHECK(g.groups.size() == 27);
  CHECK(g.num_prunable() == 25);
  // Each expansion's hidden group runs through its depthwise convolution to its projection;
  // the projections of a stage are tied by the residual adds.
  CHECK(describe(g) == std::vector<std::string>{
                           // clang-format off
      "C=3 - out  | in features.0.0.weight | comes from the graph's input 'x'",
      "C=32 P out features.0.0 | in features.1.conv.1.weight",
      "C=16 P out features.1.conv.1 | in features.2.conv.0.0.weight",
      "C=96 P out features.2.conv.0.0 | in features.2.conv.2.weight",
      "C=24 P out features.2.conv.2,features.3.conv.2 | in features.3.conv.0.0.weight,features.4.conv.0.0.weight",
      "C=144 P out features.3.conv.0.0 | in features.3.conv.2.weight",
      "C=144 P out features.4.conv.0.0 | in features.4.conv.2.weight",
      "C=32 P out features.4.conv.2,features.5.conv.2,features.6.conv.2 | in features.5.conv.0.0.weight,features.6.conv.0.0.weight,features.7.conv.0.0.weight",
      "C=192 P out features.5.conv.0.0 | in features.5.conv.2.weight",
      "C=192 P out features.6.conv.0.0 | in features.6.conv.2.weight",
      "C=192 P out features.7.conv.0.0 | in features.7.conv.2.weight",
      "C=64 P out features.7.conv.2,features.8.conv.2,features.9.conv.2,features.10.conv.2 | in features.8.conv.0.0.weight,features.9.conv.0.0.weight,features.10.conv.0.0.weight,features.11.conv.0.0.weight",
      "C=384 P out features.8.conv.0.0 | in features.8.conv.2.weight",
      "C=384 P out features.9.conv.0.0 | in features.9.conv.2.weight",
      "C=384 P out features.10.conv.0.0 | in features.10.conv.2.weight",
      "C=384 P out features.11.conv.0.0 | in features.11.conv.2.weight",
      "C=96 P out features.11.conv.2,features.12.conv.2,features.13.conv.2 | in features.12.conv.0.0.weight,features.13.conv.0.0.weight,features.14.conv.0.0.weight",
      "C=576 P out features.12.conv.0.0 | in features.12.conv.2.weight",
      "C=576 P out features.13.conv.0.0 | in features.13.conv.2.weight",
      "C=576 P out features.14.conv.0.0 | in features.14.conv.2.weight",
      "C=160 P out features.14.conv.2,features.15.conv.2,features.16.conv.2 | in features.15.conv.0.0.weight,features.16.conv.0.0.weight,features.17.conv.0.0.weight",
      "C=960 P out features.15.conv.0.0 | in features.15.conv.2.weight",
      "C=960 P out features.16.conv.0.0 | in features.16.conv.2.weight",
      "C=960 P out features.17.conv.0.0 | in features.17.conv.2.weight",
      "C=320 P out features.17.conv.2 | in features.18.0.weight",
      "C=1280 P out features.18.0 | in classifier.1.weight",
      "C=1000 - out classifier.1 | in  | reaches the graph's output",
  });
  // clang-format on
  const ChannelGroup& hidden = group_producing(g, "features.5.conv.0.0");
  CHECK(describe(hidden) == "C=192 P out features.5.conv.0.0 | in features.5.conv.2.weight");
  CHECK(has_member(hidden, GroupMember{"features.5.conv.1.0.weight", 0, 0, ChannelRole::param}));  // depthwise
  CHECK(has_member(hidden, GroupMember{"features.5.conv.1.1.weight", 0, 0, ChannelRole::param}));  // its norm
  CHECK(describe(group_producing(g, "features.0.0")) == "C=32 P out features.0.0 | in features.1.conv.1.weight");
  CHECK(has_member(group_producing(g, "features.0.0"), GroupMember{"features.1.conv.0.0.weight", 0, 0, ChannelRole::param}));
  CHECK(describe(group_producing(g, "features.7.conv.2")) ==
        "C=64 P out features.7.conv.2,features.8.conv.2,features.9.conv.2,features.10.conv.2 | in "
        "features.8.conv.0.0.weight,features.9.conv.0.0.weight,features.10.conv.0.0.weight,features.11.conv.0.0.weight");
  CHECK(describe(group_producing(g, "features.18.0")) == "C=1280 P out features.18.0 | in classifier.1.weight");
  CHECK(describe(group_producing(g, "classifier.1")) == "C=1000 - out classifier.1 | in  | reaches the graph's output");
}

TEST_CASE("vit: the residual stream is one group with the class token and position embedding; heads are boundaries") {
  const std::shared_ptr<Module> model = zoo::create("vit_tiny");
  const ChannelGroups g = groups_of(*model, zoo_inputs("vit_tiny"));
  CHECK(g.num_prunable() == 12);  // the 12 MLP hidden layers
  // The residual stream: every member found, but its layer norms take all 192 channels together.
  const ChannelGroup& stream = group_producing(g, "patch_embed");
  CHECK_FALSE(stream.prunable);
  CHECK(stream.reason.starts_with("normalised together by layer_norm at "));
  CHECK(stream.channels == 192);
  CHECK(has_member(stream, GroupMember{"cls_token", 2, 0, ChannelRole::param}));
  CHECK(has_member(stream, GroupMember{"pos_embed", 2, 0, ChannelRole::param}));
  CHECK(has_member(stream, GroupMember{"blocks.11.attn.proj.weight", 0, 0, ChannelRole::out}));
  CHECK(has_member(stream, GroupMember{"blocks.3.ln2.bias", 0, 0, ChannelRole::param}));
  CHECK(has_member(stream, GroupMember{"head.weight", 1, 0, ChannelRole::in}));
  CHECK(describe(group_producing(g, "blocks.0.mlp.fc1")) == "C=768 P out blocks.0.mlp.fc1 | in blocks.0.mlp.fc2.weight");
  const ChannelGroup& qkv = group_producing(g, "blocks.0.attn.qkv");
  CHECK_FALSE(qkv.prunable);
  CHECK(qkv.reason.starts_with("used by reshape at "));
  CHECK(qkv.reason.ends_with(fmt::format("vit.cpp:{}", 28)));
}

TEST_CASE("a concatenation along the channels gives its consumer one member per part, at its offset") {
  Joins net;
  const ChannelGroups g = groups_of(net, {Shape{1, 3, 8, 8}});
  CHECK(describe(g) == std::vector<std::string>{
                           "C=3 - out  | in a.weight,b.weight | comes from the graph's input 'x'",
                           "C=4 P out a | in mix.weight",
                           "C=6 P out b | in mix.weight+4",
                           "C=8 P out mix,grouped | in grouped.weight,head.weight",
                           "C=5 - out head | in  | reaches the graph's output",
                       });
  // The grouped convolution reads and writes the residual's channels: they are cut alike in
  // each of its two groups, and its weight's dim 1 holds one group's four.
  const ChannelGroup& residual = group_producing(g, "grouped");
  CHECK(residual.period == 4);
  CHECK(has_member(residual, GroupMember{"grouped.weight", 1, 0, ChannelRole::in, 4}));
  CHECK(has_member(residual, GroupMember{"grouped.weight", 0, 0, ChannelRole::out}));
  CHECK(has_member(residual, GroupMember{"head.weight", 1, 0, ChannelRole::in}));
  CHECK(group_producing(g, "a").period == 0);
  const ChannelGroup& b = group_producing(g, "b");
  CHECK(has_member(b, GroupMember{"scale", 1, 4, ChannelRole::param}));
  CHECK(has_member(b, GroupMember{"mix.weight", 1, 4, ChannelRole::in}));
  CHECK(has_member(b, GroupMember{"b.bias", 0, 0, ChannelRole::out}));
  CHECK(has_member(group_producing(g, "a"), GroupMember{"scale", 1, 0, ChannelRole::param}));
}

TEST_CASE("unet: the skip connections' concatenations put each part at its offset in the decoder's convolution") {
  const std::shared_ptr<Module> model = zoo::create("unet_small");
  const ChannelGroups g = groups_of(*model, zoo_inputs("unet_small"));
  CHECK(g.groups.size() == 19);
  CHECK(g.num_prunable() == 17);
  CHECK(describe(group_producing(g, "inc.double_conv.3")) ==
        "C=16 P out inc.double_conv.3 | in down1.maxpool_conv.1.double_conv.0.weight,up3.conv.double_conv.0.weight");
  CHECK(describe(group_producing(g, "up3.reduce")) == "C=16 P out up3.reduce | in up3.conv.double_conv.0.weight+16");
}

TEST_CASE("on resnet50 with failing blocks the groups outside them are found, and the layers they hide are listed") {
  const std::shared_ptr<Module> model = zoo::create("resnet50_fail4");
  // A plain trace finds nothing: it stops at the first failing block.
  CHECK_THROWS_AS((void)symbolic_trace(*model, {Shape{1, 3, 224, 224}}), TraceError);
  const ChannelGroups g = groups_of(*model, zoo_inputs("resnet50_fail4"));
  // The inner groups of the 12 blocks that trace (conv1 -> conv2, conv2 -> conv3 in each).
  CHECK(g.num_prunable() == 24);
  for (const ChannelGroup& group : g.groups) {
    if (!group.prunable) continue;
    for (const GroupMember& m : group.members) {
      CAPTURE(m.tensor);
      CHECK_FALSE((m.tensor.starts_with("layer1.0.") || m.tensor.starts_with("layer2.0.") ||
                   m.tensor.starts_with("layer3.0.") || m.tensor.starts_with("layer4.0.")));
    }
  }
  CHECK(describe(group_producing(g, "layer2.1.conv1")) == "C=128 P out layer2.1.conv1 | in layer2.1.conv2.weight");
  // A stage's residual channels reach its failed first block: they cannot be pruned.
  const ChannelGroup& stage = group_producing(g, "layer2.1.conv3");
  CHECK_FALSE(stage.prunable);
  CHECK(stage.reason == "comes from failed module 'layer2.0'");
  REQUIRE(g.hidden.size() == 4);
  CHECK(g.hidden[1].module == "layer2.0");
  CHECK(g.hidden[1].type == "FailingBottleneck");
  CHECK(g.hidden[1].layers ==
        std::vector<std::string>{"layer2.0.conv1", "layer2.0.conv2", "layer2.0.conv3", "layer2.0.downsample.0"});
}

TEST_CASE("the op registry declares the channel behaviour the analysis reads") {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"conv2d", "linear"}) CHECK_MESSAGE(r.get(op).has(OpFlags::channel_mixing), op);
  for (const char* op : {"batch_norm", "layer_norm", "max_pool2d", "adaptive_avg_pool2d", "dropout", "expand"}) {
    CHECK_MESSAGE(r.get(op).has(OpFlags::channel_passthrough), op);
  }
  for (const char* op : {"reshape", "view", "flatten"}) CHECK_MESSAGE(r.get(op).has(OpFlags::reshape), op);
  for (const char* op : {"select", "slice", "squeeze", "unsqueeze", "index_select"}) {
    CHECK_MESSAGE(r.get(op).has(OpFlags::dim_indexing), op);
  }
  CHECK(r.get("cat").has(OpFlags::concatenation));
  CHECK(r.get("permute").has(OpFlags::permutation));
  // matmul and softmax mix or normalise across what may be channels: boundaries.
  for (const char* op : {"matmul", "softmax", "embedding", "stack"}) {
    const OpDef& d = r.get(op);
    CHECK_MESSAGE(!(d.has(OpFlags::channel_mixing) || d.has(OpFlags::channel_passthrough) || d.has(OpFlags::elementwise) ||
                    d.has(OpFlags::reshape) || d.has(OpFlags::concatenation)),
                  op);
  }
}

TEST_CASE("a graph with odd nodes (computed weights, no shapes, sizes that overflow) gets boundaries, never a crash") {
  Graph g;
  Node& x = g.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 3, 8, 8}});
  Node& w = g.placeholder("w");  // a weight computed elsewhere: not a layer of the model
  w.set_tensor_meta(TensorMeta{DType::float32, Shape{4, 3, 1, 1}});
  Node& conv = g.create_node(OpKind::call_function, "conv2d", {x, w});
  conv.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 4, 8, 8}});
  Node& lw = g.create_node(OpKind::get_attr, "layer.weight", {});
  lw.set_tensor_meta(TensorMeta{DType::float32, Shape{4, 4, 1, 1}});
  Node& layer = g.create_node(OpKind::call_function, "conv2d", {conv, lw});
  layer.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 4, 8, 8}});
  Node& huge = g.create_node(OpKind::get_attr, "huge", {});
  huge.set_tensor_meta(TensorMeta{DType::float32, Shape{std::int64_t{1} << 62, 4, 1, 1}});
  Node& grouped = g.create_node(OpKind::call_function, "conv2d",
                                {layer, huge, Argument(), Argument::list({1, 1}), Argument::list({0, 0}),
                                 Argument::list({1, 1}), std::int64_t{1} << 62});
  grouped.set_tensor_meta(TensorMeta{DType::float32, Shape{1, std::int64_t{1} << 62, 8, 8}});
  Node& big = g.create_node(OpKind::call_method, "reshape", {grouped, Argument::list({-1})});
  big.set_tensor_meta(TensorMeta{DType::float32, Shape{Dim::unknown()}});
  Node& joined = g.create_node(OpKind::call_function, "cat", {Argument::list({layer, layer}), 1});
  joined.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 8, 8, 8}});
  Node& unknown = g.create_node(OpKind::call_function, "no_such_op", {joined});
  g.output(Argument::list({big, unknown}));
  g.lint();
  const std::vector<ChannelGroup> groups = channel_groups(g);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].reason.starts_with("comes from conv2d at "));  // the computed-weight conv
  CHECK(groups[1].reason.starts_with("used by conv2d at "));     // the conv with 2^64 input channels
  CHECK(groups[1].members == std::vector<GroupMember>{{"layer.weight", 0, 0, ChannelRole::out}});
  for (const ChannelGroup& group : groups) {
    CAPTURE(describe(group));
    CHECK_FALSE(group.prunable);
    CHECK_FALSE(group.reason.empty());
  }
  const GraphCost cost = graph_cost(g);
  CHECK(cost.unknown_nodes >= 2);  // the conv of 2^62 x 4 weights, and the unknown op
}

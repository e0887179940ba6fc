// Lesson 12: structured pruning of resnet18, from the channel groups the analysis finds.
//
// Cutting output channels of a convolution is only safe when everything that reads those
// channels is cut the same way: the batch norm after it, the next convolution's input
// channels, and, across a residual add, every other layer feeding that add. channel_groups()
// finds these groups in a trace for analysis (built-in layers traced through, so each conv,
// norm and add is an op whose channel behaviour the op registry declares). Here we prune 30%
// of the channels of every prunable group — the channels whose output weights have the
// smallest L1 norm — rebuild the layers smaller, and check the model still runs, traces, and
// has exactly the parameter count of its new widths.

#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <array>

using namespace symtrace;
using namespace lesson;

namespace {

/// resnet18's parameter count with every group of stage s at width k[s].
std::int64_t resnet18_parameters(const std::array<std::int64_t, 4>& k) {
  std::int64_t n = 3 * k[0] * 49 + 2 * k[0];  // the stem's conv and norm
  std::int64_t in = k[0];
  for (std::size_t s = 0; s < 4; ++s) {
    n += in * k[s] * 9 + 2 * k[s] + k[s] * k[s] * 9 + 2 * k[s];  // block 0
    if (s > 0) n += in * k[s] + 2 * k[s];                        // its downsample
    n += 2 * (k[s] * k[s] * 9 + 2 * k[s]);                       // block 1
    in = k[s];
  }
  return n + k[3] * 1000 + 1000;  // the classifier
}

}  // namespace

int main() {
  manual_seed(0);
  const std::shared_ptr<Module> model = zoo::create("resnet18");
  const std::int64_t before = model->num_parameters();
  expect(before == resnet18_parameters({64, 128, 256, 512}), "the formula counts resnet18's parameters");

  // 1. The groups: 12 can be pruned; the image's channels and the logits cannot.
  const GraphCollection traced = trace_for_analysis(*model, {Shape{1, 3, 64, 64}});
  const ChannelGroups groups = channel_groups(*model, traced);
  fmt::print("{} groups, {} prunable\n", groups.groups.size(), groups.num_prunable());
  expect(groups.num_prunable() == 12, "resnet18 has 12 prunable groups");
  for (const ChannelGroup& g : groups.groups) {
    fmt::print("  {:4} channels  {}  {}\n", g.channels, g.prunable ? "prunable" : "fixed   ",
               fmt::join(g.producers(), ", "));
  }

  // 2. The channels to keep in each group, and the cut, all at once.
  std::vector<ChannelSelection> plan;
  for (const ChannelGroup& g : groups.groups) {
    if (g.prunable) plan.push_back({&g, channels_to_keep(*model, g, 0.3)});
  }
  prune_channels(*model, plan);

  // 3. floor(0.3 C) channels went from each group: 64 -> 45, 128 -> 90, 256 -> 180, 512 -> 359.
  const std::int64_t after = model->num_parameters();
  fmt::print("parameters: {} -> {}\n", before, after);
  expect(after == resnet18_parameters({45, 90, 180, 359}), "the pruned model has the parameters of its new widths");
  fmt::print("layer3.1.conv1 is now Conv2d({})\n", model->get_submodule("layer3.1.conv1").extra_repr());

  // 4. It still runs, and still traces to a graph that computes it.
  const Tensor image = randn({1, 3, 64, 64});
  const Tensor logits = model->call({image}).to_tensor();
  expect(logits.shape() == Shape{1, 1000}, "the pruned model still gives 1000 logits");
  const Graph g = symbolic_trace(*model, {InputSpec(image)});
  expect_lints(g, "the pruned model's graph");
  const double error = max_abs_error(Interpreter(*model, g).run({image}).to_tensor(), logits);
  fmt::print("max |graph - eager| = {:.2g}\n", error);
  expect(error <= 1e-4, "the pruned model's graph computes its forward");
  return failures == 0 ? 0 : 1;
}

// Expected output (abridged):
//   14 groups, 12 prunable
//        3 channels  fixed
//       64 channels  prunable  conv1, layer1.0.conv2, layer1.1.conv2
//       64 channels  prunable  layer1.0.conv1
//   ...
//     1000 channels  fixed     fc
//   parameters: 11689512 -> 5868242
//   layer3.1.conv1 is now Conv2d(180, 180, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
//   max |graph - eager| = 0

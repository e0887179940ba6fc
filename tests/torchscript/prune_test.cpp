// Pruning a PyTorch model: the channel groups of a TorchScript file cut by prune_channels and
// written back by torchscript::save_with_tensors, checked by LibTorch itself. The pruned file
// must compute exactly what the original computes when the cut channels are zeroed in every
// layer that reads them (their `in` slices): the cut then removes only what no consumer sees.
#include "support/checks.hpp"
#include "torchscript/model_files.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>
#include <symtrace/torchscript/save.hpp>

#include "support/run_cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;
namespace fs = std::filesystem;

namespace {

/// A directory of this test's files, removed at the end.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / fmt::format("symtrace-prune-test-{}", ::getpid());
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

/// The plan prune makes at `amount`: every prunable group, its smallest channels by L1 cut.
std::vector<ChannelSelection> plan_for(const Module& model, const ChannelGroups& groups, double amount) {
  std::vector<ChannelSelection> plan;
  for (const ChannelGroup& g : groups.groups) {
    if (!g.prunable) continue;
    std::vector<std::int64_t> keep = channels_to_keep(model, g, amount);
    if (static_cast<std::int64_t>(keep.size()) < g.channels) plan.push_back({&g, std::move(keep)});
  }
  return plan;
}

const Tensor& first_tensor(const Value& v) { return v.is_list() ? v.to_list().front().to_tensor() : v.to_tensor(); }

}  // namespace

TEST_CASE("every classifier pruned at 0.3 computes what the original computes with the cut channels unread") {
  Scratch scratch;
  for (const std::string& name : classifiers) {
    SUBCASE(name.c_str()) {
      const fs::path file = models / (name + ".script.pt");
      const IntList shape = meta(name)["input"].get<IntList>();
      const Tensor x = read_floats(models / (name + ".input.bin"), shape);
      std::shared_ptr<Module> model = torchscript::load(file);
      const GraphCollection collection = trace_for_analysis(*model, {InputSpec(Shape(shape))});
      const ChannelGroups groups = channel_groups(*model, collection);
      const std::vector<ChannelSelection> plan = plan_for(*model, groups, 0.3);
      REQUIRE_FALSE(plan.empty());

      std::shared_ptr<Module> reference = torchscript::load(file);
      mask_channels(*reference, plan);
      prune_channels(*model, plan);
      const fs::path pruned = scratch.dir / (name + ".pruned.pt"), zeroed = scratch.dir / (name + ".zeroed.pt");
      torchscript::save_with_tensors(file, *model, pruned);
      torchscript::save_with_tensors(file, *reference, zeroed);

      // LibTorch runs both files.
      const Value cut = torchscript::run_in_libtorch(pruned, {x});
      const Value unread = torchscript::run_in_libtorch(zeroed, {x});
      const Tensor& a = first_tensor(cut);
      const Tensor& b = first_tensor(unread);
      CHECK(a.shape() == b.shape());
      CHECK(max_rel_error(a, b) <= 1e-5);
      // The pruned file, loaded by symtrace, has the pruned model's parameters.
      const std::shared_ptr<Module> reloaded = torchscript::load(pruned);
      CHECK(reloaded->num_parameters() == model->num_parameters());
      CHECK(model->num_parameters() < reference->num_parameters());
      if (name == "vit_b_16") {
        // 3 of each attention layer's 12 heads go (floor(0.3 x 12)), the head size stays 64.
        const auto& attention = dynamic_cast<const nn::MultiheadAttentionImpl&>(
            reloaded->get_submodule("encoder.layers.encoder_layer_0.self_attention"));
        CHECK(attention.num_heads == 9);
        CHECK(attention.in_proj_weight.shape() == Shape{3 * 9 * 64, 768});
        CHECK(std::count_if(groups.groups.begin(), groups.groups.end(),
                            [](const ChannelGroup& g) { return g.width == 64 && g.prunable; }) == 12);
      }
      if (name == "resnext50_32x4d") {
        // The grouped convolutions keep their 32 groups, each with fewer channels.
        const auto& conv = dynamic_cast<const nn::Conv2dImpl&>(reloaded->get_submodule("layer1.0.conv2"));
        CHECK(conv.options.groups == 32);
        CHECK(conv.in_channels < 128);
        CHECK(conv.in_channels % 32 == 0);
      }
    }
  }
}

TEST_CASE("symtrace prune writes a file LibTorch runs, and analyze of it counts what prune printed") {
  // --check: LibTorch runs the pruned file against the original with the cut channels unread.
  Scratch scratch;
  const std::string file = (models / "mobilenet_v2.script.pt").string();
  const std::string out = (scratch.dir / "small.pt").string();
  const CliRun r =
      run_cli({"prune", file, "--amount", "0.3", "--input", "1x3x32x32", "-o", out, "--format", "json", "--check"});
  REQUIRE(r.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  CHECK(doc["output"] == out);
  CHECK(doc["max_rel_error"].get<double>() <= 1e-5);
  CHECK(doc["parameters"]["after"].get<std::int64_t>() < doc["parameters"]["before"].get<std::int64_t>());
  // At least a quarter of the MACs go at 0.3 (each group keeps 70% of its channels: ~49% of a
  // convolution's MACs between two cut groups).
  CHECK(doc["macs"]["after"].get<double>() <= 0.75 * doc["macs"]["before"].get<double>());
  std::size_t pruned = 0, refused = 0;
  for (const nlohmann::json& g : doc["groups"]) {
    if (!g["prunable"].get<bool>()) {
      ++refused;
      CHECK_FALSE(g["reason"].get<std::string>().empty());
      CHECK(g["kept"].is_null());
    } else if (!g["kept"].is_null()) {
      ++pruned;
      const auto channels = g["channels"].get<std::int64_t>();
      CHECK(g["kept"].get<std::int64_t>() == channels - static_cast<std::int64_t>(0.3 * static_cast<double>(channels)));
    }
  }
  CHECK(pruned == 25);
  CHECK(refused == 2);
  const nlohmann::json analysis =
      nlohmann::json::parse(run_cli({"analyze", out, "--input", "1x3x32x32", "--format", "json"}).out);
  CHECK(analysis["summary"]["parameters"] == doc["parameters"]["after"]);
  CHECK(analysis["summary"]["macs"] == doc["macs"]["after"]);
  CHECK(torchscript::run_in_libtorch(out, {randn({2, 3, 32, 32})}).to_tensor().shape() == Shape{2, 1000});
}

TEST_CASE("Python's torch.jit.load runs pruned files: heads cut from attention, channels from grouped convolutions") {
  Scratch scratch;
  std::string files;
  for (const char* name : {"vit_b_16", "resnext50_32x4d", "mobilenet_v2"}) {
    const IntList shape = meta(name)["input"].get<IntList>();
    const std::string out = (scratch.dir / fmt::format("{}.pruned.pt", name)).string();
    const CliRun r = run_cli({"prune", (models / fmt::format("{}.script.pt", name)).string(), "--amount", "0.3",
                              "--input", fmt::format("{}", fmt::join(shape, "x")), "-o", out});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    // resnext's layers of one configuration share a class, and so its constants, but are cut
    // differently (a residual stream and a grouped convolution's channels): those keep theirs.
    files += fmt::format(" {}:{}:{}", out, fmt::join(shape, ","), name == std::string("resnext50_32x4d") ? 0 : 1);
  }
  // Each file loaded and run by Python on a batch of two, with no gradients too (torch.nn's
  // attention takes its fused kernel then), and in training mode; and the layers' size
  // constants (out_channels, in_features, num_features, ...) say what their weights hold.
  const std::string script = scratch.dir / "run.py";
  std::ofstream(script) << R"(import sys, torch
for arg in sys.argv[1:]:
    path, shape, constants = arg.split(":")
    m = torch.jit.load(path)
    checked = 0
    for name, mod in m.named_modules():
        if constants == "0" or not hasattr(mod, "weight") or not isinstance(mod.weight, torch.Tensor):
            continue
        w = mod.weight
        for attr, want in (("out_channels", lambda: w.shape[0]), ("in_channels", lambda: w.shape[1] * mod.groups),
                           ("out_features", lambda: w.shape[0]), ("in_features", lambda: w.shape[1]),
                           ("num_features", lambda: w.shape[0])):
            if hasattr(mod, attr):
                assert getattr(mod, attr) == want(), (path, name, attr, getattr(mod, attr), want())
                checked += 1
    assert constants == "0" or checked > 10, (path, checked)
    x = torch.randn([2] + [int(s) for s in shape.split(",")][1:])
    with torch.no_grad():
        a = m(x)
    b = m(x)
    m.train()
    m(x)
    assert a.shape == (2, 1000) and torch.allclose(a, b, atol=1e-5), path
print("ok")
)";
  const fs::path log = scratch.dir / "python.log";
  const int status = std::system(fmt::format("/usr/bin/python3 {}{} > {} 2>&1", script, files, log.string()).c_str());
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CAPTURE(output);
  CHECK(status == 0);
  CHECK(output.find("ok") != std::string::npos);
}

TEST_CASE("prune refuses bad input with exit 2 and writes nothing") {
  Scratch scratch;
  const std::string file = (models / "resnet18.script.pt").string();
  const auto before = fs::last_write_time(file);
  const std::string out = (scratch.dir / "out.pt").string();
  SUBCASE("an amount outside [0, 1)") {
    for (const char* amount : {"1", "1.5", "-0.1", "x"}) {
      CAPTURE(amount);
      const CliRun r = run_cli({"prune", file, "--amount", amount, "--input", "1x3x32x32", "-o", out});
      CHECK(r.code == 2);
      CHECK(r.err.find(fmt::format("--amount '{}' is not a number in [0, 1)", amount)) != std::string::npos);
    }
  }
  SUBCASE("no --amount, an unknown criterion, -o for a zoo model") {
    CHECK(run_cli({"prune", file, "--input", "1x3x32x32", "-o", out}).err.find("prune needs --amount A") !=
          std::string::npos);
    CHECK(run_cli({"prune", file, "--amount", "0.3", "--criterion", "l3", "--input", "1x3x32x32"}).code == 2);
    const CliRun zoo = run_cli({"prune", "resnet18", "--amount", "0.3", "-o", out});
    CHECK(zoo.code == 2);
    CHECK(zoo.err.find("'resnet18' is a zoo model") != std::string::npos);
  }
  SUBCASE("an amount that cuts nothing") {
    const CliRun r = run_cli({"prune", file, "--amount", "0.001", "--input", "1x3x32x32", "-o", out});
    CHECK(r.code == 2);
    CHECK(r.err.find("cuts no channel") != std::string::npos);
  }
  SUBCASE("-o naming the model's own file") {
    const CliRun r = run_cli({"prune", file, "--amount", "0.3", "--input", "1x3x32x32", "-o", file});
    CHECK(r.code == 2);
    CHECK(r.err.find("is the model's own file") != std::string::npos);
  }
  SUBCASE("a model with no group to prune") {
    const CliRun r = run_cli({"prune", (models / "fallback_ops.script.pt").string(), "--amount", "0.3", "--input",
                              "1x16x8x8", "-o", out});
    CHECK(r.code == 2);
    CHECK(r.err.find("cannot be pruned") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));
  CHECK(fs::last_write_time(file) == before);  // the input file untouched
}

TEST_CASE("prune --plan cuts the channels a plan keeps, and refuses a plan naming what does not exist") {
  Scratch scratch;
  const std::string file = (models / "resnet18.script.pt").string();
  const std::string out = (scratch.dir / "planned.pt").string();
  const auto plan = [&](const std::string& text) {
    const std::string path = (scratch.dir / "plan.json").string();
    std::ofstream(path) << text;
    return path;
  };
  // Group 2 is the stem's 64 channels with layer1's residual stream; group 3 layer1.0's inner 64.
  const CliRun r = run_cli({"prune", file, "--plan", plan(R"({"groups": [{"group": 3, "keep": [0, 1, 2, 3]}]})"),
                            "--input", "1x3x32x32", "-o", out, "--format", "json", "--check"});
  REQUIRE(r.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  CHECK(doc["groups"][2]["kept"] == 4);
  CHECK(doc["groups"][1]["kept"].is_null());
  CHECK(doc["max_rel_error"].get<double>() <= 1e-5);
  // layer1.0.conv1 keeps 4 of its 64 output channels; conv2 reads those 4.
  CHECK(doc["parameters"]["before"].get<std::int64_t>() - doc["parameters"]["after"].get<std::int64_t>() ==
        60 * (64 * 9 + 2) + 64 * 60 * 9);

  struct Bad {
    const char* plan;
    const char* message;
  };
  for (const Bad& bad : {Bad{R"({"groups": [{"group": 99, "keep": [0]}]})", "group 99 does not exist"},
                         Bad{R"({"groups": [{"group": 1, "keep": [0]}]})", "group 1 cannot be pruned"},
                         Bad{R"({"groups": [{"group": 3, "keep": [0, 64]}]})", "group 3 keeps channel 64"},
                         Bad{R"({"groups": [{"group": 3, "keep": [2, 1]}]})", "group 3 keeps channel 1"},
                         Bad{R"({"groups": [{"group": 3, "keep": []}]})", "group 3 keeps no channel"},
                         Bad{R"({"cut": 3})", "it has no list of groups"}, Bad{"{", "not a JSON plan"}}) {
    CAPTURE(bad.plan);
    const std::string bad_out = (scratch.dir / "bad.pt").string();
    const CliRun b = run_cli({"prune", file, "--plan", plan(bad.plan), "--input", "1x3x32x32", "-o", bad_out});
    CHECK(b.code == 2);
    CHECK(b.err.find(bad.message) != std::string::npos);
    CHECK_FALSE(fs::exists(bad_out));
  }
  CHECK(run_cli({"prune", file, "--plan", plan("{}"), "--amount", "0.3", "--input", "1x3x32x32"}).err.find("give --amount or --plan, not both") != std::string::npos);
}

TEST_CASE("prune --plan refuses to keep other positions in one group of a grouped convolution than in another") {
  Scratch scratch;
  const std::string file = (models / "resnext50_32x4d.script.pt").string();
  const CliRun search = run_cli({"prune", file, "--amount", "0.3", "--input", "1x3x32x32", "--format", "json"});
  REQUIRE(search.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(search.out);
  const auto grouped = std::find_if(doc["groups"].begin(), doc["groups"].end(),
                                    [](const nlohmann::json& g) { return g["period"].is_number(); });
  REQUIRE(grouped != doc["groups"].end());
  const auto number = (*grouped)["group"].get<int>();
  const auto period = (*grouped)["period"].get<std::int64_t>();
  const auto channels = (*grouped)["channels"].get<std::int64_t>();
  CHECK(channels % period == 0);
  CHECK((*grouped)["kept"].get<std::int64_t>() % (channels / period) == 0);
  // Channel 0 of the first block only.
  std::vector<std::int64_t> keep;
  for (std::int64_t c = 1; c < channels; ++c) keep.push_back(c);
  const std::string path = (scratch.dir / "plan.json").string();
  std::ofstream(path) << nlohmann::json{{"groups", {{{"group", number}, {"keep", keep}}}}}.dump();
  const std::string out = (scratch.dir / "out.pt").string();
  const CliRun r = run_cli({"prune", file, "--plan", path, "--input", "1x3x32x32", "-o", out});
  CHECK(r.code == 2);
  CHECK(r.err.find(fmt::format("group {} is cut alike in every block of {} channels", number, period)) != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a traced file prunes too: its depthwise convolutions' groups, a literal of its code, follow the weight") {
  Scratch scratch;
  for (const char* name : {"mobilenet_v2", "efficientnet_b0", "resnext50_32x4d"}) {
    CAPTURE(name);
    const std::string out = (scratch.dir / fmt::format("{}.pruned.pt", name)).string();
    const CliRun r = run_cli({"prune", (models / fmt::format("{}.trace.pt", name)).string(), "--amount", "0.3", "--input",
                              "1x3x32x32", "-o", out, "--check", "--format", "json"});
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    CHECK(doc["max_rel_error"].get<double>() <= 1e-5);
    CHECK(doc["macs"]["after"].get<double>() <= 0.75 * doc["macs"]["before"].get<double>());
    CHECK(torchscript::load(out)->num_parameters() == doc["parameters"]["after"].get<std::int64_t>());
  }
}

TEST_CASE("attention heads cut under masks compute what torch.nn's attention computes; a class the rewrite cannot serve is refused") {
  Scratch scratch;
  // A float attention mask with a bool padding mask, then a bool causal one: LibTorch runs the
  // original (torch's own attention code) with the cut heads unread against the pruned file.
  const std::string out = (scratch.dir / "masked.pt").string();
  const CliRun r = run_cli({"prune", (models / "masked_attention.script.pt").string(), "--amount", "0.3", "--input",
                            "2x5x16", "-o", out, "--check", "--format", "json"});
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  int heads = 0;
  for (const nlohmann::json& g : doc["groups"]) {
    if (g["width"] != 4) continue;
    ++heads;
    CHECK(g["kept"] == 3);  // floor(0.3 x 4) = 1 of 4 heads
  }
  CHECK(heads == 2);
  CHECK(doc["max_rel_error"].get<double>() <= 1e-5);
  CHECK(run_cli({"analyze", out, "--input", "2x5x16", "--format", "json"}).code == 0);

  // The second layer of the class has add_zero_attn, which the rewritten method would drop.
  const std::string odd = (scratch.dir / "odd.pt").string();
  const CliRun refused = run_cli({"prune", (models / "odd_attention.script.pt").string(), "--amount", "0.3", "--input",
                                  "5x2x16", "-o", odd});
  CHECK(refused.code == 2);
  CHECK(refused.err.find("include one with bias_k, bias_v, add_zero_attn or separate projections") != std::string::npos);
  CHECK_FALSE(fs::exists(odd));
}

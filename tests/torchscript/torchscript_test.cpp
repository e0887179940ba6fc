// The TorchScript front end on real PyTorch models: torchvision's classifiers, scripted and
// traced by tests/torchscript/make_models.py (seeded random weights, made when the suite is
// built), loaded, traced, run and compared with LibTorch's own output.
#include "support/checks.hpp"
#include "support/zoo_checks.hpp"
#include "torchscript/model_files.hpp"
#include "torchscript/script_file.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include "support/run_cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;
namespace fs = std::filesystem;

namespace {

const fs::path script_source = fs::path(SYMTRACE_TEST_SOURCE) / "torchscript" / "make_models.py";

// The line of make_models.py that holds `text` (1-based), the Python line a failure names.
int python_line(std::string_view text) {
  std::ifstream in(script_source);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  FAIL("make_models.py has no line with " << std::string(text));
  return 0;
}

std::map<std::string, int> call_modules_by_type(const Module& root, const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_module) ++counts[root.get_submodule(n.target()).type_name()];
  return counts;
}

// Load, trace, lint, interpreter == eager, eager == LibTorch, parameters, fx's call_modules
// (when torch.fx can trace the Python model).
void check_classifier(const std::string& name, const std::string& form) {
  CAPTURE(name);
  CAPTURE(form);
  const nlohmann::json m = meta(name);
  const IntList in_shape = m["input"].get<IntList>();
  const IntList out_shape = m["output"].get<IntList>();
  std::shared_ptr<Module> model = torchscript::load(models / fmt::format("{}.{}.pt", name, form));
  CHECK(model->num_parameters() == m["parameters"].get<std::int64_t>());
  const Tensor x = read_floats(models / (name + ".input.bin"), in_shape);
  const Tensor expected = read_floats(models / (name + ".output.bin"), out_shape);
  Value out = model->call({x});
  Tensor eager = out.is_list() ? out.to_list().at(0).to_tensor() : out.to_tensor();
  REQUIRE(eager.shape() == expected.shape());
  const double vs_torch = max_rel_error(eager, expected);
  CAPTURE(vs_torch);
  CHECK(vs_torch <= 1e-4);

  Graph g = symbolic_trace(*model, {InputSpec(Shape(in_shape))});
  CHECK_NOTHROW(g.lint());
  Value traced = Interpreter(*model, g).run({x});
  Tensor t = traced.is_list() ? traced.to_list().at(0).to_tensor() : traced.to_tensor();
  const double vs_eager = max_rel_error(t, eager);
  CAPTURE(vs_eager);
  CHECK(vs_eager <= 1e-5);

  if (!m["fx_call_modules"].is_null()) {
    std::map<std::string, int> fx;
    for (const auto& [type, count] : m["fx_call_modules"].items()) fx[type] = count.get<int>();
    const std::map<std::string, int> ours = call_modules_by_type(*model, g);
    CHECK_MESSAGE(ours == fx, fmt::format("symtrace: {}\ntorch.fx: {}", fmt::join(ours, ", "), fmt::join(fx, ", ")));
  }
}

}  // namespace

TEST_CASE("a scripted resnet18 loads as a tree of torch.nn's layers under PyTorch's names") {
  std::shared_ptr<Module> model = torchscript::load(models / "resnet18.script.pt");
  CHECK(model->type_name() == "ResNet");
  CHECK(model->get_submodule("layer1.0").type_name() == "BasicBlock");
  const Module& conv = model->get_submodule("layer1.0.conv1");
  CHECK(conv.type_name() == "Conv2d");
  CHECK(conv.is_builtin_layer());
  CHECK(to_string(conv) == "Conv2d(64, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)");
  CHECK(model->get_submodule("layer2.0.downsample").type_name() == "Sequential");
  CHECK(model->get_submodule("fc").is_builtin_layer());
  CHECK_FALSE(model->is_training());
  const StateDict state = model->state_dict();
  CHECK(state.size() == 122);  // PyTorch's len(resnet18().state_dict())
  CHECK(state.contains("layer1.0.bn1.num_batches_tracked"));
  CHECK(state.at("layer1.0.bn1.num_batches_tracked").dtype() == DType::int64);
  CHECK(model->num_parameters() == meta("resnet18")["parameters"].get<std::int64_t>());
}

TEST_CASE("torchvision's classifiers, scripted and traced, trace and run as LibTorch runs them") {
  for (const std::string& name : classifiers) {
    for (const char* form : {"script", "trace"}) {
      SUBCASE((name + "." + form).c_str()) {
        try {
          check_classifier(name, form);
        } catch (const std::exception& e) {  // one model's error is that model's failure only
          FAIL_CHECK(fmt::format("{}.{}: {}", name, form, e.what()));
        }
      }
    }
  }
}

TEST_CASE("torchvision's segmentation models return a dict, traced whole, as LibTorch computes it") {
  for (const char* name : {"deeplabv3_mobilenet_v3_large", "fcn_resnet50"}) {
    CAPTURE(name);
    const nlohmann::json m = meta(name);
    const IntList in_shape = m["input"].get<IntList>();
    std::shared_ptr<Module> model = torchscript::load(models / fmt::format("{}.script.pt", name));
    CHECK(model->num_parameters() == m["parameters"].get<std::int64_t>());
    const Tensor x = read_floats(models / fmt::format("{}.input.bin", name), in_shape);
    const Tensor expected = read_floats(models / fmt::format("{}.output.bin", name), m["output"].get<IntList>());

    // Eager: a dict {"out": logits}, F.interpolate's bilinear upsampling included.
    const Value out = model->call({x});
    REQUIRE(out.is_dict());
    REQUIRE(out.to_dict().size() == 1);
    REQUIRE(out.to_dict().keys[0].is_string());
    CHECK(out.to_dict().keys[0].to_string_ref() == "out");
    const Tensor logits = out.to_dict().values[0].to_tensor();
    REQUIRE(logits.shape() == expected.shape());
    CHECK(max_rel_error(logits, expected) <= 1e-4);

    // Traced whole, with no failure; the result is a `dict` node with the logits under "out".
    GraphCollection c = recursive_trace(*model, {InputSpec(Shape(in_shape))});
    CHECK(c.failures().empty());
    REQUIRE(c.size() == 1);
    const Graph& g = c.at(*model);
    CHECK_NOTHROW(g.lint());
    REQUIRE(g.output_node() != nullptr);
    const NodeId* result_id = g.output_node()->args().at(0).get_if<NodeId>();
    REQUIRE(result_id != nullptr);
    const Node* result = g.find_node(*result_id);
    REQUIRE(result != nullptr);
    CHECK(result->op() == OpKind::call_function);
    CHECK(result->target() == "dict");
    REQUIRE(result->kwargs().size() == 1);
    CHECK(result->kwargs()[0].first == "out");
    const Value traced = Interpreter(*model, g).run({x});
    REQUIRE(traced.is_dict());
    CHECK(max_rel_error(traced.to_dict().find(Value("out"))->to_tensor(), logits) <= 1e-5);

    std::map<std::string, int> fx;
    for (const auto& [type, count] : m["fx_call_modules"].items()) fx[type] = count.get<int>();
    const std::map<std::string, int> ours = call_modules_by_type(*model, g);
    CHECK_MESSAGE(ours == fx, fmt::format("symtrace: {}\ntorch.fx: {}", fmt::join(ours, ", "), fmt::join(fx, ", ")));
  }
}

TEST_CASE("a count from torchvision's nms is a size only the run knows, traced through reshape, cat and topk") {
  std::shared_ptr<Module> model = torchscript::load(models / "nms_topk.script.pt");
  const Tensor boxes = tensor({0.f, 0.f, 10.f, 10.f, 1.f, 1.f, 11.f, 11.f, 20.f, 20.f, 30.f, 30.f,
                               0.f, 0.f, 10.f, 10.f, 21.f, 19.f, 29.f, 31.f, 5.f, 5.f, 6.f, 6.f},
                              {6, 4});
  const Tensor equal_boxes = zeros({6, 4}) + tensor({0.f, 0.f, 10.f, 10.f});
  const Tensor scores = tensor({0.9f, 0.8f, 0.7f, 0.9f, 0.95f, 0.1f});

  Graph g = symbolic_trace(*model, {InputSpec(Shape{6, 4}), InputSpec(Shape{6})});
  CHECK_NOTHROW(g.lint());
  const std::string text = to_string(g);
  CAPTURE(text);
  CHECK(text.find("%nms : int64[?] [num_users=") != std::string::npos);
  CHECK(text.find("call_function[target=sym_min](args = (3, %mul") != std::string::npos);
  CHECK(text.find("call_function[target=topk]") != std::string::npos);
  // Kept 3 boxes (k = 3), or 1 of 6 equal boxes (k = min(3, 2) = 2): LibTorch, the eager
  // forward and the graph agree.
  for (const Tensor& b : {boxes, equal_boxes}) {
    const Tensor torch_out = torchscript::run_in_libtorch(models / "nms_topk.script.pt", {b, scores}).to_tensor();
    const Tensor eager = model->call({b, scores}).to_tensor();
    const Tensor traced = Interpreter(*model, g).run({b, scores}).to_tensor();
    REQUIRE(eager.shape() == torch_out.shape());
    CHECK(max_rel_error(eager, torch_out) == 0);
    REQUIRE(traced.shape() == eager.shape());
    CHECK(max_rel_error(traced, eager) == 0);
  }
  CHECK(model->call({equal_boxes, scores}).to_tensor().shape() == Shape{2});

  // Branching on the count fails that module at its Python line; its child is traced.
  std::shared_ptr<Module> branch = torchscript::load(models / "nms_branch.script.pt");
  GraphCollection c = recursive_trace(*branch, {InputSpec(Shape{6, 4}), InputSpec(Shape{6})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module.empty());
  CHECK(c.failures()[0].where.line() == static_cast<unsigned>(python_line("if keep.size(0) > 2:")));
  CHECK(std::string_view(c.failures()[0].where.file_name()).ends_with("make_models.py"));
  CHECK(c.find("post") != nullptr);
}

TEST_CASE("torch.nn.TransformerEncoder, models with torch.nn.LSTM and MultiheadAttention, and TorchScript's builtins "
          "run as LibTorch runs them") {
  for (const auto& [name, form] : std::vector<std::pair<const char*, const char*>>{
           // clang-format off
           {"transformer_encoder", "script"}, {"lstm_tagger", "script"}, {"lstm_tagger", "trace"}, {"recurrent", "script"}, {"recurrent", "trace"}, {"pass_through", "trace"},
           {"layers", "script"}, {"layers", "trace"}, {"builtins", "script"}}) {
    // clang-format on
    SUBCASE(fmt::format("{}.{}", name, form).c_str()) {
      try {
        check_classifier(name, form);
      } catch (const std::exception& e) {
        FAIL_CHECK(fmt::format("{}.{}: {}", name, form, e.what()));
      }
    }
  }
}

TEST_CASE("torch.nn's MultiheadAttention, LSTM and Softmax load as symtrace's own layers") {
  std::shared_ptr<Module> scripted = torchscript::load(models / "layers.script.pt");
  const auto* attn = dynamic_cast<const nn::MultiheadAttentionImpl*>(&scripted->get_submodule("attn"));
  REQUIRE(attn != nullptr);
  CHECK(attn->embed_dim == 16);
  CHECK(attn->num_heads == 4);
  CHECK_FALSE(attn->options.batch_first);
  CHECK(attn->get_submodule("out_proj").type_name() == "NonDynamicallyQuantizableLinear");
  const auto* lstm = dynamic_cast<const nn::LSTMImpl*>(&scripted->get_submodule("lstm"));
  REQUIRE(lstm != nullptr);
  CHECK(to_string(*lstm) == "LSTM(16, 8, num_layers=2, bidirectional=True)");
  CHECK(dynamic_cast<const nn::SoftmaxImpl*>(&scripted->get_submodule("softmax")) != nullptr);
  const StateDict state = scripted->state_dict();
  for (const char* name : {"attn.in_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight", "attn.out_proj.bias",
                           "lstm.weight_ih_l0", "lstm.weight_hh_l1_reverse", "lstm.bias_hh_l1_reverse", "pad", "mask"})
    CHECK_MESSAGE(state.contains(name), name);
  CHECK(state.size() == 22);  // PyTorch's len(Layers().state_dict())

  // A traced file gives MultiheadAttention and LSTM forwards of their own (the arguments of
  // the traced call baked in, only the outputs the caller used returned): those modules run
  // their recorded code, and are still leaves of torch.nn's classes, as torch.fx's rule says.
  std::shared_ptr<Module> traced = torchscript::load(models / "layers.trace.pt");
  for (const char* name : {"attn", "lstm"}) {
    const Module& m = traced->get_submodule(name);
    CHECK(dynamic_cast<const nn::MultiheadAttentionImpl*>(&m) == nullptr);
    CHECK(dynamic_cast<const nn::LSTMImpl*>(&m) == nullptr);
    CHECK(m.is_leaf_by_default());
    CHECK_FALSE(m.is_builtin_layer());  // not one of symtrace's own layers
  }
  CHECK(traced->get_submodule("attn").type_name() == "MultiheadAttention");
  CHECK(dynamic_cast<const nn::SoftmaxImpl*>(&traced->get_submodule("softmax")) != nullptr);
  CHECK_FALSE(traced->is_leaf_by_default());  // the root is traced, whatever its class
}

TEST_CASE("torch.nn's GRU and RNN load as symtrace's own layers, with their configuration") {
  std::shared_ptr<Module> scripted = torchscript::load(models / "recurrent.script.pt");
  const auto* gru = dynamic_cast<const nn::GRUImpl*>(&scripted->get_submodule("gru"));
  REQUIRE(gru != nullptr);
  CHECK(to_string(*gru) == "GRU(8, 6, num_layers=2, batch_first=True, bidirectional=True)");
  const auto* relu_rnn = dynamic_cast<const nn::RNNImpl*>(&scripted->get_submodule("relu_rnn"));
  REQUIRE(relu_rnn != nullptr);
  CHECK(to_string(*relu_rnn) == "RNN(12, 6, batch_first=True, nonlinearity=relu)");
  const auto* tanh_rnn = dynamic_cast<const nn::RNNImpl*>(&scripted->get_submodule("tanh_rnn"));
  REQUIRE(tanh_rnn != nullptr);
  CHECK(to_string(*tanh_rnn) == "RNN(6, 5, bias=False, batch_first=True)");
  CHECK(scripted->state_dict().size() == 22);  // PyTorch's len(Recurrent().state_dict())

  // Traced, a layer's forward returns only the outputs its caller used, in the order it used
  // them: the GRU's (output, h_n) is PyTorch's forward, and the GRU is symtrace's; the RNNs,
  // whose callers used only the output, keep their traced forwards, leaves all the same.
  std::shared_ptr<Module> traced = torchscript::load(models / "recurrent.trace.pt");
  const auto* traced_gru = dynamic_cast<const nn::GRUImpl*>(&traced->get_submodule("gru"));
  REQUIRE(traced_gru != nullptr);
  CHECK(to_string(*traced_gru) == to_string(*gru));
  for (const char* name : {"relu_rnn", "tanh_rnn"}) {
    const Module& m = traced->get_submodule(name);
    CHECK(dynamic_cast<const nn::RNNImpl*>(&m) == nullptr);
    CHECK(m.is_leaf_by_default());
    CHECK(m.type_name() == "RNN");
  }
  const Graph g = symbolic_trace(*traced, {InputSpec(Shape{Dim("N"), 7, 8})});
  std::vector<std::string> leaves;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_module) leaves.emplace_back(n.target());
  CHECK(leaves == std::vector<std::string>{"gru", "relu_rnn", "tanh_rnn"});
}

TEST_CASE("a traced torch.nn layer whose forward takes nothing and returns None is a leaf that returns None") {
  // PassThrough's Identity, traced: `forward(self) -> None` (the value passed by it).
  std::shared_ptr<Module> traced = torchscript::load(models / "pass_through.trace.pt");
  const Module& norm = traced->get_submodule("norm");
  CHECK(dynamic_cast<const nn::IdentityImpl*>(&norm) == nullptr);
  CHECK(norm.is_leaf_by_default());
  const Graph g = symbolic_trace(*traced, {InputSpec(Shape{Dim("N"), 3, 8, 8})});
  CHECK_NOTHROW(g.lint());
  std::vector<std::string> leaves;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_module) leaves.emplace_back(n.target());
  CHECK(leaves == std::vector<std::string>{"conv", "norm"});
  CHECK(recursive_trace(*traced, {InputSpec(Shape{1, 3, 8, 8})}).failures().empty());
}

TEST_CASE("a root of a torch.nn class is traced, and its torch.nn children are leaves, as in torch.fx") {
  std::shared_ptr<Module> model = torchscript::load(models / "transformer_encoder.script.pt");
  CHECK(model->type_name() == "TransformerEncoder");
  CHECK_FALSE(model->is_leaf_by_default());
  CHECK(model->get_submodule("layers.0").is_leaf_by_default());
  GraphCollection c = recursive_trace(*model, {InputSpec(Shape{2, 5, 32})});
  CHECK(c.failures().empty());
  const ModuleHierarchy& h = c.hierarchy();
  CHECK(h[h.index_of("")].status == ModuleStatus::traced);
  CHECK(h[h.index_of("layers.0")].status == ModuleStatus::leaf);
  CHECK(h[h.index_of("layers.1")].status == ModuleStatus::leaf);
  CHECK(h[h.index_of("layers.0.self_attn")].status == ModuleStatus::unvisited);  // inside a leaf
  // The layer's code reads its attention's attributes (`self.self_attn.batch_first`), kept
  // from the file for the symtrace layer it became.
  CHECK(dynamic_cast<const nn::MultiheadAttentionImpl*>(&model->get_submodule("layers.0.self_attn")) != nullptr);
}

TEST_CASE("a model with three data-dependent ifs gives those three modules failed at their Python lines") {
  std::shared_ptr<Module> model = torchscript::load(models / "three_ifs.script.pt");
  GraphCollection c = recursive_trace(*model, {InputSpec(Shape{1, 3, 16, 16})});
  REQUIRE(c.failures().size() == 3);
  const std::map<std::string, std::string> ifs = {
      {"gate", "if y.mean() > 0:"}, {"scale", "if bool(x.max() > 1.0):"}, {"head", "if x.sum() > 0:"}};
  for (const ModuleFailure& f : c.failures()) {
    CAPTURE(to_string(f));
    REQUIRE(ifs.count(f.module) == 1);
    CHECK(f.kind == "TraceError");
    CHECK(fs::path(f.where.file_name()).filename() == "make_models.py");
    CHECK(f.where.line() == static_cast<unsigned>(python_line(ifs.at(f.module))));
  }
  for (const char* child : {"gate.conv", "gate.act", "scale.bn", "head.pool", "head.fc"})
    CHECK_MESSAGE(c.find(child) != nullptr, child);
  CHECK(c.find("") != nullptr);
}

TEST_CASE("a failure in code compiled from text of no file is located at the call in the model's file, the code named") {
  // Note [Failures in TorchScript's builtin code]: string_gate's `if` is in a function whose
  // source is "<string>".
  std::shared_ptr<Module> model = torchscript::load(models / "string_gate.script.pt");
  GraphCollection c = recursive_trace(*model, {InputSpec(Shape{2, 3})});
  REQUIRE(c.failures().size() == 1);
  const ModuleFailure& f = c.failures()[0];
  CAPTURE(to_string(f));
  CHECK(f.module == "");
  CHECK(f.kind == "TraceError");
  CHECK(fs::path(f.where.file_name()).filename() == "make_models.py");
  CHECK(f.where.line() == static_cast<unsigned>(python_line("the call a failure in <string> is located at")));
  CHECK(f.message.find("(in TorchScript's builtin __torch__.string_source.gate, at <string>:3)") != std::string::npos);
  // Eagerly the function runs as any other.
  const Tensor x = read_floats(models / "string_gate.input.bin", {2, 3});
  CHECK(max_rel_error(model->call({x}).to_tensor(), read_floats(models / "string_gate.output.bin", {2, 3})) <= 1e-6);
}

TEST_CASE("an integer buffer of another width (int32) loads as int64 and computes what LibTorch computes") {
  std::shared_ptr<Module> model = torchscript::load(models / "int32_buffer.script.pt");
  const Tensor counts = model->find_buffer("counts");
  REQUIRE(counts.defined());
  CHECK(counts.dtype() == DType::int64);
  CHECK(counts.to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 2, 3});
  const Tensor x = read_floats(models / "int32_buffer.input.bin", {1, 3, 4, 4});
  CHECK(max_rel_error(model->call({x}).to_tensor(), read_floats(models / "int32_buffer.output.bin", {1, 3, 4, 4})) <= 1e-6);
}

TEST_CASE("a traced file's aten::_convolution is symtrace's conv1d or conv_transpose1d by its weight") {
  std::shared_ptr<Module> model = torchscript::load(models / "up_down.trace.pt");
  const Tensor x = read_floats(models / "up_down.input.bin", {1, 2, 16});
  const Tensor expected = read_floats(models / "up_down.output.bin", {1, 2, 16});
  CHECK(model->get_submodule("down").type_name() == "Conv1d");  // a traced layer keeps its code
  GraphCollection c = recursive_trace(*model, {InputSpec(Shape{1, 2, 16})});
  CHECK(c.failures().empty());
  REQUIRE(c.find("") != nullptr);
  const Graph& g = *c.find("");
  std::vector<std::string> leaves;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_module) leaves.emplace_back(n.target());
  CHECK(leaves == std::vector<std::string>{"down", "up"});  // by fx's rule
  CHECK(max_rel_error(model->call({x}).to_tensor(), expected) <= 1e-5);
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), expected) <= 1e-5);
  // Traced as roots, the layers' own code is the native ops.
  Graph down = symbolic_trace(model->get_submodule("down"), {InputSpec(Shape{1, 2, 16})});
  CHECK(count_nodes(down, OpKind::call_function, "conv1d") == 1);
  Graph up = symbolic_trace(model->get_submodule("up"), {InputSpec(Shape{1, 4, 8})});
  CHECK(count_nodes(up, OpKind::call_function, "conv_transpose1d") == 1);
}

TEST_CASE("children named as PyTorch allows (block1-0) load, trace and run") {
  std::shared_ptr<Module> model = torchscript::load(models / "dashed_names.script.pt");
  const Tensor x = read_floats(models / "dashed_names.input.bin", {1, 3, 4, 4});
  const Tensor expected = read_floats(models / "dashed_names.output.bin", {1, 4, 4, 4});
  CHECK(model->get_submodule("body.block1-0").type_name() == "Conv2d");
  Graph g = symbolic_trace(*model, {InputSpec(Shape{1, 3, 4, 4})});
  CHECK_NOTHROW(g.lint());
  CHECK(count_nodes(g, OpKind::call_module, "body.block1-0") == 1);
  CHECK(g.find_node("body_block1_0") != nullptr);  // the node's name, sanitised as fx does
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), expected) <= 1e-5);
}

TEST_CASE("a list attribute appended to in one method is seen by another (issue 49: RAFT's correlation pyramid)") {
  std::shared_ptr<Module> model = torchscript::load(models / "pyramid.script.pt");
  const Tensor x = read_floats(models / "pyramid.input.bin", {1, 3, 8, 8});
  const Tensor expected = read_floats(models / "pyramid.output.bin", {1, 9});
  CHECK(max_rel_error(model->call({x}).to_tensor(), expected) <= 1e-5);
  Graph g = symbolic_trace(*model, {InputSpec(Shape{1, 3, 8, 8})});
  CHECK_NOTHROW(g.lint());
  CHECK(count_nodes(g, OpKind::call_function, "avg_pool2d") == 2);
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), expected) <= 1e-5);
}

TEST_CASE("a list or dict changed through one name is changed for every other, eagerly and traced (torchaudio's "
          "Emformer)") {
  // make_models.py's Aliasing: a list appended to after it was put in a list, an item write,
  // extend, += and insert through aliases, a list held by a dict, a dict written through an alias,
  // a list a function and a child's method append to, a list attribute read before the run
  // appends to it, and a list an op made put in a list; each pattern is a row of the result.
  std::shared_ptr<Module> model = torchscript::load(models / "aliasing.script.pt");
  const Tensor x = read_floats(models / "aliasing.input.bin", {2, 3});
  const Tensor expected = read_floats(models / "aliasing.output.bin", {9, 2, 3});
  const Tensor eager = model->call({x}).to_tensor();
  CHECK(max_rel_error(eager, expected) <= 1e-5);
  Graph g = symbolic_trace(*model, {InputSpec(Shape{2, 3})});
  CHECK_NOTHROW(g.lint());
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), eager) <= 1e-5);
  // The list attribute the run appended to is the run's (Note [Attributes set by a run]): a
  // second run starts from the module's own, empty, as the first did.
  CHECK(max_rel_error(model->call({x}).to_tensor(), expected) <= 1e-5);
}

TEST_CASE("list.copy(), list(x) and a slice are new lists: appending to them leaves the list copied as it was") {
  std::shared_ptr<Module> model = torchscript::load(models / "aliasing.script.pt");
  const Tensor x = read_floats(models / "aliasing.input.bin", {2, 3});
  const Tensor out = model->call({x}).to_tensor();
  // The list copied: x - 2, 2x, x + 5, x / 2, 11x, 19x, 7x, x + 1, x - 1, 3x (46.5x + 3), less
  // the 3x popped after the copies were made and appended to; each row is sum * count.
  CHECK(max_rel_error(out.select(0, 0), (x * 43.5 + 3.0) * 9.0) <= 1e-5);
  CHECK(max_rel_error(out.select(0, 4), (x * 146.5 + 3.0) * 11.0) <= 1e-5);              // copy() + 100x
  CHECK(max_rel_error(out.select(0, 5), (x * 246.5 + 3.0 - (x - 2.0)) * 10.0) <= 1e-5);  // [1:] + 200x
  CHECK(max_rel_error(out.select(0, 6), (x * 346.5 + 3.0) * 11.0) <= 1e-5);              // list() + 300x
  CHECK(max_rel_error(out.select(0, 7), x * 3.0) <= 1e-5);                               // popped
}

TEST_CASE("torch.jit.isinstance tells a Union result's list from its tensor (issue 49: torchtext's RoBERTa)") {
  std::shared_ptr<Module> model = torchscript::load(models / "union_result.script.pt");
  const Tensor x = read_floats(models / "union_result.input.bin", {2, 3});
  const Tensor expected = read_floats(models / "union_result.output.bin", {2, 3});
  CHECK(max_rel_error(model->call({x}).to_tensor(), expected) <= 1e-6);
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape{2, 3})});
  CHECK(c.failures().empty());
  CHECK(max_rel_error(Interpreter(*model, c.at(*model)).run({x}).to_tensor(), expected) <= 1e-6);
}

TEST_CASE("a parent may call a method of its child other than forward") {
  std::shared_ptr<Module> model = torchscript::load(models / "other_method.script.pt");
  const Tensor x = read_floats(models / "other_method.input.bin", {1, 3, 8, 8});
  const Tensor expected = read_floats(models / "other_method.output.bin", {1, 3, 8, 8});
  CHECK(max_rel_error(model->call({x}).to_tensor(), expected) <= 1e-5);
  Graph g = symbolic_trace(*model, {InputSpec(Shape{1, 3, 8, 8})});
  CHECK(count_nodes(g, OpKind::call_module, "helper.conv") == 1);
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), expected) <= 1e-5);
}

TEST_CASE("a call of a TorchScript method or function is a torchscript_function event named by its qualified name") {
  std::shared_ptr<Module> model = torchscript::load(models / "other_method.script.pt");
  const Tensor x = read_floats(models / "other_method.input.bin", {1, 3, 8, 8});
  const Tensor expected = read_floats(models / "other_method.output.bin", {1, 3, 8, 8});
  struct Seen {
    std::string name;
    std::size_t inputs;
    std::uint64_t parent;
  };
  std::vector<Seen> seen;
  std::vector<std::uint64_t> module_ids;
  clear_callbacks();
  add_thread_local_callback(RecordFunctionCallback([&](const RecordFunction& fn) {
                              if (fn.scope() == RecordScope::module) module_ids.push_back(fn.id());
                              else seen.push_back({std::string(fn.name()), fn.inputs().size(), fn.parent_id()});
                              return std::unique_ptr<ObserverContext>();
                            })
                                .scopes({RecordScope::torchscript_function, RecordScope::module})
                                .needs_inputs()
                                .needs_ids());
  const Tensor out = model->call({x}).to_tensor();
  clear_callbacks();
  CHECK(max_rel_error(out, expected) <= 1e-5);
  // forward calls self.helper.scaled(x, 2.0): the method, with its two arguments (self not
  // counted), inside the root module's call; helper.conv's call is a module event inside it.
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].name.ends_with(".Helper.scaled"));
  CHECK(seen[0].name.starts_with("__torch__."));
  CHECK(seen[0].inputs == 2);
  REQUIRE(module_ids.size() == 2);  // OtherMethod, helper.conv
  CHECK(seen[0].parent == module_ids[0]);
}

TEST_CASE("bad files are refused with the path and one line of reason") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("symtrace-ts-{}", ::getpid());
  fs::create_directories(dir);
  SUBCASE("missing") {
    CHECK_THROWS_WITH_AS(torchscript::load(dir / "none.pt"), doctest::Contains("none.pt: no such file"),
                         std::invalid_argument);
  }
  SUBCASE("not TorchScript") {
    std::ofstream(dir / "text.pt") << "hello\n";
    CHECK_THROWS_WITH_AS(torchscript::load(dir / "text.pt"),
                         doctest::Contains("text.pt: not a TorchScript file LibTorch can read"), std::invalid_argument);
  }
  SUBCASE("truncated") {
    const auto size = fs::file_size(models / "three_ifs.script.pt");
    fs::copy_file(models / "three_ifs.script.pt", dir / "half.pt", fs::copy_options::overwrite_existing);
    fs::resize_file(dir / "half.pt", size / 2);
    CHECK_THROWS_WITH_AS(torchscript::load(dir / "half.pt"),
                         doctest::Contains("half.pt: not a TorchScript file LibTorch can read"), std::invalid_argument);
  }
  fs::remove_all(dir);
}

TEST_CASE("LibTorch's own forward of a file is the reference check --against-torch uses") {
  const Tensor x = read_floats(models / "resnet18.input.bin", {1, 3, 32, 32});
  const Tensor expected = read_floats(models / "resnet18.output.bin", {1, 1000});
  const Value out = torchscript::run_in_libtorch(models / "resnet18.script.pt", {x});
  // The same kernels give the same numbers; LibTorch picks them by the processor (and
  // ATEN_CPU_CAPABILITY), and the default's and AVX2's differ by 1.1e-6 here.
  CHECK(max_rel_error(out.to_tensor(), expected) <= 1e-5);
}

TEST_CASE("symtrace analyze of resnet50.pt gives the zoo resnet50's parameters, MACs and channel groups") {
  const CliRun zoo = run_cli({"analyze", "resnet50", "--input", "1x3x224x224", "--format", "json"});
  const CliRun file = run_cli({"analyze", (models / "resnet50.script.pt").string(), "--input", "1x3x224x224", "--format",
                               "json"});
  REQUIRE(zoo.code == 0);
  REQUIRE(file.code == 0);
  const nlohmann::json a = nlohmann::json::parse(zoo.out), b = nlohmann::json::parse(file.out);
  CHECK(b["summary"]["parameters"] == a["summary"]["parameters"]);
  CHECK(b["summary"]["macs"] == a["summary"]["macs"]);
  CHECK(b["summary"]["flops"] == a["summary"]["flops"]);
  CHECK(b["summary"]["complete"] == true);
  CHECK(b["pruning"]["groups"].size() == 39);
  CHECK(b["pruning"]["groups"] == a["pruning"]["groups"]);
}

TEST_CASE("the program takes a TorchScript file wherever it takes a MODEL") {
  const std::string file = (models / "three_ifs.script.pt").string();
  SUBCASE("report: the three failed modules") {
    const CliRun r = run_cli({"report", file, "--input", "1x3x16x16", "--format", "json"});
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["failed"].size() == 3);
    CHECK(j["model"] == file);
  }
  SUBCASE("--input is required: a file stores no example inputs") {
    const CliRun r = run_cli({"report", file});
    CHECK(r.code == 2);
    CHECK(r.err.find("is a TorchScript file, which stores no example inputs; give the shape of each input of its "
                     "forward with --input") != std::string::npos);
  }
  SUBCASE("a missing file is exit 2 with a one-line reason") {
    const CliRun r = run_cli({"trace", "missing/model.pt", "--input", "1x3x8x8"});
    CHECK(r.code == 2);
    CHECK(r.err == "symtrace trace: error: missing/model.pt: no such file\n");
  }
  SUBCASE("check --against-torch compares eager and graph with LibTorch") {
    const CliRun r = run_cli({"check", (models / "mobilenet_v2.trace.pt").string(), "--input", "1x3x32x32",
                              "--against-torch", "--format", "json"});
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["against_torch"]["eager_max_rel_error"].get<double>() <= 1e-4);
    CHECK(j["against_torch"]["graph_max_rel_error"].get<double>() <= 1e-4);
  }
  SUBCASE("floats are drawn from a range given as for integers: an image's [0,1)") {
    // A model that refuses values outside [2, 3).
    const std::string ranged = script_file("ranged", "def forward(self, x):\n"
                                                     "  assert bool(x.min() >= 2.0) and bool(x.max() < 3.0), 'out of range'\n"
                                                     "  return x * 2\n")
                                   .string();
    CHECK(run_cli({"check", ranged, "--input", "4x8:float32[2,3)", "--against-torch"}).code == 0);
    CHECK(run_cli({"check", ranged, "--input", "[4x8:float32[2,3)]"}).code == 2);  // not a list input
    const CliRun normal = run_cli({"check", ranged, "--input", "4x8"});
    CHECK(normal.code == 2);
    CHECK(normal.err.find("out of range") != std::string::npos);
    const CliRun empty = run_cli({"check", ranged, "--input", "4x8:float32[3,2)"});
    CHECK(empty.code == 2);
    CHECK(empty.err.find("the range [3,2) is empty") != std::string::npos);
    const CliRun boolean = run_cli({"check", ranged, "--input", "4x8:bool[0,1)"});
    CHECK(boolean.code == 2);
    CHECK(boolean.err.find("a range [low,high) is for int64 and float32 inputs") != std::string::npos);
  }
  SUBCASE("a list of tensors is one --input of shapes in brackets; optional inputs need none") {
    const std::string list_file = (models / "list_sum.script.pt").string();
    const CliRun r = run_cli({"trace", list_file, "--input", "[2x3,2x3]"});
    REQUIRE(r.code == 0);
    CHECK(r.out.find("%images : [num_users=2] = placeholder[target=images]") != std::string::npos);
    CHECK(r.out.find("%getitem_1 : float32[2, 3] [num_users=1] = call_function[target=getitem](args = (%images, 1)") !=
          std::string::npos);
    const CliRun bad = run_cli({"trace", list_file, "--input", "[2x3,2x3"});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--input '[2x3,2x3': ']' is missing at the end; write a shape as 1x3x224x224") != std::string::npos);
    CHECK(bad.err.find("a list of shapes as [SHAPE,SHAPE,...]") != std::string::npos);
    // An optional input given as None (issue 49): a guard of the graph, as a concrete arg.
    const CliRun none = run_cli({"trace", list_file, "--input", "[2x3,2x3]", "--input", "none", "--format", "json"});
    REQUIRE(none.code == 0);
    CHECK(nlohmann::json::parse(none.out)["guards"] == nlohmann::json::parse(R"([{"input": "scale", "value": null}])"));
    // check runs the model on a list too (issue 49), against LibTorch's run of the file.
    const CliRun runs = run_cli({"check", list_file, "--input", "[2x3,2x3]", "--against-torch", "--format", "json"});
    CHECK(runs.code == 0);
    CHECK(nlohmann::json::parse(runs.out)["ok"] == true);
  }
  SUBCASE("a dict of tensors is one --input of keyed shapes in braces") {
    const std::string dict_file = (models / "dict_sum.script.pt").string();
    const CliRun r = run_cli({"trace", dict_file, "--input", "{a:2x3,b:2x3}"});
    REQUIRE(r.code == 0);
    CHECK(r.out.find("%getitem : float32[2, 3] [num_users=1] = call_function[target=getitem](args = (%feats, 'a')") !=
          std::string::npos);
    CHECK(r.out.find("%getitem_1 : float32[2, 3] [num_users=1] = call_function[target=getitem](args = (%feats, 'b')") !=
          std::string::npos);
    for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
             {"{a:2x3,a:2x3}", "the key 'a' is given twice"},
             {"{2x3}", "a key is missing at position 2"},
             {"{a:2x3]", "'}' expected at position 7, found ']'"},
             {"[]", "the list is empty"},
             {"[2x3]x", "'x' after the end of the input"},
             {"{a:2x$}", "'$' cannot name a dim"}}) {
      CAPTURE(text);
      const CliRun bad = run_cli({"trace", dict_file, "--input", text});
      CHECK(bad.code == 2);
      CHECK(bad.err.find(error) != std::string::npos);
    }
  }
  SUBCASE("check --against-torch needs a file") {
    const CliRun r = run_cli({"check", "resnet18", "--against-torch"});
    CHECK(r.code == 2);
    CHECK(r.err.find("--against-torch compares with LibTorch's forward of a TorchScript file") != std::string::npos);
  }
}

TEST_CASE("symtrace ops FILE.pt lists LibTorch's operators for a selective build, in text, json and yaml") {
  const std::string file = (models / "resnet18.script.pt").string();
  const CliRun json = run_cli({"ops", file, "--input", "1x3x32x32", "--format", "json"});
  REQUIRE(json.code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json opnames = [] {
    std::ifstream in(models / "resnet18.opnames.json");
    return nlohmann::json::parse(in);
  }();
  CHECK(j["root_operators"] == opnames["script"]);
  CHECK(j["inputs"] == nlohmann::json::parse(R"(["1x3x32x32"])"));
  CHECK(j["custom_classes"] == nlohmann::json::array());
  CHECK_FALSE(j["traced_operators"].empty());

  const CliRun text = run_cli({"ops", file, "--input", "1x3x32x32"});
  REQUIRE(text.code == 0);
  CHECK(text.out.starts_with(fmt::format("LibTorch operators of {} on 1x3x32x32\nroot operators, called by the "
                                         "model's code ({}):\n  aten::__getitem__.t\n",
                                         file, opnames["script"].size())));
  CHECK(text.out.ends_with("custom classes (0)\n"));

  const CliRun yaml = run_cli({"ops", file, "--input", "1x3x32x32", "--format", "yaml"});
  REQUIRE(yaml.code == 0);
  CHECK(yaml.out.starts_with("include_all_non_op_selectives: false\nbuild_features: []\noperators:\n"
                             "  aten::__getitem__.t:\n    is_used_for_training: false\n    is_root_operator: true\n"
                             "    include_all_overloads: false\n"));
  CHECK(yaml.out.ends_with("kernel_metadata: {}\ncustom_classes: []\n"));

  const CliRun training = run_cli({"ops", file, "--input", "1x3x32x32", "--training"});
  CHECK(training.code == 2);
  CHECK(training.err.find("a TorchScript file's root operators already hold its training paths") != std::string::npos);
  const CliRun zoo_yaml = run_cli({"ops", "resnet18", "--format", "yaml"});
  CHECK(zoo_yaml.code == 2);
  CHECK(zoo_yaml.err.find("--format yaml lists LibTorch's operators, which a TorchScript file has") != std::string::npos);
}

TEST_CASE("a traced TorchScript file's op nodes are named after the model's variables, as LibTorch's tracer names values") {
  const fs::path path = script_file("variables", "def forward(self, x):\n"
                                                 "  hidden = torch.relu(x)\n"
                                                 "  out = hidden * 2.0\n"
                                                 "  out = out + x\n"
                                                 "  return torch.sigmoid(out) - 1.0\n");
  std::shared_ptr<Module> model = torchscript::load(path);
  const Graph g = symbolic_trace(*model, {InputSpec(Shape{2, 3})});
  std::vector<std::string> names;
  for (const Node& n : g.nodes()) names.push_back(n.name());
  // `hidden.1` is `hidden`; the file names the second `out` `out0` (PyTorch's serializer
  // renames a reassigned variable); values with no variable keep fx's names.
  CHECK(names == std::vector<std::string>{"x", "hidden", "out", "out0", "sigmoid", "sub", "output"});
}

TEST_CASE("a file calling an operator of a library not loaded is refused with the operator's name and LibTorch's reason, exit 2") {
  const std::string file = (models / "calls_unloaded_op.script.pt").string();
  CHECK_THROWS_WITH_AS((void)torchscript::load(file),
                       doctest::Contains("calls_unloaded_op.script.pt: the file calls the operator "
                                         "symtrace_test::twice_Unloaded, which no library loaded in this process "
                                         "registers: load the library that registers it first (LibTorch: Unknown "
                                         "builtin op: symtrace_test::twice_Unloaded"),
                       std::invalid_argument);
  for (const std::string command : {"report", "trace", "ops"}) {
    CAPTURE(command);
    const CliRun r = run_cli({command, file, "--input", "2x3"});
    CHECK(r.code == 2);
    CHECK(r.err.find("the file calls the operator symtrace_test::twice_Unloaded") != std::string::npos);
  }
}

TEST_CASE("sizes scaled by floats (int(H * 0.5), floor(W * 0.75), scale_factor) keep the named dims") {
  const fs::path file = models / "float_sizes.script.pt";
  std::shared_ptr<Module> model = torchscript::load(file);
  const Tensor x = read_floats(models / "float_sizes.input.bin", {1, 3, 10, 13});
  const Tensor expected = read_floats(models / "float_sizes.output.bin", {1, 3, 10, 18});
  CHECK(max_rel_error(model->call({x}).to_tensor(), expected) <= 1e-6);

  const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N"), 3, Dim("H"), Dim("W")})});
  CHECK_NOTHROW(g.lint());
  const Node* output = g.output_node();
  REQUIRE(output != nullptr);
  CHECK(to_string(output->input_nodes().front()->tensor_meta()->shape) == "[N, 3, 2*(H//2), 2*((3*W)//4)]");
  // int() is sym_int, math.floor is math.floor, float() is sym_float, '/' is operator.truediv.
  std::vector<std::string> targets;
  for (const Node& n : g.nodes())
    if (const Argument* type = n.meta(meta_keys::type); type != nullptr && *type == Argument("float"))
      targets.emplace_back(n.target());
  CHECK(targets == std::vector<std::string>{"operator.mul", "sym_float", "operator.mul", "operator.truediv"});
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), expected) <= 1e-6);
  for (const IntList& shape : {IntList{2, 3, 7, 9}, IntList{1, 3, 16, 4}}) {
    CAPTURE(shape);
    const Tensor other = randn(shape);
    const Tensor eager = model->call({other}).to_tensor();
    const Tensor traced = Interpreter(*model, g).run({other}).to_tensor();
    CHECK(traced.shape() == Shape{shape[0], 3, 2 * (shape[2] / 2), 2 * (3 * shape[3] / 4)});
    CHECK(max_rel_error(traced, eager) <= 1e-6);
  }

  // The command line: --input Nx3xHxW shows the formulas.
  const CliRun r = run_cli({"trace", file.string(), "--input", "Nx3xHxW"});
  CHECK(r.code == 0);
  CHECK(r.out.find("float32[N, 3, 2*(H//2), 2*((3*W)//4)]") != std::string::npos);
}

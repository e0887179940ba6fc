// ONNX export: the zoo's resnet18, mobilenet_v2 and vit_tiny become models that ONNX's checker
// accepts in full (with strict shape inference that must agree with every traced shape), whose
// inputs, outputs and value infos carry the traced shapes and whose initializers are exactly
// the parameters and buffers used; Python's onnx loads and checks the written files; a node
// without a mapping is an error naming it, and nothing is written.
#include <symtrace/symtrace.hpp>
#include <symtrace/zoo/zoo.hpp>
#include <symtrace/export/onnx.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// Flattens all but the first dim, whose size is read while tracing.
class Flat : public TypedModule<Flat> {
 public:
  Tensor forward(const Tensor& x) { return x.reshape({x.size(0), -1}); }
};

/// A chain of functional ops, activations, a split and joins.
class Mixed : public TypedModule<Mixed> {
 public:
  Tensor forward(const Tensor& x) {
    Tensor y = gelu(x, "tanh") - 1.0;
    y = silu(y) / 2.0 + relu6(x) + hardswish(x) * hardsigmoid(y);
    const auto parts = y.chunk(2, 1);                   // [2, 4, 3] each
    Tensor z = cat({parts[1], parts[0].sigmoid()}, 2);  // [2, 4, 6]
    z = z.transpose(1, 2).unsqueeze(0).squeeze(0);      // [2, 6, 4]
    z = softmax(z, -1).mean({1}, true);                 // [2, 1, 4]
    z = z.flatten(1).slice(1, 1, 3);                    // [2, 2]
    return where(z > 0.25, z, x.select(1, 0).narrow(1, 0, 2));
  }
};

/// The zoo model `name` traced on its example input shapes.
struct Traced {
  std::shared_ptr<Module> model;
  Graph graph;
};

Traced trace_zoo(const std::string& name) {
  Traced t{zoo::create(name), Graph()};
  std::vector<InputSpec> specs;
  for (const zoo::ExampleInput& in : zoo::info(name).inputs) specs.emplace_back(Shape(in.shape), in.dtype);
  t.graph = symbolic_trace(*t.model, specs);
  return t;
}

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(bytes));
  return model;
}

/// The dims of an ONNX value's type (-1 for a dim without a value).
std::vector<std::int64_t> dims_of(const onnx::ValueInfoProto& v) {
  std::vector<std::int64_t> out;
  for (const auto& d : v.type().tensor_type().shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return out;
}

std::vector<std::int64_t> dims_of(const TensorMeta& meta) {
  std::vector<std::int64_t> out;
  for (Dim d : meta.shape) out.push_back(d.is_known() ? d.value() : -1);
  return out;
}

int elem_type(DType d) {
  switch (d) {
    case DType::float32: return onnx::TensorProto::FLOAT;
    case DType::int64: return onnx::TensorProto::INT64;
    case DType::bool_: return onnx::TensorProto::BOOL;
    default: break;
  }
  return 0;
}

std::int64_t numel(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) n *= d;
  return n;
}

/// onnx.checker.check_model(model, full_check=True) in C++: the structural check, then shape
/// inference that checks types and fails on any node-level error or disagreement with the
/// shapes the model states.
void full_check(const onnx::ModelProto& model) {
  onnx::checker::check_model(model);
  onnx::ModelProto inferred = model;
  onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                     onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
}

struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               fmt::format("symtrace-onnx-test-{}", std::chrono::steady_clock::now().time_since_epoch().count());
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// The Python that has Debian's onnx module, or "" when there is none.
std::string python_with_onnx() {
  if (std::system("/usr/bin/python3 -c 'import onnx' > /dev/null 2>&1") == 0) return "/usr/bin/python3";
  return {};
}

/// Checks the exported model of `t` against its graph and module; see the file comment.
void check_export(const Traced& t) {
  const std::string bytes = export_onnx(t.graph, *t.model);
  const onnx::ModelProto model = parse(bytes);
  CHECK_NOTHROW(full_check(model));
  REQUIRE(model.opset_import_size() == 1);
  CHECK(model.opset_import(0).version() == onnx_opset_version);
  CHECK(model.producer_name() == "symtrace");
  const onnx::GraphProto& g = model.graph();

  // Inputs and outputs: the placeholders and the returned nodes, with their traced types.
  std::vector<const Node*> placeholders;
  for (const Node& n : t.graph.nodes())
    if (n.op() == OpKind::placeholder) placeholders.push_back(&n);
  REQUIRE(g.input_size() == static_cast<int>(placeholders.size()));
  for (std::size_t i = 0; i < placeholders.size(); ++i) {
    const onnx::ValueInfoProto& in = g.input(static_cast<int>(i));
    CHECK(in.name() == placeholders[i]->name());
    CHECK(in.type().tensor_type().elem_type() == elem_type(placeholders[i]->tensor_meta()->dtype));
    CHECK(dims_of(in) == dims_of(*placeholders[i]->tensor_meta()));
  }
  const Node& out = *t.graph.output_node();
  const Node& result = t.graph.node(*out.args()[0].get_if<NodeId>());
  REQUIRE(g.output_size() == 1);
  CHECK(g.output(0).name() == result.name());
  CHECK(dims_of(g.output(0)) == dims_of(*result.tensor_meta()));

  // value_info: every other node's result, under the node's name, with its traced shape.
  std::map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& v : g.value_info()) infos[v.name()] = &v;
  CHECK(infos.size() == static_cast<std::size_t>(g.value_info_size()));
  std::size_t typed_nodes = 0;
  for (const Node& n : t.graph.nodes()) {
    if (n.op() == OpKind::placeholder || n.op() == OpKind::output || n.op() == OpKind::get_attr || &n == &result)
      continue;
    REQUIRE(n.tensor_meta() != nullptr);
    ++typed_nodes;
    auto it = infos.find(n.name());
    CAPTURE(n.name());
    REQUIRE(it != infos.end());
    CHECK(dims_of(*it->second) == dims_of(*n.tensor_meta()));
    CHECK(it->second->type().tensor_type().elem_type() == elem_type(n.tensor_meta()->dtype));
  }
  CHECK(infos.size() == typed_nodes);

  // Initializers: exactly the parameters, the running statistics and the graph's constants,
  // by name, holding their data; the parameters sum to num_parameters().
  std::map<std::string, Tensor> parameters, buffers;
  for (const auto& [name, tensor] : t.model->named_parameters()) parameters[name] = tensor;
  for (const auto& [name, tensor] : t.model->named_buffers())
    if (!name.ends_with("num_batches_tracked")) buffers[name] = tensor;
  for (const Node& n : t.graph.nodes())
    if (const Tensor* constant = n.op() == OpKind::get_attr ? t.graph.find_constant(n.target()) : nullptr)
      buffers[std::string(n.target())] = *constant;
  REQUIRE(g.initializer_size() == static_cast<int>(parameters.size() + buffers.size()));
  std::int64_t parameter_elements = 0, buffer_elements = 0;
  std::set<std::string> names;
  for (const onnx::TensorProto& init : g.initializer()) {
    names.insert(init.name());
    const bool is_parameter = parameters.contains(init.name());
    CAPTURE(init.name());
    REQUIRE((is_parameter || buffers.contains(init.name())));
    const Tensor& tensor = is_parameter ? parameters[init.name()] : buffers[init.name()];
    CHECK(std::vector<std::int64_t>(init.dims().begin(), init.dims().end()) == tensor.shape().sizes());
    CHECK(init.data_type() == onnx::TensorProto::FLOAT);
    const std::vector<float> data = tensor.to_vector<float>();
    REQUIRE(init.raw_data().size() == data.size() * sizeof(float));
    CHECK(std::memcmp(init.raw_data().data(), data.data(), init.raw_data().size()) == 0);
    (is_parameter ? parameter_elements : buffer_elements) += numel(init);
  }
  CHECK(names.size() == static_cast<std::size_t>(g.initializer_size()));
  CHECK(parameter_elements == t.model->num_parameters());
  std::int64_t others = 0;
  for (const auto& [name, tensor] : buffers) others += *tensor.shape().numel();
  CHECK(buffer_elements == others);

  // The stream and file overloads write the same bytes.
  std::ostringstream stream;
  export_onnx(t.graph, *t.model, stream);
  CHECK(stream.str() == bytes);
}

}  // namespace

TEST_CASE("this build exports ONNX") { CHECK(onnx_export_available()); }

TEST_CASE("resnet18, mobilenet_v2 and vit_tiny export to models ONNX's full check accepts, with the traced "
          "shapes and the parameters as initializers") {
  for (const char* name : {"resnet18", "mobilenet_v2", "vit_tiny"}) {
    SUBCASE(name) {
      const std::vector<std::string> zoo_names = zoo::names();
      REQUIRE(std::find(zoo_names.begin(), zoo_names.end(), name) != zoo_names.end());
      check_export(trace_zoo(name));
    }
  }
}

TEST_CASE("unet_small (Upsample as Resize), rnn (int64 tokens, Embedding) and deep_mlp_100 export and check as well") {
  for (const char* name : {"unet_small", "rnn", "deep_mlp_100"}) {
    SUBCASE(name) { check_export(trace_zoo(name)); }
  }
}

TEST_CASE("layers map to the ONNX operators torch.onnx uses, with their attributes") {
  const Traced t = trace_zoo("resnet18");
  const onnx::ModelProto model = parse(export_onnx(t.graph, *t.model));
  std::map<std::string, int> ops;
  const onnx::NodeProto* conv1 = nullptr;
  for (const onnx::NodeProto& n : model.graph().node()) {
    ++ops[n.op_type()];
    if (n.name() == "conv1") conv1 = &n;
  }
  CHECK(ops["Conv"] == 20);
  CHECK(ops["BatchNormalization"] == 20);
  CHECK(ops["Relu"] == 17);
  CHECK(ops["Add"] == 8);
  CHECK(ops["MaxPool"] == 1);
  CHECK(ops["GlobalAveragePool"] == 1);
  CHECK(ops["Gemm"] == 1);
  REQUIRE(conv1 != nullptr);
  CHECK(std::vector<std::string>(conv1->input().begin(), conv1->input().end()) ==
        std::vector<std::string>{"x", "conv1.weight"});
  std::map<std::string, std::vector<std::int64_t>> attributes;
  for (const onnx::AttributeProto& a : conv1->attribute())
    attributes[a.name()] = a.ints_size() > 0 ? std::vector<std::int64_t>(a.ints().begin(), a.ints().end())
                                             : std::vector<std::int64_t>{a.i()};
  CHECK(attributes["strides"] == std::vector<std::int64_t>{2, 2});
  CHECK(attributes["pads"] == std::vector<std::int64_t>{3, 3, 3, 3});
  CHECK(attributes["group"] == std::vector<std::int64_t>{1});
}

TEST_CASE("Python's onnx loads the written files and its full checker accepts them") {
  const std::string python = python_with_onnx();
  if (python.empty()) {
    MESSAGE("skipped: /usr/bin/python3 has no onnx module (install python3-onnx)");
    return;
  }
  TempDir dir;
  std::string files;
  for (const char* name : {"resnet18", "mobilenet_v2", "vit_tiny"}) {
    const Traced t = trace_zoo(name);
    const std::filesystem::path path = dir.path / fmt::format("{}.onnx", name);
    export_onnx(t.graph, *t.model, path);
    files += " " + path.string();
  }
  for (const char* name : {"resnet18", "vit_tiny"}) {  // a named batch: dim_param N
    const auto model = zoo::create(name);
    model->eval();
    const std::filesystem::path path = dir.path / fmt::format("{}_named.onnx", name);
    export_onnx(symbolic_trace(*model, {InputSpec(Shape{Dim("N"), 3, 224, 224})}), *model, path);
    files += " " + path.string();
  }
  const std::string script =
      "import sys, onnx\n"
      "for path in sys.argv[1:]:\n"
      "    model = onnx.load(path)\n"
      "    onnx.checker.check_model(model, full_check=True)\n"
      "    print(path.rsplit('/', 1)[-1], len(model.graph.node), len(model.graph.initializer))\n";
  const std::filesystem::path script_path = dir.path / "check.py";
  {
    std::FILE* f = std::fopen(script_path.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  const std::string command = fmt::format("{} {}{} 2>&1", python, script_path.string(), files);
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  INFO(output);
  CHECK(status == 0);
  CHECK(output.find("resnet18.onnx ") != std::string::npos);
  CHECK(output.find("mobilenet_v2.onnx ") != std::string::npos);
  CHECK(output.find("vit_tiny.onnx ") != std::string::npos);
  CHECK(output.find("resnet18_named.onnx ") != std::string::npos);
  CHECK(output.find("vit_tiny_named.onnx ") != std::string::npos);
}

TEST_CASE("an op without an ONNX mapping is an error naming the node, and nothing is written") {
  const auto model = zoo::create("vit_tiny");
  Graph g;
  Node& x = g.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 197, 192}});
  static constexpr int op_line = __LINE__ + 1;
  Node& y = g.call_function("frobnicate", {x});
  y.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 197, 192}});
  g.output(y);
  TempDir dir;
  const std::filesystem::path path = dir.path / "model.onnx";
  CHECK_THROWS_WITH_AS(export_onnx(g, *model, path), doctest::Contains(fmt::format(":{}: ", op_line).c_str()),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(export_onnx(g, *model, path),
                       doctest::Contains("cannot export %frobnicate (call_function[target=frobnicate]) to ONNX in the "
                                         "root module (ViT): the op 'frobnicate' has no ONNX mapping; rewrite it"),
                       std::invalid_argument);
  CHECK_FALSE(std::filesystem::exists(path));
  std::ostringstream stream;
  CHECK_THROWS_AS(export_onnx(g, *model, stream), std::invalid_argument);
  CHECK(stream.str().empty());
}

TEST_CASE("a module type without an ONNX mapping is an error naming the module and its type") {
  const auto model = zoo::create("vit_tiny");
  Graph g;
  Node& x = g.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 197, 192}});
  Node& y = g.call_module("blocks.0.mlp", {x});
  y.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 197, 192}});
  g.output(y);
  CHECK_THROWS_WITH_AS((void)export_onnx(g, *model),
                       doctest::Contains("cannot export %blocks_0_mlp (call_module[target=blocks.0.mlp]) to ONNX in "
                                         "'blocks.0.mlp' (MLP): the module type MLP has no ONNX mapping; trace through it"),
                       std::invalid_argument);
}

TEST_CASE("values are named as their nodes, initializers as their parameters, even when the two collide") {
  const auto model = zoo::create("vit_tiny");
  Graph g;
  Node& x = g.placeholder("cls_token");  // the name of one of the model's parameters
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 1, 192}});
  Node& token = g.get_attr("cls_token");
  token.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 1, 192}});
  Node& y = g.call_function("gelu", {g.call_function("add", {x, token})});
  y.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 1, 192}});
  g.find_node("add")->set_tensor_meta(TensorMeta{DType::float32, Shape{1, 1, 192}});
  // Named as the constant gelu's mapping makes first (its 1/sqrt(2) is `gelu_k`).
  Node& z = g.create_node(OpKind::call_function, "relu", {y}, {}, "gelu_k");
  z.set_tensor_meta(TensorMeta{DType::float32, Shape{1, 1, 192}});
  g.output(z);
  const onnx::ModelProto m = parse(export_onnx(g, *model));
  CHECK_NOTHROW(full_check(m));
  REQUIRE(m.graph().input_size() == 1);
  CHECK(m.graph().input(0).name() == "cls_token_1");
  REQUIRE(m.graph().initializer_size() == 1);
  CHECK(m.graph().initializer(0).name() == "cls_token");
  std::vector<std::string> infos;
  for (const auto& v : m.graph().value_info()) infos.push_back(v.name());
  CHECK(infos == std::vector<std::string>{"add", "gelu"});
  REQUIRE(m.graph().output_size() == 1);
  CHECK(m.graph().output(0).name() == "gelu_k");
}

TEST_CASE("sizes the graph computes are ONNX operators: Shape, Gather, the arithmetic, and a Concat for a shape") {
  Flat flat;
  const Graph g = symbolic_trace(flat, {InputSpec(Shape{Dim("N"), 3, 4})});
  const onnx::ModelProto m = parse(export_onnx(g, flat));
  CHECK_NOTHROW(full_check(m));
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : m.graph().node()) ops.push_back(n.op_type());
  CHECK(ops == std::vector<std::string>{"Shape", "Constant", "Gather", "Constant", "Unsqueeze", "Constant", "Concat", "Reshape"});
  REQUIRE(m.graph().input(0).type().tensor_type().shape().dim_size() == 3);
  CHECK(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param() == "N");
  CHECK(m.graph().output(0).type().tensor_type().shape().dim(0).dim_param() == "N");
  CHECK(m.graph().output(0).type().tensor_type().shape().dim(1).dim_value() == 12);
}

TEST_CASE("resnet18 and vit_tiny traced with a named batch export with dim_param N; checker and shape inference pass") {
  for (const std::string name : {"resnet18", "vit_tiny"}) {
    CAPTURE(name);
    const auto model = zoo::create(name);
    model->eval();
    const Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N"), 3, 224, 224})});
    const onnx::ModelProto m = parse(export_onnx(g, *model));
    CHECK_NOTHROW(full_check(m));
    const onnx::TensorShapeProto& in = m.graph().input(0).type().tensor_type().shape();
    REQUIRE(in.dim_size() == 4);
    CHECK(in.dim(0).dim_param() == "N");
    CHECK(in.dim(1).dim_value() == 3);
    const onnx::TensorShapeProto& out = m.graph().output(0).type().tensor_type().shape();
    REQUIRE(out.dim_size() == 2);
    CHECK(out.dim(0).dim_param() == "N");
    CHECK(out.dim(1).dim_value() == 1000);
    // Every value with a shape gives the batch as N.
    for (const onnx::ValueInfoProto& v : m.graph().value_info()) {
      const onnx::TensorShapeProto& s = v.type().tensor_type().shape();
      if (s.dim_size() > 0 && !s.dim(0).has_dim_value()) CHECK(s.dim(0).dim_param() == "N");
    }
  }
}

namespace {

/// The alpha of every HardSigmoid node of `model`.
std::vector<float> hard_sigmoid_alphas(const onnx::ModelProto& model) {
  std::vector<float> out;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() != "HardSigmoid") continue;
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == "alpha") out.push_back(a.f());
  }
  return out;
}

std::size_t count_ops(const onnx::ModelProto& model, std::string_view op_type) {
  std::size_t n = 0;
  for (const onnx::NodeProto& node : model.graph().node()) n += node.op_type() == op_type ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("Hardswish and Hardsigmoid export as ONNX's HardSwish and HardSigmoid with PyTorch's slope 1/6") {
  nn::Sequential model(nn::Linear(4, 4), nn::Hardswish(), nn::Hardsigmoid());
  const Graph g = symbolic_trace(*model.ptr(), {InputSpec(Shape{2, 4})});
  const onnx::ModelProto exported = parse(export_onnx(g, *model.ptr()));
  CHECK_NOTHROW(full_check(exported));
  CHECK(count_ops(exported, "HardSwish") == 1);
  REQUIRE(count_ops(exported, "HardSigmoid") == 1);
  const std::vector<float> alphas = hard_sigmoid_alphas(exported);
  REQUIRE(alphas.size() == 1);
  CHECK(alphas[0] == doctest::Approx(1.0 / 6.0));
}

TEST_CASE("functional ops, activations and joins export to a model the full check accepts") {
  Mixed mixed;
  const Graph g = symbolic_trace(mixed, {InputSpec(Shape{2, 8, 3})});
  const onnx::ModelProto model = parse(export_onnx(g, mixed));
  CHECK_NOTHROW(full_check(model));
  CHECK(count_ops(model, "HardSwish") == 1);
  CHECK(hard_sigmoid_alphas(model) == std::vector<float>{1.0f / 6.0f});
  CHECK(model.graph().initializer_size() == 0);
  REQUIRE(model.graph().output_size() == 1);
  CHECK(dims_of(model.graph().output(0)) == std::vector<std::int64_t>{2, 2});
}

// What a TorchScript model makes that symtrace's own ops do not compute with, held as values
// and computed by LibTorch's ops (Note [Dtypes symtrace holds], src/ops/dispatch.cpp):
// quantized and complex tensors, and LibTorch's objects (a quantized layer's packed weights).
#include "support/checks.hpp"
#include "torchscript/model_files.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

const Node* node_named(const Graph& g, std::string_view name) {
  for (const Node& n : g.nodes())
    if (n.name() == name) return &n;
  return nullptr;
}

/// The model's file, its input and LibTorch's output, traced robustly: no module fails, the
/// graph lints, and eager, interpreter and JSON round trip compute what LibTorch computed.
Graph check_against_libtorch(const std::string& name, const IntList& input, const IntList& output, double tolerance) {
  std::shared_ptr<Module> model = torchscript::load(models / (name + ".script.pt"));
  const Tensor x = read_floats(models / (name + ".input.bin"), input);
  const Tensor expected = read_floats(models / (name + ".output.bin"), output);
  GraphCollection c = recursive_trace(*model, {InputSpec(Shape(input))});
  std::string failures;
  for (const ModuleFailure& f : c.failures()) failures += f.message + "\n";
  CAPTURE(failures);
  CHECK(c.failures().empty());
  REQUIRE(c.find("") != nullptr);
  Graph g = *c.find("");
  CHECK_NOTHROW(g.lint());
  CHECK(max_abs_diff(model->call({x}).to_tensor(), expected) <= tolerance);
  CHECK(max_abs_diff(Interpreter(*model, g).run({x}).to_tensor(), expected) <= tolerance);
  Graph back = graph_from_json(graph_to_json(g));
  CHECK(to_string(back) == to_string(g));
  CHECK(max_abs_diff(Interpreter(*model, back).run({x}).to_tensor(), expected) <= tolerance);
  return g;
}

}  // namespace

TEST_CASE("a quantized tensor is held with its dtype, and LibTorch's ops compute with it") {
  const Graph g = check_against_libtorch("quantized_op", {1, 3, 8, 8}, {1, 3, 8, 8}, 1e-6);
  const Node* q = node_named(g, "quantize_per_tensor");
  REQUIRE(q != nullptr);
  CHECK(q->target() == "aten::quantize_per_tensor");
  REQUIRE(q->tensor_meta() != nullptr);
  CHECK(*q->tensor_meta() == TensorMeta{DType::quint8, Shape{1, 3, 8, 8}});
  CHECK(to_string(*q).find("quint8[1, 3, 8, 8]") != std::string::npos);
}

TEST_CASE("a model quantized as torchvision's are traces whole: packed weights held, ReLU on quint8 by the file's code") {
  // Its layers are torch.ao's (leaves running their TorchScript code, with packed weights, a
  // LibTorch object, as an attribute); torch.nn.ReLU is symtrace's layer, which refuses a
  // quint8 tensor, so the file's own code of it runs (Note [A layer's own code]).
  const Graph g = check_against_libtorch("quantized_block", {1, 3, 8, 8}, {1, 5}, 1e-6);
  std::vector<std::string> dtypes;
  for (const Node& n : g.nodes())
    if (n.tensor_meta() != nullptr) dtypes.push_back(std::string(name(n.tensor_meta()->dtype)));
  CHECK(dtypes == std::vector<std::string>{"float32", "quint8", "quint8", "quint8", "quint8", "quint8", "quint8",
                                           "quint8", "float32"});
  const Node* conv = node_named(g, "conv");
  REQUIRE(conv != nullptr);
  CHECK(conv->op() == OpKind::call_module);
  CHECK(*conv->tensor_meta() == TensorMeta{DType::quint8, Shape{1, 4, 8, 8}});
  const Node* add = node_named(g, "r");  // FloatFunctional.add's variable: `r = ops.quantized.add(...)`
  REQUIRE(add != nullptr);
  CHECK(add->target() == "quantized::add");
  // symtrace's own op refuses the dtype by name, so an outside caller learns why.
  std::shared_ptr<Module> model = torchscript::load(models / "quantized_block.script.pt");
  const Value held = model->get_submodule("quant").call({zeros({1, 3, 8, 8})});
  CHECK(held.to_tensor().dtype() == DType::quint8);
  CHECK_THROWS_WITH_AS(relu(held.to_tensor()),
                       doctest::Contains("relu(): symtrace's op computes with float32, int64 and bool tensors, not quint8"),
                       OpUnsupported);
}

TEST_CASE("a complex spectrum (torch.stft) is held as complex64 and traced through to real channels") {
  const Graph g = check_against_libtorch("spectrum", {2, 256}, {2, 8, 31}, 1e-4);
  const Node* stft = node_named(g, "stft");  // returned by torch.functional.stft: no variable of its own
  REQUIRE(stft != nullptr);
  CHECK(stft->target() == "aten::stft");
  CHECK(*stft->tensor_meta() == TensorMeta{DType::complex64, Shape{2, 17, 33}});
  const Node* mul = node_named(g, "mixed");  // named after the model's variable
  REQUIRE(mul != nullptr);
  CHECK(mul->target() == "aten::mul.Tensor");  // symtrace's mul refuses complex64: LibTorch's runs
  CHECK(node_named(g, "view_as_real")->tensor_meta()->dtype == DType::float32);
}

TEST_CASE("dtypes symtrace holds have PyTorch's names and promote as PyTorch's do") {
  for (DType d : {DType::complex64, DType::quint8, DType::qint8, DType::qint32, DType::quint4x2, DType::quint2x4}) {
    CAPTURE(name(d));
    CHECK_FALSE(is_computed(d));
    CHECK(parse_dtype(name(d)) == d);
  }
  CHECK(is_computed(DType::bool_));
  CHECK(is_quantized(DType::qint8));
  CHECK_FALSE(is_quantized(DType::complex64));
  CHECK(promote_types(DType::float32, DType::complex64) == DType::complex64);
  CHECK(promote_types(DType::complex64, DType::int64) == DType::complex64);
  CHECK(element_size(DType::complex64) == 8);
  CHECK_THROWS_WITH_AS(zeros({2}).to(DType::complex64),
                       doctest::Contains("symtrace's op computes with float32, int64 and bool tensors, not complex64"),
                       OpUnsupported);
}

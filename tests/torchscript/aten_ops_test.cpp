// LibTorch's operators as the fallback for the ops symtrace lacks (docs/design.md, decision
// 14): eagerly, under a trace (sizes and named dims from LibTorch's meta kernels), in the
// interpreter, through graph JSON, refused by name by ONNX export, of unknown cost in analysis.
#include "support/checks.hpp"
#include "torchscript/model_files.hpp"
#include "torchscript/script_file.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

std::vector<std::string> libtorch_targets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_function && n.target().find("::") != std::string::npos) out.emplace_back(n.target());
  return out;
}

const Node& node_named(const Graph& g, std::string_view name) {
  for (const Node& n : g.nodes())
    if (n.name() == name) return n;
  FAIL("no node " << std::string(name));
  throw std::logic_error("unreachable");
}

/// LibTorch's kron of its input with itself, called by name.
class Kron : public TypedModule<Kron> {
 public:
  Tensor forward(const Tensor& a) { return symtrace::call("aten::kron", {a, a}).to_tensor(); }
};

}  // namespace

TEST_CASE("a model whose ops symtrace lacks runs them through LibTorch, eagerly and traced") {
  std::shared_ptr<Module> model = torchscript::load(models / "libtorch_ops.script.pt");
  const Tensor x = read_floats(models / "libtorch_ops.input.bin", {2, 8, 8});
  const Tensor expected = read_floats(models / "libtorch_ops.output.bin", {2, 8, 8});
  const Tensor eager = model->call({x}).to_tensor();
  CHECK(max_rel_error(eager, expected) <= 1e-5);

  Graph g = symbolic_trace(*model, {InputSpec(Shape{2, 8, 8})});
  CHECK_NOTHROW(g.lint());
  // The model's einsum is symtrace's own op (tests/torchscript/native_ops_test.cpp); the rest
  // are LibTorch's.
  // Its node is named after the model's variable (`y = torch.einsum(...)`).
  CHECK(node_named(g, "y").target() == "einsum");
  CHECK(libtorch_targets(g) ==
        std::vector<std::string>{"aten::cummax", "aten::logcumsumexp", "aten::norm.ScalarOpt_dim", "aten::clamp_min"});
  // Named by the op, as fx names torch.ops.aten.logcumsumexp; the tensor and the dim as given.
  const Node& logcumsumexp = node_named(g, "logcumsumexp");
  CHECK(to_string(logcumsumexp) == "%logcumsumexp : float32[2, 8, 8] [num_users=1] = "
                                   "call_function[target=aten::logcumsumexp](args = (%getitem, 1), kwargs = {})");
  const Node& cummax = node_named(g, "cummax");
  CHECK(cummax.num_users() == 2);  // values and indices, each a getitem
  CHECK(Interpreter(*model, g).run({x}).to_tensor().meta() == eager.meta());
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), eager) <= 1e-6);

  SUBCASE("through graph JSON, in a graph that names the ops by their overloads") {
    Graph back = graph_from_json(graph_to_json(g));
    CHECK(to_string(back) == to_string(g));
    CHECK(max_rel_error(Interpreter(*model, back).run({x}).to_tensor(), eager) <= 1e-6);
  }
  SUBCASE("their cost is unknown to analysis, not guessed") {
    for (const Node& n : g.nodes()) {
      CAPTURE(n.name());
      if (n.target().find("::") != std::string::npos) CHECK_FALSE(node_cost(n).known);
      if (n.target() == "add") CHECK(node_cost(n).known);
    }
  }
  SUBCASE("ONNX export refuses them by name") {
    if (!onnx_export_available()) return;
    Kron k;
    Graph kg = symbolic_trace(k, {InputSpec(Shape{2, 3})});
    CHECK_THROWS_WITH_AS(static_cast<void>(export_onnx(kg, k)),
                         doctest::Contains("the op 'aten::kron' has no ONNX mapping"), std::invalid_argument);
  }
}

TEST_CASE("a model whose every op is LibTorch's runs, traces and interprets equal to LibTorch's forward") {
  // fallback_ops: fourteen elementwise ops, none of them symtrace's (the benchmark's model too).
  std::shared_ptr<Module> model = torchscript::load(models / "fallback_ops.script.pt");
  const Tensor x = read_floats(models / "fallback_ops.input.bin", {1, 16, 64, 64});
  const Tensor expected = read_floats(models / "fallback_ops.output.bin", {1, 16, 64, 64});
  const Tensor eager = model->call({x}).to_tensor();
  CHECK(max_rel_error(eager, expected) <= 1e-5);

  Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N"), 16, Dim("H"), Dim("W")})});
  CHECK_NOTHROW(g.lint());
  CHECK(libtorch_targets(g).size() == 14);
  // Elementwise: every result keeps the input's named dims.
  for (const Node& n : g.nodes()) {
    CAPTURE(n.name());
    if (n.op() == OpKind::call_function) CHECK(n.tensor_meta()->shape == Shape{Dim("N"), 16, Dim("H"), Dim("W")});
  }
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), eager) <= 1e-6);
}

TEST_CASE("LibTorch's ops keep named dims where the result's size is one of the input's, and the rank always") {
  std::shared_ptr<Module> model = torchscript::load(models / "libtorch_ops.script.pt");
  Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N"), 8, Dim("W")})});
  CHECK_NOTHROW(g.lint());
  CHECK(node_named(g, "logcumsumexp").tensor_meta()->shape == Shape{Dim("N"), 8, 8});
  CHECK(node_named(g, "norm").tensor_meta()->shape == Shape{Dim("N"), 8, 1});
  const Tensor x = read_floats(models / "libtorch_ops.input.bin", {2, 8, 8});
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), model->call({x}).to_tensor()) <= 1e-6);

  // A size LibTorch computes from a named dim in a way that is none of the input's sizes is
  // anonymous, with the rank known.
  Kron k;
  Graph kg = symbolic_trace(k, {InputSpec(Shape{Dim("N"), 3})});
  CHECK(node_named(kg, "kron").tensor_meta()->shape == Shape{Dim(), 9});
}

TEST_CASE("a LibTorch op called by name runs on symtrace's memory: no copy in, writes seen, strides kept") {
  const OpRegistry& registry = OpRegistry::instance();
  REQUIRE(registry.find("aten::fill_diagonal_") != nullptr);
  CHECK(registry.find("aten::fill_diagonal_")->has(OpFlags::inplace));
  CHECK(registry.find("aten::no_such_op") == nullptr);
  CHECK(registry.find("aten::add.NoSuchOverload") == nullptr);
  CHECK(registry.find("aten::from_file") == nullptr);  // a model file does not open files
  CHECK_THROWS_WITH_AS(static_cast<void>(registry.get("aten::no_such_op")),
                       doctest::Contains("unknown op 'aten::no_such_op'"), OpError);

  Tensor t = zeros({3, 3});
  const Value r = call("aten::fill_diagonal_", {t, 5.0});
  CHECK(r.to_tensor().data_ptr<float>() == t.data_ptr<float>());
  CHECK(t.to_vector<float>() == std::vector<float>{5, 0, 0, 0, 5, 0, 0, 0, 5});

  // A transposed (non-contiguous) tensor: LibTorch sees its strides.
  const Tensor m = arange(6).to(DType::float32).reshape({2, 3});
  const Tensor mt = m.transpose(0, 1);
  REQUIRE_FALSE(mt.is_contiguous());
  const Tensor a = call("aten::logcumsumexp", {mt, 0}).to_tensor();
  const Tensor b = call("aten::logcumsumexp", {mt.contiguous(), 0}).to_tensor();
  CHECK(a.shape() == Shape{3, 2});
  CHECK(max_rel_error(a, b) == 0);

  // A result of a dtype symtrace converts (cummax's indices are int64 already; argsort's too).
  const Value both = call("aten::cummax", {m, 1});
  REQUIRE(both.is_list());
  CHECK(both.to_list().at(1).to_tensor().dtype() == DType::int64);
  CHECK(both.to_list().at(1).to_tensor().to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 1, 2, 0, 1, 2});
}

namespace {
/// LibTorch's bincount (a result as long as the largest value + 1), _pack_padded_sequence (as
/// long as the lengths' sum; refuses lengths of 0 and unsorted ones) and unique_dim (as many
/// rows as distinct ones: the same for any constant): sizes the data decides.
class Counts : public TypedModule<Counts> {
 public:
  Tensor forward(const Tensor& x, const Tensor& values, const Tensor& lengths) {
    const Tensor counts = symtrace::call("aten::bincount", {values, Value(), 0}).to_tensor();
    const ValueList packed = symtrace::call("aten::_pack_padded_sequence", {x, lengths, true}).to_list();
    const ValueList rows = symtrace::call("aten::unique_dim", {x.select(1, 0), 0}).to_list();
    return packed.at(0).to_tensor().sum() + counts.sum() + rows.at(0).to_tensor().sum();
  }
};
}  // namespace

TEST_CASE("a LibTorch op without a meta kernel whose result's size the data decides traces it as unknown") {
  Counts m;
  const InputSpec x(Shape{2, 5, 3}), values(Shape{Dim("N")}, DType::int64), lengths(Shape{2}, DType::int64);
  Graph g = symbolic_trace(m, {x, values, lengths});
  CHECK_NOTHROW(g.lint());
  // Neither the count of bins nor the packed length is the zeros' (1 and refused): unknown.
  CHECK(node_named(g, "bincount").tensor_meta()->shape == Shape{Dim()});
  const Node& packed = node_named(g, "getitem");
  CHECK(packed.tensor_meta()->shape == Shape{Dim(), 3});
  // One distinct row for any constant fill: LibTorch's tag says the data decides, so none is known.
  bool unique_found = false;
  for (const Node& n : g.nodes()) {
    if (n.target() != "aten::unique_dim") continue;
    unique_found = true;
    for (const Node* user : n.users()) {
      const Shape& shape = user->tensor_meta()->shape;
      CHECK((shape == Shape{Dim(), Dim()} || shape == Shape{Dim()}));  // the rows; the inverse and counts
    }
  }
  CHECK(unique_found);
  // One sequence: its length's fills (3, then 1) still differ.
  Graph one = symbolic_trace(m, {InputSpec(Shape{1, 5, 3}), values, InputSpec(Shape{1}, DType::int64)});
  CHECK(node_named(one, "getitem").tensor_meta()->shape == Shape{Dim(), 3});
  // The interpreter computes the real sizes.
  const Tensor in = randn({2, 5, 3});
  const Tensor vals = tensor({4, 1, 4});
  const Tensor lens = tensor({5, 3});
  const Value eager = m.call({in, vals, lens});
  CHECK(max_rel_error(Interpreter(m, g).run({in, vals, lens}).to_tensor(), eager.to_tensor()) <= 1e-6);
}

TEST_CASE("LibTorch's errors in a LibTorch op are OpErrors naming the op, with LibTorch's reason") {
  const Tensor a = zeros({2, 3});
  CHECK_THROWS_WITH_AS(call("aten::einsum", {"ij,jk->ik", ValueList{a, a}}),
                       doctest::Contains("aten::einsum(): LibTorch: einsum(): subscript j has size 2 for operand 1"),
                       OpError);
  CHECK_THROWS_WITH_AS(call("aten::einsum", {a, a}), doctest::Contains("aten::einsum()"), OpError);
}

TEST_CASE("LibTorch's ops resolve once, from any number of threads") {
  std::vector<const OpDef*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&, i] { seen[i] = OpRegistry::instance().find("aten::hypot"); });
  for (std::thread& t : threads) t.join();
  REQUIRE(seen[0] != nullptr);
  CHECK(std::all_of(seen.begin(), seen.end(), [&](const OpDef* op) { return op == seen[0]; }));
  CHECK(seen[0]->name() == "aten::hypot");
}

namespace {

/// Calls LibTorch's in-place operators by name on a temporary, then reads it.
struct LibTorchInplaceImpl : TypedModule<LibTorchInplaceImpl> {
  Tensor forward(const Tensor& x) {
    Tensor y = x.mul(2.0);
    (void)symtrace::call("aten::hardtanh_", {Value(y), Value(-0.5), Value(0.5)});
    (void)symtrace::call("aten::masked_fill_.Scalar", {Value(y), Value(x.gt(1.0)), Value(0.75)});
    (void)symtrace::call("aten::logit_", {Value(y), Value(0.01)});
    (void)symtrace::call("aten::add_.Tensor", {Value(y), Value(x)}, {{"alpha", Value(std::int64_t{2})}});
    return y.add(x);
  }
};

}  // namespace

TEST_CASE("remove_inplace turns LibTorch's in-place operators into their functional forms") {
  // (A TorchScript file's own in-place ops come out of its graph functional already: its
  // executor writes `y.clamp_(...)` as `y = clamp(y, ...)` where nothing else aliases y.)
  auto model = std::make_shared<LibTorchInplaceImpl>();
  Graph g = symbolic_trace(*model, {InputSpec(Shape{3, 4})});
  const Tensor x = randn({3, 4});
  const Tensor eager = model->call({x}).to_tensor();
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), eager) <= 1e-6);
  CHECK(remove_inplace(g) == 4);
  CHECK_NOTHROW(g.lint());
  std::vector<std::string> targets;
  for (const Node& n : g.nodes()) {
    if (n.op() != OpKind::placeholder && n.op() != OpKind::output) CHECK_FALSE(has_side_effects(n));
    if (n.op() == OpKind::call_function && n.target().starts_with("aten::")) targets.emplace_back(n.target());
  }
  CHECK(targets == std::vector<std::string>{"aten::hardtanh", "aten::masked_fill.Scalar", "aten::logit", "aten::add.Tensor"});
  CHECK(max_rel_error(Interpreter(*model, g).run({x}).to_tensor(), eager) <= 1e-6);
}

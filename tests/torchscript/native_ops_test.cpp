// symtrace's own ops for the aten ops a TorchScript file calls: a one-op model made here with
// LibTorch, loaded by symtrace, whose op must be symtrace's (mapped by name, not LibTorch's
// fallback), whose eager result must be LibTorch's on seeded random inputs, and whose traced
// result must have LibTorch's sizes with a named batch dim kept.
#include "support/checks.hpp"
#include "torchscript/script_file.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

/// One model: a forward calling one aten op on float inputs of the given shapes.
struct Case {
  std::string name;     ///< the subcase, and the model file's name
  std::string forward;  ///< forward's source, taking the inputs in order
  std::vector<IntList> inputs;
  std::string op;       ///< the symtrace op the trace must call
  bool batched = true;  ///< dim 0 of the first input is dim 0 of the result (named N in the trace)
  /// The MACs analysis must count at these sizes, from the inputs' and the result's shapes;
  /// unchecked when empty.
  std::function<std::int64_t(const std::vector<IntList>&, const IntList&)> macs = nullptr;
  /// The inputs whose dim 0 is the batch dim (named N together).
  std::vector<std::size_t> batch_inputs = {0};
};

std::int64_t numel(const IntList& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

/// A convolution's: per output element, one MAC per weight element of its output channel.
std::int64_t conv_macs(const std::vector<IntList>& in, const IntList& out) {
  return numel(out) * (numel(in[1]) / in[1][0]);
}

/// A transposed convolution's: per input element, one MAC per weight element of its input channel.
std::int64_t conv_transpose_macs(const std::vector<IntList>& in, const IntList&) {
  return numel(in[0]) * (numel(in[1]) / in[1][0]);
}

const Node* node_calling(const Graph& g, std::string_view target) {
  for (const Node& n : g.nodes())
    if (n.op() == OpKind::call_function && n.target() == target) return &n;
  return nullptr;
}

/// Loads the case's model and compares symtrace with LibTorch: eagerly, traced, in analysis.
void check_case(const Case& c, std::uint64_t seed) {
  CAPTURE(c.name);
  const std::filesystem::path path = script_file(c.name, c.forward);
  std::shared_ptr<Module> model = torchscript::load(path);
  // The same inputs afresh for each run (an op may update an input in place).
  const auto make_inputs = [&] {
    Generator gen(seed);
    ValueList inputs;
    for (const IntList& shape : c.inputs) inputs.emplace_back(randn(shape, gen));
    return inputs;
  };

  // Eagerly: LibTorch's own op on the same inputs.
  const Tensor expected = torchscript::run_in_libtorch(path, make_inputs()).to_tensor();
  const Tensor eager = model->call(make_inputs()).to_tensor();
  REQUIRE(eager.shape() == expected.shape());
  CHECK(max_rel_error(eager, expected) <= 1e-5);

  // Traced at the inputs' sizes: symtrace's op (no LibTorch fallback), LibTorch's sizes, the
  // same result through the interpreter, and the MACs.
  std::vector<InputSpec> specs;
  for (const IntList& shape : c.inputs) specs.emplace_back(Shape(shape));
  Graph g = symbolic_trace(*model, specs);
  CHECK_NOTHROW(g.lint());
  const Node* op = node_calling(g, c.op);
  REQUIRE_MESSAGE(op != nullptr, to_string(g));
  for (const Node& n : g.nodes()) CHECK_MESSAGE(n.target().find("::") == std::string::npos, n.target());
  const Node* result = g.output_node()->arg_node(0);
  REQUIRE(result != nullptr);
  CHECK(result->tensor_meta()->shape == expected.shape());
  CHECK(max_rel_error(Interpreter(*model, g).run(make_inputs()).to_tensor(), expected) <= 1e-5);
  if (c.macs) {
    const NodeCost cost = node_cost(*op);
    CHECK(cost.known);
    CHECK(cost.macs == SymExpr(c.macs(c.inputs, expected.shape().sizes())));
  }

  // With a named batch dim: the result keeps it.
  if (!c.batched) return;
  for (const std::size_t i : c.batch_inputs) specs[i].shape[0] = Dim("N");
  Graph named = symbolic_trace(*model, specs);
  Shape want = expected.shape();
  want[0] = Dim("N");
  CHECK(named.output_node()->arg_node(0)->tensor_meta()->shape == want);
}

/// check_case for each case, each in its own subcase, with seeds first_seed, first_seed + 1, ...
void check_cases(const std::vector<Case>& cases, std::uint64_t first_seed) {
  std::uint64_t seed = first_seed;
  for (const Case& c : cases) {
    SUBCASE(c.name.c_str()) { check_case(c, seed); }
    ++seed;
  }
}

}  // namespace

TEST_CASE("conv1d, conv3d and the transposed convolutions of a TorchScript file are symtrace's, and LibTorch's "
          "results") {
  const std::vector<Case> cases = {
      {"conv1d", "def forward(self, x, w, b):\n  return torch.conv1d(x, w, b)", {{2, 3, 11}, {4, 3, 3}, {4}}, "conv1d", true, conv_macs},
      {"conv1d_strided", "def forward(self, x, w):\n  return torch.conv1d(x, w, None, [2], [3], [2], 2)", {{3, 4, 17}, {6, 2, 4}}, "conv1d", true, conv_macs},
      {"conv1d_unbatched", "def forward(self, x, w):\n  return torch.conv1d(x, w, None, [1], [1])", {{3, 9}, {5, 3, 3}}, "conv1d", false, conv_macs},
      {"conv1d_pointwise", "def forward(self, x, w, b):\n  return torch.conv1d(x, w, b)", {{2, 6, 5}, {3, 6, 1}, {3}}, "conv1d", true, conv_macs},
      {"conv3d", "def forward(self, x, w, b):\n  return torch.conv3d(x, w, b)", {{2, 3, 5, 6, 7}, {4, 3, 3, 2, 3}, {4}}, "conv3d", true, conv_macs},
      {"conv3d_strided",
       "def forward(self, x, w):\n  return torch.conv3d(x, w, None, [2, 1, 3], [1, 0, 2], [1, 2, 1], 2)",
       {{2, 4, 6, 7, 8}, {6, 2, 3, 2, 3}},
       "conv3d",
       true,
       conv_macs},
      {"conv3d_unbatched", "def forward(self, x, w):\n  return torch.conv3d(x, w, None, [1], [1])", {{2, 4, 4, 4}, {3, 2, 3, 3, 3}}, "conv3d", false, conv_macs},
      {"conv_transpose1d", "def forward(self, x, w, b):\n  return torch.conv_transpose1d(x, w, b)", {{2, 3, 7}, {3, 4, 3}, {4}}, "conv_transpose1d", true, conv_transpose_macs},
      {"conv_transpose1d_strided",
       "def forward(self, x, w):\n  return torch.conv_transpose1d(x, w, None, [3], [1], [2], 2, [2])",
       {{2, 4, 6}, {4, 3, 3}},
       "conv_transpose1d",
       true,
       conv_transpose_macs},
      {"conv_transpose2d",
       "def forward(self, x, w, b):\n  return torch.conv_transpose2d(x, w, b, [2, 1], [1, 0], [1, 0], 1, [1, 2])",
       {{2, 3, 5, 4}, {3, 2, 3, 2}, {2}},
       "conv_transpose2d",
       true,
       conv_transpose_macs},
      {"conv_transpose3d", "def forward(self, x, w, b):\n  return torch.conv_transpose3d(x, w, b)", {{2, 2, 3, 4, 5}, {2, 3, 2, 3, 2}, {3}}, "conv_transpose3d", true, conv_transpose_macs},
      {"conv_transpose3d_strided",
       "def forward(self, x, w):\n  return torch.conv_transpose3d(x, w, None, [2, 1, 2], [1, 0, 1], [1, 0, 0], 2)",
       {{1, 4, 3, 4, 3}, {4, 1, 3, 2, 2}},
       "conv_transpose3d",
       true,
       conv_transpose_macs},
      {"conv_transpose3d_unbatched", "def forward(self, x, w):\n  return torch.conv_transpose3d(x, w, None, [2])", {{2, 3, 3, 3}, {2, 2, 2, 2, 2}}, "conv_transpose3d", false, conv_transpose_macs},
  };
  check_cases(cases, 1);
}

TEST_CASE("a convolution with padding='same' runs through LibTorch's op, as symtrace's takes padding sizes only") {
  const std::filesystem::path path =
      script_file("conv1d_same", "def forward(self, x, w):\n  return torch.conv1d(x, w, None, 1, 'same')");
  std::shared_ptr<Module> model = torchscript::load(path);
  Generator gen(7);
  const ValueList inputs = {randn({2, 3, 8}, gen), randn({4, 3, 3}, gen)};
  CHECK(max_rel_error(model->call(inputs).to_tensor(), torchscript::run_in_libtorch(path, inputs).to_tensor()) <=
        1e-5);
  Graph g = symbolic_trace(*model, {InputSpec(Shape{Dim("N"), 3, 8}), InputSpec(Shape{4, 3, 3})});
  CHECK(node_calling(g, "conv1d") == nullptr);
  CHECK(node_calling(g, "aten::conv1d.padding") != nullptr);
}

TEST_CASE("group_norm and instance_norm of a TorchScript file are symtrace's, and LibTorch's results") {
  const std::vector<Case> cases = {
      {"group_norm", "def forward(self, x, w, b):\n  return torch.group_norm(x, 2, w, b, 1e-5)", {{3, 6, 5, 4}, {6}, {6}}, "group_norm"},
      {"group_norm_plain", "def forward(self, x):\n  return torch.group_norm(x, 3)", {{2, 6, 7}}, "group_norm"},
      {"group_norm_2d", "def forward(self, x, w):\n  return torch.group_norm(x, 1, w, None, 1e-3)", {{4, 6}, {6}}, "group_norm"},
      {"group_norm_3d", "def forward(self, x):\n  return torch.group_norm(x, 4, None, None, 1e-5)", {{2, 8, 3, 2, 4}}, "group_norm"},
      {"instance_norm",
       "def forward(self, x, w, b):\n  return torch.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False)",
       {{2, 3, 5, 5}, {3}, {3}},
       "instance_norm"},
      {"instance_norm_1d",
       "def forward(self, x):\n  return torch.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)",
       {{3, 4, 9}},
       "instance_norm"},
      // The running statistics after the update, returned after the output.
      {"instance_norm_running_update",
       "def forward(self, x, m, v):\n"
       "  y = torch.instance_norm(x, None, None, m, v, True, 0.3, 1e-5, False)\n"
       "  return torch.cat([y.flatten(), m, v])",
       {{2, 3, 4, 2, 3}, {3}, {3}},
       "instance_norm",
       false},
      {"instance_norm_running_stats",
       "def forward(self, x, w, m, v):\n"
       "  return torch.instance_norm(x, w, None, m, v.abs() + 0.5, False, 0.1, 1e-5, False)",
       {{2, 3, 6}, {3}, {3}, {3}},
       "instance_norm"},
  };
  check_cases(cases, 100);
}

TEST_CASE("cumsum of a TorchScript file is symtrace's, and LibTorch's result") {
  check_cases({
                  {"cumsum", "def forward(self, x):\n  return torch.cumsum(x, 1)", {{3, 7, 4}}, "cumsum"},
                  {"cumsum_last", "def forward(self, x):\n  return x.cumsum(-1)", {{2, 5, 6}}, "cumsum"},
                  {"cumsum_first", "def forward(self, x):\n  return torch.cumsum(x.transpose(0, 1), 0)", {{4, 3}}, "cumsum", false},
                  {"cumsum_integral", "def forward(self, x):\n  return torch.cumsum((x > 0).long(), 1).float()", {{3, 9}}, "cumsum"},
                  {"cumsum_dtype", "def forward(self, x):\n  return torch.cumsum(x > 0, 0, dtype=6)", {{5, 2}}, "cumsum"},
              },
              200);
}

TEST_CASE("clone of a TorchScript file, with a memory_format, is symtrace's, and LibTorch's result") {
  check_cases({
                  {"clone", "def forward(self, x):\n  return x.clone(memory_format=0) * 2", {{2, 3, 4}}, "clone"},
                  {"clone_strided", "def forward(self, x):\n  return torch.clone(x.transpose(1, 2))", {{2, 3, 4}}, "clone"},
              },
              300);
}

TEST_CASE("embedding of a TorchScript file with a padding_idx is symtrace's, and LibTorch's result") {
  // padding_idx, scale_grad_by_freq and sparse change the gradient only.
  check_cases({
                  {"embedding_padding_idx",
                   "def forward(self, w, x):\n"
                   "  i = (x.abs() * 3).long().clamp(0, 5)\n"
                   "  return torch.embedding(w, i, 0, False, False)",
                   {{6, 4}, {2, 5}},
                   "embedding",
                   false},
                  {"embedding_last_padding_idx",
                   "def forward(self, w, x):\n"
                   "  return torch.embedding(w, (x.abs() * 2).long().clamp(0, 7), 7, True, True)",
                   {{8, 3}, {4}},
                   "embedding",
                   false},
              },
              400);
}

TEST_CASE("pad of a TorchScript file is symtrace's in every mode, and LibTorch's result") {
  check_cases({
                  {"pad_constant", "def forward(self, x):\n  return torch.pad(x, [1, 2, 0, 1], 'constant', 0.5)", {{2, 3, 4}}, "pad"},
                  {"pad_reflect_1d", "def forward(self, x):\n  return torch.pad(x, [2, 3], 'reflect')", {{2, 3, 5}}, "pad"},
                  {"pad_reflect_2d", "def forward(self, x):\n  return torch.pad(x, [1, 2, 3, 0], 'reflect')", {{2, 3, 4, 5}}, "pad"},
                  {"pad_reflect_3d_unbatched",
                   "def forward(self, x):\n  return torch.pad(x, [1, 1, 0, 2, 1, 0], 'reflect')",
                   {{2, 3, 4, 5}},
                   "pad",
                   false},
                  {"pad_replicate_1d", "def forward(self, x):\n  return torch.pad(x, [0, 4], 'replicate')", {{3, 2}}, "pad", false},
                  {"pad_replicate_2d",
                   "def forward(self, x):\n  return torch.pad(x, [3, 1, 2, 2], 'replicate')",
                   {{2, 2, 3, 3}},
                   "pad"},
                  {"pad_replicate_3d",
                   "def forward(self, x):\n  return torch.pad(x, [1, 0, 2, 1, 1, 1], 'replicate')",
                   {{2, 1, 2, 3, 2}},
                   "pad"},
                  {"pad_circular_1d", "def forward(self, x):\n  return torch.pad(x, [3, 2], 'circular')", {{2, 3, 4}}, "pad"},
                  {"pad_circular_2d_cropping",
                   "def forward(self, x):\n  return torch.pad(x, [-1, 2, 1, -2], 'circular')",
                   {{2, 2, 4, 5}},
                   "pad"},
                  {"pad_circular_3d",
                   "def forward(self, x):\n  return torch.pad(x, [1, 1, 2, 0, 0, 3], 'circular')",
                   {{1, 2, 3, 3, 4}},
                   "pad"},
              },
              500);
}

TEST_CASE("einsum of a TorchScript file is symtrace's for explicit and implicit outputs, and LibTorch's result") {
  const auto macs = [](std::int64_t n) {
    return [n](const std::vector<IntList>&, const IntList&) { return n; };
  };
  check_cases({
                  {"einsum_bmm", "def forward(self, x, y):\n  return torch.einsum('bij,bjk->bik', x, y)", {{3, 4, 5}, {3, 5, 6}}, "einsum", true, macs(3 * 4 * 5 * 6), {0, 1}},
                  {"einsum_implicit", "def forward(self, x, y):\n  return torch.einsum('bij,bjk', x, y)", {{2, 4, 5}, {2, 5, 3}}, "einsum", false, macs(2 * 4 * 5 * 3)},
                  {"einsum_attention", "def forward(self, q, k):\n  return torch.einsum('nhqd,nhkd->nhqk', [q, k])", {{2, 3, 5, 4}, {2, 3, 6, 4}}, "einsum", true, macs(2 * 3 * 5 * 4 * 6), {0, 1}},
                  {"einsum_ellipsis", "def forward(self, x, y):\n  return torch.einsum('...ij,...jk->...ik', x, y)", {{2, 3, 4, 5}, {3, 5, 2}}, "einsum", true, macs(2 * 3 * 4 * 5 * 2)},
                  {"einsum_ellipsis_summed", "def forward(self, x):\n  return torch.einsum('...ij->j', x)", {{2, 3, 4, 5}}, "einsum", false, macs(2 * 3 * 4 * 5)},
                  {"einsum_implicit_ellipsis", "def forward(self, x):\n  return torch.einsum('b...i', x)", {{4, 2, 3}}, "einsum", false, macs(4 * 2 * 3)},
                  {"einsum_trace", "def forward(self, x):\n  return torch.einsum('ii', x).unsqueeze(0)", {{5, 5}}, "einsum", false, macs(5)},
                  {"einsum_diagonal", "def forward(self, x):\n  return torch.einsum('bii->bi', x)", {{3, 4, 4}}, "einsum", true, macs(3 * 4)},
                  {"einsum_outer", "def forward(self, x, y):\n  return torch.einsum('i,j->ij', x, y)", {{4}, {6}}, "einsum", true, macs(4 * 6)},
                  {"einsum_broadcast_one", "def forward(self, x, y):\n  return torch.einsum('bij,bj->bi', x, y)", {{3, 4, 5}, {1, 5}}, "einsum", true, macs(3 * 4 * 5)},
                  {"einsum_three", "def forward(self, x, y, z):\n  return torch.einsum('ij,jk,kl->il', x, y, z)", {{3, 4}, {4, 5}, {5, 2}}, "einsum", true, macs(3 * 4 * 5 * 2)},
                  {"einsum_uppercase", "def forward(self, x, y):\n  return torch.einsum('aB,Bc', x, y)", {{3, 4}, {4, 2}}, "einsum", true, macs(3 * 4 * 2)},
                  {"einsum_permute", "def forward(self, x):\n  return torch.einsum('abc->cab', x)", {{2, 3, 4}}, "einsum", false, macs(2 * 3 * 4)},
              },
              600);
  // With a named dim, a formula over it; nothing for an equation that does not fit the shapes.
  CHECK(einsum_macs("nij,njk->nik", {Shape{Dim("N"), 3, 4}, Shape{Dim("N"), 4, 5}}) == (Dim("N") * Dim(60)).expr());
  CHECK_FALSE(einsum_macs("ij,jk->ik", {Shape{2, 3}}).has_value());
}

TEST_CASE("gru, rnn_tanh and rnn_relu of a TorchScript file are symtrace's ops, and LibTorch's results") {
  // nn.GRU's and nn.RNN's forwards call these (torch._VF); they run as nn::gru and nn::rnn, whose
  // steps are symtrace's linear, sigmoid, tanh and relu. Results: the output, then the last h.
  const std::string both = "  return torch.cat([out.flatten(), h.flatten()])";
  check_cases({
                  {"gru", "def forward(self, x, h0, a, b, c, d):\n  out, h = torch.gru(x, h0, [a, b, c, d], True, 1, 0.0, "
                          "False, False, True)\n" +
                              both,
                   {{2, 5, 3}, {1, 2, 4}, {12, 3}, {12, 4}, {12}, {12}},
                   "linear",
                   false},
                  {"gru_bidirectional_two_layers",
                   "def forward(self, x, h0, a, b, c, d, e, f, g, k):\n"
                   "  out, h = torch.gru(x, h0, [a, b, c, d, e, f, g, k], False, 2, 0.0, False, True, False)\n" +
                       both,
                   {{4, 2, 2}, {4, 2, 3}, {9, 2}, {9, 3}, {9, 2}, {9, 3}, {9, 6}, {9, 3}, {9, 6}, {9, 3}},
                   "linear",
                   false},
                  {"gru_named_batch",
                   "def forward(self, x, h0, a, b, c, d):\n"
                   "  out, h = torch.gru(x, h0.transpose(0, 1), [a, b, c, d], True, 1, 0.0, False, False, True)\n"
                   "  return out",
                   {{3, 4, 2}, {3, 1, 4}, {12, 2}, {12, 4}, {12}, {12}},
                   "linear",
                   true,
                   nullptr,
                   {0, 1}},
                  {"rnn_tanh", "def forward(self, x, h0, a, b, c, d):\n  out, h = torch.rnn_tanh(x, h0, [a, b, c, d], "
                               "True, 1, 0.0, False, False, False)\n" +
                                   both,
                   {{6, 2, 3}, {1, 2, 5}, {5, 3}, {5, 5}, {5}, {5}},
                   "linear",
                   false},
                  {"rnn_relu_unbatched_bidirectional",
                   "def forward(self, x, h0, a, b, c, d, e, f, g, k):\n"
                   "  out, h = torch.rnn_relu(x, h0, [a, b, c, d, e, f, g, k], True, 1, 0.0, False, True, False)\n" +
                       both,
                   {{5, 3}, {2, 4}, {4, 3}, {4, 4}, {4}, {4}, {4, 3}, {4, 4}, {4}, {4}},
                   "linear",
                   false},
              },
              700);
}

TEST_CASE("topk and sort order equal values as LibTorch does (Note [Ties as LibTorch orders them])") {
  // Values with many ties (0..3 on 300 elements, as a detector's equal scores), along each dim.
  Generator gen(5);
  const Tensor ints = (rand(IntList{3, 300}, gen) * 4.0).to(DType::int64);
  const Tensor floats = ints.to(DType::float32) * 0.25;
  struct Op {
    const char* name;
    const char* forward;
  };
  for (const Op& op : {
           Op{"topk_small_k", "def forward(self, x):\n  return torch.topk(x, 4)[1]"},    // k * 64 <= n: partial_sort
           Op{"topk_large_k", "def forward(self, x):\n  return torch.topk(x, 200)[1]"},  // nth_element and sort
           Op{"topk_smallest", "def forward(self, x):\n  return torch.topk(x, 150, largest=False)[1]"},
           Op{"topk_unsorted", "def forward(self, x):\n  return torch.topk(x, 150, sorted=False)[1]"},
           Op{"topk_dim0", "def forward(self, x):\n  return torch.topk(x, 2, dim=0)[1]"},
           Op{"sort", "def forward(self, x):\n  return torch.sort(x)[1]"},
           Op{"sort_descending", "def forward(self, x):\n  return x.sort(descending=True)[1]"},
           Op{"sort_stable", "def forward(self, x):\n  return torch.sort(x, stable=True, descending=True)[1]"},
       }) {
    SUBCASE(op.name) {
      const std::filesystem::path path = script_file(op.name, op.forward);
      std::shared_ptr<Module> model = torchscript::load(path);
      for (const Tensor& x : {floats, ints}) {
        CAPTURE(x.dtype());
        const Tensor expected = torchscript::run_in_libtorch(path, {x}).to_tensor();
        CHECK(model->call({x}).to_tensor().to_vector<std::int64_t>() == expected.to_vector<std::int64_t>());
      }
    }
  }
}

// The zoo entries of the transformer, MLP, recurrent and failure-pattern families, in the
// order `symtrace zoo` lists them.
#include "symtrace/zoo/zoo.hpp"

#include "symtrace/zoo/deep_chain.hpp"
#include "symtrace/zoo/failures.hpp"
#include "symtrace/zoo/mlp.hpp"
#include "symtrace/zoo/rnn.hpp"
#include "symtrace/zoo/vit.hpp"

#include <fmt/format.h>

namespace symtrace::zoo::detail {

namespace {
ExampleInput image(std::int64_t side) { return {.name = "x", .shape = {1, 3, side, side}}; }
ExampleInput features(std::int64_t dim) { return {.name = "x", .shape = {1, dim}}; }
}  // namespace

void add_sequence_models(std::vector<ModelInfo>& out) {
  out.push_back({"vit_b16",
                 "ViT-B/16: 224x224, patch 16, dim 768, 12 blocks, 12 heads, explicit matmul/softmax attention",
                 // clang-format off
                 {image(224)}, {}, 86'567'656, [] { return vit_b16(); }});
  out.push_back({"vit_tiny", "ViT-Ti/16: the vit_b16 architecture with dim 192, 12 blocks, 3 heads, MLP 768",
                 {image(224)}, {}, 5'717'416, [] { return vit_tiny(); }});
  // clang-format on
  for (const std::int64_t n : {100, 1000, 10000})
    out.push_back({fmt::format("deep_mlp_{}", n),
                   fmt::format("DeepMLP({}): {} residual blocks x + GELU(LayerNorm(Linear(x))), width 64", n, n),
                   {features(64)},
                   {},
                   n * 4'288,
                   [n] { return deep_mlp(n); }});
  std::vector<std::string> failing;
  for (int i = 0; i < 1000; i += 64) failing.push_back(fmt::format("blocks.{}", i));
  out.push_back({"deep_mlp_1000_fail16",
                 "DeepMLP(1000) where every 64th block (16 blocks) branches on h.sum() > 0",
                 {features(64)},
                 std::move(failing),
                 4'288'000,
                 [] { return deep_mlp(1000, 64); }});
  {
    std::string innermost = "inner";
    for (int i = 2; i < 1000; ++i) innermost += ".inner";
    out.push_back({"deep_chain_1000",
                   "1000 modules nested in a chain, each calling the next (inner((x + relu(x)) * 0.5), width 16), the "
                   "innermost branching on fc(x).sum() > 0",
                   {features(16)},
                   {std::move(innermost)},
                   272,
                   [] { return deep_chain(1000); }});
  }
  out.push_back({"rnn",
                 "Elman RNN over int64 tokens: embedding 64, cell tanh(ih(x_t) + hh(h)) unrolled by a C++ loop over "
                 "the sequence length, head on the last state",
                 {{.name = "tokens", .dtype = DType::int64, .shape = {1, 16}, .high = 1000}},
                 {},
                 217'832,
                 [] { return rnn(); }});
  out.push_back({"mixed_failures",
                 "small CNN whose children fail in the common ways: data-dependent if (gate), loop bound from data "
                 "(repeat), opaque library call (opaque), tensor size from data (topk), ModuleList indexed but never "
                 "called (heads), plus a module never called (unused)",
                 {image(32)},
                 {"gate", "repeat", "opaque", "topk", "heads"},
                 7'918,
                 [] { return mixed_failures(); }});
}

}  // namespace symtrace::zoo::detail

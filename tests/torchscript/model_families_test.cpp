// One small model of each family beyond classification and detection (tools/corpus runs them
// all): audio (torchaudio's Wav2Letter), text (torchtext's RoBERTa, token ids as input), video
// (torchvision's R3D-18: conv3d through LibTorch), optical flow (torchvision's RAFT-small: two
// images, a correlation pyramid in a list attribute, grid_sample). Each is loaded, run eagerly
// equal to LibTorch's output, traced robustly with no failure, and its graph run equal to eager.
#include "support/checks.hpp"
#include "torchscript/model_files.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

Tensor read_int64s(const std::filesystem::path& path, const IntList& shape) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<std::int64_t> data(static_cast<std::size_t>(n));
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(std::int64_t)));
  REQUIRE(in.gcount() == static_cast<std::streamsize>(data.size() * sizeof(std::int64_t)));
  return tensor(data, shape);
}

// A model's result, or the last tensor of a list of them (RAFT's flows, one per iteration).
Tensor last(const Value& v) { return v.is_list() ? v.to_list().back().to_tensor() : v.to_tensor(); }

}  // namespace

TEST_CASE("one small model of each family runs as LibTorch runs it, eagerly and traced (issue 49)") {
  for (const std::string name : {"wav2letter", "roberta_tiny", "r3d_18", "raft_small"}) {
    CAPTURE(name);
    const nlohmann::json m = meta(name);
    ValueList args;
    std::vector<InputSpec> specs;
    for (std::size_t k = 0; k < m["inputs"].size(); ++k) {
      const nlohmann::json& in = m["inputs"][k];
      const IntList shape = in["shape"].get<IntList>();
      const std::filesystem::path file = models / fmt::format("{}.input{}.bin", name, k);
      args.emplace_back(in["dtype"] == "int64" ? read_int64s(file, shape) : read_floats(file, shape));
      specs.emplace_back(args.back().to_tensor());
    }
    std::shared_ptr<Module> model = torchscript::load(models / (name + ".script.pt"));
    CHECK(model->num_parameters() == m["parameters"].get<std::int64_t>());
    const Tensor expected = read_floats(models / (name + ".output.bin"), m["output"].get<IntList>());
    const Tensor eager = last(model->call(args));
    CHECK(max_rel_error(eager, expected) <= 1e-4);

    const GraphCollection c = recursive_trace(*model, specs);
    std::string failures;
    for (const ModuleFailure& f : c.failures()) failures += to_string(f) + "\n";
    CAPTURE(failures);
    CHECK(c.failures().empty());
    const Graph& g = c.at(*model);
    CHECK_NOTHROW(g.lint());
    CHECK(max_rel_error(last(Interpreter(*model, g).run(args)), eager) <= 1e-5);
  }
}

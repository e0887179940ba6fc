// Lesson 13: a PyTorch model, traced from its TorchScript file.
//
// In Python, save the model: `torch.jit.script(model).save("model.pt")` (or
// `torch.jit.trace(model, example).save(...)`). torchscript::load turns the file into a module
// tree: torch.nn's layers become symtrace's own layers (leaves of a trace, as in torch.fx),
// every other module runs its TorchScript code, so the whole library works on it as on a
// model written in C++. A branch on tensor data fails the module that holds it, at its Python
// line, and recursive_trace captures the rest.
//
//   13_trace_a_pytorch_model FILE.pt [SHAPE]     (SHAPE: the input's sizes, e.g. 1x3x16x16)
//
// The test runs it on tests/torchscript/make_models.py's ThreeIfs: three modules that branch
// on data, around a stem convolution.

#include <symtrace/symtrace.hpp>

#include "lesson.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

using namespace symtrace;
using namespace lesson;

namespace {

IntList parse_shape(const std::string& text) {
  IntList sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    sizes.push_back(std::stoll(text.substr(start, end - start)));
    start = end + 1;
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: {} FILE.pt [SHAPE]\n", argv[0]);
    return 2;
  }
  if (!torchscript::available()) {
    fmt::print(stderr, "this symtrace was built without LibTorch\n");
    return 2;
  }
  const IntList shape = parse_shape(argc > 2 ? argv[2] : "1x3x16x16");

  // 1. Load: the module tree under PyTorch's names, torch.nn layers as symtrace layers.
  std::shared_ptr<Module> model = torchscript::load(argv[1]);
  fmt::print("{}\n", to_string(*model));

  // 2. Trace robustly, and print the coverage report: the failed modules name their Python
  //    file:line.
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape(shape))});
  fmt::print("{}", coverage_report(c, argv[1]));
  for (const ModuleFailure& f : c.failures()) {
    const std::string_view file = f.where.file_name();
    expect(file.ends_with(".py") && f.where.line() > 0,
           fmt::format("the failure of '{}' names a Python line, not {}:{}", f.module, file, f.where.line()));
  }

  // 3. The root graph runs: failed modules are leaves the interpreter calls eagerly.
  Generator gen(0);
  const Tensor x = randn(shape, gen);
  const Tensor eager = model->call({x}).to_tensor();
  const Tensor traced = Interpreter(*model, c.at(*model)).run({x}).to_tensor();
  const double error = max_abs_error(traced, eager);
  fmt::print("root graph run by the interpreter vs eager: max abs error {:.3g}\n", error);
  expect(error <= 1e-5, "the root graph computes what the model computes");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// Expected output (ThreeIfs), abridged:
// ThreeIfs(
//   (stem): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
//   (gate): Gate(
//   ...
// coverage of three_ifs.script.pt (ThreeIfs)
//   modules: 10 (1 traced, 6 leaf, 3 failed, 0 unvisited)
//   ...
// ├── gate (Gate)  failed: TraceError at .../make_models.py:43
//   ...
// root graph run by the interpreter vs eager: max abs error 0

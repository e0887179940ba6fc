// Operator lists for a selective build (torchscript/operator_lists.hpp) against LibTorch
// itself: the root operators equal torch.jit.export_opnames of each file (recorded by
// make_models.py), every operator LibTorch's own RecordFunction callback observes while the
// lists are made is in them, and the classes registered with LibTorch that a file holds are
// listed, or, when not registered in this process, refuse the file by name.
#include "support/checks.hpp"
#include "torchscript/libtorch_observer.hpp"
#include "torchscript/model_files.hpp"

#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>
#include <symtrace/torchscript/operator_lists.hpp>

#include <doctest/doctest.h>
#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;
namespace fs = std::filesystem;

namespace {

bool sorted_and_disjoint(const torchscript::OperatorLists& l) {
  std::vector<std::string> all;
  for (const auto* list : {&l.root_operators, &l.traced_operators, &l.load_operators}) {
    if (!std::is_sorted(list->begin(), list->end())) return false;
    all.insert(all.end(), list->begin(), list->end());
  }
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) == all.end();
}

}  // namespace

TEST_CASE("root operators are torch.jit.export_opnames's; every operator LibTorch observes is in the lists") {
  for (const std::string& name : classifiers) {
    const nlohmann::json expected = [&] {
      std::ifstream in(models / (name + ".opnames.json"));
      REQUIRE_MESSAGE(in, name << ".opnames.json is missing: make_models.py writes it");
      return nlohmann::json::parse(in);
    }();
    const nlohmann::json info = meta(name);
    const Tensor x = read_floats(models / (name + ".input.bin"), info["input"].get<IntList>());
    for (const std::string form : {"script", "trace"}) {
      CAPTURE(name);
      CAPTURE(form);
      torchscript::OperatorLists lists;
      const std::set<std::string> observed = observed_by_libtorch(
          [&] { lists = torchscript::operator_lists(models / (name + "." + form + ".pt"), {Value(x)}); });
      CHECK(lists.root_operators == expected[form].get<std::vector<std::string>>());
      CHECK(sorted_and_disjoint(lists));
      CHECK_FALSE(lists.traced_operators.empty());  // a conv2d or linear runs more than itself
      CHECK(lists.custom_classes.empty());
      std::vector<std::string> missing;
      for (const std::string& op : observed) {
        const auto in = [&](const std::vector<std::string>& l) { return std::binary_search(l.begin(), l.end(), op); };
        if (!in(lists.root_operators) && !in(lists.traced_operators) && !in(lists.load_operators)) missing.push_back(op);
      }
      CHECK_MESSAGE(missing.empty(), "observed by LibTorch, not listed: " << fmt::format("{}", fmt::join(missing, ", ")));
    }
  }
}

TEST_CASE("a file holding an object of a registered class lists it; one naming a class not registered here is refused by name") {
  const fs::path unloaded = models / "holds_unloaded.script.pt";
  const fs::path offset = models / "holds_offset.script.pt";
  // Nothing in this process registers symtrace_test.Unloaded (only make_models.py loaded its library).
  CHECK_THROWS_WITH_AS(torchscript::operator_lists(unloaded, {Value(ones({2, 3}))}),
                       doctest::Contains("holds_unloaded.script.pt: the file uses the class "
                                         "torch.classes.symtrace_test.Unloaded, which no library loaded in this "
                                         "process registers: load the library that registers it (torch::class_) first"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)torchscript::load(unloaded),
                       doctest::Contains("the class torch.classes.symtrace_test.Unloaded"), std::invalid_argument);

  REQUIRE_MESSAGE(::dlopen(SYMTRACE_CUSTOM_CLASS_LIBRARY, RTLD_NOW | RTLD_GLOBAL) != nullptr, ::dlerror());
  const torchscript::OperatorLists lists = torchscript::operator_lists(offset, {Value(ones({2, 3}))});
  CHECK(lists.custom_classes == std::vector<std::string>{"torch.classes.symtrace_test.Offset"});
  CHECK(std::binary_search(lists.root_operators.begin(), lists.root_operators.end(), "aten::relu"));
  const std::string yaml = torchscript::selective_build_yaml(lists);
  CHECK(yaml.ends_with("custom_classes:\n- Offset\n"));
  CHECK(yaml.find("  aten::relu:\n    is_used_for_training: false\n    is_root_operator: true\n"
                  "    include_all_overloads: false\n") != std::string::npos);
}

TEST_CASE("symtrace runs a registered class's method through LibTorch, as a custom_class event") {
  REQUIRE_MESSAGE(::dlopen(SYMTRACE_CUSTOM_CLASS_LIBRARY, RTLD_NOW | RTLD_GLOBAL) != nullptr, ::dlerror());
  std::shared_ptr<Module> model = torchscript::load(models / "holds_offset.script.pt");
  const Tensor x = tensor({-1.0f, 0.25f, 2.0f});
  std::vector<std::string> events;
  clear_callbacks();
  add_thread_local_callback(RecordFunctionCallback([&](const RecordFunction& fn) {
                              events.push_back(std::string(fn.name()));
                              return std::unique_ptr<ObserverContext>();
                            }).scopes({RecordScope::custom_class}));
  const Tensor out = model->call({x}).to_tensor();
  clear_callbacks();
  CHECK(out.to_vector<float>() == std::vector<float>{0.0f, 0.75f, 2.5f});
  CHECK(events == std::vector<std::string>{"__torch__.torch.classes.symtrace_test.Offset.apply"});
  // LibTorch's C++ code cannot be recorded: the trace says so at the call's Python line, and
  // the robust tracer keeps the module, run for its result's shape.
  CHECK_THROWS_WITH_AS(symbolic_trace(*model, {InputSpec(Shape{3})}),
                       doctest::Contains("'__torch__.torch.classes.symtrace_test.Offset.apply' is a method of a class "
                                         "registered with LibTorch, whose code symtrace runs but cannot record"),
                       TraceError);
  const GraphCollection c = recursive_trace(*model, {InputSpec(Shape{3})});
  REQUIRE(c.failures().size() == 1);
  CHECK(std::string(c.failures()[0].where.file_name()).ends_with("make_models.py"));
}

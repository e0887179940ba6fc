// Failure records, TraceErrors and OpErrors name a line of the user's code (Note [User
// locations] in src/core/error.cpp): the call of a built-in layer that refused its input rather
// than the layer's own source, the call of a module that a container made, the statement of a
// forward; and messages print that location once and name no node a rollback removed.
#include "support/checks.hpp"

#include "symtrace/symtrace.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace symtrace;

namespace {

constexpr std::string_view this_file = "tests/robust/user_location_test.cpp";

/// Calls a convolution on an input with the wrong number of channels.
class BadConvCall : public TypedModule<BadConvCall> {
 public:
  BadConvCall() { conv = register_module("conv", nn::Conv2d(8, 4, 3)); }
  static constexpr int call_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return conv(x); }
  nn::Conv2d conv{nullptr};
};

/// Calls an op on arguments it refuses.
class BadOpCall : public TypedModule<BadOpCall> {
 public:
  static constexpr int op_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return x.reshape({5, -1}); }
};

/// Throws an exception that carries no location.
class Refuses : public TypedModule<Refuses> {
 public:
  Tensor forward(const Tensor&) { throw std::runtime_error("library refused"); }
};

/// Holds one module of each kind; `refuses` is called by a Sequential, that is, by symtrace's code.
class Holder : public TypedModule<Holder> {
 public:
  Holder() {
    layer = register_module("layer", std::make_shared<BadConvCall>());
    op = register_module("op", std::make_shared<BadOpCall>());
    seq = register_module("seq", nn::Sequential(std::make_shared<Refuses>()));
  }
  static constexpr int seq_line = __LINE__ + 3;
  Tensor forward(const Tensor& x) {
    const Tensor a = layer->call({x}).to_tensor() + op->call({x}).to_tensor();
    return seq(a);
  }
  std::shared_ptr<BadConvCall> layer;
  std::shared_ptr<BadOpCall> op;
  nn::Sequential seq{nullptr};
};

/// A root whose own forward calls a layer that refuses its input.
class RootBadLayer : public TypedModule<RootBadLayer> {
 public:
  RootBadLayer() { fc = register_module("fc", nn::Linear(3, 2)); }
  static constexpr int call_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return fc(x); }
  nn::Linear fc{nullptr};
};

/// Converts a size computed two lines before to a C++ integer.
struct Late : TypedModule<Late> {
  static constexpr int size_line = __LINE__ + 2;
  Tensor forward(const Tensor& x) {
    const SymInt rows = x.size(0) * 2;
    const Tensor y = x.relu();
    return y * static_cast<double>(rows.value());
  }
};

bool names_this_file(const ModuleFailure& f) { return std::string_view(f.where.file_name()) == this_file; }

/// A module made a leaf whose forward depends on its input's values.
struct DataLeaf : TypedModule<DataLeaf> {
  static constexpr int read_line = __LINE__ + 1;
  Tensor forward(const Tensor& x) { return x.sum().item<float>() > 0 ? x : -x; }
};

/// Calls the leaf, then fails on its result.
struct CallsDataLeaf : TypedModule<CallsDataLeaf> {
  CallsDataLeaf() { leaf = register_module("leaf", std::make_shared<DataLeaf>()); }
  Tensor forward(const Tensor& x) { return leaf->call({x}).to_tensor() + 1.0; }
  std::shared_ptr<DataLeaf> leaf;
};

}  // namespace

TEST_CASE("a failure is recorded at the user's line: a layer's call, an op's call, a container's call site") {
  Holder model;
  const GraphCollection c = recursive_trace(model, {InputSpec(Shape{1, 3, 6, 6})});
  struct Expected {
    const char* module;
    const char* kind;
    int line;
  };
  for (const Expected& e : {Expected{"layer", "OpError", BadConvCall::call_line},
                            Expected{"op", "OpError", BadOpCall::op_line},
                            Expected{"seq.0", "std::runtime_error", Holder::seq_line}}) {
    CAPTURE(e.module);
    const ModuleFailure* f = nullptr;
    for (const ModuleFailure& g : c.failures()) {
      if (g.module == e.module) f = &g;
    }
    REQUIRE(f != nullptr);
    CHECK(f->kind == e.kind);
    CHECK(names_this_file(*f));
    CHECK(f->where.line() == static_cast<std::uint_least32_t>(e.line));
    // The message, when it has a location, has the same one; to_string prints it once.
    const std::string location = fmt::format("{}:{}", this_file, e.line);
    if (f->kind != std::string_view("std::runtime_error")) CHECK(f->message.starts_with(location + ": "));
    const std::string text = to_string(*f);
    CHECK(text.starts_with(location + ": " + e.kind + ": "));
    CHECK(text.find(location, 1) == std::string::npos);
  }
}

TEST_CASE("a layer that refuses its input in the root's own forward is an error at the root's line") {
  RootBadLayer model;
  SUBCASE("symbolic_trace throws an OpError at the call of the layer") {
    CHECK_THROWS_WITH_AS(symbolic_trace(model, {InputSpec(Shape{2, 5})}),
                         doctest::Contains(fmt::format("{}:{}: linear(): ", this_file, RootBadLayer::call_line).c_str()),
                         OpError);
  }
  SUBCASE("recursive_trace records the root's failure there") {
    const GraphCollection c = recursive_trace(model, {InputSpec(Shape{2, 5})});
    // The root, then the layer traced as a root of its own on the same input.
    REQUIRE(c.failures().size() == 2);
    CHECK(c.failures()[0].module.empty());
    CHECK(names_this_file(c.failures()[0]));
    CHECK(c.failures()[0].where.line() == static_cast<std::uint_least32_t>(RootBadLayer::call_line));
    CHECK(c.failures()[1].module == "fc");
    CHECK(c.failures()[1].kind == "OpError");
  }
}

TEST_CASE("a leaf whose own forward cannot be traced is the failed module, at its line; its caller traces on") {
  CallsDataLeaf model;
  GraphCollection c;
  c.tracer().register_leaf<DataLeaf>();
  c.recursive_trace(model, {InputSpec(Shape{2, 3})});
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures()[0].module == "leaf");
  CHECK(c.failures()[0].kind == "TraceError");
  CHECK(names_this_file(c.failures()[0]));
  CHECK(c.failures()[0].where.line() == static_cast<std::uint_least32_t>(DataLeaf::read_line));
  CHECK(c.failures()[0].message.find("a symbolic tensor was read as data") != std::string::npos);
  // The caller's graph: the leaf's call (its result by execution) and the code after it.
  const Graph* root = c.find(model);
  REQUIRE(root != nullptr);
  CHECK(to_string(*root) == R"(graph():
    %x : float32[2, 3] [num_users=1] = placeholder[target=x]
    %leaf : float32[2, 3] [num_users=1] = call_module[target=leaf](args = (%x,), kwargs = {})
    %add : float32[2, 3] [num_users=1] = call_function[target=add](args = (%leaf, 1.0), kwargs = {})
    return add
)");
  // A plain trace stops there, at the same line.
  Tracer plain;
  plain.register_leaf<DataLeaf>();
  CHECK_THROWS_WITH_AS(static_cast<void>(plain.trace(model, {InputSpec(Shape{2, 3})})),
                       doctest::Contains(fmt::format("{}:{}: ", this_file, DataLeaf::read_line).c_str()), LeafForwardError);
}

TEST_CASE("an op called by symtrace's code in eager mode keeps its own location: no trace knows the caller") {
  nn::Linear fc(3, 2);
  try {
    (void)fc(randn({2, 5}));
    FAIL("the linear layer accepted a 5-feature input");
  } catch (const OpError& e) {
    CHECK(std::string_view(e.where().file_name()).starts_with("src/"));
  }
}

TEST_CASE("a size converted to a C++ value names where it was computed, never a node a rollback removed") {
  Late model;
  try {
    (void)symbolic_trace(model, {InputSpec(Shape{Dim::unknown(), 2})});
    FAIL("an unknown size was converted to a C++ integer");
  } catch (const TraceError& e) {
    const std::string message = e.what();
    CHECK(message.find(fmt::format("a size unknown at trace time (computed at {}:{}) was converted", this_file,
                                   Late::size_line)) != std::string::npos);
    CHECK(message.find('%') == std::string::npos);
  }
}

// The Module base: registration and its errors, named queries, modes, the type-erased entry
// point, typed calls through holders, the thread's interposer, and state dicts.

#include "support/checks.hpp"

#include <symtrace/nn.hpp>

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>

using namespace symtrace;

namespace {

struct ScaleImpl : TypedModule<ScaleImpl> {
  explicit ScaleImpl(double factor) : factor(factor) {}
  Tensor forward(const Tensor& x) { return x * factor; }
  double factor;
};
SYMTRACE_MODULE(Scale);

// A forward with an optional trailing argument and a tuple result.
struct MaskedImpl : TypedModule<MaskedImpl> {
  MaskedImpl() : TypedModule({"x", "mask"}) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& x, std::optional<Tensor> mask) {
    Tensor y = mask ? x * *mask : x;
    return {y, y + 1};
  }
};
SYMTRACE_MODULE(Masked);

struct NetImpl : TypedModule<NetImpl> {
  NetImpl() {
    fc = register_module("fc", nn::Linear(4, 3));
    act = register_module("act", nn::ReLU());
    head = register_module("head", nn::Sequential(nn::Linear(3, 2), Scale(2.0)));
    steps = register_buffer("steps", scalar_tensor(0, DType::int64));
  }
  Tensor forward(const Tensor& x) { return head(act(fc(x))); }
  nn::Linear fc{nullptr};
  nn::ReLU act{nullptr};
  nn::Sequential head{nullptr};
  Tensor steps;
};
SYMTRACE_MODULE(Net);

// Records every module call and lets it run.
struct RecordingHook : Interposer {
  Value call_op(const OpCall&) override { throw std::logic_error("no symbolic op call expected"); }
  Value call_module(Module& m, const ValueList& args, std::source_location where) override {
    calls.push_back(fmt::format("{}({}) at line {}", m.type_name(), args.size(), where.line()));
    return m.run_forward(args, where);
  }
  std::vector<std::string> calls;
};

}  // namespace

TEST_CASE("a module lists its children, modules, parameters and buffers with qualified paths") {
  manual_seed(0);
  Net net;
  std::vector<std::string> paths;
  for (const NamedModule& nm : net->named_modules()) paths.push_back(nm.path + ":" + nm.module->type_name());
  CHECK(paths == std::vector<std::string>{":Net", "fc:Linear", "act:ReLU", "head:Sequential",
                                          "head.0:Linear", "head.1:Scale"});
  std::vector<std::string> params;
  for (const NamedTensor& p : net->named_parameters()) params.push_back(p.name);
  CHECK(params == std::vector<std::string>{"fc.weight", "fc.bias", "head.0.weight", "head.0.bias"});
  CHECK(net->named_buffers().size() == 1);
  CHECK(net->num_parameters() == 4 * 3 + 3 + 3 * 2 + 2);
  CHECK(net->children().size() == 3);
  CHECK(&net->get_submodule("head.1") == net->head->ptr(1).get());
  CHECK(net->get_tensor("head.0.bias").shape() == Shape{2});
}

TEST_CASE("calling a module through its holder equals running its forward eagerly") {
  manual_seed(1);
  Net net;
  const Tensor x = randn({5, 4});
  const Tensor expected = (relu(x.matmul(net->fc->weight.transpose(0, 1)) + net->fc->bias)
                               .matmul(net->head->at<nn::LinearImpl>(0).weight.transpose(0, 1)) +
                           net->head->at<nn::LinearImpl>(0).bias) *
                          2.0;
  CHECK(testing::max_abs_diff(net(x), expected) < 1e-5);
  CHECK(testing::max_abs_diff((*net)(x), expected) < 1e-5);
  CHECK(testing::max_abs_diff(net->call({x}).to_tensor(), expected) < 1e-5);
}

TEST_CASE("trailing optional forward arguments may be omitted and tuples come back as tuples") {
  Masked m;
  const Tensor x = tensor({1.0f, 2.0f});
  auto [a, b] = m(x);
  testing::check_tensor(a, DType::float32, {2}, {1, 2});
  testing::check_tensor(b, DType::float32, {2}, {2, 3});
  auto [c, d] = m(x, tensor({0.0f, 3.0f}));
  testing::check_tensor(c, DType::float32, {2}, {0, 6});
  const Value boxed = m->forward_values({x});
  REQUIRE(boxed.is_list());
  CHECK(boxed.to_list().size() == 2);
  const ForwardSignature& sig = *m->forward_signature();
  CHECK(sig.num_required == 1);
  CHECK(sig.parameters[1].optional);
  CHECK(sig.parameters[1].type_name == "Optional[Tensor]");
  CHECK(sig.result == ParamType::tuple);
  CHECK(sig.result_arity == 2);
  CHECK(sig.result_type_name == "Tuple[Tensor, Tensor]");
  CHECK(m->input_names() == std::vector<std::string>{"x", "mask"});
}

TEST_CASE("the type-erased entry point checks argument count and kinds") {
  Masked m;
  CHECK_THROWS_WITH_AS(m->forward_values({}), "Masked.forward() takes 1 to 2 arguments (x, mask), got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(m->forward_values({Value(3)}),
                       "Masked.forward(): argument 'x' (position 1) must be Tensor, got int", std::invalid_argument);
  CHECK_THROWS_WITH_AS(m->forward_values({tensor({1.0f}), Value(2.5)}),
                       "Masked.forward(): argument 'mask' (position 2) must be Optional[Tensor], got float",
                       std::invalid_argument);
}

TEST_CASE("every module call passes the thread's interposer, with the caller's line") {
  manual_seed(2);
  Net net;
  RecordingHook hook;
  const Tensor x = randn({1, 4});
  const Tensor eager = net(x);
  Tensor hooked;
  static constexpr int line = __LINE__ + 3;
  {
    InterposerScope scope(hook);
    hooked = net(x);
  }
  CHECK(current_interposer() == nullptr);
  CHECK(testing::max_abs_diff(eager, hooked) == 0);
  REQUIRE(hook.calls.size() == 6);
  CHECK(hook.calls[0] == fmt::format("Net(1) at line {}", line));
  CHECK(hook.calls[1].starts_with("Linear(1) at line "));
  CHECK(hook.calls[3].starts_with("Sequential(1)"));
  CHECK(hook.calls[5].starts_with("Scale(1)"));
}

TEST_CASE("an interposer scope restores the previous interposer when an exception passes") {
  RecordingHook outer, inner;
  InterposerScope a(outer);
  try {
    InterposerScope b(inner);
    CHECK(current_interposer() == &inner);
    CHECK(inner.outer() == &outer);
    // One object is installed once at a time: a nested run needs another object.
    CHECK_THROWS_WITH_AS(InterposerScope{outer}, doctest::Contains("was installed while it is installed already"),
                         std::logic_error);
    CHECK(current_interposer() == &inner);
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  CHECK(current_interposer() == &outer);
  CHECK(inner.outer() == nullptr);
  CHECK_FALSE(inner.is_installed());
  // Nor may another thread install it meanwhile; its own interposer stays as it was.
  std::string refused;
  std::thread([&] {
    try {
      InterposerScope again(outer);
    } catch (const std::logic_error& e) {
      refused = e.what();
    }
    if (current_interposer() != nullptr) refused += " (and the thread's interposer changed)";
  }).join();
  CHECK(refused.find("installed already, on this thread or another") != std::string::npos);
  CHECK(refused.find("changed") == std::string::npos);
  CHECK(outer.is_installed());
}

TEST_CASE("registration errors name the name, the module and the caller's line") {
  Net net;
  SUBCASE("duplicate names") {
    static constexpr int line = __LINE__ + 1;
    CHECK_THROWS_WITH_AS(net->register_module("fc", nn::Linear(1, 1)),
                         fmt::format("{}:{}: duplicate name 'fc' in Net: a submodule named 'fc' is already registered",
                                     __FILE__, line)
                             .c_str(),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(net->register_parameter("steps", zeros({1})),
                         doctest::Contains("duplicate name 'steps' in Net: a buffer named 'steps' is already registered"),
                         std::invalid_argument);
  }
  SUBCASE("invalid names") {
    for (const char* bad : {"", "a.b", ".x"})
      CHECK_THROWS_WITH_AS(net->register_module(bad, nn::ReLU()),
                           doctest::Contains(fmt::format("invalid submodule name '{}' in Net: a name is not empty and "
                                                         "holds no '.' (which separates the components of a path)",
                                                         bad)
                                                 .c_str()),
                           std::invalid_argument);
    CHECK_THROWS_WITH_AS(net->register_parameter("w.1", zeros({1})),
                         doctest::Contains("invalid parameter name 'w.1' in Net"), std::invalid_argument);
  }

  SUBCASE("cycles") {
    CHECK_THROWS_WITH_AS(net->register_module("self", net.ptr()),
                         doctest::Contains("registering 'self' (Net) in Net would make a cycle: the module would contain itself"),
                         std::invalid_argument);
    auto inner = std::make_shared<nn::SequentialImpl>();
    auto outer = std::make_shared<nn::SequentialImpl>(inner);
    CHECK_THROWS_WITH_AS(inner->push_back(outer),
                         doctest::Contains("registering '0' (Sequential) in Sequential would make a cycle"),
                         std::invalid_argument);
    CHECK(inner->size() == 0);
  }
  SUBCASE("null modules and undefined tensors") {
    CHECK_THROWS_WITH_AS(net->register_module("x", std::shared_ptr<Module>()),
                         doctest::Contains("register_module('x') in Net: the module is null"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(net->register_parameter("w", Tensor()),
                         doctest::Contains("register_parameter('w') in Net: the tensor is undefined"),
                         std::invalid_argument);
  }
  // Nothing half-registered after the failures.
  CHECK(net->named_children().size() == 3);
  CHECK(net->named_parameters(false).empty());
}

TEST_CASE("names PyTorch allows register: any string without '.' (issue 49: torchvision's RegNets name blocks block1-0)") {
  Net net;
  net->register_module("block1-0", nn::ReLU());
  net->register_module("conv 1", nn::ReLU());
  CHECK(net->get_submodule("block1-0").type_name() == "ReLU");
  CHECK(net->get_submodule("conv 1").type_name() == "ReLU");
  CHECK(net->named_children().size() == 5);
}

TEST_CASE("the cycle check refuses cycles however deep, and accepts every registration that makes none") {
  // 10,000 Sequentials nested, built bottom up; chain[i] is i deep (chain[0] the outermost).
  constexpr std::size_t n = 10'000;
  std::vector<std::shared_ptr<nn::SequentialImpl>> chain(n);
  chain[n - 1] = std::make_shared<nn::SequentialImpl>();
  for (std::size_t i = n - 1; i-- > 0;) chain[i] = std::make_shared<nn::SequentialImpl>(chain[i + 1]);
  CHECK(chain[0]->num_registrations() == 0);
  CHECK(chain[n - 1]->num_registrations() == 1);
  const auto refused = [](nn::SequentialImpl& parent, std::shared_ptr<Module> child) {
    CHECK_THROWS_WITH_AS(parent.push_back(std::move(child)),
                         doctest::Contains("(Sequential) in Sequential would make a cycle: the module would contain "
                                           "itself"),
                         std::invalid_argument);
  };
  SUBCASE("the outermost into the innermost, 10,000 levels apart") { refused(*chain[n - 1], chain[0]); }
  SUBCASE("a module into its descendants at every distance") {
    for (std::size_t deeper : {std::size_t{0}, std::size_t{1}, std::size_t{5'000}, n - 101}) refused(*chain[100 + deeper], chain[100]);
  }
  SUBCASE("registrations that make no cycle") {
    chain[n - 1]->push_back(std::make_shared<nn::SequentialImpl>());  // a new module, into the innermost
    chain[5'000]->push_back(chain[7'000]);                            // a descendant, again, higher up
    auto other = std::make_shared<nn::SequentialImpl>(std::make_shared<nn::SequentialImpl>());
    other->push_back(chain[1]);                            // a subtree into another model
    other->at<nn::SequentialImpl>(0).push_back(chain[2]);  // ... under a registered parent
    CHECK(chain[2]->num_registrations() == 2);
    CHECK(chain[7'000]->num_registrations() == 2);
    CHECK(chain[5'000]->named_children().size() == 2);
  }
  // Nothing refused was registered.
  for (std::size_t i = 0; i + 1 < n; ++i) REQUIRE(chain[i]->named_children().front().second == chain[i + 1]);
  CHECK(chain[0]->num_registrations() == 0);
}

TEST_CASE("a chain of modules 100,000 deep is freed without a deep nest of destructors") {
  // Freed in a loop (Note [Deep destruction] in module.cpp): before, each level nested a
  // destructor call, and this chain overflowed the stack.
  std::weak_ptr<Module> innermost;
  {
    auto chain = std::make_shared<nn::SequentialImpl>();
    innermost = chain;
    for (int i = 0; i < 100'000; ++i) chain = std::make_shared<nn::SequentialImpl>(std::move(chain));
    CHECK_FALSE(innermost.expired());
  }
  CHECK(innermost.expired());
}

TEST_CASE("a module registered twice is one module") {
  auto shared = std::make_shared<nn::LinearImpl>(2, 2);
  nn::Sequential seq(shared, nn::ReLU(), shared);
  CHECK(seq->size() == 3);
  CHECK(seq->named_modules().size() == 3);  // root, 0 (= 2), 1
  CHECK(seq->children().size() == 2);
  CHECK(seq->num_parameters() == 6);
  CHECK(seq->state_dict().keys() == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
}

TEST_CASE("many children are registered and found in constant time per name") {
  nn::ModuleList list;
  for (int i = 0; i < 20000; ++i) list->push_back(nn::Identity());
  CHECK(list->size() == 20000);
  CHECK(list->find_child("19999") == list->ptr(19999).get());
  CHECK_THROWS_WITH_AS(list->register_module("123", nn::Identity()),
                       doctest::Contains("duplicate name '123' in ModuleList"), std::invalid_argument);
}

TEST_CASE("train and eval set the mode of every descendant") {
  Net net;
  CHECK(net->is_training());
  net->eval();
  for (const NamedModule& nm : net->named_modules()) CHECK_FALSE(nm.module->is_training());
  net->train();
  for (const NamedModule& nm : net->named_modules()) CHECK(nm.module->is_training());
}

TEST_CASE("get_submodule names the first missing component and what exists") {
  Net net;
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS((void)net->get_submodule("head.7.fc"),
                       fmt::format("{}:{}: no submodule 'head.7.fc' in Net: 'head' (Sequential) has no child '7' "
                                   "(its children: 0, 1)",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)net->get_tensor("fc.w"),
                       doctest::Contains("no parameter or buffer 'fc.w' in Net: Linear has none named 'w' (it has: weight, bias)"),
                       std::invalid_argument);
}

TEST_CASE("load_state_dict copies values into the model's own tensors") {
  manual_seed(3);
  Net a, b;
  const Tensor w = b->fc->weight;  // the handle the model keeps
  b->load_state_dict(a->state_dict());
  CHECK(testing::max_abs_diff(w, a->fc->weight) == 0);
  const Tensor x = randn({2, 4});
  CHECK(testing::max_abs_diff(a(x), b(x)) == 0);
  CHECK(a->state_dict().keys() ==
        std::vector<std::string>{"steps", "fc.weight", "fc.bias", "head.0.weight", "head.0.bias"});
}

TEST_CASE("load_state_dict reports every problem and leaves the model unchanged") {
  manual_seed(4);
  Net a, b;
  const Tensor before = b->fc->weight * 1.0;
  StateDict state;
  for (const auto& [k, t] : a->state_dict())
    if (k != "fc.bias") state.insert(k == "head.0.weight" ? "head.0.w" : k, k == "fc.weight" ? zeros({3, 5}) : t);
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(b->load_state_dict(state),
                       fmt::format("{}:{}: load_state_dict() into Net: 4 problems, the model was not changed:\n"
                                   "  shape mismatch for 'fc.weight': the state has [3, 5], the model has [3, 4]\n"
                                   "  missing key 'fc.bias'\n"
                                   "  missing key 'head.0.weight'\n"
                                   "  unexpected key 'head.0.w'",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  CHECK(testing::max_abs_diff(b->fc->weight, before) == 0);
  SUBCASE("not strict: missing and unexpected keys are returned, mismatches still fail") {
    CHECK_THROWS_WITH_AS(b->load_state_dict(state, false), doctest::Contains("1 problem, the model was not changed"),
                         std::invalid_argument);
    StateDict ok;
    for (const auto& [k, t] : state)
      if (k != "fc.weight") ok.insert(k, t);
    const LoadStateDictResult r = b->load_state_dict(ok, false);
    CHECK(r.missing_keys == std::vector<std::string>{"fc.weight", "fc.bias", "head.0.weight"});
    CHECK(r.unexpected_keys == std::vector<std::string>{"head.0.w"});
    CHECK(testing::max_abs_diff(b->head->at<nn::LinearImpl>(0).bias, a->head->at<nn::LinearImpl>(0).bias) == 0);
  }
}

TEST_CASE("a module prints as a PyTorch-style tree") {
  Net net;
  CHECK(to_string(*net) ==
        "Net(\n"
        "  (fc): Linear(in_features=4, out_features=3, bias=True)\n"
        "  (act): ReLU()\n"
        "  (head): Sequential(\n"
        "    (0): Linear(in_features=3, out_features=2, bias=True)\n"
        "    (1): Scale()\n"
        "  )\n"
        ")");
}

TEST_CASE("containers that are only indexed cannot be called") {
  nn::ModuleList list{nn::ReLU(), nn::Tanh()};
  CHECK_FALSE(list->is_callable());
  CHECK(list->forward_signature() == nullptr);
  static constexpr int line = __LINE__ + 1;
  CHECK_THROWS_WITH_AS(list->call({tensor({1.0f})}),
                       fmt::format("{}:{}: ModuleList is not callable: it has no forward (index it and call its "
                                   "elements)",
                                   __FILE__, line)
                           .c_str(),
                       std::invalid_argument);
  CHECK(list->ptr<nn::TanhImpl>(1) != nullptr);
  CHECK(&list->at<nn::TanhImpl>(1) == list->ptr(1).get());
  CHECK_THROWS_WITH_AS((void)list->at<nn::LinearImpl>(0), doctest::Contains("the module is a ReLU, not a Linear"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)list->ptr(5), doctest::Contains("index 5 is out of range for ModuleList of size 2"),
                       std::invalid_argument);
  nn::ModuleDict dict;
  dict->insert("relu", nn::ReLU());
  CHECK(dict->contains("relu"));
  CHECK_THROWS_WITH_AS((void)dict->get("tanh"), doctest::Contains("no key 'tanh' in ModuleDict (keys: relu)"),
                       std::invalid_argument);
  // at<M> gives the module, ptr<M> shares it, in all three containers alike.
  CHECK(&dict->at<nn::ReLUImpl>("relu") == &dict->get("relu"));
  CHECK(dict->ptr<nn::ReLUImpl>("relu").get() == &dict->get("relu"));
  CHECK_THROWS_WITH_AS((void)dict->at<nn::LinearImpl>("relu"), doctest::Contains("the module is a ReLU, not a Linear"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)dict->ptr<nn::LinearImpl>("tanh"), doctest::Contains("no key 'tanh' in ModuleDict"),
                       std::invalid_argument);
  nn::Sequential seq{nn::ReLU()};
  CHECK(&seq->at<nn::ReLUImpl>(0) == seq->ptr<nn::ReLUImpl>(0).get());
}

TEST_CASE("an empty holder says so instead of crashing") {
  nn::Linear fc{nullptr};
  CHECK(fc.is_empty());
  CHECK_THROWS_WITH_AS(fc(tensor({1.0f})),
                       doctest::Contains("use of an empty ModuleHolder<Linear>: it was made from nullptr"),
                       std::invalid_argument);
}

TEST_CASE("input names can be declared and are validated") {
  Scale s(1.0);
  CHECK(s->input_names() == std::vector<std::string>{"x"});
  s->set_input_names({"image"});
  CHECK(s->input_names() == std::vector<std::string>{"image"});
  CHECK_THROWS_WITH_AS(s->set_input_names({"a", "b"}),
                       doctest::Contains("set_input_names() on Scale: forward takes 1 argument, got 2 names"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(s->set_input_names({"1x"}), doctest::Contains("'1x' is not a valid input name"),
                       std::invalid_argument);
}

TEST_CASE("a literal 0 given to a holder is a size, not a null module") {
  CHECK_THROWS_WITH_AS(nn::MaxPool2d(0), doctest::Contains("MaxPool2d(kernel_size=0"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(0), doctest::Contains("BatchNorm2d(0): num_features must be positive"),
                       std::invalid_argument);
  CHECK(nn::Linear(nullptr).is_empty());
  CHECK(Scale(nullptr).is_empty());
}

TEST_CASE("a shared module is listed at the path of its first visit in preorder, as PyTorch does") {
  auto shared = std::make_shared<nn::LinearImpl>(2, 2);
  nn::Sequential inner(shared);
  nn::Sequential outer(inner, shared);
  std::vector<std::string> paths;
  for (const NamedModule& nm : outer->named_modules()) paths.push_back(nm.path);
  CHECK(paths == std::vector<std::string>{"", "0", "0.0"});
  std::vector<std::string> params;
  for (const NamedTensor& p : outer->named_parameters()) params.push_back(p.name);
  CHECK(params == std::vector<std::string>{"0.0.weight", "0.0.bias"});
}

TEST_CASE("a module index lists named_modules' order and finds each module's first path in constant time") {
  auto shared = std::make_shared<nn::LinearImpl>(2, 2);
  nn::Sequential inner(shared, nn::ReLU());
  nn::Sequential outer(inner, shared);
  const nn::Linear stranger(2, 2);

  const ModuleIndex index(*outer.ptr());
  REQUIRE(index.size() == 4);
  CHECK(&index.root() == outer.ptr().get());
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < index.size(); ++i) paths.push_back(index.path(i));
  CHECK(paths == std::vector<std::string>{"", "0", "0.0", "0.1"});
  std::vector<std::string> walked;  // the same paths, made in one walk
  index.for_each_path([&](std::size_t i, std::string_view path) { walked.push_back(fmt::format("{}:{}", i, path)); });
  CHECK(walked == std::vector<std::string>{"0:", "1:0", "2:0.0", "3:0.1"});
  // A module is its parent's position and its name there.
  CHECK(index.parent(0) == ModuleIndex::npos);
  CHECK(index.parent(3) == 1);
  CHECK(index.name(3) == "1");
  CHECK(index.depth(3) == 2);
  CHECK(&index.module(2) == shared.get());
  CHECK(index.find(*outer.ptr()) == 0);
  CHECK(index.find(*shared) == 2);
  CHECK(*index.path_of(*shared) == "0.0");  // not "1": its first path in preorder
  CHECK(index.find(*stranger.ptr()) == ModuleIndex::npos);
  CHECK(index.path_of(*stranger.ptr()) == std::nullopt);

  const ModuleIndex prefixed(*inner.ptr(), "encoder");
  CHECK(*prefixed.path_of(*shared) == "encoder.0");
  CHECK(prefixed.path(0) == "encoder");
  std::vector<std::string> prefixed_paths;
  prefixed.for_each_path([&](std::size_t, std::string_view path) { prefixed_paths.emplace_back(path); });
  CHECK(prefixed_paths == std::vector<std::string>{"encoder", "encoder.0", "encoder.1"});
  CHECK(inner->named_modules("encoder")[2].path == "encoder.1");

  // Deep paths under a prefix, and a walk that climbs back up after a deep branch: the three
  // ways to a path (path(i), for_each_path, named_modules) agree with the paths written out.
  nn::Sequential deep{nn::Sequential{nn::Sequential{nn::ReLU{}, nn::Identity{}}, nn::ReLU{}}, nn::Identity{}};
  const ModuleIndex deep_index(*deep.ptr(), "p");
  const std::vector<std::string> expected{"p", "p.0", "p.0.0", "p.0.0.0", "p.0.0.1", "p.0.1", "p.1"};
  std::vector<std::string> made, deep_walked, named;
  for (std::size_t i = 0; i < deep_index.size(); ++i) made.push_back(deep_index.path(i));
  deep_index.for_each_path([&](std::size_t, std::string_view path) { deep_walked.emplace_back(path); });
  for (const NamedModule& nm : deep->named_modules("p")) named.push_back(nm.path);
  CHECK(made == expected);
  CHECK(deep_walked == expected);
  CHECK(named == expected);
  CHECK(deep_index.depth(3) == 3);
  CHECK(deep_index.parent(6) == 0);

  // Past its first sizes the table grows; every module stays found at its own position.
  nn::ModuleList list;
  for (int i = 0; i < 1000; ++i) list->push_back(nn::Identity());
  const ModuleIndex big(*list.ptr());
  REQUIRE(big.size() == 1001);
  for (std::size_t i = 0; i < 1000; ++i) {
    REQUIRE(big.find(*list->ptr(i)) == i + 1);
    CHECK(big.path(i + 1) == std::to_string(i));
  }
}

TEST_CASE("a bad tuple element returned through an interposer names the declared tuple type") {
  struct WrongTuple : Interposer {
    Value call_op(const OpCall&) override { throw std::logic_error("no symbolic op call expected"); }
    Value call_module(Module&, const ValueList&, std::source_location) override {
      return ValueList{Value(tensor({1.0f})), Value(3)};
    }
  } hook;
  Masked m;
  InterposerScope scope(hook);
  CHECK_THROWS_WITH_AS(m(tensor({1.0f})),
                       "Masked.forward() returns Tuple[Tensor, Tensor], but the call produced int",
                       std::invalid_argument);
}

TEST_CASE("load_state_dict lists at most twenty problems and counts the rest") {
  nn::ModuleList list;
  for (int i = 0; i < 15; ++i) list->push_back(nn::Linear(1, 1));
  try {
    list->load_state_dict(StateDict{});
    FAIL("an empty state must be refused");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("30 problems, the model was not changed") != std::string::npos);
    CHECK(what.find("missing key '9.bias'") != std::string::npos);
    CHECK(what.find("missing key '10.weight'") == std::string::npos);
    CHECK(what.ends_with("... and 10 more"));
  }
}

namespace {

/// Asks its type name while it is being built: a class derived from it is still a Namer then.
class Namer : public TypedModule<Namer> {
 public:
  Namer() : early(type_name()), early_builtin(is_builtin_layer()) {}
  Tensor forward(const Tensor& x) { return x; }
  std::string early;
  bool early_builtin;
};

class DerivedNamer : public Namer {};

}  // namespace

TEST_CASE("a module's type name is its dynamic type's, even when first asked during construction") {
  DerivedNamer m;
  CHECK(m.early == "Namer");  // the dynamic type while Namer's constructor runs
  CHECK_FALSE(m.early_builtin);
  CHECK(m.type_name() == "DerivedNamer");
  CHECK(m.type_name() == "DerivedNamer");  // asked again: the remembered answer
  nn::Linear linear(2, 2);
  CHECK(linear->type_name() == "Linear");
  CHECK(linear->is_builtin_layer());
}

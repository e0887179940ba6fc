// Checkpoints: rollback restores exactly the state a checkpoint was taken in (nodes, order,
// arguments, users and their order, names and counters, metadata), nested checkpoints, and a
// property test of random edits.
#include "symtrace/graph.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace symtrace;

namespace {

/// Everything observable about a graph: the printed text plus what the text leaves out
/// (ids, users in order, scopes, metadata entries, impurity).
std::string fingerprint(const Graph& g) {
  std::string out = to_string(g);
  for (const Node& n : g.nodes()) {
    out += fmt::format("{} id={} scope={} impure={} users=[", n.name(), n.id().value, n.scope(), n.is_impure());
    for (const Node* u : n.users()) out += u->name() + ",";
    out += "] meta={";
    for (const auto& [k, v] : n.meta()) out += fmt::format("{}:{},", k, v);
    out += fmt::format("}} where={}\n", n.where().line());
  }
  return out;
}

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.push_back(n.name());
  return out;
}

}  // namespace

TEST_CASE("rolling back a checkpoint removes the nodes made since and frees their names") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& r = g.call_function("relu", {x});
  g.output(r);
  std::string before = fingerprint(g);
  {
    auto checkpoint = g.checkpoint();
    auto point = g.inserting_before(*g.output_node());
    Node& a = g.call_function("relu", {r});
    g.call_function("add", {a, x});
    CHECK(names(g) == std::vector<std::string>{"x", "relu", "relu_1", "add", "output"});
  }  // destroyed without commit: rolled back
  CHECK(fingerprint(g) == before);
  g.lint();
  // Note [Rollback restores names]: the same calls give the same names again.
  CHECK(g.call_function("relu", {r}).name() == "relu_1");
  CHECK(g.call_function("add", {x, x}).name() == "add");
}

TEST_CASE("rollback undoes erasures, rewiring, moves and metadata changes of older nodes") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  Node& a = g.call_function("add", {x, y});
  Node& b = g.call_function("mul", {a, x}, {{"scale", y}});
  Node& c = g.call_function("sub", {b, a});
  Node& unused = g.call_function("neg", {y});
  g.output(c);
  a.set_meta("tag", 1);
  std::string before = fingerprint(g);

  auto checkpoint = g.checkpoint();
  g.erase_node(unused);
  g.replace_all_uses_with(a, x);
  b.set_kwargs({{"scale", 2.0}});
  g.erase_node(a);
  c.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 2}});
  c.set_scope("inner");
  c.set_meta("k", "v");
  c.set_impure();
  b.set_where(std::source_location::current());
  g.move_before(b, y);  // breaks the order on purpose: rollback must still restore it
  Node& d = g.call_function("relu", {x});
  g.output_node()->set_args({d});
  CHECK(fingerprint(g) != before);
  checkpoint.rollback();
  CHECK_FALSE(checkpoint.active());
  CHECK(fingerprint(g) == before);
  g.lint();
  CHECK(g.find_node("add") == &a);
  CHECK(g.find_node("neg") == &unused);
}

TEST_CASE("committing keeps the changes; an enclosing checkpoint can still roll them back") {
  Graph g;
  Node& x = g.placeholder("x");
  g.output(x);
  std::string start = fingerprint(g);
  auto outer = g.checkpoint();
  g.call_function("relu", {x});
  std::string middle = fingerprint(g);
  {
    auto inner = g.checkpoint();
    g.call_function("neg", {x});
    inner.commit();
    CHECK_FALSE(inner.active());
  }
  CHECK(g.find_node("neg") != nullptr);
  {
    auto inner = g.checkpoint();
    g.call_function("sigmoid", {x});
  }  // rolled back
  CHECK(g.find_node("sigmoid") == nullptr);
  CHECK(g.find_node("neg") != nullptr);
  CHECK(fingerprint(g) != middle);
  outer.rollback();
  CHECK(fingerprint(g) == start);
}

TEST_CASE("rolling back an outer checkpoint ends the inner ones") {
  Graph g;
  Node& x = g.placeholder("x");
  g.output(x);
  std::string start = fingerprint(g);
  auto outer = g.checkpoint();
  g.call_function("a", {x});
  auto inner = g.checkpoint();
  g.call_function("b", {x});
  outer.rollback();
  CHECK_FALSE(inner.active());
  CHECK(fingerprint(g) == start);
  inner.rollback();  // does nothing
  inner.commit();
  CHECK(fingerprint(g) == start);
}

TEST_CASE("a checkpoint that outlives its graph does nothing") {
  std::optional<Graph::Checkpoint> checkpoint;
  {
    Graph g;
    g.placeholder("x");
    checkpoint.emplace(g.checkpoint());
    g.placeholder("y");
  }
  CHECK_FALSE(checkpoint->active());
  checkpoint.reset();  // no crash, nothing to undo
}

TEST_CASE("rollback restores the insertion point") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& r = g.call_function("relu", {x});
  g.output(r);
  auto point = g.inserting_before(r);
  {
    auto checkpoint = g.checkpoint();
    auto inner_point = g.inserting_after(r);
    g.call_function("late", {x});
    // inner_point restores "before relu" when it ends, then the checkpoint rolls back.
  }
  g.call_function("early", {x});
  CHECK(names(g) == std::vector<std::string>{"x", "early", "relu", "output"});
}

TEST_CASE("property: random edits keep lint green and rollback restores the graph exactly") {
  for (unsigned seed : {1U, 2U, 3U, 4U, 5U, 6U, 7U, 8U}) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    Graph g;
    g.placeholder("x");
    g.placeholder("y");
    g.output(*g.find_node("x"));
    struct Open {
      Graph::Checkpoint checkpoint;
      std::string fingerprint;
      std::unique_ptr<Graph> copy;
    };
    std::vector<Open> open;
    const char* ops[] = {"add", "relu", "cat", "mul_", "linear"};
    std::size_t rollbacks = 0;
    for (int step = 0; step < 400; ++step) {
      std::vector<Node*> all;
      for (Node& n : g.nodes()) {
        if (n.op() != OpKind::output) all.push_back(&n);
      }
      std::size_t action = pick(10);
      if (action <= 2) {
        // Create, somewhere after its inputs: at the end, or after the latest input.
        Node* a = all[pick(all.size())];
        Node* b = all[pick(all.size())];
        Arguments args{*a};
        if (pick(2) == 0) args.push_back(Argument::list({*b, 1, 2.5}));
        KeywordArguments kwargs;
        if (pick(3) == 0) kwargs.emplace_back("other", Argument(*b));
        const Node* latest = a;
        for (const Node& n : g.nodes()) {
          if (&n == a || &n == b) latest = &n;
        }
        if (pick(2) == 0 && latest->op() != OpKind::placeholder) {
          auto point = g.inserting_after(const_cast<Node&>(*latest));
          g.call_function(ops[pick(5)], std::move(args), std::move(kwargs));
        } else {
          g.call_function(ops[pick(5)], std::move(args), std::move(kwargs));
        }
      } else if (action == 3) {
        // Replace the uses of a node by an earlier node.
        Node* old_node = all[pick(all.size())];
        std::vector<Node*> earlier;
        for (Node* n : all) {
          if (n == old_node) break;
          earlier.push_back(n);
        }
        if (!earlier.empty()) g.replace_all_uses_with(*old_node, *earlier[pick(earlier.size())]);
      } else if (action == 4) {
        Node* n = all[pick(all.size())];
        if (n->num_users() == 0 && n->op() != OpKind::placeholder) g.erase_node(*n);
      } else if (action == 5) {
        Node* n = all[pick(all.size())];
        n->set_meta(fmt::format("k{}", pick(3)), static_cast<std::int64_t>(step));
        if (pick(2) == 0) n->set_tensor_meta(TensorMeta{DType::float32, Shape{static_cast<std::int64_t>(pick(4))}});
        if (pick(4) == 0) n->set_scope(fmt::format("s{}", pick(3)));
      } else if (action == 6) {
        g.output_node()->set_args({Argument::list({*all[pick(all.size())], *all[pick(all.size())]})});
      } else if (action == 7) {
        switch (pick(5)) {
          case 0: g.eliminate_dead_code(); break;
          case 1: {  // rewire one input of a node to an earlier node
            Node* n = all[pick(all.size())];
            std::vector<Node*> inputs = n->input_nodes();
            if (!inputs.empty()) {
              Node* old_input = inputs[pick(inputs.size())];
              std::vector<Node*> earlier;
              for (Node* e : all) {
                if (e == old_input) break;
                earlier.push_back(e);
              }
              if (!earlier.empty()) n->replace_input_with(*old_input, *earlier[pick(earlier.size())]);
            }
            break;
          }
          case 2: {  // keyword arguments referencing an earlier node
            Node* n = all[pick(all.size())];
            if (n->op() != OpKind::placeholder && n != all.front()) {
              n->set_kwargs({{"scale", 2}, {"other", *all.front()}});
            }
            break;
          }
          case 3: {
            Node* n = all[pick(all.size())];
            n->set_impure(pick(2) == 0);
            n->erase_meta(fmt::format("k{}", pick(3)));
            break;
          }
          default: {  // a copy taken with checkpoints open is the same graph
            Graph copy(g);
            REQUIRE(fingerprint(copy) == fingerprint(g));
            copy.lint();
            break;
          }
        }
      } else if (action == 8 && open.size() < 4) {
        open.push_back(Open{g.checkpoint(), fingerprint(g), std::make_unique<Graph>(g)});
      } else if (action == 9 && !open.empty()) {
        Open top = std::move(open.back());
        open.pop_back();
        if (pick(3) == 0) {
          top.checkpoint.commit();
        } else {
          top.checkpoint.rollback();
          ++rollbacks;
          REQUIRE(fingerprint(g) == top.fingerprint);
          // Counters are restored too: the same new node gets the same name in both.
          Node& probe = g.call_function("relu", {*g.find_node("x")});
          Node& twin = top.copy->call_function("relu", {*top.copy->find_node("x")});
          CHECK(probe.name() == twin.name());
          CHECK(probe.id() == twin.id());
          g.erase_node(probe);
        }
      }
      g.lint();
    }
    while (!open.empty()) {
      Open top = std::move(open.back());
      open.pop_back();
      top.checkpoint.rollback();
      CHECK(fingerprint(g) == top.fingerprint);
      g.lint();
    }
    CHECK(rollbacks > 0);
  }
}

TEST_CASE("committing a checkpoint while a later one is open is refused") {
  Graph g;
  Node& x = g.placeholder("x");
  g.output(x);
  auto outer = g.checkpoint();
  g.call_function("a", {x});
  auto inner = g.checkpoint();
  g.call_function("b", {x});
  CHECK_THROWS_WITH_AS(outer.commit(), doctest::Contains("checkpoints taken after this one are still open"),
                       std::logic_error);
  CHECK(outer.active());
  inner.commit();
  outer.commit();
  CHECK(names(g) == std::vector<std::string>{"x", "a", "b", "output"});
}

TEST_CASE("rollback after changes to many users of one node restores their order") {
  Graph g;
  Node& x = g.placeholder("x");
  Node& y = g.placeholder("y");
  std::vector<Node*> users;
  for (int i = 0; i < 200; ++i) users.push_back(&g.call_function("relu", {x, i % 3 == 0 ? Argument(y) : Argument(i)}));
  g.output(Argument::list({*users.front(), *users.back()}));
  std::string before = fingerprint(g);
  {
    auto checkpoint = g.checkpoint();
    g.replace_all_uses_with(x, y);
    for (int i = 1; i < 199; i += 2) g.erase_node(*users[static_cast<std::size_t>(i)]);
    users[2]->set_args({y, y, y});
    g.lint();
  }
  CHECK(fingerprint(g) == before);
  g.lint();
}

// remove_unnecessary_slices: slices that keep everything go, the others (and those written
// into) stay.
#include "support/checks.hpp"

#include <symtrace/symtrace.hpp>

#include <limits>

using namespace symtrace;

TEST_CASE("full-range slices are replaced by their input; partial ones stay") {
  Graph g;
  Node& x = g.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape{2, 4}});
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  Node& a = g.call_method("slice", {x, 0, 0, max, 1});                  // everything (fx's 9223372036854775807)
  Node& b = g.call_method("slice", {a, 1, Argument(), Argument(), 1});  // start and end None
  Node& c = g.call_method("slice", {b, -1, 0, 4, 1});                   // end = size of the last dim
  Node& d = g.call_method("slice", {c, 1, 0, 3, 1});                    // drops a column: stays
  Node& e = g.call_method("slice", {c, 1, 0, 4, 2});                    // step 2: stays
  Node& f = g.call_method("slice", {c, 1, 1, 4, 1});                    // starts at 1: stays
  g.output(Argument::list({d, e, f}));
  CHECK(remove_unnecessary_slices(g) == 3);
  CHECK(to_string(g) ==
        "graph():\n"
        "    %x : float32[2, 4] [num_users=3] = placeholder[target=x]\n"
        "    %slice_3 : [num_users=1] = call_method[target=slice](args = (%x, 1, 0, 3, 1), kwargs = {})\n"
        "    %slice_4 : [num_users=1] = call_method[target=slice](args = (%x, 1, 0, 4, 2), kwargs = {})\n"
        "    %slice_5 : [num_users=1] = call_method[target=slice](args = (%x, 1, 1, 4, 1), kwargs = {})\n"
        "    return (slice_3, slice_4, slice_5)\n");
  CHECK_NOTHROW(g.lint());
}

TEST_CASE("a finite end on a dim of unknown size, and a slice written into, are kept") {
  Graph g;
  Node& x = g.placeholder("x");
  x.set_tensor_meta(TensorMeta{DType::float32, Shape::unknown(2)});
  Node& y = g.placeholder("y");
  Node& a = g.call_method("slice", {x, 0, 0, 100, 1});
  Node& b = g.call_method("slice", {y, 0, Argument(), Argument(), 1});
  g.call_method("fill_", {b, 0.0});
  g.output(Argument::list({a, y}));
  const std::string before = to_string(g);
  CHECK(remove_unnecessary_slices(g) == 0);
  CHECK(to_string(g) == before);
}

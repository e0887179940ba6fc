// The graph's storage pieces on their own: the name table's flat index (lookups, growth and
// backward-shift removal in any order) and the chunked vertex vector (stable addresses,
// growth and shrinking across chunk boundaries).
#include "graph/name_table.hpp"
#include "graph/chunked_vector.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using symtrace::NodeId;
using symtrace::detail::ChunkedVector;
using symtrace::detail::NameTable;
using symtrace::detail::TextArena;

namespace {

NodeId id(std::uint32_t v) { return NodeId(v); }

}  // namespace

TEST_CASE("the name table finds every name it handed out, across many index growths") {
  TextArena arena;
  NameTable names;
  std::vector<std::string> handed;
  for (std::uint32_t i = 0; i < 5000; ++i) {
    NameTable::Taken t = names.take(fmt::format("blocks.{}.linear", i), id(i), arena);
    CHECK(t.new_base);
    std::string name;
    names.append_name(name, t.base, t.code);
    handed.push_back(name);
  }
  for (std::uint32_t i = 0; i < handed.size(); ++i) {
    REQUIRE(handed[i] == fmt::format("blocks_{}_linear", i));
    CHECK(names.find(handed[i]) == id(i));
  }
  CHECK_FALSE(names.find("blocks_5000_linear").is_valid());
  CHECK_FALSE(names.find("blocks").is_valid());
}

TEST_CASE("names stay findable through takes and reverse-order releases across index growths") {
  // Rollback's pattern: take names, release the newest ones, take more. Growing the index
  // reorders its probe runs, so a released base is often not at the end of its run; removal
  // must shift later members back or lookups of other names stop short.
  TextArena arena;
  NameTable names;
  std::mt19937 rng(7);
  std::vector<NameTable::Taken> taken;
  std::vector<std::string> texts;
  std::size_t lost = 0;
  std::size_t found_released = 0;
  for (int round = 0; round < 60; ++round) {
    for (int k = 0; k < 150; ++k) {
      auto i = static_cast<std::uint32_t>(taken.size());
      taken.push_back(names.take(fmt::format("n{}", rng() % 20000), id(i), arena));
      std::string name;
      names.append_name(name, taken.back().base, taken.back().code);
      texts.push_back(name);
    }
    for (std::size_t k = rng() % 140; k > 0; --k) {
      names.release(taken.back());
      taken.pop_back();
      if (names.find(texts.back()).is_valid()) ++found_released;
      texts.pop_back();
    }
    for (std::uint32_t i = 0; i < texts.size(); ++i) {
      if (names.find(texts[i]) != id(i)) ++lost;
    }
  }
  REQUIRE(texts.size() > 1000);
  CHECK(lost == 0);
  CHECK(found_released == 0);
}

TEST_CASE("releasing every name in reverse, across index growths, keeps the others findable") {
  // Names taken since an index growth may sit anywhere in their probe runs (growth reinserts
  // in slot order), including runs that wrap around the end of the index.
  std::mt19937 rng(11);
  std::size_t lost = 0;
  for (int trial = 0; trial < 300; ++trial) {
    TextArena arena;
    NameTable names;
    std::size_t n = 17 + rng() % 120;
    std::vector<NameTable::Taken> taken;
    std::vector<std::string> texts;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string text = fmt::format("t{}_x", rng());
      if (names.find(text).is_valid()) continue;
      taken.push_back(names.take(text, id(static_cast<std::uint32_t>(texts.size())), arena));
      texts.push_back(text);
    }
    while (!taken.empty()) {
      names.release(taken.back());
      taken.pop_back();
      texts.pop_back();
      for (std::uint32_t i = 0; i < texts.size(); ++i) {
        if (names.find(texts[i]) != id(i)) ++lost;
      }
    }
  }
  CHECK(lost == 0);
}

TEST_CASE("a released base can be taken again and gets the same name") {
  TextArena arena;
  NameTable names;
  NameTable::Taken a = names.take("linear", id(0), arena);
  NameTable::Taken b = names.take("linear", id(1), arena);
  std::string name;
  names.append_name(name, b.base, b.code);
  CHECK(name == "linear_1");
  names.release(b);
  names.release(a);
  CHECK_FALSE(names.find("linear").is_valid());
  NameTable::Taken again = names.take("linear", id(2), arena);
  name.clear();
  names.append_name(name, again.base, again.code);
  CHECK(name == "linear");
  CHECK(names.find("linear") == id(2));
}

TEST_CASE("a copied name table answers like the original") {
  TextArena arena;
  NameTable names;
  for (std::uint32_t i = 0; i < 100; ++i) names.take(i % 2 == 0 ? "add" : fmt::format("m.{}", i), id(i), arena);
  TextArena copy_arena;
  NameTable copy(names, copy_arena);
  CHECK(copy.find("add") == id(0));
  CHECK(copy.find("add_49") == id(98));
  CHECK(copy.find("m_99") == id(99));
  NameTable::Taken next = copy.take("add", id(100), copy_arena);
  std::string name;
  copy.append_name(name, next.base, next.code);
  CHECK(name == "add_50");
  CHECK_FALSE(names.find("add_50").is_valid());
}

TEST_CASE("a chunked vector keeps element addresses while it grows and shrinks across chunks") {
  struct Big {
    std::uint64_t payload[20];  // no initialiser: only value-initialisation zeroes it
    std::string text;
  };
  ChunkedVector<Big> v;
  constexpr std::size_t n = 5 * ChunkedVector<Big>::chunk_size + 3;
  std::vector<const Big*> addresses;
  for (std::size_t i = 0; i < n; ++i) {
    Big& b = v.emplace_back();
    b.payload[0] = i;
    b.text = std::to_string(i);
    addresses.push_back(&b);
  }
  REQUIRE(v.size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(&v[i] == addresses[i]);
    CHECK(v[i].payload[0] == i);
  }
  CHECK(std::distance(v.begin(), v.end()) == static_cast<std::ptrdiff_t>(n));
  std::size_t sum = 0;
  for (const Big& b : std::as_const(v)) sum += b.payload[0];
  CHECK(sum == n * (n - 1) / 2);

  v.resize(ChunkedVector<Big>::chunk_size - 1);  // shrink below the first chunk boundary
  CHECK(v.size() == ChunkedVector<Big>::chunk_size - 1);
  CHECK(v.back().text == std::to_string(ChunkedVector<Big>::chunk_size - 2));
  v.resize(ChunkedVector<Big>::chunk_size + 1);  // regrow: new elements are value-initialised
  CHECK(v.back().payload[0] == 0);
  CHECK(v.back().text.empty());
  CHECK(&v[0] == addresses[0]);
  v.pop_back();
  CHECK(v.size() == ChunkedVector<Big>::chunk_size);
  v.clear();
  CHECK(v.empty());
  CHECK(v.begin() == v.end());
}

namespace {

template <std::size_t Bytes>
struct Sized {
  std::uint64_t value;
  char pad[Bytes - sizeof(std::uint64_t)];
};

/// Fills a ChunkedVector of `Sized<Bytes>` across the first chunk's pieces and several whole
/// chunks, and checks every element's value and address.
template <std::size_t Bytes>
void check_every_element_kept() {
  using V = ChunkedVector<Sized<Bytes>>;
  CAPTURE(V::chunk_size);
  V v;
  const std::size_t n = 4 * V::chunk_size + 5;
  std::vector<const Sized<Bytes>*> addresses;
  for (std::size_t i = 0; i < n; ++i) {
    Sized<Bytes>& e = v.emplace_back();
    e.value = i;
    addresses.push_back(&e);
  }
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(&v[i] == addresses[i]);
    REQUIRE(v[i].value == i);
  }
  std::size_t i = 0;
  for (const Sized<Bytes>& e : std::as_const(v)) CHECK(e.value == i++);
  CHECK(i == n);
  // Distinct elements never share storage: every address is unique.
  std::vector<const Sized<Bytes>*> sorted = addresses;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  v.clear();
  v.emplace_back().value = 7;  // usable again after clear
  CHECK(v[0].value == 7);
}

}  // namespace

TEST_CASE("a chunked vector keeps every element at every chunk size, pieces of the first chunk included") {
  check_every_element_kept<16>();    // 512 per chunk
  check_every_element_kept<136>();   // 32
  check_every_element_kept<512>();   // 16: pieces of 2, 2, 4, 8
  check_every_element_kept<1024>();  // 8: pieces of 1, 1, 2, 4
  check_every_element_kept<2048>();  // 4: no pieces
  check_every_element_kept<9000>();  // 1
}

TEST_CASE("chunks hold a power-of-two number of elements of about 8 KiB") {
  CHECK(ChunkedVector<char>::chunk_size == 8192);
  CHECK(ChunkedVector<std::uint64_t>::chunk_size == 1024);
  struct Odd {
    char bytes[136];
  };
  CHECK(ChunkedVector<Odd>::chunk_size == 32);  // 8192 / 136 = 60, rounded down to 32
  struct Huge {
    char bytes[10000];
  };
  CHECK(ChunkedVector<Huge>::chunk_size == 1);
}

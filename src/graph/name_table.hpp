#pragma once
// NameTable: the unique names of a graph's nodes, made unique in O(1) per node, and looked up
// by name in O(1). A name is a base plus an optional numeric suffix (`add`, `add_3`), stored
// as (base index, code) with code 0 for the bare base and n + 1 for `_n`. Each base keeps fx's
// counter (the last suffix handed out), so the next free name is found without a scan (torch
// 1.13 scanned every used name, which made naming quadratic). Bases are interned in a flat
// TextIndex. Names of erased nodes stay taken, as in fx; names taken after a checkpoint are
// released by rollback (Note [Rollback restores names]).

#include "chunked_vector.hpp"
#include "symtrace/graph/node_id.hpp"
#include "text_arena.hpp"
#include "text_index.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symtrace::detail {

class NameTable {
  static constexpr std::uint32_t none = TextIndex::none;

 public:
  /// What `take` did, so that rollback can undo it exactly.
  struct Taken {
    std::uint32_t base = 0;
    std::uint32_t code = 0;
    std::uint32_t old_count = 0;
    bool new_base = false;
    bool new_dense = false;
  };

  NameTable() = default;
  /// A copy whose texts live in `arena`.
  NameTable(const NameTable& other, TextArena& arena);
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;
  ~NameTable();

  /// A name asked for, read (sanitised, split, hashed) ahead of `take`. Preparing starts
  /// fetching the name's index slot, so a graph does other work for the new node while a
  /// large index comes in from memory. Not copyable: `base_` may point into `buffer_`.
  class Request {
   public:
    Request() = default;
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

   private:
    friend class NameTable;
    std::string_view candidate_;
    std::string_view base_;
    std::uint32_t code_ = 0;
    std::uint32_t hash_ = 0;
    std::uint32_t recent_ = none;                 // the base, when the recently-asked cache knew the candidate
    fmt::basic_memory_buffer<char, 128> buffer_;  // the sanitised name, when it differs
  };

  /// Reads `candidate` as fx's namespace does: characters other than [0-9a-zA-Z_] become `_`
  /// (runs collapse), an empty name becomes `_unnamed`, a leading digit gets a `_` prefix;
  /// `base_N` is read as base and suffix N. The table must not change between the prepare
  /// and the take.
  void prepare(std::string_view candidate, Request& request) const;
  /// Gives `id` a unique name from a prepared request: the name itself if it is free, else
  /// the next free suffix after its base's counter.
  Taken take(const Request& request, NodeId id, TextArena& arena);
  /// prepare + take.
  Taken take(std::string_view candidate, NodeId id, TextArena& arena);
  /// Undoes the most recent `take` still in effect (rollback calls these in reverse order).
  void release(const Taken& taken) noexcept;

  /// The node that holds `name` (a dead node's id if its node was erased), or an invalid id.
  [[nodiscard]] NodeId find(std::string_view name) const noexcept;
  /// The node that holds (base, code), or an invalid id.
  [[nodiscard]] NodeId holder(std::uint32_t base, std::uint32_t code) const noexcept;
  [[nodiscard]] std::string_view base_text(std::uint32_t base) const noexcept { return bases_[base].text; }
  /// Appends the name (base, code) to `out`.
  void append_name(std::string& out, std::uint32_t base, std::uint32_t code) const;

 private:
  struct Base {
    std::string_view text;
    std::uint32_t count = 0;     // fx's _base_count: the largest suffix handed out
    NodeId bare;                 // holder of the bare name
    std::uint32_t dense = none;  // index in dense_ of holders of base_0, base_1, ...
    std::uint32_t self = 0;      // this base's index in bases_
  };
  /// The index slot holding the base `text` (hashing to `hash`), or the empty slot where it would go.
  [[nodiscard]] std::size_t find_slot(std::string_view text, std::uint32_t hash) const noexcept {
    return index_.find_slot(text, hash, [this](std::uint32_t base) { return bases_[base].text; });
  }
  [[nodiscard]] std::uint32_t find_base(std::string_view text) const noexcept;
  [[nodiscard]] NodeId holder_of(const Base& b, std::uint32_t code) const noexcept;
  /// Records `id` as the holder of (b, code); returns whether a dense vector was created.
  bool set_holder(Base& b, std::uint32_t code, NodeId id);
  /// Removes base `base` from the index.
  void unindex(std::uint32_t base) noexcept;

  ChunkedVector<Base> bases_;  // stable: a Base's address outlives later names
  TextIndex index_;            // base texts -> their index in bases_
  std::vector<std::vector<NodeId>> dense_;
  std::unordered_map<std::uint64_t, NodeId> sparse_;  // suffixes far beyond a base's counter
  // Recently asked-for clean candidates without a suffix ("add", "linear"): a tracer asks for
  // the same few op names over and over, and a hit skips sanitising, parsing and hashing.
  struct Recent {
    std::string_view text;  // the base's own (stable) text
    std::uint32_t base = none;
  };
  std::array<Recent, 16> recent_{};
};

}  // namespace symtrace::detail

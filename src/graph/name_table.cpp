// NameTable: fx's naming rules (see name_table.hpp) with O(1) work per name.
#include "name_table.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <array>

namespace symtrace::detail {
namespace {

constexpr std::uint64_t max_suffix = 4'000'000'000ULL;

constexpr auto legal_chars = [] {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[static_cast<std::size_t>(c)] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[static_cast<std::size_t>(c)] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[static_cast<std::size_t>(c)] = true;
  table['_'] = true;
  return table;
}();

bool is_legal(char c) noexcept { return legal_chars[static_cast<unsigned char>(c)]; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// fx's sanitising: runs of illegal characters become one `_`; "" becomes `_unnamed`; a
/// leading digit gets a `_` prefix. Returns `text` itself when it is already clean, else the
/// sanitised name in `buffer`: on the stack for module paths, which are short (a heap string
/// per node would cost an allocation on the hot path).
using NameBuffer = fmt::basic_memory_buffer<char, 128>;  // as NameTable::Request's

std::string_view sanitize(std::string_view text, NameBuffer& buffer) {
  if (text.empty()) return "_unnamed";
  const char* p = text.data();
  const char* end = p + text.size();
  const bool leading_digit = is_digit(*p);
  if (!leading_digit) {
    while (p != end && is_legal(*p)) ++p;
    if (p == end) return text;
  }
  buffer.resize(text.size() + 1);  // at most a character per character, and a leading `_`
  char* const out = buffer.data();
  char* o = out;
  if (leading_digit) *o++ = '_';
  const auto clean = static_cast<std::size_t>(p - text.data());
  std::memcpy(o, text.data(), clean);
  o += clean;
  bool in_run = false;  // within a run of illegal characters (its `_` is written)
  for (; p != end; ++p) {
    if (is_legal(*p)) {
      *o++ = *p;
      in_run = false;
    } else if (!in_run) {
      *o++ = '_';
      in_run = true;
    }
  }
  return {out, static_cast<std::size_t>(o - out)};
}

struct Parsed {
  std::string_view base;
  std::uint32_t code = 0;  // 0: no suffix
};

/// Splits `base_N` into base and suffix, as fx's `(.*)_(\d+)$` does; N is read as a number, so
/// `add_01` is `add_1`. A suffix too large for the table (beyond 4,000,000,000) is part of the
/// base instead, and generated suffixes never reach it, so every name reads back as itself.
Parsed parse(std::string_view name) noexcept {
  std::size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos) return {name, 0};
  std::string_view digits = name.substr(underscore + 1);
  if (digits.empty() || digits.size() > 10 || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    return {name, 0};
  }
  std::uint64_t number = 0;
  for (char c : digits) number = number * 10 + static_cast<std::uint64_t>(c - '0');
  if (number >= max_suffix) return {name, 0};
  return {name.substr(0, underscore), static_cast<std::uint32_t>(number) + 1};
}

/// The slot of `candidate` in the recently-asked cache: its length and first, middle and last
/// characters, mixed by a Fibonacci multiply, so that the op names a tracer alternates between
/// (`linear`, `layer_norm`, `gelu`, `add`; `matmul`, `softmax`, `transpose`) rarely share one.
template <std::size_t Slots>
std::size_t recent_slot_of(std::string_view candidate) noexcept {
  static_assert(Slots == 16, "the top four bits of the mix pick the slot");
  if (candidate.empty()) return 0;
  auto at = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(candidate[i])); };
  auto key = static_cast<std::uint32_t>(candidate.size() & 0xffU) | at(0) << 8 | at(candidate.size() / 2) << 16 |
             at(candidate.size() - 1) << 24;
  return (key * 0x9e3779b1U) >> 28;
}

std::uint64_t sparse_key(std::uint32_t base, std::uint32_t code) noexcept {
  return (static_cast<std::uint64_t>(base) << 32) | code;
}

}  // namespace

NameTable::NameTable(const NameTable& other, TextArena& arena)
    : index_(other.index_), dense_(other.dense_), sparse_(other.sparse_) {
  for (const Base& b : other.bases_) {
    Base& copy = bases_.emplace_back(b);
    copy.text = arena.store(b.text);
  }
}

NameTable::~NameTable() = default;

std::uint32_t NameTable::find_base(std::string_view text) const noexcept {
  return index_.entry(find_slot(text, TextIndex::hash_of(text)));
}

void NameTable::unindex(std::uint32_t base) noexcept {
  index_.erase(find_slot(bases_[base].text, TextIndex::hash_of(bases_[base].text)));
}

NodeId NameTable::holder(std::uint32_t base, std::uint32_t code) const noexcept {
  if (base >= bases_.size()) return {};
  return holder_of(bases_[base], code);
}

NodeId NameTable::holder_of(const Base& b, std::uint32_t code) const noexcept {
  std::uint32_t base = b.self;
  if (code == 0) return b.bare;
  if (b.dense != none) {
    const std::vector<NodeId>& slots = dense_[b.dense];
    if (code - 1 < slots.size() && slots[code - 1].is_valid()) return slots[code - 1];
  }
  if (!sparse_.empty()) {
    auto it = sparse_.find(sparse_key(base, code));
    if (it != sparse_.end()) return it->second;
  }
  return {};
}

bool NameTable::set_holder(Base& b, std::uint32_t code, NodeId id) {
  std::uint32_t base = b.self;
  if (code == 0) {
    b.bare = id;
    return false;
  }
  std::size_t slot = code - 1;
  constexpr std::size_t max_gap = 1024;  // beyond this, a suffix goes to the sparse map
  bool created = false;
  if (b.dense == none && slot < max_gap) {
    dense_.emplace_back();
    b.dense = static_cast<std::uint32_t>(dense_.size() - 1);
    created = true;
  }
  try {
    if (b.dense != none) {
      std::vector<NodeId>& slots = dense_[b.dense];
      if (slot == slots.size()) {
        slots.push_back(id);  // the usual case: the next suffix
        return created;
      }
      if (slot < slots.size() + max_gap) {
        if (slot > slots.size()) slots.resize(slot + 1);
        slots[slot] = id;
        return created;
      }
    }
    sparse_[sparse_key(base, code)] = id;
  } catch (...) {
    if (created) {  // strong guarantee: no holder vector without a holder
      dense_.pop_back();
      b.dense = none;
    }
    throw;
  }
  return created;
}

void NameTable::prepare(std::string_view candidate, Request& request) const {
  request.candidate_ = candidate;
  const Recent& recent = recent_[recent_slot_of<std::tuple_size_v<decltype(recent_)>>(candidate)];
  if (recent.base != none && recent.text == candidate) {
    request.recent_ = recent.base;
    request.base_ = candidate;
    request.code_ = 0;
    return;
  }
  request.recent_ = none;
  Parsed parsed = parse(sanitize(candidate, request.buffer_));
  request.base_ = parsed.base;
  request.code_ = parsed.code;
  request.hash_ = TextIndex::hash_of(parsed.base);
  index_.prefetch(request.hash_);
}

NameTable::Taken NameTable::take(std::string_view candidate, NodeId id, TextArena& arena) {
  Request request;
  prepare(candidate, request);
  return take(request, id, arena);
}

NameTable::Taken NameTable::take(const Request& request, NodeId id, TextArena& arena) {
  Taken taken;
  Base* b = nullptr;
  Parsed parsed{request.base_, request.code_};
  if (request.recent_ != none) {
    b = &bases_[request.recent_];
  } else {
    // One hash per name: the lookup's result doubles as the insertion point of a new base.
    std::uint32_t hash = request.hash_;
    std::size_t at = find_slot(parsed.base, hash);
    if (index_.entry(at) == none) {
      // Room in the index first: growing may throw, and then nothing has changed yet.
      if (index_.reserve_for(bases_.size() + 1)) at = find_slot(parsed.base, hash);
      std::string_view text = arena.store(parsed.base);
      taken.base = static_cast<std::uint32_t>(bases_.size());
      b = &bases_.emplace_back();
      b->text = text;
      b->self = taken.base;
      index_.set(at, hash, taken.base);
      taken.new_base = true;
    } else {
      b = &bases_[index_.entry(at)];
    }
    // Remember clean, suffix-free candidates that are already shared by several nodes.
    if (!taken.new_base && parsed.code == 0 && parsed.base.data() == request.candidate_.data()) {
      recent_[recent_slot_of<std::tuple_size_v<decltype(recent_)>>(request.candidate_)] = Recent{b->text, b->self};
    }
  }
  taken.base = b->self;
  taken.old_count = b->count;
  try {
    std::uint32_t code = parsed.code;
    if (holder_of(*b, code).is_valid()) {
      // Count up from the base's counter (or from a larger requested suffix): names below the
      // counter are taken or were skipped, so this finds a free one without scanning them.
      std::uint32_t n = std::max(parsed.code > 1 ? parsed.code - 1 : 0U, b->count);
      do {
        if (n + 1 >= max_suffix) throw std::length_error("graph: name suffixes exhausted for this base");
        ++n;
      } while (holder_of(*b, n + 1).is_valid());
      code = n + 1;
    }
    taken.code = code;
    taken.new_dense = set_holder(*b, code, id);  // strong guarantee
    if (code > 0) b->count = std::max(b->count, code - 1);
  } catch (...) {
    // Nothing half-made survives: a base added for this name goes again.
    if (taken.new_base) {
      unindex(taken.base);
      bases_.pop_back();
    }
    throw;
  }
  return taken;
}

void NameTable::release(const Taken& taken) noexcept {
  Base& b = bases_[taken.base];
  if (taken.code == 0) {
    b.bare = NodeId();
  } else {
    if (b.dense != none && taken.code - 1 < dense_[b.dense].size()) dense_[b.dense][taken.code - 1] = NodeId();
    if (!sparse_.empty()) sparse_.erase(sparse_key(taken.base, taken.code));
  }
  if (taken.new_dense) {
    dense_.pop_back();
    b.dense = none;
  }
  b.count = taken.old_count;
  if (taken.new_base) {
    recent_.fill(Recent{});  // a remembered base may be the one going away
    unindex(taken.base);
    bases_.pop_back();
  }
}

NodeId NameTable::find(std::string_view name) const noexcept {
  Parsed parsed = parse(name);
  std::uint32_t base = find_base(parsed.base);
  if (base == none) return {};
  return holder(base, parsed.code);
}

void NameTable::append_name(std::string& out, std::uint32_t base, std::uint32_t code) const {
  out += bases_[base].text;
  if (code != 0) {
    out += '_';
    out += fmt::format_int(code - 1).str();
  }
}

}  // namespace symtrace::detail

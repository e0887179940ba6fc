// NameTable: fx's naming rules (see name_table.hpp) with O(1) work per name.
#include "name_table.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <array>

namespace symtrace::detail {
namespace {

constexpr std::size_t initial_buckets = 16;
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
/// leading digit gets a `_` prefix. Returns `text` itself when it is already clean.
/// Room for the sanitised name on the stack: module paths are short, and a heap string per
/// node would cost an allocation on the hot path.
using NameBuffer = fmt::basic_memory_buffer<char, 128>;

std::string_view sanitize(std::string_view text, NameBuffer& buffer) {
  if (!text.empty() && !is_digit(text.front())) {
    const char* p = text.data();
    const char* end = p + text.size();
    while (p != end && is_legal(*p)) ++p;
    if (p == end) return text;
  }
  buffer.clear();
  bool in_run = false;
  for (char c : text) {
    if (is_legal(c)) {
      buffer.push_back(c);
      in_run = false;
    } else if (!in_run) {
      buffer.push_back('_');
      in_run = true;
    }
  }
  if (buffer.size() == 0) {
    constexpr std::string_view unnamed = "_unnamed";
    buffer.append(unnamed.data(), unnamed.data() + unnamed.size());
  }
  if (is_digit(buffer[0])) {
    std::string prefixed = "_" + std::string(buffer.data(), buffer.size());
    buffer.clear();
    buffer.append(prefixed.data(), prefixed.data() + prefixed.size());
  }
  return {buffer.data(), buffer.size()};
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

std::uint64_t sparse_key(std::uint32_t base, std::uint32_t code) noexcept {
  return (static_cast<std::uint64_t>(base) << 32) | code;
}

}  // namespace

NameTable::NameTable()
    : buckets_(initial_buckets), index_(Index::bucket_traits(buckets_.data(), buckets_.size())) {}

NameTable::NameTable(const NameTable& other, TextArena& arena)
    : buckets_(std::max(initial_buckets, other.buckets_.size())),
      index_(Index::bucket_traits(buckets_.data(), buckets_.size())),
      dense_(other.dense_),
      sparse_(other.sparse_) {
  for (const Base& b : other.bases_) {
    Base& copy = bases_.emplace_back();
    copy.text = arena.store(b.text);
    copy.count = b.count;
    copy.bare = b.bare;
    copy.dense = b.dense;
    copy.self = b.self;
    index_.insert(copy);
  }
}

NameTable::~NameTable() { index_.clear(); }

std::uint32_t NameTable::find_base(std::string_view text) const noexcept {
  auto it = index_.find(text, BaseHash{}, BaseEqual{});
  return it == index_.end() ? none : it->self;
}

void NameTable::grow_index() {
  std::vector<Index::bucket_type> bigger(buckets_.size() * 2);
  index_.rehash(Index::bucket_traits(bigger.data(), bigger.size()));
  buckets_.swap(bigger);
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
    b.dense = static_cast<std::uint32_t>(dense_.size());
    dense_.emplace_back();
    created = true;
  }
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
  return created;
}

NameTable::Taken NameTable::take(std::string_view candidate, NodeId id, TextArena& arena) {
  Taken taken;
  Base* b = nullptr;
  Parsed parsed{candidate, 0};
  Recent& slot = recent_[(candidate.size() + static_cast<unsigned char>(candidate.empty() ? 0 : candidate.back())) %
                         recent_.size()];
  if (slot.base != none && slot.text == candidate) {
    b = &bases_[slot.base];
  } else {
    NameBuffer buffer;
    parsed = parse(sanitize(candidate, buffer));
    // One hash per name: the lookup's result doubles as the insertion point of a new base.
    Index::insert_commit_data commit;
    auto [it, absent] = index_.insert_check(parsed.base, BaseHash{}, BaseEqual{}, commit);
    if (absent) {
      taken.base = static_cast<std::uint32_t>(bases_.size());
      b = &bases_.emplace_back();
      b->text = arena.store(parsed.base);
      b->self = taken.base;
      index_.insert_commit(*b, commit);
      taken.new_base = true;
      if (index_.size() > buckets_.size()) grow_index();
    } else {
      b = &*it;
    }
    // Remember clean, suffix-free candidates that are already shared by several nodes.
    if (!taken.new_base && parsed.code == 0 && parsed.base.data() == candidate.data()) {
      slot = Recent{b->text, b->self};
    }
  }
  taken.base = b->self;
  taken.old_count = b->count;
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
  if (code > 0) b->count = std::max(b->count, code - 1);
  taken.code = code;
  taken.new_dense = set_holder(*b, code, id);
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
    index_.erase(index_.iterator_to(b));
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

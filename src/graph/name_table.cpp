// NameTable: fx's naming rules (see name_table.hpp) with O(1) work per name.
#include "name_table.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace symtrace::detail {
namespace {

constexpr std::size_t initial_buckets = 16;

bool is_legal(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// fx's sanitising: runs of illegal characters become one `_`; "" becomes `_unnamed`; a
/// leading digit gets a `_` prefix. Returns `text` itself when it is already clean.
std::string_view sanitize(std::string_view text, std::string& buffer) {
  bool clean = !text.empty() && !is_digit(text.front()) && std::all_of(text.begin(), text.end(), is_legal);
  if (clean) return text;
  buffer.clear();
  bool in_run = false;
  for (char c : text) {
    if (is_legal(c)) {
      buffer += c;
      in_run = false;
    } else if (!in_run) {
      buffer += '_';
      in_run = true;
    }
  }
  if (buffer.empty()) buffer = "_unnamed";
  if (is_digit(buffer.front())) buffer.insert(buffer.begin(), '_');
  return buffer;
}

struct Parsed {
  std::string_view base;
  std::uint32_t code = 0;  // 0: no suffix
};

/// Splits `base_N` (1 to 9 digits after the last underscore) into base and suffix, as fx's
/// `(.*)_(\d+)$` does; N is read as a number, so `add_01` is `add_1`.
Parsed parse(std::string_view name) noexcept {
  std::size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos) return {name, 0};
  std::string_view digits = name.substr(underscore + 1);
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    return {name, 0};
  }
  std::uint32_t number = 0;
  for (char c : digits) number = number * 10 + static_cast<std::uint32_t>(c - '0');
  return {name.substr(0, underscore), number + 1};
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

std::uint32_t NameTable::add_base(std::string_view text, TextArena& arena) {
  if (index_.size() >= buckets_.size()) grow_index();
  auto index = static_cast<std::uint32_t>(bases_.size());
  Base& b = bases_.emplace_back();
  b.text = arena.store(text);
  b.self = index;
  index_.insert(b);
  return index;
}

void NameTable::grow_index() {
  std::vector<Index::bucket_type> bigger(buckets_.size() * 2);
  index_.rehash(Index::bucket_traits(bigger.data(), bigger.size()));
  buckets_.swap(bigger);
}

NodeId NameTable::holder(std::uint32_t base, std::uint32_t code) const noexcept {
  if (base >= bases_.size()) return {};
  const Base& b = bases_[base];
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

bool NameTable::is_free(std::uint32_t base, std::uint32_t code) const noexcept {
  return !holder(base, code).is_valid();
}

bool NameTable::set_holder(std::uint32_t base, std::uint32_t code, NodeId id) {
  Base& b = bases_[base];
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
    if (slot < slots.size() + max_gap) {
      if (slot >= slots.size()) slots.resize(slot + 1);
      slots[slot] = id;
      return created;
    }
  }
  sparse_[sparse_key(base, code)] = id;
  return created;
}

NameTable::Taken NameTable::take(std::string_view candidate, NodeId id, TextArena& arena) {
  std::string buffer;
  Parsed parsed = parse(sanitize(candidate, buffer));
  Taken taken;
  taken.base = find_base(parsed.base);
  if (taken.base == none) {
    taken.base = add_base(parsed.base, arena);
    taken.new_base = true;
  }
  Base& b = bases_[taken.base];
  taken.old_count = b.count;
  std::uint32_t code = parsed.code;
  if (!is_free(taken.base, code)) {
    // fx: start from the requested suffix, or from the base's counter, and count up.
    std::uint32_t n = parsed.code > 1 ? parsed.code - 1 : b.count;
    do {
      SYMTRACE_ASSERT(n < 0xfffffff0U, "name suffixes exhausted");
      ++n;
    } while (!is_free(taken.base, n + 1));
    code = n + 1;
  }
  if (code > 0) b.count = std::max(b.count, code - 1);
  taken.code = code;
  taken.new_dense = set_holder(taken.base, code, id);
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

#pragma once
// TextIndex: a flat open-addressing index from texts to the numbers of entries that hold them
// elsewhere (a name table's bases, a scope table's scopes). A slot is a 32-bit hash and an
// entry number; probing is linear, the size a power of two, at most half full. Looking up a
// text that is not there, the common case for module paths, touches one cache line; growing
// never rehashes a text, and inserting allocates nothing but the occasional doubling. An index
// that never held an entry has no slots: a small graph allocates nothing for it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace symtrace::detail {

class TextIndex {
 public:
  static constexpr std::uint32_t none = 0xffffffffU;

  /// A hash of `text` whose low bits depend on every byte: eight bytes at a time, each word
  /// mixed in with a multiply (by SplitMix64's constants) and a shift folding the high bits
  /// down; no call (texts here are short).
  [[nodiscard]] static std::uint32_t hash_of(std::string_view text) noexcept {
    auto mix = [](std::uint64_t h, std::uint64_t word) noexcept {
      h = (h ^ word) * 0xbf58476d1ce4e5b9ULL;
      return h ^ (h >> 31);
    };
    const char* p = text.data();
    std::size_t n = text.size();
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (; n >= 8; p += 8, n -= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      h = mix(h, word);
    }
    if (n != 0) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < n; ++i) word |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
      h = mix(h, word);
    }
    h = (h ^ (h >> 32)) * 0x94d049bb133111ebULL;
    return static_cast<std::uint32_t>(h ^ (h >> 29));
  }

  /// The slot holding `text` (hashing to `hash`), or the empty slot where it would go;
  /// `text_of(entry)` is the text of an entry.
  template <typename TextOf>
  [[nodiscard]] std::size_t find_slot(std::string_view text, std::uint32_t hash, const TextOf& text_of) const noexcept {
    if (slots_.empty()) return 0;
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = hash & mask;
    while (slots_[i].entry != none && (slots_[i].hash != hash || text_of(slots_[i].entry) != text)) i = (i + 1) & mask;
    return i;
  }
  /// The slot holding the entry that hashes to `hash` and satisfies `is(entry)`, or the empty
  /// slot where it would go.
  template <typename Is>
  [[nodiscard]] std::size_t find_slot_if(std::uint32_t hash, const Is& is) const noexcept {
    if (slots_.empty()) return 0;
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = hash & mask;
    while (slots_[i].entry != none && (slots_[i].hash != hash || !is(slots_[i].entry))) i = (i + 1) & mask;
    return i;
  }
  /// The entry in `slot` (none when empty).
  [[nodiscard]] std::uint32_t entry(std::size_t slot) const noexcept {
    return slots_.empty() ? none : slots_[slot].entry;
  }
  /// Starts fetching the home slot of `hash`.
  void prefetch(std::uint32_t hash) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }

  /// Makes room for an index of `entries` entries (at most half full); true when the slots
  /// moved (a slot found before is then stale). May throw std::bad_alloc, and then nothing has
  /// changed.
  bool reserve_for(std::size_t entries) {
    if (2 * entries <= slots_.size()) return false;
    std::size_t size = std::max(initial_slots, slots_.size() * 2);
    while (size < 2 * entries) size *= 2;
    std::vector<Slot> bigger(size);
    const std::size_t mask = bigger.size() - 1;
    for (const Slot& s : slots_) {
      if (s.entry == none) continue;
      std::size_t i = s.hash & mask;
      while (bigger[i].entry != none) i = (i + 1) & mask;
      bigger[i] = s;
    }
    slots_.swap(bigger);
    return true;
  }
  /// Fills the empty `slot` (as found by find_slot, after reserve_for).
  void set(std::size_t slot, std::uint32_t hash, std::uint32_t entry) noexcept { slots_[slot] = Slot{hash, entry}; }

  /// Empties `slot` by backward-shift deletion (no tombstones).
  void erase(std::size_t slot) noexcept {
    const std::size_t mask = slots_.size() - 1;
    std::size_t hole = slot;
    // Shift later members of the probe run back into the hole unless their home slot lies
    // cyclically in (hole, j]: then they must stay where a lookup starting at home finds them.
    for (std::size_t j = (hole + 1) & mask; slots_[j].entry != none; j = (j + 1) & mask) {
      const std::size_t home = slots_[j].hash & mask;
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
  }

 private:
  static constexpr std::size_t initial_slots = 32;
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t entry = none;
  };
  std::vector<Slot> slots_;
};

}  // namespace symtrace::detail

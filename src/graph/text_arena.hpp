#pragma once
// TextArena: append-only storage for the texts of node targets and name bases. Texts keep
// their address for the arena's lifetime, so nodes hold plain pointers into it; a mark taken
// at a checkpoint lets rollback give back everything stored since, in O(blocks released).

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace symtrace::detail {

class TextArena {
 public:
  struct Mark {
    std::size_t blocks = 0;
    std::size_t used = 0;
  };

  /// A stable copy of `text` (an empty text needs no storage).
  std::string_view store(std::string_view text) {
    if (text.empty()) return {};
    if (blocks_.empty() || blocks_.back().capacity - used_ < text.size()) {
      // Blocks grow from 256 bytes to 4 KiB: a graph of a few nodes keeps a few names.
      const std::size_t size = blocks_.size() >= 4 ? block_size : block_size >> (4 - blocks_.size());
      std::size_t capacity = std::max(size, text.size());
      blocks_.push_back(Block{std::make_unique_for_overwrite<char[]>(capacity), capacity});
      used_ = 0;
    }
    char* data = blocks_.back().data.get() + used_;
    std::memcpy(data, text.data(), text.size());
    used_ += text.size();
    return {data, text.size()};
  }

  [[nodiscard]] Mark mark() const noexcept { return {blocks_.size(), used_}; }

  /// Forgets everything stored after `mark` (texts stored since must no longer be referenced).
  void release(Mark mark) noexcept {
    while (blocks_.size() > mark.blocks) blocks_.pop_back();
    used_ = mark.used;
  }

 private:
  static constexpr std::size_t block_size = 4096;
  struct Block {
    std::unique_ptr<char[]> data;
    std::size_t capacity;
  };
  std::vector<Block> blocks_;
  std::size_t used_ = 0;
};

}  // namespace symtrace::detail

#pragma once
/// \file
/// `detail::ChunkedVector`: the node slots behind `Graph` (see graph_impl.hpp). A sequence in
/// fixed chunks of a power-of-two number of elements: indexing is a shift and a mask, growth
/// allocates one chunk per many elements and never moves an element, so references to
/// elements stay valid until the element itself is removed. The first chunk's worth comes in
/// four growing pieces (1/8, 1/8, 1/4, 1/2 of a chunk), so that a graph of a few nodes (a
/// recursive trace makes one per child of a failed module) does not take a whole chunk. Only the end changes size
/// (`push_back`, `resize`, `pop_back`), as a graph's node slots do. Iterators stay valid
/// until the chunk table grows (as std::deque's do on push_back).

#include <boost/iterator/iterator_facade.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace symtrace::detail {

template <class T>
class ChunkedVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;

  /// Elements per chunk: a power of two, chunks of about 8 KiB.
  static constexpr std::size_t chunk_size = std::bit_floor(std::max<std::size_t>(1, 8192 / sizeof(T)));

  template <class V>
  class Iterator : public boost::iterator_facade<Iterator<V>, V, boost::random_access_traversal_tag> {
   public:
    Iterator() = default;
    Iterator(V* const* chunks, std::size_t index) : chunks_(chunks), index_(index) {}
    template <class W>
    requires std::is_convertible_v<W*, V*>
    Iterator(const Iterator<W>& other) : chunks_(other.chunks_), index_(other.index_) {}  // NOLINT: to const

   private:
    friend class boost::iterator_core_access;
    template <class>
    friend class Iterator;
    V& dereference() const { return *ChunkedVector::locate(chunks_, index_); }
    template <class W>
    bool equal(const Iterator<W>& other) const noexcept { return index_ == other.index_; }
    void increment() noexcept { ++index_; }
    void decrement() noexcept { --index_; }
    void advance(std::ptrdiff_t n) noexcept { index_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(index_) + n); }
    template <class W>
    std::ptrdiff_t distance_to(const Iterator<W>& other) const noexcept {
      return static_cast<std::ptrdiff_t>(other.index_) - static_cast<std::ptrdiff_t>(index_);
    }
    V* const* chunks_ = nullptr;
    std::size_t index_ = 0;
  };
  using iterator = Iterator<T>;
  using const_iterator = Iterator<const T>;

  ChunkedVector() = default;
  explicit ChunkedVector(std::size_t n) { resize(n); }
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;
  ChunkedVector(ChunkedVector&& other) noexcept
      : chunks_(std::move(other.chunks_)), size_(std::exchange(other.size_, 0)), capacity_(std::exchange(other.capacity_, 0)) {}
  ChunkedVector& operator=(ChunkedVector&& other) noexcept {
    if (this != &other) {
      clear();
      chunks_ = std::move(other.chunks_);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  ~ChunkedVector() { clear(); }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return *locate(chunks_.data(), i); }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return *locate(chunks_.data(), i); }
  [[nodiscard]] T& back() noexcept { return (*this)[size_ - 1]; }

  iterator begin() noexcept { return {chunks_.data(), 0}; }
  iterator end() noexcept { return {chunks_.data(), size_}; }
  const_iterator begin() const noexcept { return {chunks_.data(), 0}; }
  const_iterator end() const noexcept { return {chunks_.data(), size_}; }

  /// Appends an element made from `args`. Strong guarantee: on an exception nothing changed.
  template <class... A>
  T& emplace_back(A&&... args) {
    T* at = room();
    ::new (static_cast<void*>(at)) T(std::forward<A>(args)...);
    ++size_;
    return *at;
  }
  void push_back(const T& value) { emplace_back(value); }
  void push_back(T&& value) { emplace_back(std::move(value)); }

  void pop_back() noexcept {
    --size_;
    std::destroy_at(&(*this)[size_]);
  }

  /// Grows with value-initialised elements or shrinks from the end.
  void resize(std::size_t n) {
    while (size_ > n) pop_back();
    while (size_ < n) emplace_back();
  }

  /// Destroys every element and frees every chunk.
  void clear() noexcept {
    while (size_ > 0) pop_back();
    for (std::size_t k = 0; k < chunks_.size(); ++k) std::allocator<T>().deallocate(chunks_[k], piece_size(k));
    chunks_.clear();
    capacity_ = 0;
  }

 private:
  static constexpr bool pieces = chunk_size >= 8;  // the first chunk in four pieces
  static constexpr std::size_t first_pieces = pieces ? 4 : 1;
  static constexpr int log2_chunk = std::countr_zero(chunk_size);

  /// The number of elements of the k-th allocation.
  [[nodiscard]] static constexpr std::size_t piece_size(std::size_t k) noexcept {
    if constexpr (pieces) {
      if (k < first_pieces) return k <= 1 ? chunk_size / 8 : chunk_size >> (4 - k);  // 1/8 1/8 1/4 1/2
    }
    return chunk_size;
  }

  /// Element `i` in the allocations `chunks`.
  template <class P>
  [[nodiscard]] static P* locate(P* const* chunks, std::size_t i) noexcept {
    if (i >= chunk_size || !pieces) [[likely]] {
      return chunks[i / chunk_size + (first_pieces - 1)] + i % chunk_size;
    }
    if (i < chunk_size / 8) return chunks[0] + i;
    const int width = std::bit_width(i);  // piece 1 holds [c/8, c/4), piece 2 [c/4, c/2), piece 3 [c/2, c)
    return chunks[width - log2_chunk + 3] + (i - (std::size_t{1} << (width - 1)));
  }

  /// The address of the next element, allocating its chunk when needed.
  T* room() {
    if (size_ == capacity_) {
      // Room for the pointer first (geometric growth), so that a new chunk is never lost.
      if (chunks_.size() == chunks_.capacity()) chunks_.reserve(std::max<std::size_t>(8, 2 * chunks_.capacity()));
      const std::size_t n = piece_size(chunks_.size());
      chunks_.push_back(std::allocator<T>().allocate(n));
      capacity_ += n;
    }
    return locate(chunks_.data(), size_);
  }

  std::vector<T*> chunks_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace symtrace::detail

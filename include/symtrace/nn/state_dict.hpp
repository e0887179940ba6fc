#pragma once
/// \file
/// `StateDict`: an ordered map from qualified names ("layer1.0.conv1.weight") to tensors, what
/// `Module::state_dict()` returns and `load_state_dict()` and the safetensors reader and
/// writer exchange. Insertion order is kept (it is the model's registration order); lookup by
/// key is O(1).

#include "symtrace/core/tensor.hpp"

#include <cstddef>
#include <functional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace {

namespace detail {
/// A string hash that also takes string_view keys (heterogeneous lookup).
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
}  // namespace detail

/// An ordered name → tensor map; see the file comment.
class StateDict {
 public:
  using Entry = std::pair<std::string, Tensor>;
  using const_iterator = std::vector<Entry>::const_iterator;

  StateDict() = default;

  /// Adds `key`; throws std::invalid_argument when it is already present or the tensor is
  /// undefined.
  void insert(std::string key, Tensor tensor,
              std::source_location where = std::source_location::current());
  /// The tensor under `key`, or nullptr.
  [[nodiscard]] const Tensor* find(std::string_view key) const noexcept;
  /// The tensor under `key`; throws std::invalid_argument naming the key.
  [[nodiscard]] const Tensor& at(std::string_view key,
                                 std::source_location where = std::source_location::current()) const;
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  [[nodiscard]] const_iterator begin() const noexcept { return entries_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return entries_.end(); }
  [[nodiscard]] const std::vector<Entry>& entries() const noexcept { return entries_; }
  /// The keys in order.
  [[nodiscard]] std::vector<std::string> keys() const;

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t, detail::StringHash, std::equal_to<>> index_;
};

}  // namespace symtrace

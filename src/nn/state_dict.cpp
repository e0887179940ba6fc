#include "symtrace/nn/state_dict.hpp"

#include "symtrace/core/error.hpp"

namespace symtrace {

void StateDict::insert(std::string key, Tensor tensor, std::source_location where) {
  if (!tensor.defined()) throw_invalid_argument(where, "StateDict::insert('{}'): the tensor is undefined", key);
  if (index_.contains(key)) throw_invalid_argument(where, "StateDict::insert('{}'): the key is already present", key);
  entries_.emplace_back(key, std::move(tensor));
  try {
    index_.emplace(std::move(key), entries_.size() - 1);
  } catch (...) {
    entries_.pop_back();
    throw;
  }
}

const Tensor* StateDict::find(std::string_view key) const noexcept {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Tensor& StateDict::at(std::string_view key, std::source_location where) const {
  if (const Tensor* t = find(key)) return *t;
  throw_invalid_argument(where, "StateDict::at('{}'): no such key ({} keys)", key, entries_.size());
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [key, tensor] : entries_) out.push_back(key);
  return out;
}

}  // namespace symtrace

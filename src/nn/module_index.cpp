// ModuleIndex: one preorder walk that both lists the modules and marks them seen, in a flat
// pointer hash that is also the lookup table afterwards (no node allocation per module).
#include "symtrace/nn/module_index.hpp"

#include "symtrace/nn/detail/join_path.hpp"

#include <utility>

namespace symtrace {

std::size_t ModuleIndex::slot_of(const Module* module) const noexcept {
  // Fibonacci hashing of the address: modules are heap objects, so the low bits say little.
  const auto key = reinterpret_cast<std::uintptr_t>(module);
  std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  const std::size_t mask = slots_.size() - 1;
  while (slots_[i].module != nullptr && slots_[i].module != module) i = (i + 1) & mask;
  return i;
}

ModuleIndex::ModuleIndex(const Module& root, const std::string& prefix) : root_(&root) {
  slots_.resize(16);
  shift_ = 64 - 4;
  // Depth first, children in registration order: an explicit stack of (parent, name, module).
  // A module is marked when visited, not when pushed, so a shared module gets the path of its
  // first visit in preorder (["", "a", "a.s"] when the root holds a -> s and s). A module is
  // kept as its parent's position and its name, so that a chain of n modules costs O(n), not
  // the O(n^2) characters of its paths.
  struct Pending {
    std::uint32_t parent;  // none for the root
    std::string_view name;
    Module* module;
  };
  std::vector<Pending> stack{{none, prefix, const_cast<Module*>(&root)}};
  while (!stack.empty()) {
    const Pending current = stack.back();
    stack.pop_back();
    Slot& slot = slots_[slot_of(current.module)];
    if (slot.module != nullptr) continue;  // seen at an earlier path
    const auto index = static_cast<std::uint32_t>(entries_.size());
    slot = Slot{current.module, index};
    if (2 * (entries_.size() + 1) > slots_.size()) grow();
    const std::uint32_t depth = current.parent == none ? 0 : entries_[current.parent].depth + 1;
    entries_.push_back(Entry{current.module, current.parent, depth, names_.size(), current.name.size()});
    names_ += current.name;
    const auto& kids = current.module->named_children();
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
      if (slots_[slot_of(it->second.get())].module == nullptr) stack.push_back({index, it->first, it->second.get()});
    }
  }
}

std::string ModuleIndex::path(std::size_t i) const {
  std::size_t size = 0;
  for (std::size_t k = i;; k = entries_[k].parent) {
    size += entries_[k].name_size + (size == 0 || entries_[k].name_size == 0 ? 0 : 1);
    if (entries_[k].parent == none) break;
  }
  // Written from the end: the module's name last, its ancestors' before it.
  std::string out(size, '.');
  std::size_t end = size;
  for (std::size_t k = i;; k = entries_[k].parent) {
    const std::string_view n = name(k);
    end -= n.size();
    n.copy(out.data() + end, n.size());
    if (end != 0) --end;  // the dot before it
    if (entries_[k].parent == none) break;
  }
  return out;
}

std::vector<NamedModule> ModuleIndex::named_modules() const {
  std::vector<NamedModule> out;
  out.reserve(size());
  for (std::size_t i = 0; i < size(); ++i) {
    const Entry& e = entries_[i];
    out.push_back({e.parent == none ? std::string(name(i)) : detail::join_path(out[e.parent].path, name(i)), e.module});
  }
  return out;
}

void ModuleIndex::grow() {
  std::vector<Slot> old(2 * slots_.size());
  old.swap(slots_);
  --shift_;
  for (const Slot& s : old) {
    if (s.module != nullptr) slots_[slot_of(s.module)] = s;
  }
}

std::size_t ModuleIndex::find(const Module& module) const noexcept {
  if (slots_.empty()) return npos;
  const Slot& slot = slots_[slot_of(&module)];
  return slot.module == nullptr ? npos : slot.index;
}

}  // namespace symtrace

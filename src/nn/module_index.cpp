// ModuleIndex: one preorder walk that both lists the modules and marks them seen, in a flat
// pointer hash that is also the lookup table afterwards (no node allocation per module).
#include "symtrace/nn/module_index.hpp"

#include "nn/join_path.hpp"

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
  // Depth first, children in registration order: an explicit stack of (module, path). A
  // module is marked when visited, not when pushed, so a shared module gets the path of its
  // first visit in preorder (["", "a", "a.s"] when the root holds a -> s and s).
  // A module's path is joined when it is visited, from its parent's (which is listed by then),
  // so that a child met at a path it is not listed at costs no copy of that path.
  struct Pending {
    std::size_t parent;  // npos for the root
    std::string_view name;
    Module* module;
  };
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<Pending> stack{{none, {}, const_cast<Module*>(&root)}};
  while (!stack.empty()) {
    const Pending current = stack.back();
    stack.pop_back();
    Slot& slot = slots_[slot_of(current.module)];
    if (slot.module != nullptr) continue;  // seen at an earlier path
    slot = Slot{current.module, static_cast<std::uint32_t>(modules_.size())};
    if (2 * (modules_.size() + 1) > slots_.size()) grow();
    const std::size_t index = modules_.size();
    if (current.parent == none) {
      modules_.push_back({prefix, current.module});
      depths_.push_back(0);
    } else {
      modules_.push_back({detail::join_path(modules_[current.parent].path, current.name), current.module});
      depths_.push_back(depths_[current.parent] + 1);
    }
    const auto& kids = current.module->named_children();
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
      if (slots_[slot_of(it->second.get())].module == nullptr) stack.push_back({index, it->first, it->second.get()});
    }
  }
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

std::vector<NamedModule> ModuleIndex::release() && noexcept {
  slots_.clear();
  return std::move(modules_);
}

}  // namespace symtrace

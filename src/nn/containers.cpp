// Sequential, ModuleList and ModuleDict.

#include "symtrace/nn/module_list.hpp"
#include "symtrace/nn/sequential.hpp"

#include "symtrace/core/error.hpp"
#include "nn/type_name.hpp"

#include <fmt/format.h>

#include <string>

namespace symtrace {

void detail::throw_wrong_module_type(const Module& module, const std::type_info& wanted, std::source_location where) {
  throw_invalid_argument(where, "the module is a {}, not a {}", module.type_name(), pretty_type_name(wanted));
}

namespace nn {

const std::shared_ptr<Module>& detail::child_at(const Module& m, std::size_t index, std::source_location where) {
  const auto& kids = m.named_children();
  if (index >= kids.size())
    throw_invalid_argument(where, "index {} is out of range for {} of size {}", index, m.type_name(), kids.size());
  return kids[index].second;
}

// ---- Sequential ------------------------------------------------------------------------------

SequentialImpl::SequentialImpl(std::vector<std::shared_ptr<Module>> modules, std::source_location where) {
  for (auto& m : modules) push_back(std::move(m), where);
}

void SequentialImpl::push_back(std::shared_ptr<Module> module, std::source_location where) {
  register_module(std::to_string(size()), std::move(module), where);
}

void SequentialImpl::push_back(std::string name, std::shared_ptr<Module> module, std::source_location where) {
  register_module(std::move(name), std::move(module), where);
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& [name, child] : named_children()) {
    Value out = child->call(ValueList{Value(std::move(x))});
    if (!out.is_tensor())
      throw std::invalid_argument(fmt::format(
          "Sequential: child '{}' ({}) returned {}, but a Sequential passes a single tensor from child to child",
          name, child->type_name(), out.type_name()));
    x = out.to_tensor();
  }
  return x;
}

// ---- ModuleList ------------------------------------------------------------------------------

void ModuleListImpl::push_back(std::shared_ptr<Module> module, std::source_location where) {
  register_module(std::to_string(size()), std::move(module), where);
}

// ---- ModuleDict ------------------------------------------------------------------------------

ModuleDictImpl::ModuleDictImpl(std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules,
                               std::source_location where)
    : Module(nullptr) {
  for (auto& [key, m] : modules) insert(std::move(key), std::move(m), where);
}

void ModuleDictImpl::insert(std::string key, std::shared_ptr<Module> module, std::source_location where) {
  register_module(std::move(key), std::move(module), where);
}

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  out.reserve(size());
  for (const auto& [key, m] : named_children()) out.push_back(key);
  return out;
}

Module& ModuleDictImpl::get(std::string_view key, std::source_location where) const {
  if (Module* m = find_child(key)) return *m;
  throw_invalid_argument(where, "no key '{}' in ModuleDict (keys: {})", key, fmt::join(keys(), ", "));
}

}  // namespace nn
}  // namespace symtrace

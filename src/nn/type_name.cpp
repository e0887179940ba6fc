#include "nn/type_name.hpp"

#include <boost/core/demangle.hpp>

#include <mutex>
#include <string_view>
#include <typeindex>
#include <unordered_map>

namespace symtrace::detail {

std::string shorten_type_name(std::string name) {
  // Drop namespaces and enclosing classes: the text after the last "::" outside template
  // brackets.
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') start = i + 2;
  }
  name.erase(0, start);
  // LibTorch's convention: LinearImpl is the module behind the Linear holder.
  const std::size_t end = name.find('<') == std::string::npos ? name.size() : name.find('<');
  constexpr std::string_view suffix = "Impl";
  if (end > suffix.size() && name.compare(end - suffix.size(), suffix.size(), suffix) == 0)
    name.erase(end - suffix.size(), suffix.size());
  return name;
}

const TypeFacts& type_facts(const std::type_info& type) {
  static std::mutex mutex;
  static std::unordered_map<std::type_index, TypeFacts> facts;
  std::lock_guard lock(mutex);
  auto it = facts.find(type);
  if (it != facts.end()) return it->second;
  std::string full = boost::core::demangle(type.name());
  constexpr std::string_view nn = "symtrace::nn::";
  bool builtin = full.starts_with(nn) && full.find("::", nn.size()) == std::string::npos &&
                 full != "symtrace::nn::SequentialImpl" && full != "symtrace::nn::ModuleListImpl" &&
                 full != "symtrace::nn::ModuleDictImpl";
  return facts.emplace(type, TypeFacts{&type, shorten_type_name(std::move(full)), builtin}).first->second;
}

const std::string& pretty_type_name(const std::type_info& type) { return type_facts(type).name; }

bool is_builtin_layer_type(const std::type_info& type) { return type_facts(type).builtin_layer; }

}  // namespace symtrace::detail

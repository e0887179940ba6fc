#include "nn/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <mutex>
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

const std::string& pretty_type_name(const std::type_info& type) {
  static std::mutex mutex;
  static std::unordered_map<std::type_index, std::string> names;
  std::lock_guard lock(mutex);
  auto it = names.find(type);
  if (it != names.end()) return it->second;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : type.name();
  return names.emplace(type, shorten_type_name(std::move(name))).first->second;
}

}  // namespace symtrace::detail

#pragma once
// Internal (symtrace::detail, not part of the API): qualified paths of modules and tensors:
// "layer1" + "0" -> "layer1.0"; "" + "fc" -> "fc".

#include <string>
#include <string_view>

namespace symtrace::detail {

inline std::string join_path(std::string_view prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  std::string path;
  path.reserve(prefix.size() + 1 + name.size());
  path.append(prefix).append(1, '.').append(name);
  return path;
}

}  // namespace symtrace::detail

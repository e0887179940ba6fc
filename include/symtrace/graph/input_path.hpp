#pragma once
/// \file
/// Paths into a structured input (a list or a str-keyed dict holding tensors, such as
/// torchvision's `ImageList` or a `Dict[str, Tensor]` of feature maps), which name the guards
/// of its constant parts (`Graph::Guard::input`) and the place of a mismatch:
///
///     images.image_sizes        key `image_sizes` of input `images`
///     feats['0']                a key that is not an identifier, quoted ('\'' and '\\' escaped)
///     xs[1].boxes               element 1 of `xs`, then its key `boxes`
///
/// A symbolic trace and a trace by execution write them; the interpreter reads them back.
/// The structure itself is `meta_keys::structure` on the input's placeholder.

#include "symtrace/core/detail/identifier.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace symtrace {

/// One step of an input path: a list index or a dict key.
struct InputPathStep {
  bool is_key = false;
  std::size_t index = 0;
  std::string key;
};

/// `path` followed by element `index` of a list.
[[nodiscard]] inline std::string append_index(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

/// `path` followed by `key` of a dict: `.key` for an identifier, else `['key']`.
[[nodiscard]] inline std::string append_key(const std::string& path, std::string_view key) {
  if (detail::is_identifier(key)) return path + "." + std::string(key);
  std::string out = path + "['";
  for (char c : key) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "']";
}

/// Reads the first step of `rest` and removes it; nullopt (leaving `rest` as it was) when
/// `rest` does not start with a step.
[[nodiscard]] inline std::optional<InputPathStep> next_input_path_step(std::string_view& rest) {
  InputPathStep step;
  if (rest.starts_with('.')) {
    std::size_t end = 1;
    while (end < rest.size() && rest[end] != '.' && rest[end] != '[') ++end;
    if (end == 1) return std::nullopt;
    step.is_key = true;
    step.key = std::string(rest.substr(1, end - 1));
    rest.remove_prefix(end);
    return step;
  }
  if (rest.starts_with("['")) {
    std::size_t i = 2;
    while (i < rest.size() && rest[i] != '\'') {
      if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
      step.key += rest[i++];
    }
    if (i + 1 >= rest.size() || rest[i + 1] != ']') return std::nullopt;
    step.is_key = true;
    rest.remove_prefix(i + 2);
    return step;
  }
  if (rest.starts_with('[')) {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const auto [end, ec] = std::from_chars(rest.data() + 1, rest.data() + close, step.index);
    if (close == 1 || ec != std::errc() || end != rest.data() + close) return std::nullopt;
    rest.remove_prefix(close + 1);
    return step;
  }
  return std::nullopt;
}

}  // namespace symtrace

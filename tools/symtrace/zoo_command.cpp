// `symtrace zoo`.
#include "commands.hpp"

#include <symtrace/zoo/zoo.hpp>

#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace symtrace::cli {
namespace {

/// 11689512 as "11,689,512".
std::string with_commas(std::int64_t n) {
  std::string digits = fmt::format("{}", n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

int zoo_command(const Options& options, Output& output) {
  const auto& models = zoo::models();
  if (options.format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const zoo::ModelInfo& m : models) {
      list.push_back({{"name", m.name}, {"parameters", m.parameters}, {"description", m.description}});
    }
    output.write(list.dump(2) + "\n");
    return exit_ok;
  }
  std::size_t width = 5;
  for (const zoo::ModelInfo& m : models) width = std::max(width, m.name.size());
  std::string text = fmt::format("{:<{}}  {:>11}  {}\n", "model", width, "parameters", "description");
  for (const zoo::ModelInfo& m : models) {
    text += fmt::format("{:<{}}  {:>11}  {}\n", m.name, width, with_commas(m.parameters), m.description);
  }
  output.write(text);
  return exit_ok;
}

}  // namespace symtrace::cli

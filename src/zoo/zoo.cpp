#include "symtrace/zoo/zoo.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/factories.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace symtrace::zoo {

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> all = [] {
    std::vector<ModelInfo> out;
    detail::add_cnn_models(out);
    detail::add_sequence_models(out);
    return out;
  }();
  return all;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const ModelInfo& m : models()) out.push_back(m.name);
  return out;
}

const ModelInfo& info(std::string_view name, std::source_location where) {
  const auto& all = models();
  auto it = std::find_if(all.begin(), all.end(), [&](const ModelInfo& m) { return m.name == name; });
  if (it != all.end()) return *it;
  const auto closest = std::min_element(all.begin(), all.end(), [&](const ModelInfo& a, const ModelInfo& b) {
    return edit_distance(name, a.name) < edit_distance(name, b.name);
  });
  const std::string hint = closest != all.end() && edit_distance(name, closest->name) <= 3
                               ? fmt::format("did you mean '{}'? ", closest->name)
                               : std::string();
  throw_invalid_argument(where, "unknown zoo model '{}': {}the models are {}", name, hint,
                         fmt::join(names(), ", "));
}

std::shared_ptr<Module> create(std::string_view name, std::source_location where) {
  std::shared_ptr<Module> model = info(name, where).create();
  model->eval();
  return model;
}

std::vector<Tensor> example_inputs(const ModelInfo& info, Generator& gen) {
  std::vector<Tensor> out;
  for (const ExampleInput& in : info.inputs) {
    if (in.dtype == DType::int64) {
      Tensor t = Tensor::empty(Shape(in.shape), DType::int64);
      std::int64_t* data = t.data_ptr<std::int64_t>();
      const std::int64_t n = *t.shape().numel();
      for (std::int64_t i = 0; i < n; ++i)
        data[i] = in.high > 0 ? static_cast<std::int64_t>(gen.bits() % static_cast<std::uint64_t>(in.high)) : 0;
      out.push_back(t);
    } else {
      out.push_back(randn(in.shape, gen));
    }
  }
  return out;
}

}  // namespace symtrace::zoo

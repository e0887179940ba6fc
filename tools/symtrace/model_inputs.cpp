// The model and its inputs, from the command line.
#include "model_inputs.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace symtrace::cli {

const zoo::ModelInfo& find_model(const Options& options) {
  const std::source_location here = std::source_location::current();
  try {
    return zoo::info(options.model, here);
  } catch (const std::invalid_argument& e) {
    // zoo::info says which model is closest and lists them all; drop its file:line, which
    // is this file's.
    std::string_view message = e.what();
    const std::string prefix = fmt::format("{}:{}: ", here.file_name(), here.line());
    if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
    throw UsageError(options.command, fmt::format("{}; `symtrace zoo` describes them", message));
  }
}

std::vector<Shape> input_shapes(const zoo::ModelInfo& model, const Options& options, bool known_sizes) {
  std::vector<Shape> shapes;
  if (options.inputs.empty()) {
    for (const zoo::ExampleInput& in : model.inputs) shapes.emplace_back(in.shape);
    return shapes;
  }
  if (options.inputs.size() != model.inputs.size()) {
    std::vector<std::string> names;
    for (const zoo::ExampleInput& in : model.inputs) names.push_back(in.name);
    throw UsageError(options.command,
                     fmt::format("{} takes {} input{} ({}), got {} --input; give one --input per input", model.name,
                                 model.inputs.size(), model.inputs.size() == 1 ? "" : "s", fmt::join(names, ", "),
                                 options.inputs.size()));
  }
  for (const std::string& text : options.inputs) {
    Shape shape = parse_shape(text, options.command);
    if (known_sizes) {
      for (Dim d : shape) {
        if (!d.is_known()) {
          throw UsageError(options.command, fmt::format("--input '{}': {} runs the model, so every size must be known",
                                                        text, options.command));
        }
      }
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

std::vector<InputSpec> input_specs(const zoo::ModelInfo& model, const Options& options) {
  std::vector<Shape> shapes = input_shapes(model, options, false);
  std::vector<InputSpec> specs;
  for (std::size_t i = 0; i < shapes.size(); ++i) specs.emplace_back(std::move(shapes[i]), model.inputs[i].dtype);
  return specs;
}

std::vector<Tensor> example_tensors(const zoo::ModelInfo& model, const Options& options) {
  zoo::ModelInfo shaped = model;
  std::vector<Shape> shapes = input_shapes(model, options, true);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    IntList sizes;
    for (Dim d : shapes[i]) sizes.push_back(d.value());
    const TensorMeta meta{model.inputs[i].dtype, shapes[i]};
    const std::optional<std::uint64_t> bytes = detail::data_bytes(meta);
    if (!bytes || *bytes > max_tensor_bytes()) {
      // A usage error, said before anything is allocated: the sizes asked for cannot exist here.
      throw std::invalid_argument(fmt::format("input '{}' ({}) needs {}", model.inputs[i].name, meta,
                                              bytes ? detail::too_large(*bytes)
                                                    : std::string("more bytes than 64 bits count; give it smaller sizes")));
    }
    shaped.inputs[i].shape = std::move(sizes);
  }
  Generator gen(0);
  return zoo::example_inputs(shaped, gen);
}

std::string shape_text(const Shape& shape) {
  std::string out;
  for (Dim d : shape) {
    if (!out.empty()) out += 'x';
    out += d.is_known() ? fmt::format("{}", d.value()) : std::string("?");
  }
  return out;
}

}  // namespace symtrace::cli

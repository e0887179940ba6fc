// The model and its inputs, from the command line.
#include "model_inputs.hpp"

#include <symtrace/torchscript/load.hpp>

#include <fmt/format.h>

#include <filesystem>

#include <stdexcept>
#include <string>

namespace symtrace::cli {

bool is_torchscript_file(std::string_view model) {
  std::error_code ec;
  return model.find('/') != std::string_view::npos || model.find('.') != std::string_view::npos ||
         std::filesystem::is_regular_file(std::filesystem::path(model), ec);
}

zoo::ModelInfo find_model(const Options& options) {
  if (is_torchscript_file(options.model)) {
    if (options.inputs.empty())
      throw UsageError(options.command,
                       fmt::format("{} is a TorchScript file, which stores no example inputs; give the shape of each "
                                   "input of its forward with --input (e.g. --input 1x3x224x224)",
                                   options.model));
    std::shared_ptr<Module> module = torchscript::load(options.model);
    zoo::ModelInfo info;
    info.name = options.model;
    info.description = fmt::format("TorchScript file ({})", module->type_name());
    for (const std::string& name : module->input_names()) info.inputs.push_back(zoo::ExampleInput{.name = name, .dtype = DType::float32, .shape = {}, .high = 0});
    info.parameters = module->num_parameters();
    module->eval();  // as zoo::create makes the zoo's models: the commands run inference
    info.create = [module] { return module; };
    return info;
  }
  const std::source_location here = std::source_location::current();
  try {
    zoo::ModelInfo info = zoo::info(options.model, here);
    info.create = [name = info.name] { return zoo::create(name); };  // in eval mode, as zoo::create makes it
    return info;
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

// The model and its inputs, from the command line.
#include "model_inputs.hpp"

#include <symtrace/torchscript/load.hpp>

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>
#include <optional>
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
    // The inputs the forward needs (detection models' `targets` is optional: None).
    const std::vector<std::string> names = module->input_names();
    const ForwardSignature* signature = module->forward_signature();
    const std::size_t required = signature != nullptr ? std::min(signature->num_required, names.size()) : names.size();
    for (std::size_t i = 0; i < required; ++i)
      info.inputs.push_back(zoo::ExampleInput{.name = names[i], .dtype = DType::float32, .shape = {}, .high = 0});
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
    if (text.starts_with('['))
      throw UsageError(options.command, fmt::format("--input '{}': a list of tensors is an input of trace and report; {} "
                                                    "runs the model on tensors only",
                                                    text, options.command));
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
  // `--input '[3x320x320,3x320x320]'`: a list of tensors (List[Tensor]), one shape per element.
  Options tensors_only = options;
  std::vector<std::optional<InputSpec>> lists(options.inputs.size());
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& text = options.inputs[i];
    if (!text.starts_with('[')) continue;
    if (!text.ends_with(']') || text.size() < 3)
      throw UsageError(options.command, fmt::format("--input '{}': a list of shapes is written [SHAPE,SHAPE,...], "
                                                    "e.g. --input '[3x320x320,3x320x320]'",
                                                    text));
    std::vector<InputSpec> elements;
    const std::string_view inner = std::string_view(text).substr(1, text.size() - 2);
    for (std::size_t start = 0;;) {
      const std::size_t end = inner.find(',', start);
      elements.emplace_back(parse_shape(inner.substr(start, end == std::string_view::npos ? end : end - start),
                                        options.command),
                            i < model.inputs.size() ? model.inputs[i].dtype : DType::float32);
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
    lists[i] = InputSpec::list(std::move(elements));
    tensors_only.inputs[i] = "1";  // checked above; the count is checked below
  }
  std::vector<Shape> shapes = input_shapes(model, tensors_only, false);
  std::vector<InputSpec> specs;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (i < lists.size() && lists[i]) specs.push_back(std::move(*lists[i]));
    else specs.emplace_back(std::move(shapes[i]), model.inputs[i].dtype);
  }
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

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

namespace {

/// Throws UsageError unless there is one --input per input of the model.
void check_input_count(const zoo::ModelInfo& model, const Options& options) {
  if (options.inputs.size() != model.inputs.size()) {
    std::vector<std::string> names;
    for (const zoo::ExampleInput& in : model.inputs) names.push_back(in.name);
    throw UsageError(options.command,
                     fmt::format("{} takes {} input{} ({}), got {} --input; give one --input per input", model.name,
                                 model.inputs.size(), model.inputs.size() == 1 ? "" : "s", fmt::join(names, ", "),
                                 options.inputs.size()));
  }
}

}  // namespace

std::vector<Shape> input_shapes(const zoo::ModelInfo& model, const Options& options, bool known_sizes) {
  std::vector<Shape> shapes;
  if (options.inputs.empty()) {
    for (const zoo::ExampleInput& in : model.inputs) shapes.emplace_back(in.shape);
    return shapes;
  }
  check_input_count(model, options);
  for (const std::string& text : options.inputs) {
    if (text.starts_with('[') || text.starts_with('{'))
      throw UsageError(options.command, fmt::format("--input '{}': a list or dict of tensors is an input of trace, report "
                                                    "and analyze; {} runs the model on tensors only",
                                                    text, options.command));
    Shape shape = parse_shape(text, options);
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

namespace {

/// Reads one spec of a structured --input from `text` at `at`: a shape, `[SPEC,SPEC,...]` (a list
/// of tensors, List[Tensor]) or `{KEY:SPEC,...}` (a dict with str keys, Dict[str, Tensor]), nested
/// at most `depth` levels more.
class StructuredInput {
 public:
  StructuredInput(std::string_view text, const Options& options, DType dtype)
      : text_(text), options_(options), dtype_(dtype) {}

  InputSpec parse() {
    InputSpec spec = parse_at(16);
    if (at_ != text_.size()) fail(fmt::format("'{}' after the end of the input", text_.substr(at_)));
    return spec;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(options_.command, fmt::format("--input '{}': {}; write a list of shapes as [SHAPE,SHAPE,...] and "
                                                   "a dict as {{KEY:SHAPE,...}}, e.g. --input '[3x320x320,3x320x320]'",
                                                   text_, why));
  }

  void expect(char c) {
    if (at_ >= text_.size() || text_[at_] != c)
      fail(at_ >= text_.size() ? fmt::format("'{}' is missing at the end", c)
                               : fmt::format("'{}' expected at position {}, found '{}'", c, at_ + 1, text_[at_]));
    ++at_;
  }

  InputSpec parse_at(int depth) {
    if (depth == 0) fail("lists and dicts nest too deeply");
    if (at_ < text_.size() && text_[at_] == '[') {
      ++at_;
      std::vector<InputSpec> elements;
      if (at_ < text_.size() && text_[at_] == ']') fail("the list is empty");
      while (true) {
        elements.push_back(parse_at(depth - 1));
        if (at_ < text_.size() && text_[at_] == ',') {
          ++at_;
          continue;
        }
        expect(']');
        return InputSpec::list(std::move(elements));
      }
    }
    if (at_ < text_.size() && text_[at_] == '{') {
      ++at_;
      std::vector<std::pair<std::string, InputSpec>> items;
      while (true) {
        const std::size_t key_end = text_.find(':', at_);
        if (key_end == std::string_view::npos || key_end == at_) fail(fmt::format("a key is missing at position {}", at_ + 1));
        std::string key(text_.substr(at_, key_end - at_));
        if (key.find_first_of("[]{},") != std::string::npos) fail(fmt::format("'{}' is not a key", key));
        for (const auto& [k, v] : items)
          if (k == key) fail(fmt::format("the key '{}' is given twice", key));
        at_ = key_end + 1;
        items.emplace_back(std::move(key), parse_at(depth - 1));
        if (at_ < text_.size() && text_[at_] == ',') {
          ++at_;
          continue;
        }
        expect('}');
        return InputSpec::dict(std::move(items));
      }
    }
    const std::size_t end = std::min(text_.find_first_of(",]}", at_), text_.size());
    const std::string_view shape = text_.substr(at_, end - at_);
    at_ = end;
    return InputSpec(parse_shape(shape, options_), dtype_);
  }

  std::string_view text_;
  const Options& options_;
  DType dtype_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<InputSpec> input_specs(const zoo::ModelInfo& model, const Options& options) {
  // `--input '[3x320x320,3x320x320]'`: a list of tensors (List[Tensor]); `--input
  // '{a:1x8,b:1x8}'`: a dict (Dict[str, Tensor]); nested as the forward takes them.
  std::vector<InputSpec> specs;
  if (options.inputs.empty()) {
    for (const zoo::ExampleInput& in : model.inputs) specs.emplace_back(Shape(in.shape), in.dtype);
    return specs;
  }
  check_input_count(model, options);
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& text = options.inputs[i];
    if (text.starts_with('[') || text.starts_with('{')) specs.push_back(StructuredInput(text, options, model.inputs[i].dtype).parse());
    else specs.emplace_back(parse_shape(text, options), model.inputs[i].dtype);
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
    out += to_string(d);
  }
  return out;
}

}  // namespace symtrace::cli

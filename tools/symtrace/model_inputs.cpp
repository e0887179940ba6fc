// The model and its inputs, from the command line.
#include "model_inputs.hpp"

#include <symtrace/torchscript/load.hpp>

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
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
    // Optional inputs (detection models' `targets`, a `lengths`) when --input gives them (none
    // leaves one out, as None).
    const std::size_t count = std::clamp(options.inputs.size(), required, names.size());
    for (std::size_t i = 0; i < count; ++i)
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

/// Reads one --input: a shape with an optional dtype and range (`1x3x224x224`,
/// `1x16:int64[0,30522)`, `4:bool`), `none`, `[SPEC,SPEC,...]` (a list, List[Tensor]) or
/// `{KEY:SPEC,...}` (a dict with str keys, Dict[str, Tensor]), nested.
class InputParser {
 public:
  InputParser(std::string_view text, const Options& options, DType dtype) : text_(text), options_(options), dtype_(dtype) {}

  InputText parse() {
    InputText in = parse_at(16);
    if (at_ != text_.size()) fail(fmt::format("'{}' after the end of the input", text_.substr(at_)));
    return in;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(options_.command,
                     fmt::format("--input '{}': {}; write a shape as 1x3x224x224, integers as 1x16:int64[0,30522) "
                                 "(values in [low, high)), bools as 4:bool, an optional input left out as none, a list "
                                 "of shapes as [SHAPE,SHAPE,...] and a dict as {{KEY:SHAPE,...}}",
                                 text_, why));
  }

  void expect(char c) {
    if (at_ >= text_.size() || text_[at_] != c)
      fail(at_ >= text_.size() ? fmt::format("'{}' is missing at the end", c)
                               : fmt::format("'{}' expected at position {}, found '{}'", c, at_ + 1, text_[at_]));
    ++at_;
  }

  std::int64_t integer() {
    const std::size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    std::int64_t v = 0;
    auto [stop, ec] = std::from_chars(text_.data() + start, text_.data() + at_, v);
    if (ec != std::errc() || stop != text_.data() + at_) fail(fmt::format("a number was expected at position {}", start + 1));
    return v;
  }

  double real() {
    const std::size_t start = at_;
    while (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '-' ||
                                  text_[at_] == '+' || text_[at_] == '.' || text_[at_] == 'e' || text_[at_] == 'E'))
      ++at_;
    double v = 0;
    auto [stop, ec] = std::from_chars(text_.data() + start, text_.data() + at_, v);
    if (ec != std::errc() || stop != text_.data() + at_ || !std::isfinite(v))
      fail(fmt::format("a number was expected at position {}", start + 1));
    return v;
  }

  InputText parse_at(int depth) {
    if (depth == 0) fail("lists and dicts nest too deeply");
    InputText in;
    if (at_ < text_.size() && text_[at_] == '[') {
      ++at_;
      in.kind = InputText::Kind::list;
      if (at_ < text_.size() && text_[at_] == ']') fail("the list is empty");
      while (true) {
        in.elements.push_back(parse_at(depth - 1));
        if (at_ < text_.size() && text_[at_] == ',') {
          ++at_;
          continue;
        }
        expect(']');
        return in;
      }
    }
    if (at_ < text_.size() && text_[at_] == '{') {
      ++at_;
      in.kind = InputText::Kind::dict;
      while (true) {
        const std::size_t key_end = text_.find(':', at_);
        if (key_end == std::string_view::npos || key_end == at_) fail(fmt::format("a key is missing at position {}", at_ + 1));
        std::string key(text_.substr(at_, key_end - at_));
        if (key.find_first_of("[]{},") != std::string::npos) fail(fmt::format("'{}' is not a key", key));
        if (std::find(in.keys.begin(), in.keys.end(), key) != in.keys.end()) fail(fmt::format("the key '{}' is given twice", key));
        at_ = key_end + 1;
        in.keys.push_back(std::move(key));
        in.elements.push_back(parse_at(depth - 1));
        if (at_ < text_.size() && text_[at_] == ',') {
          ++at_;
          continue;
        }
        expect('}');
        return in;
      }
    }
    const std::size_t end = std::min(text_.find_first_of(",]}:", at_), text_.size());
    const std::string_view shape = text_.substr(at_, end - at_);
    at_ = end;
    if (shape == "none") {
      in.kind = InputText::Kind::none;
      return in;
    }
    in.shape = parse_shape(shape, options_);
    in.dtype = dtype_;
    if (at_ < text_.size() && text_[at_] == ':') {
      ++at_;
      const std::size_t name_end = std::min(text_.find_first_of(",]}[", at_), text_.size());
      const std::string_view name = text_.substr(at_, name_end - at_);
      if (name == "float32" || name == "float") in.dtype = DType::float32;
      else if (name == "int64" || name == "long") in.dtype = DType::int64;
      else if (name == "bool") in.dtype = DType::bool_;
      else fail(fmt::format("'{}' is not a dtype symtrace has (float32, int64, bool)", name));
      at_ = name_end;
    }
    if (at_ < text_.size() && text_[at_] == '[') {
      if (in.dtype == DType::bool_) fail("a range [low,high) is for int64 and float32 inputs");
      ++at_;
      if (in.dtype == DType::float32) {
        const double low = real();
        expect(',');
        const double high = real();
        expect(')');
        if (!(high > low)) fail(fmt::format("the range [{},{}) is empty", low, high));
        in.float_range = {low, high};
        return in;
      }
      in.low = integer();
      expect(',');
      in.high = integer();
      expect(')');
      if (in.high <= in.low) fail(fmt::format("the range [{},{}) is empty", in.low, in.high));
    }
    return in;
  }

  std::string_view text_;
  const Options& options_;
  DType dtype_;
  std::size_t at_ = 0;
};

InputSpec spec_of(const InputText& in) {
  switch (in.kind) {
    case InputText::Kind::none: return InputSpec::constant(Value());
    case InputText::Kind::list: {
      std::vector<InputSpec> elements;
      for (const InputText& e : in.elements) elements.push_back(spec_of(e));
      return InputSpec::list(std::move(elements));
    }
    case InputText::Kind::dict: {
      std::vector<std::pair<std::string, InputSpec>> items;
      for (std::size_t i = 0; i < in.keys.size(); ++i) items.emplace_back(in.keys[i], spec_of(in.elements[i]));
      return InputSpec::dict(std::move(items));
    }
    case InputText::Kind::tensor: break;
  }
  return InputSpec(in.shape, in.dtype);
}

/// A random value for `in` (normal floats, or uniform in their range; integers uniform in their
/// range; false bools);
/// throws UsageError for an unknown size (a run needs them all).
Value example_of(const InputText& in, std::string_view name, std::string_view text, const Options& options,
                 Generator& gen) {
  switch (in.kind) {
    case InputText::Kind::none: return Value();
    case InputText::Kind::list: {
      ValueList items;
      for (const InputText& e : in.elements) items.push_back(example_of(e, name, text, options, gen));
      return items;
    }
    case InputText::Kind::dict: {
      ValueDict d;
      for (std::size_t i = 0; i < in.keys.size(); ++i) d.insert_or_assign(in.keys[i], example_of(in.elements[i], name, text, options, gen));
      return d;
    }
    case InputText::Kind::tensor: break;
  }
  IntList sizes;
  for (Dim d : in.shape) {
    if (!d.is_known())
      throw UsageError(options.command, fmt::format("--input '{}': {} runs the model, so every size must be known", text,
                                                    options.command));
    sizes.push_back(d.value());
  }
  const TensorMeta meta{in.dtype, in.shape};
  const std::optional<std::uint64_t> bytes = detail::data_bytes(meta);
  if (!bytes || *bytes > max_tensor_bytes()) {
    // Said before anything is allocated: the sizes asked for cannot exist here.
    throw std::invalid_argument(fmt::format("input '{}' ({}) needs {}", name, meta,
                                            bytes ? detail::too_large(*bytes)
                                                  : std::string("more bytes than 64 bits count; give it smaller sizes")));
  }
  if (in.dtype == DType::float32 && in.float_range) {
    const auto [low, high] = *in.float_range;
    return rand(sizes, gen) * (high - low) + low;
  }
  if (in.dtype == DType::float32) return randn(sizes, gen);
  Tensor t = Tensor::empty(in.shape, in.dtype);
  const std::int64_t n = *t.shape().numel();
  if (in.dtype == DType::bool_) {
    std::fill_n(t.data_ptr<bool>(), n, false);
    return t;
  }
  std::int64_t* data = t.data_ptr<std::int64_t>();
  const auto span = static_cast<std::uint64_t>(in.high - in.low);
  for (std::int64_t i = 0; i < n; ++i) data[i] = span > 0 ? in.low + static_cast<std::int64_t>(gen.bits() % span) : 0;
  return t;
}

}  // namespace

std::vector<InputText> input_texts(const zoo::ModelInfo& model, const Options& options) {
  std::vector<InputText> out;
  if (options.inputs.empty()) {
    for (const zoo::ExampleInput& in : model.inputs) {
      InputText t;
      t.shape = Shape(in.shape);
      t.dtype = in.dtype;
      t.high = in.dtype == DType::int64 ? in.high : 0;
      out.push_back(std::move(t));
    }
    return out;
  }
  check_input_count(model, options);
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    InputText t = InputParser(options.inputs[i], options, model.inputs[i].dtype).parse();
    if (t.kind == InputText::Kind::tensor && t.dtype == DType::int64 && t.high == 0 && model.inputs[i].dtype == DType::int64)
      t.high = model.inputs[i].high;  // the entry's bound (token ids)
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<InputSpec> input_specs(const zoo::ModelInfo& model, const Options& options) {
  std::vector<InputSpec> specs;
  for (const InputText& t : input_texts(model, options)) specs.push_back(spec_of(t));
  return specs;
}

ValueList example_values(const zoo::ModelInfo& model, const Options& options) {
  const std::vector<InputText> texts = input_texts(model, options);
  Generator gen(0);
  ValueList out;
  for (std::size_t i = 0; i < texts.size(); ++i)
    out.push_back(example_of(texts[i], model.inputs[i].name, options.inputs.empty() ? std::string_view() : options.inputs[i],
                             options, gen));
  return out;
}

std::string value_text(const Value& v) {
  if (v.is_tensor()) return fmt::format("{}{}", v.to_tensor().dtype(), v.to_tensor().shape());
  if (v.is_none()) return "None";
  std::vector<std::string> parts;
  if (v.is_list()) {
    for (const Value& e : v.to_list()) parts.push_back(value_text(e));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  }
  if (v.is_dict()) {
    const ValueDict& d = v.to_dict();
    for (std::size_t i = 0; i < d.keys.size(); ++i) parts.push_back(fmt::format("{}: {}", to_string(d.keys[i]), value_text(d.values[i])));
    return fmt::format("{{{}}}", fmt::join(parts, ", "));
  }
  return to_string(v);
}

std::string shape_text(const Shape& shape) {
  std::string out;
  for (Dim d : shape) {
    if (!out.empty()) out += 'x';
    out += to_string(d);
  }
  return out;
}

std::vector<InputSpec> specs_of(const ValueList& args) {
  std::vector<InputSpec> specs;
  specs.reserve(args.size());
  for (const Value& v : args) {
    std::optional<InputSpec> spec = InputSpec::of(v);
    specs.push_back(spec ? std::move(*spec) : InputSpec::constant(v));
  }
  return specs;
}

}  // namespace symtrace::cli

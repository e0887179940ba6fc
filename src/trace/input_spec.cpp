// Input specs: what an input of a trace is (InputSpec), how a structured one is described, and
// how a trace's inputs are checked against the root's forward before anything is recorded.
#include "symtrace/trace/input_spec.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "input_matching.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace symtrace {

InputSpec::InputSpec(const Tensor& example) : dtype(example.dtype()), shape(example.shape()) {}

InputSpec InputSpec::list(std::vector<InputSpec> elements) {
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].is_int)
      throw std::invalid_argument(fmt::format("InputSpec::list: element {} is a symbolic int, which a list input cannot "
                                              "hold; give it as a constant (InputSpec::constant)",
                                              i));
  }
  InputSpec spec(Shape{});
  spec.is_list = true;
  spec.elements = std::move(elements);
  return spec;
}

InputSpec InputSpec::dict(std::vector<std::pair<std::string, InputSpec>> items) {
  InputSpec spec(Shape{});
  spec.is_dict = true;
  spec.keys.reserve(items.size());
  spec.elements.reserve(items.size());
  for (auto& [key, element] : items) {
    if (std::find(spec.keys.begin(), spec.keys.end(), key) != spec.keys.end())
      throw std::invalid_argument(fmt::format("InputSpec::dict: key '{}' is given twice; give each key once", key));
    if (element.is_int)
      throw std::invalid_argument(fmt::format("InputSpec::dict: the value of '{}' is a symbolic int, which a dict input "
                                              "cannot hold; give it as a constant (InputSpec::constant)",
                                              key));
    spec.keys.push_back(std::move(key));
    spec.elements.push_back(std::move(element));
  }
  return spec;
}

InputSpec InputSpec::constant(Value value) {
  if (holds_tensor(value) || contains_symbolic(value))
    throw std::invalid_argument(fmt::format("InputSpec::constant: {} holds a tensor or a symbolic value; a constant "
                                            "is a value forward gets as it is (give tensors their own specs)",
                                            value));
  if (holds_dict(value))
    throw std::invalid_argument(fmt::format("InputSpec::constant: {} holds a dict; describe a dict with "
                                            "InputSpec::dict (its values may be constants)",
                                            value));
  InputSpec spec(Shape{});
  spec.is_constant = true;
  spec.value = std::move(value);
  return spec;
}

namespace {
// The spec of a part of a structured input: a tensor's, a list's or dict's that holds tensors or
// dicts, else a constant; nullopt when it cannot be described.
std::optional<InputSpec> part_spec(const Value& v) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    if (!t->defined()) return std::nullopt;
    return InputSpec(*t);
  }
  if (v.is_list() && (holds_tensor(v) || holds_dict(v))) {
    std::vector<InputSpec> elements;
    elements.reserve(v.to_list().size());
    for (const Value& e : v.to_list()) {
      std::optional<InputSpec> spec = part_spec(e);
      if (!spec) return std::nullopt;
      elements.push_back(std::move(*spec));
    }
    return InputSpec::list(std::move(elements));
  }
  if (v.is_dict()) {
    const ValueDict& d = v.to_dict();
    std::vector<std::pair<std::string, InputSpec>> items;
    items.reserve(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (!d.keys[i].is_string()) return std::nullopt;
      std::optional<InputSpec> spec = part_spec(d.values[i]);
      if (!spec) return std::nullopt;
      items.emplace_back(d.keys[i].to_string_ref(), std::move(*spec));
    }
    return InputSpec::dict(std::move(items));
  }
  if (contains_symbolic(v)) return std::nullopt;
  return InputSpec::constant(v);
}
}  // namespace

std::optional<InputSpec> InputSpec::of(const Value& value) {
  if (!holds_tensor(value)) return std::nullopt;  // a value: concrete_args, not a spec
  return part_spec(value);
}

Argument input_structure(const InputSpec& spec) {
  if (spec.is_constant) return Argument(std::string("const"));
  if (spec.is_list || spec.is_dict) {
    ArgumentList parts{Argument(std::string(spec.is_list ? "list" : "dict"))};
    parts.reserve(spec.elements.size() + 1);
    for (std::size_t i = 0; i < spec.elements.size(); ++i) {
      if (spec.is_list) parts.push_back(input_structure(spec.elements[i]));
      else parts.emplace_back(ArgumentList{Argument(spec.keys[i]), input_structure(spec.elements[i])});
    }
    return Argument(std::move(parts));
  }
  if (spec.is_int) return Argument(std::string("int"));
  ArgumentList sizes;
  if (spec.shape.is_rank_known()) {
    for (Dim d : spec.shape) sizes.push_back(d.is_known() ? Argument(d.raw()) : Argument());
  }
  return Argument(ArgumentList{Argument(std::string("tensor")), Argument(spec.dtype),
                               spec.shape.is_rank_known() ? Argument(std::move(sizes)) : Argument()});
}

namespace {
// The named dims of `spec`'s shapes, with their ranges.
void collect_dims(const InputSpec& spec, std::vector<std::pair<std::string, SymRange>>& out) {
  for (const InputSpec& e : spec.elements) collect_dims(e, out);
  if (!spec.shape.is_rank_known()) return;
  for (Dim d : spec.shape)
    if (d.is_symbolic())
      for (auto& r : d.expr()->symbol_ranges()) out.push_back(std::move(r));
}

// A name is one dim: `N` in 1..8 in one input and `N` in 1.. in another would print alike and
// be two dims.
void check_dim_names(const std::vector<InputSpec>& inputs, std::source_location where) {
  std::vector<std::pair<std::string, SymRange>> dims;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::size_t before = dims.size();
    collect_dims(inputs[i], dims);
    // The interpreter binds named dims from tensor inputs; the parts of a list or dict are
    // checked by their structure, which holds sizes only.
    if ((inputs[i].is_list || inputs[i].is_dict) && dims.size() != before)
      throw_invalid_argument(where, "input {} ({}) is a list or dict whose tensors have named dims, which only a "
                                    "tensor input may have; give its sizes as numbers or ? (Dim::unknown())",
                             i, to_string(inputs[i]));
  }
  std::sort(dims.begin(), dims.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < dims.size(); ++i) {
    if (dims[i].first == dims[i - 1].first && dims[i].second != dims[i - 1].second)
      throw_invalid_argument(where, "the inputs name two dims '{}', with the ranges {} and {}; give a name one range",
                             dims[i].first, to_string(dims[i - 1].second), to_string(dims[i].second));
  }
}
}  // namespace

std::string to_string(const InputSpec& spec) {
  if (spec.is_int) return "int";
  if (spec.is_constant) return to_string(spec.value);
  if (spec.is_list) {
    std::string out = "[";
    for (std::size_t i = 0; i < spec.elements.size(); ++i) out += (i ? ", " : "") + to_string(spec.elements[i]);
    return out + "]";
  }
  if (spec.is_dict) {
    std::string out = "{";
    for (std::size_t i = 0; i < spec.elements.size(); ++i)
      out += fmt::format("{}'{}': {}", i ? ", " : "", spec.keys[i], to_string(spec.elements[i]));
    return out + "}";
  }
  return fmt::format("{}{}", spec.dtype, spec.shape);
}

detail::GivenInputs detail::match_inputs(const Module& root, const std::vector<InputSpec>& inputs,
                                         const ConcreteArgs& concrete_args, std::source_location where) {
  const ForwardSignature* signature = root.forward_signature();
  if (signature == nullptr) {
    throw_invalid_argument(where, "{} cannot be traced as a whole: it has no forward (trace its elements instead)",
                           root.type_name());
  }
  check_dim_names(inputs, where);
  GivenInputs given_inputs{root.input_names(), 0};
  const std::vector<std::string>& names = given_inputs.names;
  for (std::size_t i = 0; i < concrete_args.size(); ++i) {
    const auto& [name, value] = concrete_args[i];
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw_invalid_argument(where, "concrete_args names '{}', which is not an input of {}.forward (its inputs are {})",
                             name, root.type_name(), fmt::join(names, ", "));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (concrete_args[j].first == name) throw_invalid_argument(where, "concrete_args gives '{}' twice; give it once", name);
    }
    if (contains_symbolic(value) || value.is_tensor() ||
        (value.is_list() && std::any_of(value.to_list().begin(), value.to_list().end(),
                                        [](const Value& v) { return v.is_tensor(); })) ||
        (value.is_dict() && std::any_of(value.to_dict().values.begin(), value.to_dict().values.end(),
                                        [](const Value& v) { return v.is_tensor(); }))) {
      throw_invalid_argument(where, "concrete_args '{}' is a tensor: pass tensors as inputs (InputSpec) instead", name);
    }
  }
  // Which declared inputs are given: concrete ones, then specs in order; trailing optional
  // inputs may be left out.
  std::size_t& given = given_inputs.count;
  std::size_t specs = 0;
  while (given < names.size() && (concrete_arg(concrete_args, names[given]) != nullptr || specs < inputs.size())) {
    if (concrete_arg(concrete_args, names[given]) == nullptr) {
      const ForwardParameter& parameter = signature->parameters[given];
      const bool takes_int = parameter.type == ParamType::sym_int || parameter.type == ParamType::any;
      const bool takes_tensor = parameter.type == ParamType::tensor || parameter.type == ParamType::any;
      const bool takes_list = parameter.type == ParamType::tensor_list || parameter.type == ParamType::any;
      if (inputs[specs].is_list && parameter.type == ParamType::tensor_list) {
        for (std::size_t e = 0; e < inputs[specs].elements.size(); ++e) {
          if (!inputs[specs].elements[e].is_tensor())
            throw_invalid_argument(where, "{}.forward's input '{}' is List[Tensor], but element {} of its spec is {}: give "
                                          "a list of tensor specs",
                                   root.type_name(), names[given], e, to_string(inputs[specs].elements[e]));
        }
      }
      if (inputs[specs].is_list && !takes_list) {
        throw_invalid_argument(where, "{}.forward's input '{}' is {}, not a list of tensors: give it an InputSpec of a "
                                      "tensor, not InputSpec::list",
                               root.type_name(), names[given], parameter.type_name);
      }
      if (inputs[specs].is_dict && parameter.type != ParamType::any) {
        throw_invalid_argument(where, "{}.forward's input '{}' is {}, not a dict or an object: give it an InputSpec of "
                                      "its type, not InputSpec::dict",
                               root.type_name(), names[given], parameter.type_name);
      }
      if (inputs[specs].is_int && !takes_int) {
        throw_invalid_argument(where,
                               "{}.forward's input '{}' is {}, not a SymInt: a symbolic integer (InputSpec::symbolic_int()) "
                               "needs a SymInt parameter; give it a value in concrete_args",
                               root.type_name(), names[given], parameter.type_name);
      }
      if (inputs[specs].is_tensor() && !takes_tensor) {
        throw_invalid_argument(where,
                               "{}.forward's input '{}' is {}, not a Tensor: give it a value in concrete_args{}",
                               root.type_name(), names[given], parameter.type_name,
                               parameter.type == ParamType::sym_int ? " or an InputSpec::symbolic_int()" : "");
      }
      ++specs;
    }
    ++given;
  }
  if (given < signature->num_required && signature->parameters[given].type != ParamType::tensor &&
      signature->parameters[given].type != ParamType::any && signature->parameters[given].type != ParamType::sym_int) {
    throw_invalid_argument(where, "{}.forward's input '{}' is {}, not a Tensor: give it a value in concrete_args",
                           root.type_name(), names[given], signature->parameters[given].type_name);
  }
  if (given < signature->num_required || specs < inputs.size()) {
    throw_invalid_argument(where,
                           "{}.forward takes {} inputs ({}), got {} input specs and {} concrete_args; give one "
                           "InputSpec or example tensor per input not in concrete_args",
                           root.type_name(),
                           signature->num_required == names.size()
                               ? fmt::format("{}", names.size())
                               : fmt::format("{} to {}", signature->num_required, names.size()),
                           fmt::join(names, ", "), inputs.size(), concrete_args.size());
  }
  return given_inputs;
}

}  // namespace symtrace

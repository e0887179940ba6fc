#include "torchscript/script_module.hpp"

#include "symtrace/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace symtrace::torchscript::detail {

namespace {

// A ForwardSignature that owns the type names its parameters view.
struct OwnedSignature : ForwardSignature {
  std::deque<std::string> names;
  std::string_view keep(std::string s) { return names.emplace_back(std::move(s)); }
};

ParamType param_type(std::string_view t, bool& optional) {
  optional = false;
  if (t.starts_with("Optional[") && t.ends_with("]")) {
    optional = true;
    t = t.substr(9, t.size() - 10);
  }
  if (t == "Tensor") return ParamType::tensor;
  if (t == "List[Tensor]") return ParamType::tensor_list;
  if (t == "int") return ParamType::integer;
  if (t == "float") return ParamType::floating;
  if (t == "bool") return ParamType::boolean;
  if (t == "str") return ParamType::string;
  if (t == "List[int]") return ParamType::int_list;
  return ParamType::any;
}

std::shared_ptr<const ForwardSignature> signature_of(const std::vector<const Program*>& forwards) {
  if (forwards.empty()) return nullptr;
  auto sig = std::make_shared<OwnedSignature>();
  const Program& p = *forwards.front();
  const bool overloaded = forwards.size() > 1;
  for (std::size_t i = 0; i < p.input_names.size(); ++i) {
    bool optional = false;
    ParamType type = overloaded ? ParamType::any : param_type(p.input_types[i], optional);
    if (p.input_defaults[i].has_value()) optional = true;
    sig->parameters.push_back(
        ForwardParameter{p.input_names[i], type, optional, sig->keep(overloaded ? "Any" : p.input_types[i])});
  }
  sig->num_required = sig->parameters.size();
  while (sig->num_required > 0 && sig->parameters[sig->num_required - 1].optional) --sig->num_required;
  const std::string& r = p.result_type;
  if (overloaded) sig->result = ParamType::any;
  else if (r == "Tensor") sig->result = ParamType::tensor;
  else if (r == "List[Tensor]") sig->result = ParamType::tensor_list;
  else if (r.starts_with("Tuple[")) sig->result = ParamType::tuple;
  else sig->result = ParamType::any;
  sig->result_arity = sig->result == ParamType::tuple ? p.result_arity : 1;
  sig->result_type_name = sig->keep(overloaded ? "Any" : r);
  return sig;
}

// Whether `v` can be passed where TorchScript declares `type`. With `numbers_as_tensors`, a
// number where a Tensor is declared: a traced file's 0-dim tensor of a size (`length`), which
// prim::NumToTensor leaves a number here.
bool accepts(std::string_view type, const Value& v, bool numbers_as_tensors) {
  if (type.starts_with("Optional[") && v.is_none()) return true;
  if (type.starts_with("Optional[")) type = type.substr(9, type.size() - 10);
  if (type == "Tensor")
    return v.is_tensor() || (numbers_as_tensors && (v.is_number() || v.is_symint() || v.is_symfloat()));
  if (type == "List[Tensor]") {
    if (!v.is_list()) return false;
    return std::all_of(v.to_list().begin(), v.to_list().end(), [](const Value& e) { return e.is_tensor(); });
  }
  if (type == "int") return v.is_int() || v.is_symint() || v.is_bool();
  if (type == "float") return v.is_number() || v.is_symfloat();
  if (type == "bool") return v.is_bool();
  if (type == "str") return v.is_string();
  if (type.starts_with("List[") || type.starts_with("Tuple[")) return v.is_list();
  return true;
}

}  // namespace

ScriptModule::ScriptModule(std::string type_name, std::shared_ptr<const Unit> unit,
                           std::vector<const Program*> forwards, bool torch_nn_layer)
    : Module(signature_of(forwards)), unit_(std::move(unit)), forwards_(std::move(forwards)),
      torch_nn_layer_(torch_nn_layer) {
  set_type_name(std::move(type_name));
}

Value ScriptModule::forward_values(const ValueList& args) {
  if (forwards_.empty())
    throw std::invalid_argument(fmt::format("module '{}' of the TorchScript file has no forward method", type_name()));
  // The overload whose declared kinds take `args`; failing that, one that takes them with
  // numbers as tensors.
  for (const bool numbers_as_tensors : {false, true}) {
    for (const Program* p : forwards_) {
      const std::size_t n = p->input_names.size();
      if (args.size() > n) continue;
      bool ok = true;
      for (std::size_t i = 0; i < n && ok; ++i) {
        if (i < args.size()) ok = accepts(p->input_types[i], args[i], numbers_as_tensors);
        else ok = p->input_defaults[i].has_value() || p->input_types[i].starts_with("Optional[");
      }
      if (!ok) continue;
      // The result plain: refs stay in the executor (Note [Lists and dicts are references]).
      if (args.size() == n) return plain(run(*p, *this, args));
      ValueList full = args;
      for (std::size_t i = args.size(); i < n; ++i) full.push_back(p->input_defaults[i].value_or(Value()));
      return plain(run(*p, *this, full));
    }
  }
  std::string kinds;
  for (const Value& a : args) kinds += fmt::format("{}{}", kinds.empty() ? "" : ", ", a.type_name());
  std::string declared;
  for (const Program* p : forwards_) {
    std::string one;
    for (std::size_t i = 0; i < p->input_names.size(); ++i)
      one += fmt::format("{}{}: {}", i ? ", " : "", p->input_names[i], p->input_types[i]);
    declared += fmt::format("{}{}({})", declared.empty() ? "" : " or ", p->name, one);
  }
  throw std::invalid_argument(fmt::format("{}.forward was called with ({}), but it takes {}", type_name(), kinds,
                                          declared));
}

void ScriptModule::set_attr(std::string name, Value value) {
  for (auto& [n, v] : attrs_)
    if (n == name) {
      v = std::move(value);
      return;
    }
  attrs_.emplace_back(std::move(name), std::move(value));
}

const Value* ScriptModule::find_attr(std::string_view name) const noexcept {
  for (const auto& [n, v] : attrs_)
    if (n == name) return &v;
  return nullptr;
}

const Value* ScriptModule::find_attr_of(const Module& module, std::string_view name) const noexcept {
  if (const auto* script = dynamic_cast<const ScriptModule*>(&module)) return script->find_attr(name);
  auto it = unit_->layer_attrs.find(&module);
  if (it == unit_->layer_attrs.end() || it->second.layer.lock().get() != &module) return nullptr;
  for (const auto& [key, value] : it->second.attrs)
    if (key == name) return &value;
  return nullptr;
}

void ScriptModule::add_method(std::string name, const Program* program) { methods_.emplace_back(std::move(name), program); }

void ScriptModule::set_layer_code(const Module& layer, std::shared_ptr<Module> code) {
  layer_code_.emplace_back(&layer, std::move(code));
}

Module* ScriptModule::layer_code(const Module& layer) const noexcept {
  for (const auto& [l, code] : layer_code_)
    if (l == &layer) return code.get();
  return nullptr;
}

const Program* ScriptModule::find_method(std::string_view name) const noexcept {
  for (const auto& [n, p] : methods_)
    if (n == name) return p;
  return nullptr;
}

}  // namespace symtrace::torchscript::detail

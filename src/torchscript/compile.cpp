// Compiling LibTorch graphs (torch::jit::Graph) into symtrace programs (program.hpp).
//
// Every node becomes one instruction, or none for module values: `prim::GetAttr` of a
// submodule only extends a path, and `prim::CallMethod` on it becomes a call of the module at
// that path. An operator runs as symtrace's own op when it has one that takes the node's
// arguments, else as LibTorch's (aten_ops.hpp: docs/design.md, decision 14). Nodes symtrace
// cannot run at all (an operator LibTorch lacks, one whose values symtrace cannot hold)
// compile into `unsupported` instructions, which throw when, and only when, they run: loading
// never fails for want of an op, and the failure of a robust trace lands on the module that
// ran the node, at the node's Python line.
#include "torchscript/compile.hpp"

#include "symtrace/core/detail/source_location.hpp"
#include "symtrace/core/error.hpp"
#include "symtrace/ops/registry.hpp"

#include "torchscript/aten_ops.hpp"
#include "torchscript/builtins.hpp"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/constants.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <stdexcept>

namespace symtrace::torchscript::detail {

namespace {

namespace jit = torch::jit;

std::string qualified(const c10::Symbol& kind) { return kind.toQualString(); }

// A declared input name as a placeholder name: TorchScript's debug names may carry `.N`.
std::string input_name(std::string name, std::size_t index) {
  if (auto dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = fmt::format("input_{}", index);
  return name;
}

bool is_tensor_type(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::TensorType) return true;
  if (auto opt = t->cast<c10::OptionalType>()) return opt->getElementType()->kind() == c10::TypeKind::TensorType;
  return false;
}

}  // namespace

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::float32: return at::kFloat;
    case DType::int64: return at::kLong;
    case DType::bool_: return at::kBool;
    case DType::complex64: return at::kComplexFloat;
    case DType::quint8: return at::kQUInt8;
    case DType::qint8: return at::kQInt8;
    case DType::qint32: return at::kQInt32;
    case DType::quint4x2: return at::kQUInt4x2;
    case DType::quint2x4: return at::kQUInt2x4;
  }
  throw std::invalid_argument("unknown dtype");
}

std::optional<DType> symtrace_dtype(at::ScalarType t) {
  if (at::isFloatingType(t)) return DType::float32;
  if (t == at::kBool) return DType::bool_;
  if (at::isIntegralType(t, /*includeBool=*/false)) return DType::int64;
  if (at::isComplexType(t)) return DType::complex64;
  switch (t) {
    case at::kQUInt8: return DType::quint8;
    case at::kQInt8: return DType::qint8;
    case at::kQInt32: return DType::qint32;
    case at::kQUInt4x2: return DType::quint4x2;
    case at::kQUInt2x4: return DType::quint2x4;
    default: return std::nullopt;
  }
}

namespace {

// `t` as a contiguous CPU tensor of a dtype symtrace has, with that dtype.
std::pair<at::Tensor, DType> convertible(const at::Tensor& t, std::string_view name) {
  const std::optional<DType> dtype = symtrace_dtype(t.scalar_type());
  if (!dtype)
    throw std::invalid_argument(fmt::format(
        "tensor '{}' has dtype {}, which symtrace cannot hold: it has float32 (float16, bfloat16 and float64 "
        "are converted), int64 (other integers are converted), bool, complex64 and the quantized dtypes",
        name, c10::toString(t.scalar_type())));
  // A quantized tensor as it is: its quantizer stays LibTorch's (aten_view_of). The others in
  // symtrace's dtype (`to` copies only when that differs).
  at::Tensor c = is_quantized(*dtype) ? t.contiguous() : t.to(scalar_type(*dtype)).contiguous();
  if (c.is_sparse() || !c.device().is_cpu())
    throw std::invalid_argument(fmt::format("tensor '{}' is not a dense CPU tensor", name));
  return {std::move(c), *dtype};
}

}  // namespace

Tensor to_symtrace(const at::Tensor& t, std::string_view name, StorageMemo* memo) {
  auto [c, dtype] = convertible(t, name);
  const auto sizes = c.sizes();
  const Shape shape(std::vector<std::int64_t>(sizes.begin(), sizes.end()));
  if (c.numel() == 0) return Tensor::empty(shape, dtype);  // LibTorch may give no data pointer
  const c10::StorageImpl* storage = c.storage().unsafeGetStorageImpl();
  if (memo != nullptr && storage == t.storage().unsafeGetStorageImpl() && !is_quantized(dtype)) {
    // The file's own memory (not a conversion): one symtrace storage per LibTorch storage, so
    // tensors that share memory in the file (tied weights, views of one buffer) share it here.
    auto it = memo->find(storage);
    if (it == memo->end()) {
      const auto elements = static_cast<std::int64_t>(c.storage().nbytes() / c.element_size());
      Tensor whole = Tensor::from_blob(c.storage().data(), Shape{elements}, dtype, std::make_shared<const at::Tensor>(c));
      it = memo->emplace(storage, std::move(whole)).first;
    }
    if (it->second.dtype() == dtype)
      return Tensor::view_of(it->second, shape, symtrace::detail::contiguous_strides(shape), c.storage_offset());
  }
  void* data = c.data_ptr();
  // The symtrace tensor uses LibTorch's memory, which this handle keeps alive: loading a
  // model copies no weights (a float32 tensor converts to itself; others were converted once).
  return Tensor::from_blob(data, shape, dtype, std::make_shared<const at::Tensor>(std::move(c)));
}

void adopt_into(const Tensor& dst, const at::Tensor& src, std::string_view name, StorageMemo* memo) {
  Tensor mine = to_symtrace(src, name, memo);
  if (dst.shape() != mine.shape() || dst.dtype() != mine.dtype())
    throw std::invalid_argument(fmt::format("tensor '{}' is {}{}, where symtrace's layer holds {}{}", name,
                                            to_string(mine.dtype()), to_string(mine.shape()), to_string(dst.dtype()),
                                            to_string(dst.shape())));
  dst.set_(mine);
}

std::optional<Value> to_value(const c10::IValue& v, std::string_view name) {
  if (v.isNone()) return Value();
  if (v.isBool()) return Value(v.toBool());
  if (v.isInt()) return Value(v.toInt());
  if (v.isDouble()) return Value(v.toDouble());
  if (v.isString()) return Value(v.toStringRef());
  if (v.isDevice()) return Value(std::string(v.toDevice().str()));
  if (v.isTensor()) return Value(to_symtrace(v.toTensor(), name));
  if (v.isList() || v.isTuple()) {
    ValueList out;
    const auto elements = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    out.reserve(elements.size());
    for (const c10::IValue& e : elements) {
      auto converted = to_value(e, name);
      if (!converted) return std::nullopt;
      out.push_back(std::move(*converted));
    }
    return Value(std::move(out));
  }
  if (v.isCustomClass()) {
    // An object of a C++ class registered with LibTorch (torch::class_: a quantized layer's
    // packed weights): held as it is, for LibTorch's ops to take back (to_ivalue).
    std::string type = v.type()->str();  // __torch__.torch.classes.quantized.Conv2dPackedParamsBase
    if (type.starts_with("__torch__.")) type.erase(0, std::string_view("__torch__.").size());
    return Value(OpaqueObject::of(std::make_shared<const c10::IValue>(v), std::move(type)));
  }
  if (v.isObject() && !v.toObjectRef().type()->is_module()) {
    // An object of a TorchScript class: a dict of its attributes, as the executor holds it.
    const c10::ivalue::Object& obj = v.toObjectRef();
    ValueDict out;
    for (std::size_t k = 0; k < obj.slots().size(); ++k) {
      auto value = to_value(obj.getSlot(k), name);
      if (!value) return std::nullopt;
      out.insert_or_assign(Value(obj.type()->getAttributeName(k)), std::move(*value));
    }
    return Value(std::move(out));
  }
  if (v.isGenericDict()) {
    ValueDict out;
    for (const auto& entry : v.toGenericDict()) {
      auto key = to_value(entry.key(), name);
      auto value = to_value(entry.value(), name);
      if (!key || !value) return std::nullopt;
      out.insert_or_assign(std::move(*key), std::move(*value));
    }
    return Value(std::move(out));
  }
  return std::nullopt;
}

std::string demangled_class_name(const c10::ClassTypePtr& type) {
  static const std::regex mangle(R"(\.___torch_mangle_\d+)");
  return std::regex_replace(type->name()->qualifiedName(), mangle, "");
}

const Program& Compiler::method(const c10::ClassTypePtr& type, jit::Function& fn) { return compile(fn, type); }

const Program& Compiler::compile(jit::Function& fn, const c10::ClassTypePtr& self_type) {
  jit::GraphFunction& gf = jit::toGraphFunction(fn);
  const std::shared_ptr<jit::Graph>& graph = gf.graph();
  if (auto it = compiled_.find(graph.get()); it != compiled_.end()) return *it->second;
  Program& p = unit_.programs.emplace_back();
  compiled_.emplace(graph.get(), &p);
  try {
    fill(p, fn, graph, self_type);
  } catch (...) {
    compiled_.erase(graph.get());  // not cached half built (the deque keeps the dead entry)
    throw;
  }
  return p;
}

void Compiler::fill(Program& p, jit::Function& fn, const std::shared_ptr<jit::Graph>& graph,
                    const c10::ClassTypePtr& self_type) {
  p.name = fn.name();
  p.qualified_name = fn.qualname().qualifiedName();
  const c10::FunctionSchema& schema = fn.getSchema();
  const std::size_t first = self_type ? 1 : 0;
  for (std::size_t i = first; i < schema.arguments().size(); ++i) {
    const c10::Argument& a = schema.arguments()[i];
    p.input_names.push_back(input_name(a.name(), i - first));
    p.input_types.push_back(a.type()->annotation_str());
    std::optional<Value> dflt;
    if (a.default_value()) dflt = to_value(*a.default_value(), a.name());
    p.input_defaults.push_back(std::move(dflt));
  }
  if (!schema.returns().empty()) {
    const c10::TypePtr& r = schema.returns()[0].type();
    p.result_type = r->annotation_str();
    if (auto tuple = r->cast<c10::TupleType>()) p.result_arity = tuple->elements().size();
  }
  State s{p, self_type, {}, symtrace::detail::make_source_location(fmt::format("<TorchScript {}>", p.qualified_name), 0, p.name), std::nullopt};
  if (self_type) {
    Ref self;
    self.kind = Ref::Kind::module;
    self.type = self_type;
    s.refs.emplace(graph->inputs()[0], std::move(self));
  }
  for (std::size_t i = first; i < graph->inputs().size(); ++i) p.body.inputs.push_back(slot(s, graph->inputs()[i]));
  compile_block(s, graph->block(), p.body, false);
}

Slot Compiler::slot(State& s, const jit::Value* v) {
  auto [it, inserted] = s.refs.try_emplace(v);
  if (inserted) it->second.slot = s.program.num_slots++;
  if (it->second.kind != Ref::Kind::value)
    throw std::invalid_argument(fmt::format("a TorchScript value holding a module or a function (%{}) is used as "
                                            "data, which symtrace does not support",
                                            v->debugName()));
  return it->second.slot;
}

const Compiler::Ref* Compiler::module_ref(State& s, const jit::Value* v) {
  auto it = s.refs.find(v);
  return it != s.refs.end() && it->second.kind == Ref::Kind::module ? &it->second : nullptr;
}

std::source_location Compiler::where(State& s, const jit::Node* node) {
  jit::SourceRange range = node->sourceRange();
  if (!range.source()) return s.last_python.value_or(s.fallback);
  // The range in the archive's printed code; the Python that was scripted, when recorded.
  if (auto original = range.findSourceRangeThatGenerated()) range = *original;
  auto flc = range.file_line_col();
  if (!flc) return s.last_python.value_or(s.fallback);
  const auto& [file, line, column] = *flc;
  // The archive's own code (`code/__torch__/...py`) where Python lines were seen before it:
  // State::last_python.
  const bool archive = file.starts_with("code/") || file.empty() || file.front() == '<';
  if (archive && s.last_python) return *s.last_python;
  const std::source_location at = symtrace::detail::make_source_location(
      file, static_cast<std::uint32_t>(line), s.program.name, static_cast<std::uint32_t>(column + 1));
  if (!archive) s.last_python = at;
  return at;
}

namespace {

/// A TorchScript value's debug name as a Python variable's (`x.1` gives `x`); empty for a
/// name that is not an identifier once its `.N` is dropped.
std::string variable_name(const std::string& debug_name) {
  std::string name = debug_name.substr(0, debug_name.find('.'));
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return {};
  for (const char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return {};
  return name;
}

}  // namespace

void Compiler::compile_block(State& s, const jit::Block* block, Block& out, bool bind_inputs) {
  if (bind_inputs)
    for (const jit::Value* v : block->inputs()) out.inputs.push_back(slot(s, v));
  for (const jit::Node* node : block->nodes()) {
    const std::size_t first = out.instrs.size();
    compile_node(s, node, out);
    // The variable the op's value is assigned to names its node in a trace (`out.1`: `out`).
    if (node->outputs().size() != 1 || !node->output()->hasDebugName()) continue;
    const std::string name = variable_name(node->output()->debugName());
    if (name.empty()) continue;
    for (std::size_t i = first; i < out.instrs.size(); ++i) {
      Instr& instr = out.instrs[i];
      if (instr.kind == InstrKind::op || instr.kind == InstrKind::inplace_op || instr.kind == InstrKind::builtin)
        instr.value_name = name;
    }
  }
  for (const jit::Value* v : block->outputs()) {
    if (const Ref* m = module_ref(s, v); m || (s.refs.count(v) && s.refs.at(v).kind == Ref::Kind::function)) {
      Instr& instr = out.instrs.emplace_back();
      instr.kind = InstrKind::unsupported;
      instr.where = s.fallback;
      instr.name = "prim::Return";
      instr.text = "a block returns a module or a function, which symtrace does not support";
      out.outputs.push_back(s.program.num_slots++);
      continue;
    }
    out.outputs.push_back(slot(s, v));
  }
}

void Compiler::compile_node(State& s, const jit::Node* node, Block& out) {
  const c10::Symbol kind = node->kind();
  const std::source_location at = where(s, node);
  auto unsupported = [&](std::string name, std::string text) {
    Instr& instr = out.instrs.emplace_back();
    instr.kind = InstrKind::unsupported;
    instr.where = at;
    instr.name = std::move(name);
    instr.text = std::move(text);
    for (const jit::Value* v : node->outputs()) {
      if (s.refs.count(v) == 0) instr.outputs.push_back(slot(s, v));
    }
  };
  try {
    if (kind == c10::prim::Constant) {
      const jit::Value* v = node->output();
      if (auto fn_type = v->type()->cast<c10::FunctionType>()) {
        Ref r;
        r.kind = Ref::Kind::function;
        r.function = fn_type->function();
        s.refs.emplace(v, std::move(r));
        return;
      }
      std::optional<Value> value;
      if (node->mustBeNone()) value = Value();
      else if (auto iv = jit::toIValue(v)) value = to_value(*iv, v->debugName());
      if (!value) return unsupported("prim::Constant", fmt::format("a constant of type {} is not supported by symtrace",
                                                                   v->type()->annotation_str()));
      Instr& instr = out.instrs.emplace_back();
      instr.kind = InstrKind::constant;
      instr.where = at;
      instr.constant = std::move(*value);
      instr.outputs.push_back(slot(s, v));
      return;
    }
    if (kind == c10::prim::GetAttr) {
      const Ref* owner = module_ref(s, node->input(0));
      const std::string name = node->s(c10::attr::name);
      if (!owner && is_object(node->input(0))) return object_builtin(s, node, at, "prim::GetAttr", name, out);
      if (!owner) return unsupported("prim::GetAttr", fmt::format("attribute '{}' of a value that is not a module", name));
      const c10::ClassTypePtr& type = owner->type;
      std::vector<std::string> path = owner->path;
      if (auto index = type->findAttributeSlot(name)) {
        const c10::TypePtr& attr_type = type->getAttribute(*index);
        if (auto cls = attr_type->cast<c10::ClassType>(); cls && cls->is_module()) {
          Ref r;
          r.kind = Ref::Kind::module;
          r.path = std::move(path);
          r.path.push_back(name);
          r.type = cls;
          s.refs.emplace(node->output(), std::move(r));
          return;
        }
        Instr& instr = out.instrs.emplace_back();
        instr.where = at;
        instr.path = std::move(path);
        instr.name = name;
        instr.kind = is_tensor_type(attr_type) || type->is_parameter(*index) || type->is_buffer(*index)
                         ? InstrKind::tensor_attr
                     : name == "training" ? InstrKind::training
                                          : InstrKind::value_attr;
        instr.shared = attr_type->cast<c10::ListType>() || attr_type->cast<c10::DictType>();
        instr.outputs.push_back(slot(s, node->output()));
        return;
      }
      if (type->hasConstant(name)) {
        auto value = to_value(type->getConstant(name), name);
        if (!value) return unsupported("prim::GetAttr", fmt::format("constant '{}' has a type symtrace cannot hold", name));
        Instr& instr = out.instrs.emplace_back();
        instr.kind = InstrKind::constant;
        instr.where = at;
        instr.constant = std::move(*value);
        instr.outputs.push_back(slot(s, node->output()));
        return;
      }
      return unsupported("prim::GetAttr", fmt::format("the module has no attribute '{}'", name));
    }
    if (kind == c10::prim::SetAttr) {
      const std::string name = node->s(c10::attr::name);
      if (is_object(node->input(0))) {
        object_builtin(s, node, at, "prim::SetAttr", name, out);
        return write_back(s, node, out);
      }
      const Ref* owner = module_ref(s, node->input(0));
      if (!owner) return unsupported("prim::SetAttr", fmt::format("attribute '{}' of a value that is not a module or an object", name));
      const c10::ClassTypePtr& type = owner->type;
      const auto index = type->findAttributeSlot(name);
      if (!index) return unsupported("prim::SetAttr", fmt::format("the module has no attribute '{}'", name));
      const c10::TypePtr& attr_type = type->getAttribute(*index);
      if (auto cls = attr_type->cast<c10::ClassType>(); cls && cls->is_module())
        return unsupported("prim::SetAttr", fmt::format("assigning the submodule '{}' is not supported by symtrace", name));
      if (is_tensor_type(attr_type) || type->is_parameter(*index) || type->is_buffer(*index))
        return unsupported("prim::SetAttr", fmt::format("assigning the tensor attribute '{}' is not supported by symtrace", name));
      // A plain attribute (a cache such as MultiScaleRoIAlign's `scales`): a value of the run
      // (Note [Attributes set by a run]).
      Instr& instr = out.instrs.emplace_back();
      instr.kind = InstrKind::set_attr;
      instr.where = at;
      instr.path = owner->path;
      instr.name = name;
      instr.inputs.push_back(slot(s, node->input(1)));
      return;
    }
    if (kind == c10::prim::isinstance) {
      Instr& instr = out.instrs.emplace_back();
      instr.kind = InstrKind::builtin;
      instr.where = at;
      instr.name = "prim::isinstance";
      instr.builtin = find_builtin("prim::isinstance", "", false);
      ValueList types;
      for (const c10::TypePtr& t : node->tys(c10::attr::types)) types.push_back(Value(t->annotation_str()));
      instr.constant = std::move(types);
      instr.inputs.push_back(slot(s, node->input(0)));
      instr.outputs.push_back(slot(s, node->output()));
      return;
    }
    if (kind == c10::prim::CallMethod && is_object(node->input(0))) {
      // A method of an object (`image_list.to(device)`, `self.map_levels(boxes)`): run with the
      // object as its first argument; what the method sets on it is written back.
      const std::string name = node->s(c10::attr::name);
      const c10::ClassTypePtr type = node->input(0)->type()->expect<c10::ClassType>();
      if (jit::Function& method = type->getMethod(name); !method.isGraphFunction()) {
        // A method of a class registered with LibTorch (torch::class_): its code is C++, run
        // by LibTorch.
        Instr instr;
        instr.kind = InstrKind::call_method;
        instr.where = at;
        instr.name = method.qualname().qualifiedName();
        instr.method = &method;
        for (const jit::Value* v : node->inputs()) instr.inputs.push_back(slot(s, v));
        instr.outputs.push_back(slot(s, node->output()));
        out.instrs.push_back(std::move(instr));
        return;
      }
      Instr instr;
      instr.kind = InstrKind::call_object;
      instr.where = at;
      instr.name = name;
      instr.program = &compile(type->getMethod(name), nullptr);
      for (const jit::Value* v : node->inputs()) instr.inputs.push_back(slot(s, v));
      instr.outputs.push_back(slot(s, node->output()));
      out.instrs.push_back(std::move(instr));
      return;
    }
    if (kind == c10::prim::CallMethod) {
      const std::string name = node->s(c10::attr::name);
      const Ref* callee = module_ref(s, node->input(0));
      if (!callee) return unsupported("prim::CallMethod", fmt::format("method '{}' of a value that is not a module", name));
      Instr instr;
      instr.where = at;
      instr.path = callee->path;
      instr.name = name;
      for (std::size_t i = 1; i < node->inputs().size(); ++i) instr.inputs.push_back(slot(s, node->input(i)));
      // `forward`, an overload of it (`forward__0`), or a traced module's forward traced again
      // at a second call (`forward1`, which computes what forward does).
      const bool forward = name.starts_with("forward") &&
                           (name.size() == 7 || name.starts_with("forward__") ||
                            name.find_first_not_of("0123456789", 7) == std::string::npos);
      if (forward && !callee->path.empty()) {
        // A call of a child's forward: through the module-call seam, as `conv1(x)` in C++.
        instr.kind = InstrKind::call_module;
      } else {
        c10::ClassTypePtr type = callee->type;
        instr.kind = InstrKind::call_program;
        instr.program = &compile(type->getMethod(name), type);
      }
      instr.outputs.push_back(slot(s, node->output()));
      out.instrs.push_back(std::move(instr));
      return;
    }
    if (kind == c10::prim::CallFunction) {
      auto it = s.refs.find(node->input(0));
      if (it == s.refs.end() || it->second.kind != Ref::Kind::function)
        return unsupported("prim::CallFunction", "a call of a function value symtrace cannot resolve");
      Instr instr;
      instr.kind = InstrKind::call_program;
      instr.where = at;
      instr.program = &compile(*it->second.function, nullptr);
      instr.name = instr.program->qualified_name;
      for (std::size_t i = 1; i < node->inputs().size(); ++i) instr.inputs.push_back(slot(s, node->input(i)));
      instr.outputs.push_back(slot(s, node->output()));
      out.instrs.push_back(std::move(instr));
      return;
    }
    if (kind == c10::prim::If) {
      Instr instr;
      instr.kind = InstrKind::if_;
      instr.where = at;
      instr.inputs.push_back(slot(s, node->input(0)));
      for (const jit::Block* b : node->blocks()) compile_block(s, b, instr.blocks.emplace_back(), false);
      for (const jit::Value* v : node->outputs()) instr.outputs.push_back(slot(s, v));
      out.instrs.push_back(std::move(instr));
      return;
    }
    if (kind == c10::prim::Loop) {
      Instr instr;
      instr.kind = InstrKind::loop;
      instr.where = at;
      for (const jit::Value* v : node->inputs()) instr.inputs.push_back(slot(s, v));
      compile_block(s, node->blocks()[0], instr.blocks.emplace_back(), true);
      for (const jit::Value* v : node->outputs()) instr.outputs.push_back(slot(s, v));
      out.instrs.push_back(std::move(instr));
      return;
    }
    if (kind == c10::prim::RaiseException) {
      Instr instr;
      instr.kind = InstrKind::raise;
      instr.where = at;
      instr.text = "an exception";
      instr.inputs.push_back(slot(s, node->input(0)));
      out.instrs.push_back(std::move(instr));
      return;
    }
    Instr instr;
    instr.where = at;
    compile_op(s, node, instr, qualified(kind));
    out.instrs.push_back(std::move(instr));
    write_back(s, node, out);
  } catch (const std::exception& e) {
    unsupported(qualified(kind), e.what());
  }
}

// Note [Containers read from containers]: TorchScript's lists, dicts and objects are
// references (Note [Lists and dicts are references], program.hpp). One the run made is a ref
// already, but one that arrived plain inside a container (an op's list of lists, a constant)
// becomes a ref only in the slot a builtin changes it in, so `result[i]["boxes"] = boxes` would
// change a copy of `result[i]`. A node that changes its first input in place, where that input
// was read from a container (`aten::__getitem__`), is followed by an instruction that stores it
// back there, and so on up a chain of reads (`a[i][j].append(x)`). A list or dict attribute of
// a module needs none: its reads in a run share one ref.
void Compiler::write_back(State& s, const jit::Node* node, Block& out) {
  static constexpr std::string_view mutating[] = {"aten::append", "aten::_set_item", "aten::insert", "aten::extend",
                                                  "aten::update", "aten::pop", "aten::remove", "aten::clear",
                                                  "prim::SetAttr", "aten::add_"};
  const std::string kind = qualified(node->kind());
  if (node->inputs().empty() || std::find(std::begin(mutating), std::end(mutating), kind) == std::end(mutating)) return;
  if (kind == "aten::add_" && !node->input(0)->type()->cast<c10::ListType>()) return;  // `list += other` only
  static const BuiltinFn store = find_builtin("aten::_set_item", "", false);
  const jit::Value* v = node->input(0);
  for (; v->node()->kind() == c10::aten::__getitem__;) {
    const jit::Node* read = v->node();
    const c10::TypePtr& container = read->input(0)->type();
    if (!container->cast<c10::ListType>() && !container->cast<c10::DictType>()) return;
    Instr& instr = out.instrs.emplace_back();
    instr.kind = InstrKind::builtin;
    instr.where = out.instrs.size() > 1 ? out.instrs[out.instrs.size() - 2].where : s.fallback;
    instr.name = "aten::_set_item";
    instr.builtin = store;
    instr.inputs = {slot(s, read->input(0)), slot(s, read->input(1)), slot(s, v)};
    v = read->input(0);
  }
}

bool Compiler::is_object(const jit::Value* v) {
  auto cls = v->type()->cast<c10::ClassType>();
  return cls && !cls->is_module();
}

void Compiler::object_builtin(State& s, const jit::Node* node, std::source_location at, std::string_view kind,
                              const std::string& name, Block& out) {
  Instr& instr = out.instrs.emplace_back();
  instr.kind = InstrKind::builtin;
  instr.where = at;
  instr.name = std::string(kind);
  instr.text = name;
  instr.builtin = find_builtin(kind, "object", false);
  for (const jit::Value* v : node->inputs()) instr.inputs.push_back(slot(s, v));
  for (const jit::Value* v : node->outputs()) instr.outputs.push_back(slot(s, v));
}

void Compiler::compile_op(State& s, const jit::Node* node, Instr& instr, std::string_view kind) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  const std::string overload = schema ? schema->overload_name() : std::string();
  for (const jit::Value* v : node->outputs()) instr.outputs.push_back(slot(s, v));
  bool tensor_arguments = false;
  if (schema)
    for (const c10::Argument& a : schema->arguments())
      tensor_arguments = tensor_arguments || a.type()->kind() == c10::TypeKind::TensorType;
  if (BuiltinFn fn = find_builtin(kind, overload, tensor_arguments)) {
    instr.kind = InstrKind::builtin;
    instr.builtin = fn;
    instr.name = std::string(kind);
    for (const jit::Value* v : node->inputs()) instr.inputs.push_back(slot(s, v));
    if (schema && tensor_arguments && !kind.starts_with("prim::")) instr.fallback = libtorch_instr(s, node, instr, *schema);
    return;
  }
  instr.kind = InstrKind::unsupported;
  instr.name = std::string(kind);
  if (!schema || kind.starts_with("prim::")) {
    instr.text = fmt::format("the TorchScript operation {} is not supported by symtrace", kind);
    return;
  }
  // symtrace's own op first (aten's, and torchvision's `torchvision::nms`, which symtrace
  // implements itself), else LibTorch's (docs/design.md, decision 14).
  std::string why_not_native;
  if (native_op(s, node, instr, kind, *schema, why_not_native)) {
    instr.fallback = libtorch_instr(s, node, instr, *schema);
    return;
  }
  std::string why_not;
  if (std::shared_ptr<const Instr> libtorch = libtorch_instr(s, node, instr, *schema, &why_not)) {
    instr = *libtorch;
    return;
  }
  instr.kind = InstrKind::unsupported;
  instr.text = why_not_native.empty() ? why_not : fmt::format("{}, and LibTorch's cannot run here: {}", why_not_native, why_not);
}

std::shared_ptr<const Instr> Compiler::libtorch_instr(State& s, const jit::Node* node, const Instr& like,
                                                      const c10::FunctionSchema& schema, std::string* why_not) {
  try {
    const OpDef& op = aten_op(schema);
    auto out = std::make_shared<Instr>();
    out->kind = InstrKind::op;
    out->where = like.where;
    out->outputs = like.outputs;
    out->op = &op;
    out->name = op.name();
    for (std::size_t k = 0; k < op.schema.args.size(); ++k) {
      ArgSource a;
      if (k < node->inputs().size()) a.slot = slot(s, node->input(k));
      else if (op.schema.args[k].default_value) a.constant = *op.schema.args[k].default_value;
      else throw std::invalid_argument(fmt::format("{} is called without its argument '{}'", op.name(), op.schema.args[k].name));
      out->args.push_back(std::move(a));
    }
    return out;
  } catch (const std::invalid_argument& e) {
    if (why_not != nullptr) *why_not = e.what();
    return nullptr;
  }
}

bool Compiler::native_op(State& s, const jit::Node* node, Instr& instr, std::string_view kind,
                         const c10::FunctionSchema& aten_schema, std::string& why_not) {
  const std::string_view ns = kind.starts_with("aten::") ? "aten::" : kind.starts_with("torchvision::") ? "torchvision::"
                                                                                                        : "";
  if (ns.empty()) return false;
  const std::string& overload = aten_schema.overload_name();
  const c10::FunctionSchema* schema = &aten_schema;
  const OpRegistry& registry = OpRegistry::instance();
  std::string name = std::string(registry_name(kind.substr(ns.size())));
  const OpDef* op = registry.find(name);
  bool inplace = false;
  if (!op && name.size() > 1 && name.back() == '_') {
    op = registry.find(registry_name(std::string_view(name).substr(0, name.size() - 1)));
    inplace = op != nullptr;
  }
  if (!op) {
    why_not = fmt::format("symtrace has no op {}{}", kind, overload.empty() ? "" : "." + overload);
    return false;
  }
  const auto& aten_args = schema->arguments();
  auto find_aten = [&](std::string_view arg) -> std::optional<std::size_t> {
    for (std::size_t k = 0; k < aten_args.size(); ++k) {
      const std::string& a = aten_args[k].name();
      if (a == arg || (arg == "input" && a == "self") || (arg == "self" && a == "input") ||
          (arg == "other" && a == "mat2") || (arg == "boxes" && a == "dets"))
        return k;
    }
    return std::nullopt;
  };
  std::vector<bool> used(aten_args.size(), false);
  std::vector<ArgSource> args;
  for (const ArgSpec& spec : op->schema.args) {
    ArgSource a;
    if (auto k = find_aten(spec.name); k && *k < node->inputs().size()) {
      // conv1d.padding's padding='same': a string where symtrace's op takes sizes.
      if (aten_args[*k].type()->kind() == c10::TypeKind::StringType && spec.type != ArgType::str) {
        why_not = fmt::format("{}{} is called with {} as a string, which symtrace's {} does not take", kind,
                              overload.empty() ? "" : "." + overload, spec.name, op->name());
        return false;
      }
      used[*k] = true;
      a.slot = slot(s, node->input(*k));
    } else if (spec.default_value) {
      a.constant = *spec.default_value;
    } else {
      why_not = fmt::format("{} has no argument '{}', which symtrace's {} needs", kind, spec.name, op->name());
      return false;
    }
    args.push_back(std::move(a));
  }
  for (std::size_t k = 0; k < aten_args.size() && k < node->inputs().size(); ++k) {
    if (used[k] || is_ignorable_argument(aten_args[k].name())) continue;
    // An argument symtrace's op does not take is fine at its default value.
    const auto given = jit::toIValue(node->input(k));
    const auto& dflt = aten_args[k].default_value();
    const bool at_default = given && ((dflt && *given == *dflt) || (given->isNone() && !dflt));
    if (!at_default) {
      why_not = fmt::format("{} is called with {}={}, which symtrace's {} does not take", kind, aten_args[k].name(),
                            given ? fmt::format("{}", fmt::streamed(*given)) : "a computed value", op->name());
      return false;
    }
  }
  instr.kind = inplace ? InstrKind::inplace_op : InstrKind::op;
  instr.op = op;
  instr.args = std::move(args);
  instr.name = op->name();
  if (inplace) instr.copy_op = &registry.get("copy_");
  return true;
}

}  // namespace symtrace::torchscript::detail

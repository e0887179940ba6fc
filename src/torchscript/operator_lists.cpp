// Operator lists of a TorchScript file for a selective build, found as PyTorch's mobile model
// tracer finds them (torch/csrc/jit/mobile/model_tracer): the root operators from the file's
// code, and the operators LibTorch runs, observed by a RecordFunction callback of LibTorch's
// own, while it loads the file and while it runs the forward.
//
// Root operators are what the lite interpreter's bytecode of the model's methods calls as
// operators (`torch.jit.export_opnames`): the methods are inlined into their callers and every
// node counts, run or not, except the kinds the bytecode compiler turns into instructions of
// their own (constants, attributes, control flow, calls, list and tuple construction, ...; the
// `emitNode` switch of LibTorch's interpreter/code_impl.h, with its promoted ops).
#include "symtrace/torchscript/operator_lists.hpp"

#include "torchscript/compile.hpp"
#include "torchscript/file.hpp"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/operator_name.h>
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace symtrace::torchscript {

namespace {

namespace jit = torch::jit;

// ---- Operators LibTorch runs ----------------------------------------------------------------

/// Where the observing callback of this thread writes (LibTorch's callbacks are plain function
/// pointers, so the set is reached through the thread).
thread_local std::set<std::string>* t_observed = nullptr;

std::unique_ptr<at::ObserverContext> observe_operator(const at::RecordFunction& fn) {
  if (t_observed != nullptr) {
    if (const c10::optional<c10::OperatorName> name = fn.operator_name()) t_observed->insert(c10::toString(*name));
  }
  return nullptr;
}

/// Records in `into` the name (with overload) of every operator LibTorch's dispatcher runs on
/// this thread for the scope's lifetime.
class ObserveOperators {
 public:
  explicit ObserveOperators(std::set<std::string>& into)
      : handle_(at::addThreadLocalCallback(
            at::RecordFunctionCallback(&observe_operator).scopes({at::RecordScope::FUNCTION}))) {
    t_observed = &into;
  }
  ObserveOperators(const ObserveOperators&) = delete;
  ObserveOperators& operator=(const ObserveOperators&) = delete;
  ~ObserveOperators() {
    t_observed = nullptr;
    at::removeCallback(handle_);
  }

 private:
  at::RecordFunctionGuard enabled_{true};  // observed even where the caller turned LibTorch's off
  at::CallbackHandle handle_;
};

// ---- Root operators -------------------------------------------------------------------------

/// Whether the bytecode compiler emits `node` as an operator call (an OP instruction).
bool is_operator_call(const jit::Node* node) {
  static const std::unordered_set<c10::Symbol> instructions = {
      // instructions of their own
      c10::prim::Drop, c10::prim::Constant, c10::prim::If, c10::prim::Loop, c10::aten::wait, c10::prim::Param,
      c10::prim::CallFunction, c10::prim::CallMethod, c10::prim::TypeCheck, c10::prim::BailOut, c10::prim::profile,
      c10::prim::profile_ivalue, c10::prim::GetAttr, c10::prim::SetAttr, c10::prim::ListUnpack,
      c10::prim::TupleConstruct, c10::prim::ListConstruct, c10::prim::DictConstruct, c10::prim::CreateObject,
      c10::prim::isinstance, c10::prim::TupleSlice, c10::prim::fork, c10::aten::warn, c10::prim::Enter,
      c10::prim::Exit, c10::prim::Return,
      // operators promoted to instructions
      c10::prim::RaiseException, c10::prim::TupleIndex, c10::prim::Uninitialized, c10::prim::dtype,
      c10::prim::device, c10::aten::dim, c10::prim::is_cuda, c10::aten::__not__, c10::aten::format,
      c10::aten::__is__, c10::aten::__isnot__, c10::prim::NumToTensor, c10::prim::tolist};
  if (instructions.count(node->kind()) != 0) return false;
  // A dict's item read is an instruction too (DICT_INDEX).
  if (node->kind() == c10::aten::__getitem__ && node->inputs().size() == 2 &&
      node->input(0)->type()->kind() == c10::TypeKind::DictType) {
    return false;
  }
  return true;
}

/// The qualified name of a registered class (`__torch__.torch.classes.NS.Name`), or empty.
std::string custom_class_name(const c10::TypePtr& type) {
  if (const auto cls = type->cast<c10::ClassType>()) {
    if (cls->name()) {
      std::string name = cls->name()->qualifiedName();
      if (name.starts_with("__torch__.torch.classes.")) return name;
    }
  }
  return {};
}

/// Adds every registered class `type` names, at any depth (Optional[...], List[...]).
void add_classes_of(const c10::TypePtr& type, std::set<std::string>& classes) {
  if (std::string name = custom_class_name(type); !name.empty()) classes.insert(std::move(name));
  for (const c10::TypePtr& contained : type->containedTypes()) add_classes_of(contained, classes);
}

void add_operators(const jit::Block* block, std::set<std::string>& ops, std::set<std::string>& classes) {
  for (const jit::Node* node : block->nodes()) {
    for (const jit::Block* sub : node->blocks()) add_operators(sub, ops, classes);
    for (const jit::Value* v : node->outputs()) add_classes_of(v->type(), classes);  // objects it creates
    if (!is_operator_call(node)) continue;
    if (const c10::FunctionSchema* schema = node->maybeSchema()) {
      ops.insert(c10::toString(schema->operator_name()));
    } else {
      ops.insert(node->kind().toQualString());
    }
  }
}

/// The methods whose operators are root operators: the module's own (forward and exported
/// ones), and the __getstate__/__setstate__ pair of every object it holds that has one (an
/// object with the pair is not looked into further), as LibTorch's export does.
std::vector<jit::Method> root_methods(const jit::Module& module) {
  std::vector<jit::Method> methods = module.get_methods();
  std::vector<c10::intrusive_ptr<c10::ivalue::Object>> stack{module._ivalue()};
  while (!stack.empty()) {
    const c10::intrusive_ptr<c10::ivalue::Object> object = stack.back();
    stack.pop_back();
    const c10::ClassTypePtr type = object->type();
    jit::Function* setstate = type->findMethod("__setstate__");
    jit::Function* getstate = type->findMethod("__getstate__");
    if (setstate != nullptr && getstate != nullptr) {
      if (setstate->isGraphFunction()) methods.emplace_back(object, setstate);
      if (getstate->isGraphFunction()) methods.emplace_back(object, getstate);
      continue;
    }
    for (std::size_t i = 0; i < type->numAttributes(); ++i) {
      const c10::IValue slot = object->getSlot(i);
      if (slot.isObject()) stack.push_back(slot.toObject());
    }
  }
  return methods;
}

/// Adds the registered classes of the objects `value` holds, at any depth.
void add_held_classes(const c10::IValue& value, std::set<std::string>& classes,
                      std::unordered_set<const void*>& seen) {
  if (value.isObject()) {
    const c10::intrusive_ptr<c10::ivalue::Object> object = value.toObject();
    if (!seen.insert(object.get()).second) return;
    if (std::string name = custom_class_name(object->type()); !name.empty()) {
      classes.insert(std::move(name));
      return;
    }
    for (std::size_t i = 0; i < object->slots().size(); ++i) add_held_classes(object->getSlot(i), classes, seen);
  } else if (value.isList()) {
    for (const c10::IValue& e : value.toListRef()) add_held_classes(e, classes, seen);
  } else if (value.isTuple()) {
    for (const c10::IValue& e : value.toTupleRef().elements()) add_held_classes(e, classes, seen);
  } else if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) add_held_classes(item.value(), classes, seen);
  }
}

/// Adds the registered classes the schema of the operator `name` takes or returns.
void add_classes_of_operator(const std::string& name, std::set<std::string>& classes) {
  const std::size_t dot = name.find('.');
  const c10::OperatorName op(name.substr(0, dot), dot == std::string::npos ? "" : name.substr(dot + 1));
  const c10::optional<c10::OperatorHandle> handle = c10::Dispatcher::singleton().findSchema(op);
  if (!handle) return;
  const c10::FunctionSchema& schema = handle->schema();
  for (const c10::Argument& a : schema.arguments()) add_classes_of(a.type(), classes);
  for (const c10::Argument& r : schema.returns()) add_classes_of(r.type(), classes);
}

std::vector<std::string> without(const std::set<std::string>& from, const std::set<std::string>& a,
                                 const std::set<std::string>& b = {}) {
  std::vector<std::string> out;
  for (const std::string& s : from) {
    if (a.count(s) == 0 && b.count(s) == 0) out.push_back(s);
  }
  return out;
}

}  // namespace

OperatorLists operator_lists(const std::filesystem::path& path, const ValueList& inputs) {
  std::set<std::string> loading;
  jit::Module module = [&] {
    const ObserveOperators observe(loading);
    return detail::read_file(path);
  }();

  std::set<std::string> root;
  std::set<std::string> classes;
  for (const jit::Method& method : root_methods(module)) {
    const std::shared_ptr<jit::Graph> graph = method.graph()->copy();
    jit::Inline(*graph);
    jit::EliminateDeadCode(graph);
    add_operators(graph->block(), root, classes);
  }
  std::unordered_set<const void*> seen;
  add_held_classes(module._ivalue(), classes, seen);

  std::set<std::string> running;
  {
    // Making the inputs counts, as the mobile model tracer counts copying its bundled inputs:
    // a runtime makes them too.
    const ObserveOperators observe(running);
    std::vector<c10::IValue> args = detail::libtorch_inputs(inputs);
    try {
      const c10::InferenceMode guard;
      (void)module.forward(std::move(args));
    } catch (const std::exception& e) {  // c10::Error, or the interpreter's own errors
      throw std::invalid_argument(fmt::format("{}: LibTorch's forward failed: {}", path.string(), detail::first_line(e.what())));
    }
  }
  for (const std::string& op : root) add_classes_of_operator(op, classes);
  for (const std::string& op : running) add_classes_of_operator(op, classes);

  OperatorLists lists;
  lists.root_operators.assign(root.begin(), root.end());
  lists.traced_operators = without(running, root);
  lists.load_operators = without(loading, root, running);
  for (const std::string& c : classes) lists.custom_classes.push_back(c.substr(std::string_view("__torch__.").size()));
  return lists;
}

}  // namespace symtrace::torchscript

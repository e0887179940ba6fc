#include "symtrace/nn/module.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/stack_guard.hpp"
#include "symtrace/core/thread_context.hpp"
#include "symtrace/core/value_name.hpp"
#include "symtrace/nn/module_index.hpp"
#include "symtrace/nn/typed_module.hpp"
#include "symtrace/ops/record_function.hpp"
#include "symtrace/nn/detail/join_path.hpp"
#include "nn/type_name.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <typeinfo>
#include <unordered_set>

namespace symtrace {

namespace {

// Past this many names a module keeps a hash index (registration stays O(1) per name in a
// Sequential of 100k blocks); below it, scanning a few names is cheaper than hashing.
constexpr std::size_t kIndexThreshold = 16;

using detail::join_path;

std::string_view slot_kind_name(int kind) {
  switch (kind) {
    case 0: return "submodule";
    case 1: return "parameter";
    default: return "buffer";
  }
}

}  // namespace

namespace detail {
bool is_valid_module_name(std::string_view name) noexcept {
  // PyTorch's rule (torch.nn.Module.add_module): any string but the empty one and those
  // holding '.', which separates the components of a path. torchvision's RegNets name
  // blocks `block1-0`; node names are sanitised from paths (`block1_0`).
  return !name.empty() && name.find('.') == std::string_view::npos;
}
}  // namespace detail

Module::Module(std::shared_ptr<const ForwardSignature> signature) : signature_(std::move(signature)) {}

namespace {
/// The children being released by the outermost module destruction on this thread, or null
/// (Note [Deep destruction]).
thread_local std::vector<std::shared_ptr<Module>>* t_released_children = nullptr;
}  // namespace

Module::~Module() {
  for (const auto& [name, child] : children_) child->registrations_.fetch_sub(1, std::memory_order_relaxed);
  for (const TensorSlot& slot : parameters_) slot.tensor.impl_ptr()->registrations.remove();
  for (const TensorSlot& slot : buffers_) slot.tensor.impl_ptr()->registrations.remove();
  // Note [Deep destruction]: a child whose last owner is this module would be destroyed inside
  // this destructor, and its children inside its own: one nest of C++ frames per level, which
  // overflows the stack when a chain of many thousand modules is freed. So the outermost
  // destruction on a thread collects the children of every module it destroys and releases
  // them one at a time, in a loop. Without memory to collect them, they are released here.
  if (children_.empty()) return;
  if (t_released_children != nullptr) {
    try {
      for (auto& [name, child] : children_) t_released_children->push_back(std::move(child));
    } catch (...) {  // NOLINT(bugprone-empty-catch): the rest are released in place
    }
    return;
  }
  std::vector<std::shared_ptr<Module>> released;
  t_released_children = &released;
  try {
    for (auto& [name, child] : children_) released.push_back(std::move(child));
  } catch (...) {  // NOLINT(bugprone-empty-catch): the rest are released in place
  }
  while (!released.empty()) {
    std::shared_ptr<Module> child = std::move(released.back());
    released.pop_back();
    child.reset();  // may add its own children to `released`
  }
  t_released_children = nullptr;
}

const detail::TypeFacts& Module::facts() const {
  // Looked up in the table (under its lock) once, then read without it. The type is checked:
  // during construction the dynamic type is a base's, and a call then must not stick.
  const std::type_info& type = typeid(*this);
  const detail::TypeFacts* f = facts_.load(std::memory_order_acquire);
  if (f != nullptr && *f->type == type) return *f;
  f = &detail::type_facts(type);
  facts_.store(f, std::memory_order_release);
  return *f;
}

bool Module::is_builtin_layer() const { return facts().builtin_layer; }

const std::string& Module::type_name() const {
  if (!type_name_.empty()) return type_name_;
  return facts().name;
}

// ---- The type-erased entry point -------------------------------------------------------------

std::vector<std::string> Module::input_names() const {
  std::vector<std::string> names;
  if (!signature_) return names;
  names.reserve(signature_->parameters.size());
  for (const ForwardParameter& p : signature_->parameters) names.push_back(p.name);
  return names;
}

void Module::set_input_names(std::vector<std::string> names, Where where) {
  if (!signature_)
    throw_invalid_argument(where, "set_input_names() on {}: it is not callable (it has no forward)",
                           type_name());
  const std::size_t n = signature_->parameters.size();
  if (names.size() != n)
    throw_invalid_argument(where, "set_input_names() on {}: forward takes {} argument{}, got {} name{}",
                           type_name(), n, n == 1 ? "" : "s", names.size(),
                           names.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < n; ++i) {
    const bool identifier = !names[i].empty() && !(names[i][0] >= '0' && names[i][0] <= '9') &&
                            std::all_of(names[i].begin(), names[i].end(), [](char c) {
                              return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
                            });
    if (!identifier)
      throw_invalid_argument(where,
                             "set_input_names() on {}: '{}' is not a valid input name (use "
                             "letters, digits and '_', not starting with a digit)",
                             type_name(), names[i]);
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        throw_invalid_argument(where, "set_input_names() on {}: the name '{}' is given twice",
                               type_name(), names[i]);
  }
  auto sig = std::make_shared<ForwardSignature>(*signature_);
  for (std::size_t i = 0; i < n; ++i) sig->parameters[i].name = std::move(names[i]);
  signature_ = std::move(sig);
}

namespace detail {
namespace {
struct BoxedArgsStack {
  std::deque<ValueList> lists;  // a deque: a list in use never moves
  std::size_t depth = 0;
};
thread_local BoxedArgsStack t_boxed_args;
ValueList& next_boxed_args() {
  BoxedArgsStack& stack = t_boxed_args;
  if (stack.depth == stack.lists.size()) stack.lists.emplace_back();
  return stack.lists[stack.depth++];
}
}  // namespace

BoxedArgs::BoxedArgs() : list_(next_boxed_args()) {}

BoxedArgs::~BoxedArgs() {
  list_.clear();
  --t_boxed_args.depth;
}
}  // namespace detail

namespace {
/// Note [Stack guard]: an eager call the thread's stack cannot hold (a traced call is checked
/// by the tracer, which names the trace's depth).
[[noreturn, gnu::noinline, gnu::cold]] void throw_stack_depth_error(const Module& module, std::source_location where) {
  throw StackDepthError(fmt::format("{}:{}: a call of {} ran out of stack: {}", where.file_name(), where.line(),
                                    module.type_name(), detail::stack_depth_advice()),
                        0);
}
/// A call of a module without a forward; cold, in a frame of its own: Module::call is on the
/// stack once per level of a traced model (Note [Small frames per level] in
/// src/robust/robust_tracer.cpp).
[[noreturn, gnu::noinline, gnu::cold]] void throw_not_callable(const Module& module, std::source_location where) {
  throw_invalid_argument(where, "{} is not callable: it has no forward (index it and call its elements)",
                         module.type_name());
}
}  // namespace

Value Module::call(const ValueList& args, Where where) {
  if (!signature_) throw_not_callable(*this, where);
  if (has_callbacks()) [[unlikely]]
    return call_observed(args, where);  // Note [Observers off]
  if (Interposer* interposer = current_interposer()) {
    const detail::HideValueName callers_name;  // the name is for the caller's op (core/value_name.hpp)
    return interposer->call_module(*this, args, where);
  }
  return run_forward(args, where);
}

Value Module::run_forward(const ValueList& args, Where where) {
  if (detail::stack_may_be_low() && detail::stack_exhausted()) [[unlikely]]
    throw_stack_depth_error(*this, where);
  return forward_values(args);
}

Value Module::call_observed(const ValueList& args, Where where) {
  RecordFunctionRun run(*this, type_name(), args, where);
  Interposer* interposer = current_interposer();
  const detail::HideValueName callers_name;
  Value result = interposer != nullptr ? interposer->call_module(*this, args, where) : run_forward(args, where);
  if (run.wants_outputs()) {
    run.end(std::span<const Value>(&result, 1));
  } else {
    run.end();
  }
  return result;
}

Value Module::forward_values(const ValueList&) {
  throw std::invalid_argument(fmt::format(
      "{} is not callable: it has no forward (index it and call its elements)", type_name()));
}

// ---- Registration ----------------------------------------------------------------------------

std::optional<Module::Slot> Module::find_slot(std::string_view name) const noexcept {
  if (index_) {
    auto it = index_->find(name);
    if (it == index_->end()) return std::nullopt;
    return it->second;
  }
  const auto at = [](SlotKind kind, std::size_t i) { return Slot{kind, static_cast<std::uint32_t>(i)}; };
  for (std::size_t i = 0; i < children_.size(); ++i)
    if (children_[i].first == name) return at(SlotKind::child, i);
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].name == name) return at(SlotKind::parameter, i);
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].name == name) return at(SlotKind::buffer, i);
  return std::nullopt;
}

void Module::add_slot(std::string_view name, SlotKind kind, std::size_t index) {
  if (!index_) {
    if (children_.size() + parameters_.size() + buffers_.size() <= kIndexThreshold) return;
    // Built aside and swapped in, so a failure leaves no half-built index behind.
    auto built = std::make_unique<SlotIndex>();
    for (std::size_t i = 0; i < children_.size(); ++i)
      built->emplace(children_[i].first, Slot{SlotKind::child, static_cast<std::uint32_t>(i)});
    for (std::size_t i = 0; i < parameters_.size(); ++i)
      built->emplace(parameters_[i].name, Slot{SlotKind::parameter, static_cast<std::uint32_t>(i)});
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      built->emplace(buffers_[i].name, Slot{SlotKind::buffer, static_cast<std::uint32_t>(i)});
    index_ = std::move(built);
    return;
  }
  index_->emplace(std::string(name), Slot{kind, static_cast<std::uint32_t>(index)});
}

template <class Vector>
void Module::index_or_roll_back(Vector& entries, std::string_view name, SlotKind kind) {
  try {
    add_slot(name, kind, entries.size() - 1);
  } catch (...) {
    entries.pop_back();  // registration is all or nothing
    throw;
  }
}

void Module::check_new_name(std::string_view name, std::string_view what, Where where) const {
  if (!detail::is_valid_module_name(name))
    throw_invalid_argument(where,
                           "invalid {} name '{}' in {}: a name is not empty and holds no '.' (which "
                           "separates the components of a path)",
                           what, name, type_name());
  if (const auto slot = find_slot(name))
    throw_invalid_argument(where, "duplicate name '{}' in {}: a {} named '{}' is already registered",
                           name, type_name(), slot_kind_name(static_cast<int>(slot->kind)), name);
}

void Module::check_no_cycle(const Module& child, std::string_view name, Where where) const {
  const auto cycle = [&] {
    throw_invalid_argument(where,
                           "registering '{}' ({}) in {} would make a cycle: the module would "
                           "contain itself",
                           name, child.type_name(), type_name());
  };
  if (&child == this) cycle();
  // Registering `child` here makes a cycle exactly when this module is `child` or one of its
  // descendants. A module no parent holds (a model built bottom up: each new module
  // registers the ones made before) is nobody's descendant, nor is anything under a child
  // without children (a model built top down): both are answered in O(1). Otherwise the
  // child's subtree is searched, each module once.
  if (child.children_.empty() || num_registrations() == 0) return;
  std::vector<const Module*> stack{&child};
  std::unordered_set<const Module*> seen{&child};
  while (!stack.empty()) {
    const Module* m = stack.back();
    stack.pop_back();
    for (const auto& [n, c] : m->children_) {
      if (c.get() == this) cycle();
      if (seen.insert(c.get()).second) stack.push_back(c.get());
    }
  }
}

void Module::add_child(std::string name, std::shared_ptr<Module> module, Where where) {
  check_new_name(name, "submodule", where);
  if (!module)
    throw_invalid_argument(where, "register_module('{}') in {}: the module is null", name, type_name());
  check_no_cycle(*module, name, where);
  children_.emplace_back(std::move(name), std::move(module));
  index_or_roll_back(children_, children_.back().first, SlotKind::child);
  children_.back().second->registrations_.fetch_add(1, std::memory_order_relaxed);
}

void Module::replace_child(std::string_view name, std::shared_ptr<Module> module, Where where) {
  const auto slot = find_slot(name);
  if (!slot || slot->kind != SlotKind::child)
    throw_invalid_argument(where, "replace_module('{}') in {}: there is no submodule named '{}'", name,
                           type_name(), name);
  if (!module)
    throw_invalid_argument(where, "replace_module('{}') in {}: the module is null", name, type_name());
  check_no_cycle(*module, name, where);
  module->registrations_.fetch_add(1, std::memory_order_relaxed);
  const std::shared_ptr<Module> old = std::exchange(children_[slot->index].second, std::move(module));
  old->registrations_.fetch_sub(1, std::memory_order_relaxed);
}

Tensor Module::register_parameter(std::string name, Tensor tensor, Where where) {
  check_new_name(name, "parameter", where);
  if (!tensor.defined())
    throw_invalid_argument(where, "register_parameter('{}') in {}: the tensor is undefined", name,
                           type_name());
  if (tensor.is_symbolic())
    throw_invalid_argument(where,
                           "register_parameter('{}') in {}: the tensor is symbolic; parameters "
                           "hold data",
                           name, type_name());
  parameters_.push_back(TensorSlot{std::move(name), tensor, true});
  index_or_roll_back(parameters_, parameters_.back().name, SlotKind::parameter);
  tensor.impl_ptr()->registrations.add();
  return tensor;
}

Tensor Module::register_buffer(std::string name, Tensor tensor, bool persistent, Where where) {
  check_new_name(name, "buffer", where);
  if (!tensor.defined())
    throw_invalid_argument(where, "register_buffer('{}') in {}: the tensor is undefined", name,
                           type_name());
  if (tensor.is_symbolic())
    throw_invalid_argument(where,
                           "register_buffer('{}') in {}: the tensor is symbolic; buffers hold data",
                           name, type_name());
  buffers_.push_back(TensorSlot{std::move(name), tensor, persistent});
  index_or_roll_back(buffers_, buffers_.back().name, SlotKind::buffer);
  tensor.impl_ptr()->registrations.add();
  return tensor;
}

// ---- Queries ---------------------------------------------------------------------------------

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  out.reserve(children_.size());
  std::unordered_set<const Module*> seen;
  for (const auto& [name, child] : children_) {
    // A child registered twice is listed once: a scan of the few listed so far, a set for many.
    const bool first = children_.size() <= 32 ? std::none_of(out.begin(), out.end(), [&](const auto& c) { return c == child; })
                                              : seen.insert(child.get()).second;
    if (first) out.push_back(child);
  }
  return out;
}

std::vector<NamedModule> Module::named_modules(const std::string& prefix) const {
  return ModuleIndex(*this, prefix).named_modules();
}

void Module::collect_tensors(bool parameters, bool recurse, std::vector<NamedTensor>& out) const {
  std::unordered_set<const detail::TensorImpl*> seen;
  const auto add = [&](const std::string& prefix, const Module& m) {
    for (const TensorSlot& slot : parameters ? m.parameters_ : m.buffers_)
      if (seen.insert(slot.tensor.impl_ptr().get()).second)
        out.push_back({join_path(prefix, slot.name), slot.tensor});
  };
  if (!recurse) {
    add({}, *this);
    return;
  }
  for (const NamedModule& nm : named_modules()) add(nm.path, *nm.module);
}

std::vector<NamedTensor> Module::named_parameters(bool recurse) const {
  std::vector<NamedTensor> out;
  collect_tensors(true, recurse, out);
  return out;
}

std::vector<NamedTensor> Module::named_buffers(bool recurse) const {
  std::vector<NamedTensor> out;
  collect_tensors(false, recurse, out);
  return out;
}

TensorList Module::parameters(bool recurse) const {
  TensorList out;
  for (NamedTensor& nt : named_parameters(recurse)) out.push_back(std::move(nt.tensor));
  return out;
}

TensorList Module::buffers(bool recurse) const {
  TensorList out;
  for (NamedTensor& nt : named_buffers(recurse)) out.push_back(std::move(nt.tensor));
  return out;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (const NamedTensor& nt : named_parameters()) n += *nt.tensor.shape().numel();  // parameters are concrete: known shapes
  return n;
}

void detail::prefetch_for_call(const Module& module) noexcept {
  if (!module.children_.empty()) __builtin_prefetch(module.children_.data());
  if (!module.parameters_.empty()) __builtin_prefetch(module.parameters_.data());
  if (module.parameters_.size() > 1) __builtin_prefetch(module.parameters_.data() + 1);
}

Module* Module::find_child(std::string_view name) const noexcept {
  const auto slot = find_slot(name);
  return slot && slot->kind == SlotKind::child ? children_[slot->index].second.get() : nullptr;
}

Tensor Module::find_parameter(std::string_view name) const noexcept {
  const auto slot = find_slot(name);
  return slot && slot->kind == SlotKind::parameter ? parameters_[slot->index].tensor : Tensor();
}

Tensor Module::find_buffer(std::string_view name) const noexcept {
  const auto slot = find_slot(name);
  return slot && slot->kind == SlotKind::buffer ? buffers_[slot->index].tensor : Tensor();
}

namespace {
std::string list_names(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  constexpr std::size_t shown = 12;
  std::string s = fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), shown)), ", "));
  if (names.size() > shown) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}
}  // namespace

Module& Module::get_submodule(std::string_view path, Where where) const {
  const Module* m = this;
  std::string walked;
  std::size_t pos = 0;
  while (!path.empty()) {
    const std::size_t dot = path.find('.', pos);
    const std::string_view part = path.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    const Module* next = m->find_child(part);
    if (!next) {
      std::vector<std::string> names;
      for (const auto& [n, c] : m->children_) names.push_back(n);
      throw_invalid_argument(where, "no submodule '{}' in {}: {} has no child '{}' (its children: {})",
                             path, type_name(),
                             walked.empty() ? fmt::format("the root ({})", m->type_name())
                                            : fmt::format("'{}' ({})", walked, m->type_name()),
                             part, list_names(names));
    }
    walked = join_path(walked, part);
    m = next;
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  return const_cast<Module&>(*m);
}

Tensor Module::get_tensor(std::string_view path, Where where) const {
  const std::size_t dot = path.rfind('.');
  const Module& owner = dot == std::string_view::npos ? *this : get_submodule(path.substr(0, dot), where);
  const std::string_view name = dot == std::string_view::npos ? path : path.substr(dot + 1);
  const auto slot = owner.find_slot(name);
  if (!slot || slot->kind == SlotKind::child) {
    std::vector<std::string> names;
    for (const TensorSlot& s : owner.parameters_) names.push_back(s.name);
    for (const TensorSlot& s : owner.buffers_) names.push_back(s.name);
    throw_invalid_argument(where, "no parameter or buffer '{}' in {}: {} has none named '{}' (it has: {})",
                           path, type_name(), owner.type_name(), name, list_names(names));
  }
  return slot->kind == SlotKind::parameter ? owner.parameters_[slot->index].tensor
                                           : owner.buffers_[slot->index].tensor;
}

// ---- Mode ------------------------------------------------------------------------------------

Module& Module::train(bool on) {
  training_ = on;
  on_train(on);
  for (const auto& [name, child] : children_) child->train(on);
  return *this;
}

// ---- State -----------------------------------------------------------------------------------

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const TensorSlot& slot : parameters_) out.insert(join_path(prefix, slot.name), slot.tensor);
  for (const TensorSlot& slot : buffers_)
    if (slot.persistent) out.insert(join_path(prefix, slot.name), slot.tensor);
  for (const auto& [name, child] : children_) child->collect_state(join_path(prefix, name), out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state({}, out);
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state, bool strict, Where where) {
  const StateDict own = state_dict();
  LoadStateDictResult result;
  std::vector<std::string> problems;
  for (const auto& [key, dst] : own) {
    const Tensor* src = state.find(key);
    if (!src) {
      result.missing_keys.push_back(key);
      continue;
    }
    if (!src->defined() || src->is_symbolic())
      problems.push_back(fmt::format("'{}' in the state is {}", key,
                                     src->defined() ? "symbolic (it holds no data)" : "undefined"));
    else if (src->shape() != dst.shape())
      problems.push_back(fmt::format("shape mismatch for '{}': the state has {}, the model has {}", key,
                                     src->shape(), dst.shape()));
    else if (src->dtype() != dst.dtype())
      problems.push_back(fmt::format("dtype mismatch for '{}': the state has {}, the model has {}", key,
                                     src->dtype(), dst.dtype()));
  }
  for (const auto& [key, tensor] : state)
    if (!own.contains(key)) result.unexpected_keys.push_back(key);
  if (strict) {
    for (const std::string& k : result.missing_keys) problems.push_back(fmt::format("missing key '{}'", k));
    for (const std::string& k : result.unexpected_keys)
      problems.push_back(fmt::format("unexpected key '{}'", k));
  }
  if (!problems.empty()) {
    constexpr std::size_t shown = 20;
    const std::size_t total = problems.size();
    if (total > shown) {
      problems.resize(shown);
      problems.push_back(fmt::format("... and {} more", total - shown));
    }
    throw_invalid_argument(where, "load_state_dict() into {}: {} problem{}, the model was not changed:\n  {}",
                           type_name(), total, total == 1 ? "" : "s", fmt::join(problems, "\n  "));
  }
  for (const auto& [key, dst] : own)
    if (const Tensor* src = state.find(key)) dst.copy_(*src, where);
  return result;
}

// ---- Printing --------------------------------------------------------------------------------

std::string Module::extra_repr() const { return {}; }

std::optional<TensorMeta> Module::layer_output_meta(const ValueList&) const { return std::nullopt; }

namespace {
void print_module(const Module& m, int indent, std::string& out) {
  out += m.type_name();
  out += '(';
  const std::string extra = m.extra_repr();
  if (m.named_children().empty()) {
    out += extra;
    out += ')';
    return;
  }
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  if (!extra.empty()) fmt::format_to(std::back_inserter(out), "\n{}{}", pad, extra);
  for (const auto& [name, child] : m.named_children()) {
    fmt::format_to(std::back_inserter(out), "\n{}({}): ", pad, name);
    print_module(*child, indent + 2, out);
  }
  out += '\n';
  out.append(static_cast<std::size_t>(indent), ' ');
  out += ')';
}
}  // namespace

std::string to_string(const Module& module) {
  std::string out;
  print_module(module, 0, out);
  return out;
}

}  // namespace symtrace

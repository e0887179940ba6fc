// The executor of compiled TorchScript programs (program.hpp).
//
// Note [The executor runs ops only]: a TorchScript file holds code. The executor interprets
// the compiled form of that code and nothing else: tensor work goes through the op registry
// (`dispatch`: symtrace's own ops, and LibTorch's operators for the rest, aten_ops.hpp),
// module calls through `Module::call` (the module-call seam, so a tracer sees them as it sees
// C++ calls), and the builtins it knows are list, tuple, number and string operations.
// Nothing in a file can make it run Python, start a process or open a file (LibTorch's
// operators that name a file are refused).
#include "torchscript/aten_ops.hpp"
#include "torchscript/program.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/sym_int.hpp"
#include "symtrace/core/value_name.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/dispatch.hpp"
#include "symtrace/ops/record_function.hpp"
#include "symtrace/core/detail/small_vector.hpp"

#include "torchscript/script_module.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <typeinfo>
#include <vector>
#include <utility>

namespace symtrace::torchscript::detail {

namespace {

// Note [Failures in TorchScript's builtin code]: TorchScript compiles some of its builtins
// from source text of its own (F.pad's and F.interpolate's checks, `_assert_int_or_pair`),
// whose locations read `<string>:13`, a place no user can look up. A failure there is
// located at the call in the model's own code, the innermost frame in its files (each
// builtin's call relocates it once, on the way out), with the builtin and its line named.
bool is_builtin_code(std::source_location where) noexcept {
  const char* file = where.file_name();
  return file != nullptr && file[0] == '<';
}

[[noreturn]] void throw_at_call(const Instr& call, const std::exception& e, std::source_location inner) {
  std::string_view message = e.what();
  const std::string prefix = fmt::format("{}:{}: ", inner.file_name(), inner.line());
  if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  const std::string text = fmt::format("{}:{}: {} (in TorchScript's builtin {}, at {}:{})", call.where.file_name(),
                                       call.where.line(), message, call.name, inner.file_name(), inner.line());
  if (const auto* op = dynamic_cast<const OpError*>(&e)) throw OpError(text, op->op(), call.where);
  const auto& trace = dynamic_cast<const TraceError&>(e);
  throw TraceError(text, call.where, trace.module_path());
}

void exec_block(const Block& block, Module& self, Value* frame);

// Note [Attributes set by a run] (program.hpp): the values of the outermost run on this thread.
struct RunAttrs {
  int depth = 0;
  std::vector<std::tuple<const Module*, std::string, Value>> values;
};
thread_local RunAttrs run_attrs;

void set_run_attr(const Module& module, const std::string& name, Value value) {
  for (auto& [m, n, v] : run_attrs.values) {
    if (m == &module && n == name) {
      v = std::move(value);
      return;
    }
  }
  run_attrs.values.emplace_back(&module, name, std::move(value));
}

// A condition of `if` or `while`: a bool, or a size comparison or tensor that must be
// known to decide. Symbolic ones are data-dependent control flow: TraceError at `where`.
bool condition(const Value& v, std::source_location where) {
  switch (v.kind()) {
    case Value::Kind::boolean: return boost::variant2::get<bool>(v.value);
    case Value::Kind::integer: return boost::variant2::get<std::int64_t>(v.value) != 0;
    case Value::Kind::symint: {
      const SymInt& s = boost::variant2::get<SymInt>(v.value);
      return SymBool::symbolic(s.proxy(), s.where()).value(where);
    }
    case Value::Kind::tensor: return v.to_tensor().to_bool(where);
    case Value::Kind::floating: return boost::variant2::get<double>(v.value) != 0.0;
    case Value::Kind::symfloat: return v.to_sym_float().value(where) != 0.0;  // throws: unknown at trace time
    default: throw_invalid_argument(where, "a condition must be a bool, not {}", v.type_name());
  }
}

void run_op(const Instr& in, Value* frame) {
  boost::container::small_vector<Value, 8> args;
  args.reserve(in.args.size());
  const auto& specs = in.op->schema.args;
  for (std::size_t i = 0; i < in.args.size(); ++i) {
    const ArgSource& a = in.args[i];
    if (a.slot == ArgSource::no_slot) {
      args.push_back(a.constant);
      continue;
    }
    const Value& v = frame[a.slot];
    // TorchScript passes dtypes as ints (c10::ScalarType); constants are converted when
    // compiling, values computed at run time (`x.dtype`) here.
    if (specs[i].type == ArgType::ScalarType && v.is_int()) args.push_back(scalar_type_to_dtype(v.to_int()));
    else if (v.is_ref() || v.is_list() || v.is_dict()) args.push_back(plain(v));
    else args.push_back(v);
  }
  Value result = dispatch(*in.op, std::span<const Value>(args.data(), args.size()), in.where);
  if (in.kind == InstrKind::inplace_op) {
    const Value copy_args[] = {args[0], std::move(result)};
    result = dispatch(*in.copy_op, copy_args, in.where);
  }
  if (in.outputs.size() == 1) {
    frame[in.outputs[0]] = std::move(result);
    return;
  }
  const ValueList& parts = result.to_list();
  if (parts.size() != in.outputs.size())
    throw_op_error(in.op->name(), in.where, "returned {} values where the TorchScript node has {} outputs",
                   parts.size(), in.outputs.size());
  for (std::size_t i = 0; i < parts.size(); ++i) frame[in.outputs[i]] = parts[i];
}

// Whether `v` holds a ref at any depth (and `plain` must copy it).
bool has_ref(const Value& v) noexcept {
  switch (v.kind()) {
    case Value::Kind::ref: return true;
    case Value::Kind::list: {
      const ValueList& l = boost::variant2::get<ValueList>(v.value);
      return std::any_of(l.begin(), l.end(), has_ref);
    }
    case Value::Kind::dict: {
      const ValueList& l = boost::variant2::get<ValueDict>(v.value).values;
      return std::any_of(l.begin(), l.end(), has_ref);
    }
    default: return false;
  }
}

// The arguments of a module's forward: plain (Note [Lists and dicts are references]).
ValueList gather_plain(const std::vector<Slot>& slots, const Value* frame) {
  ValueList out;
  out.reserve(slots.size());
  for (Slot s : slots) out.push_back(plain(frame[s]));
  return out;
}

// The arguments of a function or method: lists and dicts as refs, made in the caller's slots
// first, so that what the callee changes the caller sees.
ValueList gather_shared(const std::vector<Slot>& slots, Value* frame) {
  ValueList out;
  out.reserve(slots.size());
  for (Slot s : slots) {
    if (frame[s].is_list() || frame[s].is_dict()) frame[s] = share(std::move(frame[s]));
    out.push_back(frame[s]);
  }
  return out;
}

void run_loop(const Instr& in, Module& self, Value* frame) {
  const Block& body = in.blocks[0];
  const Value& trip = frame[in.inputs[0]];
  const std::int64_t max_trip = trip.is_symint() ? trip.to_sym_int().value(in.where) : trip.to_int();
  bool go = condition(frame[in.inputs[1]], in.where);
  const std::size_t carried = in.inputs.size() - 2;
  ValueList values;
  values.reserve(carried);
  for (std::size_t k = 0; k < carried; ++k) values.push_back(frame[in.inputs[2 + k]]);
  for (std::int64_t i = 0; go && i < max_trip; ++i) {
    frame[body.inputs[0]] = i;
    for (std::size_t k = 0; k < carried; ++k) frame[body.inputs[1 + k]] = std::move(values[k]);
    exec_block(body, self, frame);
    go = condition(frame[body.outputs[0]], in.where);
    for (std::size_t k = 0; k < carried; ++k) values[k] = frame[body.outputs[1 + k]];
  }
  for (std::size_t k = 0; k < carried; ++k) frame[in.outputs[k]] = std::move(values[k]);
}

Module& attr_owner(Module& self, const Instr& in) {
  return in.path.empty() ? self : resolve(self, in.path, in.where);
}

// The file's own module of the layer a call_module instruction calls, kept by its parent
// (Note [A layer's own code]); nullptr when there is none.
Module* layer_code_of(Module& self, const Instr& in) {
  if (in.path.empty()) return nullptr;
  Module* parent = &self;
  for (std::size_t k = 0; k + 1 < in.path.size(); ++k) parent = parent->find_child(in.path[k]);
  const auto* script = dynamic_cast<const ScriptModule*>(parent);
  const Module* layer = parent ? parent->find_child(in.path.back()) : nullptr;
  return script != nullptr && layer != nullptr ? script->layer_code(*layer) : nullptr;
}

void exec(const Instr& in, Module& self, Value* frame) {
  switch (in.kind) {
    case InstrKind::constant:
      if (in.constant.is_tensor()) {
        // A copy per run: an in-place op on it must change neither later runs nor other threads.
        const Tensor& c = in.constant.to_tensor();
        Tensor copy = Tensor::empty(c.shape(), c.dtype(), in.where);
        copy.copy_(c);
        frame[in.outputs[0]] = std::move(copy);
      } else {
        frame[in.outputs[0]] = in.constant;
      }
      return;
    case InstrKind::tensor_attr: {
      Module& owner = attr_owner(self, in);
      Tensor t = owner.find_parameter(in.name);
      if (!t.defined()) t = owner.find_buffer(in.name);
      // An undefined tensor is an optional one that is None (a Linear without bias).
      frame[in.outputs[0]] = t.defined() ? Value(std::move(t)) : Value();
      return;
    }
    case InstrKind::value_attr: {
      Module& owner = attr_owner(self, in);
      const auto* running = dynamic_cast<const ScriptModule*>(&self);  // whose code this is
      if (const Value* v = find_run_attr(owner, in.name)) {
        frame[in.outputs[0]] = *v;
        return;
      }
      const Value* v = running ? running->find_attr_of(owner, in.name) : nullptr;
      if (!v)
        throw_invalid_argument(in.where, "the module {} ({}) has no attribute '{}' symtrace can read",
                               in.path.empty() ? std::string("self") : fmt::format("{}", fmt::join(in.path, ".")),
                               owner.type_name(), in.name);
      if (in.shared && (v->is_list() || v->is_dict())) {
        // A list or dict attribute: one ref for the run's reads, which see what the run
        // changes in it (Note [Lists and dicts are references]); the module keeps its own.
        Value ref = share(*v);
        set_run_attr(owner, in.name, ref);
        frame[in.outputs[0]] = std::move(ref);
        return;
      }
      frame[in.outputs[0]] = *v;
      return;
    }
    case InstrKind::training: frame[in.outputs[0]] = attr_owner(self, in).is_training(); return;
    case InstrKind::op:
    case InstrKind::inplace_op: {
      const ValueName name(in.value_name);  // a trace names the node after the variable
      try {
        run_op(in, frame);
      } catch (const OpUnsupported&) {
        if (!in.fallback) throw;
        run_op(*in.fallback, frame);  // input symtrace's op does not handle: LibTorch's
      }
      return;
    }
    case InstrKind::builtin: {
      const ValueName name(in.value_name);
      try {
        in.builtin(in, frame);
      } catch (const OpUnsupported&) {
        if (!in.fallback) throw;
        run_op(*in.fallback, frame);
      } catch (const std::invalid_argument& e) {
        // A value of the wrong kind (Value::to_int() of a list): say where, and in what.
        if (!std::string_view(e.what()).starts_with("expected a value of type")) throw;
        throw_invalid_argument(in.where, "{}: {}", in.name, e.what());
      }
      return;
    }
    case InstrKind::call_module: {
      Module& m = attr_owner(self, in);
      ValueList args = gather_plain(in.inputs, frame);
      try {
        frame[in.outputs[0]] = m.call(args, in.where);
      } catch (const OpUnsupported&) {
        // Note [A layer's own code]: the file's module runs where symtrace's layer cannot.
        Module* code = layer_code_of(self, in);
        if (code == nullptr) throw;
        frame[in.outputs[0]] = code->forward_values(args);
      }
      return;
    }
    case InstrKind::call_program: {
      Module& m = attr_owner(self, in);
      Value result;
      const ValueList args = gather_shared(in.inputs, frame);
      RecordFunctionRun event(RecordScope::torchscript_function, in.program->qualified_name, args, in.where);
      try {
        result = run(*in.program, m, args);
      } catch (const TraceError& e) {
        if (typeid(e) == typeid(TraceError) && is_builtin_code(e.where())) throw_at_call(in, e, e.where());
        throw;
      } catch (const OpError& e) {
        if (typeid(e) == typeid(OpError) && is_builtin_code(e.where())) throw_at_call(in, e, e.where());
        throw;
      }
      if (event.wants_outputs()) event.end({&result, 1});
      if (!in.outputs.empty()) frame[in.outputs[0]] = std::move(result);
      return;
    }
    case InstrKind::call_object: {
      Value object;
      const ValueList args = gather_shared(in.inputs, frame);
      RecordFunctionRun event(RecordScope::torchscript_function, in.program->qualified_name, args, in.where);
      Value result = run(*in.program, self, args, &object);
      if (event.wants_outputs()) event.end({&result, 1});
      frame[in.inputs[0]] = std::move(object);
      if (!in.outputs.empty()) frame[in.outputs[0]] = std::move(result);
      return;
    }
    case InstrKind::call_method: {
      const ValueList args = gather_plain(in.inputs, frame);
      RecordFunctionRun event(RecordScope::custom_class, in.name, args, in.where);
      Value result = run_class_method(*in.method, in.name, args, in.where);
      if (event.wants_outputs()) event.end({&result, 1});
      frame[in.outputs[0]] = std::move(result);
      return;
    }
    case InstrKind::set_attr: {
      // A list or dict as a ref, shared by the slot and the attribute (Note [Lists and dicts
      // are references]).
      Value& v = frame[in.inputs[0]];
      if (v.is_list() || v.is_dict()) v = share(std::move(v));
      set_run_attr(attr_owner(self, in), in.name, v);
      return;
    }
    case InstrKind::if_: {
      const Block& b = in.blocks[condition(frame[in.inputs[0]], in.where) ? 0 : 1];
      exec_block(b, self, frame);
      for (std::size_t k = 0; k < in.outputs.size(); ++k) frame[in.outputs[k]] = frame[b.outputs[k]];
      return;
    }
    case InstrKind::loop: run_loop(in, self, frame); return;
    case InstrKind::raise:
      // clang-format off
      throw_invalid_argument(in.where, "the model raised {}", in.inputs.empty() ? in.text
                                                                                  : frame[in.inputs[0]].is_string()
                                                                                        ? frame[in.inputs[0]].to_string_ref()
                                                                                        : in.text);
      // clang-format on
    case InstrKind::unsupported: throw_op_error(in.name, in.where, "{}", in.text);
  }
}

void exec_block(const Block& block, Module& self, Value* frame) {
  for (const Instr& in : block.instrs) exec(in, self, frame);
}

}  // namespace

DType scalar_type_to_dtype(std::int64_t scalar_type) {
  // c10::ScalarType: 0 uint8, 1 int8, 2 int16, 3 int32, 4 int64, 5 half, 6 float, 7 double,
  // 8-10 complex, 11 bool, 12 qint8, 13 quint8, 14 qint32, 15 bfloat16, 16 quint4x2, 17 quint2x4.
  // Floating types are float32 in symtrace, integer types int64, complex types complex64.
  switch (scalar_type) {
    case 8:
    case 9:
    case 10: return DType::complex64;
    case 12: return DType::qint8;
    case 13: return DType::quint8;
    case 14: return DType::qint32;
    case 16: return DType::quint4x2;
    case 17: return DType::quint2x4;
    case 5:
    case 6:
    case 7:
    case 15: return DType::float32;
    case 0:
    case 1:
    case 2:
    case 3:
    case 4: return DType::int64;
    case 11: return DType::bool_;
    default:
      throw std::invalid_argument(fmt::format("dtype {} (c10::ScalarType) has no symtrace counterpart", scalar_type));
  }
}

std::int64_t dtype_to_scalar_type(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return 6;
    case DType::int64: return 4;
    case DType::bool_: return 11;
    case DType::complex64: return 9;
    case DType::qint8: return 12;
    case DType::quint8: return 13;
    case DType::qint32: return 14;
    case DType::quint4x2: return 16;
    case DType::quint2x4: return 17;
  }
  return 6;
}

Value plain(const Value& v) {
  if (!has_ref(v)) return v;
  const Value& target = v.deref();
  if (target.is_dict()) {
    const ValueDict& d = boost::variant2::get<ValueDict>(target.value);
    ValueDict copy;
    copy.keys = d.keys;
    copy.values.reserve(d.size());
    for (const Value& e : d.values) copy.values.push_back(plain(e));
    return copy;
  }
  if (!target.is_list()) return target;
  const ValueList& l = boost::variant2::get<ValueList>(target.value);
  ValueList copy;
  copy.reserve(l.size());
  for (const Value& e : l) copy.push_back(plain(e));
  return copy;
}

const Value* find_run_attr(const Module& module, std::string_view name) noexcept {
  for (const auto& [m, n, v] : run_attrs.values)
    if (m == &module && n == name) return &v;
  return nullptr;
}

Value run(const Program& program, Module& self, const ValueList& args, Value* first_arg_out) {
  std::vector<Value> frame(program.num_slots);
  const Block& body = program.body;
  if (args.size() != body.inputs.size())
    throw InternalError(fmt::format("TorchScript program {} got {} arguments for {} inputs", program.name,
                                    args.size(), body.inputs.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {  // lists and dicts as refs: a caller's, or new ones
    const Value& a = args[i];
    frame[body.inputs[i]] = a.is_list() || a.is_dict() ? share(a) : a;
  }
  struct Depth {  // the outermost run forgets what the run set
    Depth() { ++run_attrs.depth; }
    ~Depth() {
      if (--run_attrs.depth == 0) run_attrs.values.clear();
    }
  } depth;
  exec_block(body, self, frame.data());
  if (body.outputs.empty()) return Value();
  if (!first_arg_out) return std::move(frame[body.outputs[0]]);
  Value result = frame[body.outputs[0]];  // a copy: the result may be the first argument
  if (!body.inputs.empty()) *first_arg_out = std::move(frame[body.inputs[0]]);
  return result;
}

Module& resolve(Module& self, const std::vector<std::string>& path, std::source_location where) {
  Module* m = &self;
  for (const std::string& name : path) {
    Module* child = m->find_child(name);
    if (!child) throw_invalid_argument(where, "module {} ({}) has no child '{}'", fmt::join(path, "."), m->type_name(), name);
    m = child;
  }
  return *m;
}

}  // namespace symtrace::torchscript::detail

#pragma once
// A TorchScript method or function compiled into symtrace's own form: a block of instructions
// over numbered value slots. The loader (compile.cpp) makes programs from LibTorch's graphs
// once, when a file is loaded; the executor (executor.cpp) runs them on symtrace Values and
// never touches LibTorch, so what a model does at run time goes through the op registry only
// (Note [The executor runs ops only]).
//
// Modules are not values here: a TorchScript value that holds a module (`self.layer1`) is
// resolved when compiling into a path of child names from the running module, read again at
// each run, so a program serves every module of its type and sees replaced children.

#include "symtrace/core/value.hpp"
#include "symtrace/ops/op.hpp"

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

namespace torch::jit {
struct Function;
}  // namespace torch::jit

namespace symtrace {
class Module;
}

namespace symtrace::torchscript::detail {

using Slot = std::uint32_t;
struct Instr;
struct Program;

/// Where an op argument comes from: a slot, or a constant (a schema default, a dtype).
struct ArgSource {
  static constexpr Slot no_slot = ~Slot{0};
  Slot slot = no_slot;
  Value constant;
};

// Note [Lists and dicts are references]: in TorchScript, as in Python, lists, dicts and objects
// are shared by reference: after `a = []; b = [a]; a.append(x)`, `b[0]` holds x too. The
// executor holds them as refs (ValueRef, core/value.hpp): copying a slot's value shares the
// container, so what a builtin changes in place (`append`, `_set_item`, `insert`, `extend`,
// `pop`, `remove`, `clear`, `update`, an object's attribute) is seen through every alias.
// - The builtins that make a list or dict make a new ref, as Python makes a new object: `[...]`,
//   `{...}`, `list(x)`, `x.copy()`, slicing, `+`, `*`, `dict(x)`, `keys()`, `values()`,
//   `items()`, a new object. A new tuple is plain: nothing changes one.
// - A list or dict that arrives plain (an op's result, a constant, an argument of `forward`)
//   becomes a ref in its slot where the run first changes it, stores it (in a list, tuple,
//   dict, object or attribute), passes it to a function or method, or takes it as an
//   argument; a module attribute typed as a list or dict is one ref for all reads of the run
//   (Note [Attributes set by a run]). Tuples may so become refs too, which changes nothing.
//   The gap left: a plain list an `if` or a loop hands on (a copy) before it becomes a ref.
// - Refs never leave the executor: an op gets its arguments `plain` (copies, as it did before
//   refs), and so does the module-call seam (Module::call, a child's `forward`, which tracers
//   see), whose result is plain too. So a child's forward that changes a list it was given
//   changes a copy (its other methods, functions and objects' methods share).
// Reading a slot costs a branch (`in` sees through refs); making a list costs one allocation
// more, only where TorchScript code makes one; copying one costs a reference count, no copy.

/// A list or dict `v` as a ref (Note [Lists and dicts are references]).
inline Value share(Value v) {
  Value ref;
  ref.value.emplace<ValueRef>(std::make_shared<Value>(std::move(v)));
  return ref;
}

/// `v` with every ref replaced by a copy of what it shares, at any depth: the value as ops and
/// modules take it (Note [Lists and dicts are references]).
Value plain(const Value& v);

/// A builtin of TorchScript that is not a tensor op (list, tuple, int and str operations):
/// reads its inputs' slots and writes its outputs'. Throws like the op would.
using BuiltinFn = void (*)(const Instr& instr, Value* frame);

enum class InstrKind : std::uint8_t {
  constant,      ///< outputs[0] = constant
  tensor_attr,   ///< outputs[0] = the parameter or buffer `name` of the module at `path`
  value_attr,    ///< outputs[0] = the attribute `name` (not a tensor) of the module at `path`
  training,      ///< outputs[0] = is_training() of the module at `path`
  op,            ///< outputs = dispatch(op, args)
  inplace_op,    ///< op `name_` that symtrace lacks: outputs[0] = copy_(args[0], op(args))
  builtin,       ///< builtin(instr, frame)
  call_module,   ///< outputs[0] = (module at `path`).call(inputs): through the module-call seam
  call_program,  ///< outputs[0] = program(inputs), run with the module at `path` as self
  call_object,   ///< outputs[0] = program(inputs), a method of the object inputs[0], which it may change
  call_method,   ///< outputs[0] = LibTorch's `method` (a registered class's) on inputs, the object first
  set_attr,      ///< the attribute `name` of the module at `path` = inputs[0], for this run
  if_,           ///< inputs[0] picks blocks[0] or blocks[1]; their outputs become outputs
  loop,          ///< prim::Loop(max_trip, cond, carried...) with body blocks[0]
  raise,         ///< throws `text` (prim::RaiseException)
  unsupported,   ///< throws OpError: the file uses `name`, which symtrace lacks (`text` says why)
};

struct Block {
  std::vector<Slot> inputs;
  std::vector<Instr> instrs;
  std::vector<Slot> outputs;
};

struct Instr {
  InstrKind kind = InstrKind::constant;
  std::source_location where;  ///< the Python (or archive code) line this node came from
  std::vector<Slot> inputs;
  std::vector<Slot> outputs;
  std::vector<std::string> path;  ///< child names from the running module (attrs and calls)
  std::string name;               ///< attribute, op, or builtin name
  std::string text;               ///< raise / unsupported message
  std::string value_name;         ///< op, inplace_op, builtin: the variable its value goes to (core/value_name.hpp)
  Value constant;
  const OpDef* op = nullptr;
  const OpDef* copy_op = nullptr;  ///< inplace_op: copy_
  std::vector<ArgSource> args;     ///< op: one per argument of `op`'s schema
  BuiltinFn builtin = nullptr;
  /// value_attr: the attribute is a list or dict, one ref for all reads of the run (Note [Lists
  /// and dicts are references]).
  bool shared = false;
  const Program* program = nullptr;        ///< call_program
  torch::jit::Function* method = nullptr;  ///< call_method
  std::vector<Block> blocks;               ///< if_: then, else; loop: body
  /// op, inplace_op, builtin: the node as LibTorch's operator (an `op` instruction), run in
  /// its place when symtrace's throws OpUnsupported (a padding mode it lacks); null when
  /// LibTorch's cannot run here either.
  std::shared_ptr<const Instr> fallback;
};

/// A compiled method or function.
struct Program {
  std::string name;            ///< "forward", "_forward_impl", "torch.nn.functional.relu"
  std::string qualified_name;  ///< the TorchScript class or function it came from
  Block body;                  ///< inputs: the arguments (without self); outputs: one value
  Slot num_slots = 0;
  std::vector<std::string> input_names;  ///< the method's argument names, without self
  std::vector<std::string> input_types;  ///< TorchScript type of each ("Tensor", "List[Tensor]", ...)
  std::vector<std::optional<Value>> input_defaults;
  std::string result_type;       ///< "Tensor", "Tuple[Tensor, Tensor]", ...
  std::size_t result_arity = 1;  ///< elements of a tuple result
};

/// Runs `program` with `self` as the running module (unused by functions). `args` are the
/// program's inputs, complete. `first_arg_out`, when given, receives the first argument as the
/// program left it (an object a method changed).
Value run(const Program& program, Module& self, const ValueList& args, Value* first_arg_out = nullptr);

/// Note [Attributes set by a run]: TorchScript code may assign plain attributes of a module
/// (torchvision's `MultiScaleRoIAlign` caches `self.scales`, `AnchorGenerator` its anchors).
/// symtrace keeps such a value for the outermost run on the thread, in front of the module's
/// own: the module is never changed (a traced value would outlive its trace, and threads
/// share modules), and later reads in the same run see it. A list or dict attribute is kept so
/// at its first read, as a ref (Note [Lists and dicts are references]): what the run changes in
/// it (RAFT's `self.corr_pyramid.append(x)`) its later reads see.
/// The value the running thread's current run set for `name` of `module`, or nullptr.
const Value* find_run_attr(const Module& module, std::string_view name) noexcept;

/// The symtrace dtype of a TorchScript dtype (a c10::ScalarType number); floating types are
/// float32, integer types int64. Throws std::invalid_argument for complex and quantized types.
DType scalar_type_to_dtype(std::int64_t scalar_type);
/// The c10::ScalarType number of `dtype` (a tensor's `.dtype` in TorchScript code).
std::int64_t dtype_to_scalar_type(DType dtype) noexcept;

/// The module at `path` from `self`; throws std::invalid_argument naming the missing child.
Module& resolve(Module& self, const std::vector<std::string>& path, std::source_location where);

}  // namespace symtrace::torchscript::detail

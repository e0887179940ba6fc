#pragma once
// The LibTorch side of the front end: turning LibTorch's graphs, constants and tensors into
// symtrace's. Only src/torchscript/ includes this header (LibTorch's headers are slow to
// compile and warn under -Wall: they are system headers here).

#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"

#include "torchscript/program.hpp"
#include "torchscript/script_module.hpp"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace symtrace::torchscript::detail {

/// The first line of `text` that is not blank (LibTorch's messages may start with a newline).
inline std::string first_line(std::string_view text) {
  const auto start = text.find_first_not_of(" \n");
  if (start == std::string_view::npos) return std::string();
  text.remove_prefix(start);
  return std::string(text.substr(0, text.find('\n')));
}

/// The symtrace tensors made over whole LibTorch storages (see to_symtrace).
using StorageMemo = std::unordered_map<const c10::StorageImpl*, Tensor>;

/// `t` as a contiguous concrete symtrace tensor over LibTorch's memory (kept alive by the
/// tensor, not copied): float16, bfloat16 and float64 become float32, other integers int64 and
/// complex128 complex64 (converted once); int64, bool, complex64 and quantized tensors stay (a
/// quantized one keeps LibTorch's tensor as its owner). With `memo`, tensors over one LibTorch storage share one symtrace storage
/// (so in-place ops see the overlap PyTorch sees). Throws std::invalid_argument naming `name`
/// for any other dtype.
Tensor to_symtrace(const at::Tensor& t, std::string_view name, StorageMemo* memo = nullptr);

/// LibTorch's scalar type of `dtype`.
at::ScalarType scalar_type(DType dtype);
/// The dtype symtrace holds a LibTorch tensor of scalar type `t` in (floating types float32,
/// integer types int64, complex types complex64, quantized types themselves); nullopt for none.
std::optional<DType> symtrace_dtype(at::ScalarType t);

/// Makes `dst` (a layer's parameter or buffer) hold `src`'s data as `to_symtrace` gives it
/// (`Tensor::set_`: no copy); throws std::invalid_argument naming `name` when the shapes or
/// dtypes differ.
void adopt_into(const Tensor& dst, const at::Tensor& src, std::string_view name, StorageMemo* memo = nullptr);

/// `v` as a Value (None, numbers, strings, lists, tuples, tensors, devices as "cpu"), or
/// nullopt for what Values cannot hold (objects, futures, ...).
std::optional<Value> to_value(const c10::IValue& v, std::string_view name);

/// A TorchScript class name without the mangling LibTorch adds to tell apart classes of the
/// same Python name (`__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d` ->
/// `__torch__.torch.nn.modules.conv.Conv2d`).
std::string demangled_class_name(const c10::ClassTypePtr& type);

/// Compiles LibTorch graphs into programs of one Unit, each graph once.
class Compiler {
 public:
  explicit Compiler(Unit& unit) : unit_(unit) {}

  /// The program of method `fn` of module class `type` (its first input is self).
  const Program& method(const c10::ClassTypePtr& type, torch::jit::Function& fn);

 private:
  struct Ref {
    enum class Kind : std::uint8_t {
      value,
      module,
      function
    } kind = Kind::value;
    Slot slot = 0;
    std::vector<std::string> path;  // module: child names from self
    c10::ClassTypePtr type;         // module: its class
    torch::jit::Function* function = nullptr;
  };
  struct State {
    Program& program;
    c10::ClassTypePtr self_type;  // null for a function
    std::unordered_map<const torch::jit::Value*, Ref> refs;
    std::source_location fallback;  // the archive's code file, for nodes with no range
    /// The last location found in the Python the code was scripted from: a node that has none
    /// of its own (a call the archive's code made up, `_0 = f(...)`) is on that line.
    std::optional<std::source_location> last_python;
  };

  const Program& compile(torch::jit::Function& fn, const c10::ClassTypePtr& self_type);
  void fill(Program& p, torch::jit::Function& fn, const std::shared_ptr<torch::jit::Graph>& graph,
            const c10::ClassTypePtr& self_type);
  void compile_block(State& s, const torch::jit::Block* block, Block& out, bool bind_inputs);
  void compile_node(State& s, const torch::jit::Node* node, Block& out);
  void compile_op(State& s, const torch::jit::Node* node, Instr& instr, std::string_view kind);
  /// Makes `instr` call symtrace's own op for the aten (or torchvision) node; false, with
  /// `why_not` set, when symtrace has none or its op does not take the node's arguments.
  bool native_op(State& s, const torch::jit::Node* node, Instr& instr, std::string_view kind,
                 const c10::FunctionSchema& schema, std::string& why_not);
  /// The node as an `op` instruction running LibTorch's operator of `schema` (aten_ops.hpp),
  /// with `like`'s location and outputs; null, with `why_not` set, when it cannot run here.
  std::shared_ptr<const Instr> libtorch_instr(State& s, const torch::jit::Node* node, const Instr& like,
                                              const c10::FunctionSchema& schema, std::string* why_not = nullptr);
  /// `v` holds an object of a TorchScript class that is not a module (`ImageList`).
  static bool is_object(const torch::jit::Value* v);
  /// A builtin instruction `kind` ("prim::GetAttr", "prim::SetAttr") on an object, for
  /// attribute `name`, over the node's inputs and outputs.
  void object_builtin(State& s, const torch::jit::Node* node, std::source_location at, std::string_view kind,
                      const std::string& name, Block& out);
  /// Note [Containers read from containers] (compile.cpp): after `node`, which may change its
  /// first input, store that input back where it was read from.
  void write_back(State& s, const torch::jit::Node* node, Block& out);
  Slot slot(State& s, const torch::jit::Value* v);
  const Ref* module_ref(State& s, const torch::jit::Value* v);
  std::source_location where(State& s, const torch::jit::Node* node);

  Unit& unit_;
  std::unordered_map<const torch::jit::Graph*, const Program*> compiled_;
};

}  // namespace symtrace::torchscript::detail

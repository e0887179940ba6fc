#pragma once
// `ScriptModule`: a module of a TorchScript file that symtrace has no layer for. Its forward
// runs its compiled TorchScript method (program.hpp) on symtrace Values; its children,
// parameters and buffers are ordinary registrations, so tracing, the collection and analysis
// see it as any C++ module of its class name (`Bottleneck`).

#include "symtrace/nn/module.hpp"

#include "torchscript/program.hpp"

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace symtrace::torchscript::detail {

/// The programs of one loaded file, shared by its modules (a program serves every module of
/// its TorchScript class).
struct Unit {
  std::deque<Program> programs;
  /// The plain attributes (numbers, bools, strings, None, ...) of the file's modules that
  /// became symtrace layers, which other modules' code may read
  /// (`self.self_attn._qkv_same_embed_dim`), by layer.
  struct LayerAttrs {
    std::weak_ptr<const Module> layer;  ///< checked on use: the key is only an address
    std::vector<std::pair<std::string, Value>> attrs;
  };
  std::unordered_map<const Module*, LayerAttrs> layer_attrs;
};

class ScriptModule final : public Module {
 public:
  /// `forwards`: the program of `forward`, or of each of its overloads (`forward__0`, ...),
  /// empty for a module without forward (a ModuleList, a traced module never called).
  /// `torch_nn_layer`: the module is of a torch.nn layer class (not a container) and not the
  /// root, so a tracer records it as a leaf, as torch.fx's default leaf rule does.
  ScriptModule(std::string type_name, std::shared_ptr<const Unit> unit, std::vector<const Program*> forwards,
               bool torch_nn_layer = false);

  [[nodiscard]] bool is_leaf_by_default() const override { return torch_nn_layer_; }

  /// Runs the forward (the overload whose argument kinds match `args`).
  Value forward_values(const ValueList& args) override;

  /// A TorchScript attribute that is neither a module nor a tensor (`self.use_res_connect`).
  void set_attr(std::string name, Value value);
  [[nodiscard]] const Value* find_attr(std::string_view name) const noexcept;
  /// Attribute `name` of `module`: this module's own (find_attr), a ScriptModule's, or one the
  /// loader kept for a symtrace layer of the file; nullptr when there is none.
  [[nodiscard]] const Value* find_attr_of(const Module& module, std::string_view name) const noexcept;

  /// The program of another method (`_forward_impl`), added by the loader.
  void add_method(std::string name, const Program* program);
  [[nodiscard]] const Program* find_method(std::string_view name) const noexcept;

  /// Note [A layer's own code]: the file's module of the child `layer` (a symtrace layer made
  /// for a torch.nn module) as a ScriptModule, which runs in the layer's place on inputs the
  /// layer's ops refuse (a quantized tensor into ReLU).
  void set_layer_code(const Module& layer, std::shared_ptr<Module> code);
  /// The file's module of the child `layer`, or nullptr.
  [[nodiscard]] Module* layer_code(const Module& layer) const noexcept;

 private:
  std::shared_ptr<const Unit> unit_;
  std::vector<const Program*> forwards_;
  std::vector<std::pair<std::string, const Program*>> methods_;
  std::vector<std::pair<std::string, Value>> attrs_;
  std::vector<std::pair<const Module*, std::shared_ptr<Module>>> layer_code_;
  bool torch_nn_layer_;
};

}  // namespace symtrace::torchscript::detail

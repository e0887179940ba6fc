// Loading a TorchScript file into a symtrace module tree (the public torchscript::load).
//
// Each TorchScript module becomes either one of symtrace's built-in layers, when its class is
// one of torch.nn's layers symtrace has and its hyper-parameters fit, or a ScriptModule that
// runs its compiled forward. Scripted torch.nn layers keep their hyper-parameters as class
// constants (`__constants__`); traced ones keep none, so they are read from the one op call
// their traced forward records (`aten::_convolution`'s stride, ...).
#include "symtrace/torchscript/load.hpp"

#include "symtrace/nn.hpp"
#include "symtrace/nn/detail/skip_init.hpp"
#include "symtrace/ops/dispatch.hpp"

#include "torchscript/compile.hpp"
#include "torchscript/file.hpp"
#include "torchscript/torchvision_ops.hpp"

#include <ATen/Functions.h>
#include <torch/csrc/jit/serialization/import.h>

#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace symtrace::torchscript {

namespace {

namespace jit = torch::jit;
using detail::Compiler;
using detail::ScriptModule;
using detail::Unit;
using detail::first_line;

// A hyper-parameter of a torch.nn layer: its class constant when scripted, else argument
// `arg` of the first `op` call its traced forward records.
class Hyper {
 public:
  explicit Hyper(const jit::Module& m) : m_(m) {
    if (auto fwd = m.find_method("forward")) graph_ = fwd->graph();
  }
  std::optional<c10::IValue> get(const std::string& name, std::initializer_list<std::pair<const char*, int>> ops = {}) const {
    if (m_.type()->hasConstant(name)) return m_.type()->getConstant(name);
    if (m_.hasattr(name)) return m_.attr(name);
    const jit::Value* v = argument(ops);
    return v ? constant(v) : std::nullopt;
  }
  // True when the argument of `ops` is `self.weight.size(0)` (what symtrace's writer makes a
  // cut depthwise convolution's groups: torchscript/save.hpp).
  bool weight_size(std::initializer_list<std::pair<const char*, int>> ops) const {
    const jit::Value* v = argument(ops);
    if (v == nullptr) return false;
    const jit::Node* size = v->node();
    if (size->kind() != c10::aten::size || size->inputs().size() != 2) return false;
    const jit::Node* get = size->input(0)->node();
    const std::optional<c10::IValue> dim = constant(size->input(1));
    return get->kind() == c10::prim::GetAttr && get->s(c10::attr::name) == "weight" && dim && dim->isInt() &&
           dim->toInt() == 0;
  }
  // Argument `arg` of the forward's first node of the first kind in `ops` it has, or null.
  const jit::Value* argument(std::initializer_list<std::pair<const char*, int>> ops) const {
    if (!graph_) return nullptr;
    for (auto [op, arg] : ops) {
      const c10::Symbol kind = c10::Symbol::fromQualString(op);
      for (const jit::Node* n : graph_->nodes()) {
        if (n->kind() == kind && arg < static_cast<int>(n->inputs().size())) return n->input(arg);
      }
    }
    return nullptr;
  }
  bool traced_kind(const char* op) const {
    if (!graph_) return false;
    const c10::Symbol kind = c10::Symbol::fromQualString(op);
    for (const jit::Node* n : graph_->nodes())
      if (n->kind() == kind) return true;
    return false;
  }
  // The value of `v` when it is a constant, or a list or tuple built of constants (what a
  // traced graph passes as `stride`).
  static std::optional<c10::IValue> constant(const jit::Value* v) {
    if (auto c = jit::toIValue(v)) return c;
    const jit::Node* n = v->node();
    if (n->kind() != c10::prim::ListConstruct && n->kind() != c10::prim::TupleConstruct) return std::nullopt;
    std::vector<c10::IValue> items;
    for (const jit::Value* in : n->inputs()) {
      auto c = constant(in);
      if (!c) return std::nullopt;
      items.push_back(std::move(*c));
    }
    if (n->kind() == c10::prim::TupleConstruct) return c10::ivalue::Tuple::create(std::move(items));
    c10::impl::GenericList list(c10::AnyType::get());
    for (auto& item : items) list.push_back(std::move(item));
    return list;
  }
  [[nodiscard]] bool scripted_or_called() const { return graph_ != nullptr || m_.type()->numConstants() > 0; }

 private:
  const jit::Module& m_;
  std::shared_ptr<jit::Graph> graph_;
};

std::optional<nn::Size2> size2(const std::optional<c10::IValue>& v) {
  if (!v) return std::nullopt;
  if (v->isInt()) return nn::Size2(v->toInt());
  std::vector<c10::IValue> e;
  if (v->isTuple()) e = v->toTupleRef().elements().vec();
  else if (v->isList()) e = v->toListRef().vec();
  else return std::nullopt;
  if (e.size() == 1 && e[0].isInt()) return nn::Size2(e[0].toInt());
  if (e.size() != 2 || !e[0].isInt() || !e[1].isInt()) return std::nullopt;
  return nn::Size2(e[0].toInt(), e[1].toInt());
}

template <class T>
std::optional<T> scalar(const std::optional<c10::IValue>& v) {
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<T, bool>) return v->isBool() ? std::optional(v->toBool()) : std::nullopt;
  else if constexpr (std::is_same_v<T, double>) return v->isDouble() || v->isInt() ? std::optional(v->toScalar().toDouble()) : std::nullopt;
  else if constexpr (std::is_same_v<T, std::string>) return v->isString() ? std::optional(v->toStringRef()) : std::nullopt;
  else return v->isInt() ? std::optional(v->toInt()) : std::nullopt;
}

// True when `m` has `method` taking exactly the arguments `names` (after self): the Python
// signature a symtrace layer's forward also has.
bool python_forward(const jit::Module& m, const char* method, std::initializer_list<const char*> names) {
  auto fn = m.find_method(method);
  if (!fn) return false;
  const auto& args = fn->function().getSchema().arguments();
  if (args.size() != names.size() + 1) return false;
  std::size_t k = 1;
  for (const char* name : names)
    if (args[k++].name() != name) return false;
  return true;
}

at::Tensor tensor_attr(const jit::Module& m, const char* name) {
  if (!m.hasattr(name)) return {};
  c10::IValue v = m.attr(name);
  return v.isTensor() ? v.toTensor() : at::Tensor();
}

// torch.nn's layers symtrace has, made from the file's module; nullptr when the module's
// configuration is one the symtrace layer does not cover (it then runs its TorchScript forward).
using LayerMaker = std::function<std::shared_ptr<Module>(const jit::Module&, const Hyper&)>;

// True when `m`'s forward is a trace of torch.nn.LSTM's (`lstm`) or GRU's / RNN's forward that
// computes what PyTorch's does: one torch._VF call taking the first argument as its input (and
// the second, if any, as its state), and returning (output, (h_n, c_n)) or (output, h_n) in that
// order. A trace keeps only the outputs its caller used, in the order it used them, so the
// graph itself is checked, not only the schema.
bool traced_as_pytorch(const jit::Module& m, bool lstm) {
  auto fwd = m.find_method("forward");
  if (!fwd) return false;
  const std::shared_ptr<jit::Graph> g = fwd->graph();
  const jit::Node* call = nullptr;
  for (const jit::Node* n : g->nodes()) {
    const std::string_view kind = n->kind().toQualString();
    if (kind == "aten::lstm" || kind == "aten::gru" || kind == "aten::rnn_tanh" || kind == "aten::rnn_relu") {
      if (call != nullptr || (kind == "aten::lstm") != lstm) return false;
      call = n;
    }
  }
  const std::size_t args = g->inputs().size();  // self first
  if (call == nullptr || args < 2 || args > 3 || call->inputs().size() < 2 || call->input(0) != g->inputs()[1])
    return false;
  if (args == 3) {
    // The state: GRU's and RNN's a tensor; LSTM's a tuple (h_0, c_0) unpacked into a list.
    const jit::Value* hx = call->input(1);
    if (!lstm && hx != g->inputs()[2]) return false;
    if (lstm) {
      const jit::Node* list = hx->node();
      if (list->kind() != c10::prim::ListConstruct || list->inputs().size() != 2) return false;
      for (std::size_t k = 0; k < 2; ++k) {
        const jit::Node* unpack = list->input(k)->node();
        if (unpack->kind() != c10::prim::TupleUnpack || unpack->input(0) != g->inputs()[2] ||
            list->input(k) != unpack->output(k))
          return false;
      }
    }
  }
  if (g->outputs().size() != 1) return false;
  const jit::Node* ret = g->outputs()[0]->node();
  if (ret->kind() != c10::prim::TupleConstruct || ret->inputs().size() != 2 || ret->input(0) != call->output(0))
    return false;
  if (!lstm) return ret->input(1) == call->output(1);
  const jit::Node* state = ret->input(1)->node();
  return state->kind() == c10::prim::TupleConstruct && state->inputs().size() == 2 &&
         state->input(0) == call->output(1) && state->input(1) == call->output(2);
}

// torch.nn.LSTM, GRU and RNN as symtrace's layers. Sizes from the weights (a traced file keeps
// no other attribute), the rest from the class or from the traced torch._VF call. The forward
// is PyTorch's when scripted (`forward__0(input, hx)`); a traced one must compute what
// PyTorch's does (traced_as_pytorch).
LayerMaker recurrent_maker(std::string type) {
  return [type](const jit::Module& m, const Hyper& h) -> std::shared_ptr<Module> {
    const bool lstm = type == "LSTM";
    if (!python_forward(m, "forward__0", {"input", "hx"}) && !traced_as_pytorch(m, lstm)) return nullptr;
    const std::int64_t gates = lstm ? 4 : type == "GRU" ? 3
                                                        : 1;
    const at::Tensor w_ih = tensor_attr(m, "weight_ih_l0"), w_hh = tensor_attr(m, "weight_hh_l0");
    if (!w_ih.defined() || !w_hh.defined() || w_ih.dim() != 2 || w_hh.dim() != 2 ||
        w_hh.size(0) != gates * w_hh.size(1) || tensor_attr(m, "weight_hr_l0").defined())
      return nullptr;
    std::int64_t layers = 0;
    while (tensor_attr(m, fmt::format("weight_ih_l{}", layers).c_str()).defined()) ++layers;
    // The traced call: aten::lstm / gru / rnn_tanh / rnn_relu (input, hx, params, has_biases,
    // num_layers, dropout, train, bidirectional, batch_first).
    const std::initializer_list<std::pair<const char*, int>> batch_first_arg = {
        {"aten::lstm", 8}, {"aten::gru", 8}, {"aten::rnn_tanh", 8}, {"aten::rnn_relu", 8}};
    const std::initializer_list<std::pair<const char*, int>> dropout_arg = {
        {"aten::lstm", 5}, {"aten::gru", 5}, {"aten::rnn_tanh", 5}, {"aten::rnn_relu", 5}};
    auto batch_first = scalar<bool>(h.get("batch_first", batch_first_arg));
    auto dropout = scalar<double>(h.get("dropout", dropout_arg));
    if (!batch_first || !dropout) return nullptr;
    const bool bias = tensor_attr(m, "bias_ih_l0").defined();
    const bool bidirectional = tensor_attr(m, "weight_ih_l0_reverse").defined();
    // LSTM's options are GRU's (nn::GRUOptions); RNN's add the nonlinearity.
    const nn::LSTMOptions options{
        .num_layers = layers, .bias = bias, .batch_first = *batch_first, .dropout = *dropout, .bidirectional = bidirectional};
    if (lstm) return nn::LSTM(w_ih.size(1), w_hh.size(1), options).ptr();
    if (type == "GRU") return nn::GRU(w_ih.size(1), w_hh.size(1), options).ptr();
    std::optional<std::string> nonlinearity = scalar<std::string>(h.get("nonlinearity"));
    if (!nonlinearity) {
      if (h.traced_kind("aten::rnn_relu")) nonlinearity = "relu";
      else if (h.traced_kind("aten::rnn_tanh")) nonlinearity = "tanh";
      else return nullptr;
    }
    if (*nonlinearity != "tanh" && *nonlinearity != "relu") return nullptr;
    return nn::RNN(w_ih.size(1), w_hh.size(1),
                   {.num_layers = layers, .nonlinearity = *nonlinearity, .bias = bias, .batch_first = *batch_first, .dropout = *dropout, .bidirectional = bidirectional})
        .ptr();
  };
}

const std::unordered_map<std::string, LayerMaker>& layer_makers() {
  static const std::unordered_map<std::string, LayerMaker> makers = {
      {"Conv2d",
       [](const jit::Module& m, const Hyper& h) -> std::shared_ptr<Module> {
         at::Tensor w = tensor_attr(m, "weight");
         if (!w.defined() || w.dim() != 4) return nullptr;
         auto mode = scalar<std::string>(h.get("padding_mode"));
         if (mode && *mode != "zeros") return nullptr;
         // A traced layer keeps no padding_mode: its forward pads first when it is not zeros.
         if (h.traced_kind("aten::pad") || h.traced_kind("aten::constant_pad_nd") ||
             h.traced_kind("aten::reflection_pad2d") || h.traced_kind("aten::replication_pad2d"))
           return nullptr;
         auto stride = size2(h.get("stride", {{"aten::_convolution", 3}, {"aten::conv2d", 3}}));
         auto padding = size2(h.get("padding", {{"aten::_convolution", 4}, {"aten::conv2d", 4}}));
         auto dilation = size2(h.get("dilation", {{"aten::_convolution", 5}, {"aten::conv2d", 5}}));
         auto groups = scalar<std::int64_t>(h.get("groups", {{"aten::_convolution", 8}, {"aten::conv2d", 6}}));
         if (!groups && h.weight_size({{"aten::_convolution", 8}, {"aten::conv2d", 6}})) groups = w.size(0);
         auto transposed = scalar<bool>(h.get("transposed", {{"aten::_convolution", 6}}));
         if (!stride || !padding || !dilation || !groups || (transposed && *transposed)) return nullptr;
         // A depthwise convolution pruned by symtrace (torchscript/save.hpp) keeps its class's
         // groups constant and computes the groups from its weight: one group per channel.
         if (*groups > 1 && w.size(1) == 1 && *groups != w.size(0) &&
             scalar<std::int64_t>(h.get("in_channels")) == groups && scalar<std::int64_t>(h.get("out_channels")) == groups)
           groups = w.size(0);
         const bool bias = tensor_attr(m, "bias").defined();
         return nn::Conv2d(w.size(1) * *groups, w.size(0), nn::Size2(w.size(2), w.size(3)),
                           {.stride = *stride, .padding = *padding, .dilation = *dilation, .groups = *groups, .bias = bias})
             .ptr();
       }},
      {"BatchNorm2d",
       [](const jit::Module& m, const Hyper& h) -> std::shared_ptr<Module> {
         at::Tensor w = tensor_attr(m, "weight");
         at::Tensor mean = tensor_attr(m, "running_mean");
         const at::Tensor& any = w.defined() ? w : mean;
         if (!any.defined()) return nullptr;
         auto eps = scalar<double>(h.get("eps", {{"aten::batch_norm", 7}}));
         const auto momentum_value = h.get("momentum", {{"aten::batch_norm", 6}});
         auto momentum = scalar<double>(momentum_value);
         // momentum=None (a cumulative average) is not symtrace's: the layer runs its own code.
         if (!eps || (momentum_value && momentum_value->isNone())) return nullptr;
         // clang-format off
         return nn::BatchNorm2d(any.size(0), {.eps = *eps, .momentum = momentum.value_or(0.1),
                                              .affine = w.defined(), .track_running_stats = mean.defined()})
             // clang-format on
             .ptr();
       }},
      {"Linear",
       [](const jit::Module& m, const Hyper&) -> std::shared_ptr<Module> {
         at::Tensor w = tensor_attr(m, "weight");
         if (!w.defined() || w.dim() != 2) return nullptr;
         return nn::Linear(w.size(1), w.size(0), {.bias = tensor_attr(m, "bias").defined()}).ptr();
       }},
      {"ReLU",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         return nn::ReLU({.inplace = scalar<bool>(h.get("inplace")).value_or(h.traced_kind("aten::relu_"))}).ptr();
       }},
      {"ReLU6",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         return nn::ReLU6({.inplace = scalar<bool>(h.get("inplace")).value_or(h.traced_kind("aten::hardtanh_"))}).ptr();
       }},
      {"Hardswish",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         return nn::Hardswish({.inplace = scalar<bool>(h.get("inplace")).value_or(h.traced_kind("aten::hardswish_"))}).ptr();
       }},
      {"Hardsigmoid",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         return nn::Hardsigmoid({.inplace = scalar<bool>(h.get("inplace")).value_or(false)}).ptr();
       }},
      {"SiLU", [](const jit::Module&, const Hyper&) -> std::shared_ptr<Module> { return nn::SiLU().ptr(); }},
      {"Sigmoid", [](const jit::Module&, const Hyper&) -> std::shared_ptr<Module> { return nn::Sigmoid().ptr(); }},
      {"Tanh", [](const jit::Module&, const Hyper&) -> std::shared_ptr<Module> { return nn::Tanh().ptr(); }},
      {"Identity", [](const jit::Module&, const Hyper&) -> std::shared_ptr<Module> { return nn::Identity().ptr(); }},
      {"GELU",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         auto approximate = scalar<std::string>(h.get("approximate", {{"aten::gelu", 1}}));
         return nn::GELU(nn::GELUOptions{.approximate = approximate.value_or("none")}).ptr();
       }},
      {"MaxPool2d",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         if (scalar<bool>(h.get("return_indices")).value_or(false)) return nullptr;
         auto kernel = size2(h.get("kernel_size", {{"aten::max_pool2d", 1}}));
         auto stride = size2(h.get("stride", {{"aten::max_pool2d", 2}}));
         auto padding = size2(h.get("padding", {{"aten::max_pool2d", 3}}));
         auto dilation = size2(h.get("dilation", {{"aten::max_pool2d", 4}}));
         auto ceil = scalar<bool>(h.get("ceil_mode", {{"aten::max_pool2d", 5}}));
         if (!kernel || !padding || !dilation || !ceil) return nullptr;
         return nn::MaxPool2d(*kernel, {.stride = stride ? stride : kernel, .padding = *padding, .dilation = *dilation, .ceil_mode = *ceil})
             .ptr();
       }},
      {"AvgPool2d",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         auto divisor = h.get("divisor_override", {{"aten::avg_pool2d", 6}});
         if (divisor && !divisor->isNone()) return nullptr;
         auto kernel = size2(h.get("kernel_size", {{"aten::avg_pool2d", 1}}));
         auto stride = size2(h.get("stride", {{"aten::avg_pool2d", 2}}));
         auto padding = size2(h.get("padding", {{"aten::avg_pool2d", 3}}));
         auto ceil = scalar<bool>(h.get("ceil_mode", {{"aten::avg_pool2d", 4}}));
         auto include_pad = scalar<bool>(h.get("count_include_pad", {{"aten::avg_pool2d", 5}}));
         if (!kernel || !padding || !ceil || !include_pad) return nullptr;
         // clang-format off
         return nn::AvgPool2d(*kernel, {.stride = stride ? stride : kernel, .padding = *padding, .ceil_mode = *ceil,
                                        .count_include_pad = *include_pad})
             // clang-format on
             .ptr();
       }},
      {"AdaptiveAvgPool2d",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         auto size = size2(h.get("output_size", {{"aten::adaptive_avg_pool2d", 1}}));
         if (!size) return nullptr;
         return nn::AdaptiveAvgPool2d(*size).ptr();
       }},
      {"Dropout",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         auto p = scalar<double>(h.get("p", {{"aten::dropout", 1}, {"aten::dropout_", 1}}));
         return nn::Dropout(nn::DropoutOptions{.p = p.value_or(0.5),
                                               .inplace = scalar<bool>(h.get("inplace")).value_or(false)})
             .ptr();
       }},
      {"Flatten",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         auto start = scalar<std::int64_t>(h.get("start_dim", {{"aten::flatten", 1}}));
         auto end = scalar<std::int64_t>(h.get("end_dim", {{"aten::flatten", 2}}));
         if (!start || !end) return nullptr;
         return nn::Flatten({.start_dim = *start, .end_dim = *end}).ptr();
       }},
      {"LayerNorm",
       [](const jit::Module& m, const Hyper& h) -> std::shared_ptr<Module> {
         auto shape = h.get("normalized_shape", {{"aten::layer_norm", 1}});
         auto eps = scalar<double>(h.get("eps", {{"aten::layer_norm", 4}}));
         if (!shape || !eps) return nullptr;
         auto dims = detail::to_value(*shape, "normalized_shape");
         if (!dims || !dims->is_list()) return nullptr;
         const bool affine = tensor_attr(m, "weight").defined();
         return nn::LayerNorm(dims->to_int_list(), {.eps = *eps, .elementwise_affine = affine, .bias = tensor_attr(m, "bias").defined()})
             .ptr();
       }},
      {"Softmax",
       [](const jit::Module&, const Hyper& h) -> std::shared_ptr<Module> {
         auto dim = h.get("dim", {{"aten::softmax", 1}});
         if (!dim || !(dim->isNone() || dim->isInt())) return nullptr;
         return nn::Softmax(dim->isNone() ? std::nullopt : std::optional(dim->toInt())).ptr();
       }},
      {"MultiheadAttention",
       [](const jit::Module& m, const Hyper& h) -> std::shared_ptr<Module> {
         // Only with PyTorch's forward (a scripted file; a traced one bakes the call's
         // arguments into a forward of its own), packed projections, no bias_k/bias_v.
         // clang-format off
         if (!python_forward(m, "forward", {"query", "key", "value", "key_padding_mask", "need_weights", "attn_mask",
                                            "average_attn_weights"}))
           // clang-format on
           return nullptr;
         auto embed = scalar<std::int64_t>(h.get("embed_dim"));
         auto heads = scalar<std::int64_t>(h.get("num_heads"));
         // The head size the file's attribute gives (its heads may have been cut: symtrace prune).
         auto head_dim = scalar<std::int64_t>(h.get("head_dim"));
         auto dropout = scalar<double>(h.get("dropout"));
         auto batch_first = scalar<bool>(h.get("batch_first"));
         auto zero_attn = scalar<bool>(h.get("add_zero_attn"));
         const at::Tensor in_proj = tensor_attr(m, "in_proj_weight");
         if (!embed || !heads || !dropout || !batch_first || zero_attn.value_or(true) || !in_proj.defined() ||
             tensor_attr(m, "bias_k").defined() || tensor_attr(m, "bias_v").defined())
           return nullptr;
         // clang-format off
         const bool cut = head_dim && *head_dim > 0 && in_proj.dim() == 2 && in_proj.size(0) == 3 * *heads * *head_dim &&
                          in_proj.size(0) != 3 * *embed;
         return nn::MultiheadAttention(*embed, *heads, {.dropout = *dropout,
                                                        .bias = tensor_attr(m, "in_proj_bias").defined(),
                                                        .batch_first = *batch_first,
                                                        .head_dim = cut ? *head_dim : 0})
             // clang-format on
             .ptr();
       }},
      {"LSTM", recurrent_maker("LSTM")},
      {"GRU", recurrent_maker("GRU")},
      {"RNN", recurrent_maker("RNN")},
  };
  return makers;
}

// torch.fx's default leaf rule: a module of a class of torch.nn (or torch.ao.nn) is a leaf,
// except the containers (Sequential; ModuleList and friends are never called).
bool is_torch_nn_layer(std::string_view qualified, std::string_view cls) {
  const bool torch_nn = qualified.starts_with("__torch__.torch.nn.") || qualified.starts_with("__torch__.torch.ao.nn.");
  return torch_nn && cls != "Sequential" && cls != "ModuleList" && cls != "ModuleDict" && cls != "ParameterList" &&
         cls != "ParameterDict";
}

class Loader {
 public:
  /// A loader of `root` (and its modules).
  Loader(std::shared_ptr<Unit> unit, const jit::Module& root) : unit_(std::move(unit)), compiler_(*unit_) {
    for (const jit::Module& m : root.modules())
      for (const jit::Method& method : m.get_methods()) note_overload_calls(*method.graph()->block());
  }

  /// The symtrace module of the file's module `obj`; when it is a symtrace layer and `code` is
  /// given, `*code` is the file's module as a ScriptModule (Note [A layer's own code]).
  std::shared_ptr<Module> convert(const jit::Module& obj, const std::string& path,
                                  std::shared_ptr<Module>* code = nullptr) {
    const c10::ClassTypePtr& type = obj.type();
    const std::string qualified = detail::demangled_class_name(type);
    const std::string cls = qualified.substr(qualified.rfind('.') + 1);
    // A symtrace layer is the layer's first forward (`forward`, `forward__0`); a module whose
    // other overload the file calls (nn.LSTM's `forward__1`, on a PackedSequence) keeps its
    // TorchScript code for all.
    // And a traced layer whose output its caller never used has a forward of no inputs that
    // returns None: its own code, not the layer's.
    if (qualified.starts_with("__torch__.torch.nn.modules.") && !overloads_called_.contains(type.get()) &&
        !takes_no_input(obj)) {
      auto it = layer_makers().find(cls);
      const Hyper hyper(obj);
      if (it != layer_makers().end() && hyper.scripted_or_called()) {
        // Made without drawing weights: load_tensors overwrites every tensor of the layer.
        std::shared_ptr<Module> layer;
        {
          nn::detail::SkipInitScope skip;
          layer = it->second(obj, hyper);
        }
        if (layer) {
          layer->train(obj.is_training());
          load_tensors(*layer, obj, path);
          keep_attrs(layer, obj, path);
          if (code != nullptr) *code = script_module(obj, path, qualified, cls);
          return layer;
        }
      }
    }
    return script_module(obj, path, qualified, cls);
  }

  // The file's module `obj` as a ScriptModule running its own TorchScript code.
  std::shared_ptr<Module> script_module(const jit::Module& obj, const std::string& path, const std::string& qualified,
                                        const std::string& cls) {
    const c10::ClassTypePtr& type = obj.type();
    std::vector<const detail::Program*> forwards;
    if (auto fwd = obj.find_method("forward")) {
      forwards.push_back(&compiler_.method(type, fwd->function()));
    } else {
      for (int k = 0;; ++k) {  // an overloaded forward (`@torch.jit._overload_method`)
        auto overload = obj.find_method(fmt::format("forward__{}", k));
        if (!overload) break;
        forwards.push_back(&compiler_.method(type, overload->function()));
      }
    }
    auto m = std::make_shared<ScriptModule>(cls, unit_, std::move(forwards), !path.empty() && is_torch_nn_layer(qualified, cls));
    m->train(obj.is_training());
    for (const jit::Method& method : obj.get_methods()) {
      const std::string& name = method.name();
      if (name != "forward" && !name.starts_with("forward__")) m->add_method(name, &compiler_.method(type, method.function()));
    }
    for (const auto& child : obj.named_children()) {
      std::shared_ptr<Module> code;
      std::shared_ptr<Module> made = convert(child.value, join(path, child.name), &code);
      if (code) m->set_layer_code(*made, std::move(code));
      m->register_module(child.name, std::move(made));
    }
    for (const auto& p : obj.named_parameters(false))
      m->register_parameter(p.name, detail::to_symtrace(p.value, join(path, p.name), &memo_));
    for (const auto& b : obj.named_buffers(false))
      m->register_buffer(b.name, detail::to_symtrace(b.value, join(path, b.name), &memo_));
    for_each_attribute(obj, [&](const std::string& name, const c10::IValue& v) {
      if (v.isTensor()) {  // a plain tensor attribute: a buffer outside the state dict
        m->register_buffer(name, detail::to_symtrace(v.toTensor(), join(path, name), &memo_), /*persistent=*/false);
        return;
      }
      // A list of the module's own tensors (nn.LSTM's `_flat_weights`) holds the registered
      // tensors themselves, so a trace sees them as the parameters they are.
      if (v.isList() && !v.toListRef().empty() && v.toListRef()[0].isTensor()) {
        ValueList tensors;
        for (const c10::IValue& e : v.toListRef()) {
          Tensor own = e.isTensor() ? own_tensor(*m, obj, e.toTensor()) : Tensor();
          if (!own.defined()) {
            tensors.clear();
            break;
          }
          tensors.push_back(std::move(own));
        }
        if (!tensors.empty()) {
          m->set_attr(name, Value(std::move(tensors)));
          return;
        }
      }
      if (auto value = detail::to_value(v, join(path, name))) m->set_attr(name, std::move(*value));
    });
    return m;
  }

 private:
  static bool takes_no_input(const jit::Module& obj) {
    auto fwd = obj.find_method("forward");
    return fwd && fwd->function().getSchema().arguments().size() == 1;  // self only
  }

  // Notes the classes whose forward overload other than the first (`forward__1`, ...) the
  // code of `block` calls.
  void note_overload_calls(const jit::Block& block) {
    for (const jit::Node* n : block.nodes()) {
      if (n->kind() == c10::prim::CallMethod && n->s(c10::attr::name).starts_with("forward__") &&
          n->s(c10::attr::name) != "forward__0")
        if (auto cls = n->input(0)->type()->cast<c10::ClassType>()) overloads_called_.insert(cls.get());
      for (const jit::Block* b : n->blocks()) note_overload_calls(*b);
    }
  }

  static std::string join(const std::string& path, const std::string& name) {
    return path.empty() ? name : path + "." + name;
  }

  // Calls `fn(name, value)` for each attribute of `obj` that is not a parameter, a buffer,
  // `training` or a submodule.
  template <class F>
  static void for_each_attribute(const jit::Module& obj, F&& fn) {
    const c10::ClassTypePtr& type = obj.type();
    for (std::size_t slot = 0; slot < type->numAttributes(); ++slot) {
      const std::string& name = type->getAttributeName(slot);
      if (type->is_parameter(slot) || type->is_buffer(slot) || name == "training") continue;
      if (auto c = type->getAttribute(slot)->cast<c10::ClassType>(); c && c->is_module()) continue;
      fn(name, obj.attr(name));
    }
  }

  // The child `name` of the file's module `obj`.
  static std::optional<jit::Module> find_child(const jit::Module& obj, const std::string& name) {
    for (const auto& child : obj.named_children())
      if (child.name == name) return child.value;
    return std::nullopt;
  }

  // Keeps the plain attributes of the file's module `obj` (and of its children) that became
  // the symtrace layer `layer`, for other modules' code to read.
  void keep_attrs(const std::shared_ptr<Module>& layer, const jit::Module& obj, const std::string& path) {
    Unit::LayerAttrs kept{layer, {}};
    for_each_attribute(obj, [&](const std::string& name, const c10::IValue& v) {
      if (v.isTensor() || (v.isList() && !v.toListRef().empty() && v.toListRef()[0].isTensor())) return;  // _flat_weights
      if (auto value = detail::to_value(v, join(path, name))) kept.attrs.emplace_back(name, std::move(*value));
    });
    if (!kept.attrs.empty()) unit_->layer_attrs.insert_or_assign(layer.get(), std::move(kept));
    for (const auto& [name, child] : layer->named_children())
      if (auto theirs = find_child(obj, name)) keep_attrs(child, *theirs, join(path, name));
  }

  // The parameter or buffer of `m` registered for the file's tensor `t` (the same tensor of
  // `obj`), or an undefined tensor.
  static Tensor own_tensor(const Module& m, const jit::Module& obj, const at::Tensor& t) {
    for (const auto& p : obj.named_parameters(false))
      if (p.value.is_same(t)) return m.find_parameter(p.name);
    for (const auto& b : obj.named_buffers(false))
      if (b.value.is_same(t)) return m.find_buffer(b.name);
    return {};
  }

  // Gives the symtrace layer made for a torch.nn layer the file's tensors (no copy); those
  // it has no slot for (BatchNorm's num_batches_tracked) are registered, so the state dict
  // has every PyTorch name.
  void load_tensors(Module& layer, const jit::Module& obj, const std::string& path) {
    // The layer was made without drawing values, from what the file has: each of its tensors
    // must be overwritten here.
    std::size_t own = 0, loaded = 0;
    layer.for_each_own_tensor(true, [&](std::string_view, const Tensor& t) { own += t.defined(); });
    layer.for_each_own_tensor(false, [&](std::string_view, const Tensor& t) { own += t.defined(); });
    auto adopt = [&](const std::string& name, const at::Tensor& t, bool parameter) {
      Tensor mine = parameter ? layer.find_parameter(name) : layer.find_buffer(name);
      if (!mine.defined()) {
        Tensor theirs = detail::to_symtrace(t, join(path, name), &memo_);
        if (parameter) layer.register_parameter(name, std::move(theirs));
        else layer.register_buffer(name, std::move(theirs));
        return;
      }
      detail::adopt_into(mine, t, join(path, name), &memo_);
      ++loaded;
    };
    for (const auto& p : obj.named_parameters(false)) adopt(p.name, p.value, true);
    for (const auto& b : obj.named_buffers(false)) adopt(b.name, b.value, false);
    if (loaded != own)
      throw InternalError(fmt::format("symtrace's {} at '{}' has {} tensors, of which the file gave {}",
                                      layer.type_name(), path, own, loaded));
    // A layer's own children (MultiheadAttention's out_proj) are the file module's children.
    for (const auto& [name, child] : layer.named_children()) {
      auto theirs = find_child(obj, name);
      if (!theirs)
        throw InternalError(fmt::format("symtrace's {} at '{}' has a child '{}' the file's module lacks",
                                        layer.type_name(), path, name));
      load_tensors(*child, *theirs, join(path, name));
    }
  }

  std::shared_ptr<Unit> unit_;
  Compiler compiler_;
  detail::StorageMemo memo_;
  std::unordered_set<const c10::ClassType*> overloads_called_;
};

}  // namespace

jit::Module detail::read_file(const std::filesystem::path& path) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (ec) throw std::invalid_argument(fmt::format("{}: {}", path.string(), ec.message()));
  if (!exists) throw std::invalid_argument(fmt::format("{}: no such file", path.string()));
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::invalid_argument(fmt::format("{}: not a regular file", path.string()));
  try {
    try {
      return jit::load(path.string(), c10::Device(c10::kCPU));
    } catch (const std::exception& e) {  // c10::Error, or the compiler's jit::ErrorReport
      // Detection models name torchvision's ops: load its library (once, only then) and read
      // the file again.
      const std::string why = first_line(e.what());
      if (why.find("torchvision::") == std::string::npos) throw;
      if (!detail::load_torchvision_ops())
        throw std::invalid_argument(fmt::format("{}: not a TorchScript file LibTorch can read: {} ({})", path.string(),
                                                why, detail::torchvision_ops_why_not()));
      return jit::load(path.string(), c10::Device(c10::kCPU));
    }
  } catch (const std::invalid_argument&) {
    throw;  // said above, with the path
  } catch (const c10::Error& e) {
    throw std::invalid_argument(fmt::format("{}: not a TorchScript file LibTorch can read: {}", path.string(),
                                            first_line(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    const std::string why = first_line(e.what());
    // A class registered with LibTorch (torch::class_) by a library this process has not loaded.
    constexpr std::string_view unknown = "Unknown type name '__torch__.torch.classes.";
    if (const std::size_t at = why.find(unknown); at != std::string::npos) {
      const std::size_t start = at + std::string_view("Unknown type name '__torch__.").size();
      const std::string name = why.substr(start, why.find('\'', start) - start);
      throw std::invalid_argument(fmt::format("{}: the file uses the class {}, which no library loaded in this process "
                                              "registers: load the library that registers it (torch::class_) first",
                                              path.string(), name));
    }
    // An operator of a library this process has not loaded (TORCH_LIBRARY).
    constexpr std::string_view unknown_op = "Unknown builtin op: ";
    if (const std::size_t at = why.find(unknown_op); at != std::string::npos) {
      std::string name = why.substr(at + unknown_op.size());
      while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.pop_back();
      throw std::invalid_argument(fmt::format("{}: the file calls the operator {}, which no library loaded in this "
                                              "process registers: load the library that registers it first "
                                              "(LibTorch: {})",
                                              path.string(), name, why));
    }
    throw std::invalid_argument(fmt::format("{}: not a TorchScript file LibTorch can read: {}", path.string(), why));
  }
}

at::Tensor detail::libtorch_tensor(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<std::int64_t> sizes;
  for (const Dim& d : c.shape()) sizes.push_back(d.value());
  switch (c.dtype()) {
    case DType::float32: return at::from_blob(c.data_ptr<float>(), sizes, at::kFloat).clone();
    case DType::int64: return at::from_blob(c.data_ptr<std::int64_t>(), sizes, at::kLong).clone();
    case DType::bool_: return at::from_blob(c.data_ptr<bool>(), sizes, at::kBool).clone();
    default: break;
  }
  symtrace::detail::throw_not_computed(c.dtype());
}

namespace {

c10::IValue input_ivalue(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::none: return {};
    case Value::Kind::boolean: return v.to_bool();
    case Value::Kind::integer: return v.to_int();
    case Value::Kind::floating: return v.to_double();
    case Value::Kind::string: return v.to_string_ref();
    case Value::Kind::tensor: return detail::libtorch_tensor(v.to_tensor());
    case Value::Kind::list: {
      const ValueList& l = v.to_list();
      if (!l.empty() && l[0].is_tensor()) {
        std::vector<at::Tensor> ts;
        for (const Value& e : l) ts.push_back(detail::libtorch_tensor(e.to_tensor()));
        return ts;
      }
      std::vector<std::int64_t> ints;
      for (const Value& e : l) ints.push_back(e.to_int());
      return ints;
    }
    default: throw std::invalid_argument(fmt::format("a {} cannot be passed to LibTorch", v.type_name()));
  }
}

}  // namespace

std::vector<c10::IValue> detail::libtorch_inputs(const ValueList& inputs) {
  std::vector<c10::IValue> args;
  args.reserve(inputs.size());
  for (const Value& v : inputs) args.push_back(input_ivalue(v));
  return args;
}

bool available() noexcept { return true; }

void detail::read_with_libtorch(const std::filesystem::path& path) { (void)read_file(path); }

std::shared_ptr<Module> load(const std::filesystem::path& path) {
  jit::Module obj = detail::read_file(path);
  try {
    Loader loader(std::make_shared<Unit>(), obj);
    return loader.convert(obj, "");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", path.string(), e.what()));
  } catch (const c10::Error& e) {
    throw std::invalid_argument(fmt::format("{}: LibTorch: {}", path.string(), first_line(e.what_without_backtrace())));
  }
}

Value run_in_libtorch(const std::filesystem::path& path, const ValueList& inputs) {
  jit::Module obj = detail::read_file(path);
  std::vector<c10::IValue> args = detail::libtorch_inputs(inputs);
  c10::IValue out;
  try {
    c10::InferenceMode guard;
    out = obj.forward(args);
  } catch (const c10::Error& e) {
    throw std::invalid_argument(fmt::format("{}: LibTorch's forward failed: {}", path.string(),
                                            first_line(e.what_without_backtrace())));
  }
  auto value = detail::to_value(out, "output");
  if (!value) throw std::invalid_argument(fmt::format("{}: LibTorch's forward returned a {}, which symtrace cannot hold",
                                                      path.string(), out.tagKind()));
  return std::move(*value);
}

}  // namespace symtrace::torchscript

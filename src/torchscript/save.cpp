// save_with_tensors: the file a model was loaded from, written again with the model's tensors.
//
// The file's own module objects are changed, not rebuilt: each tensor of the symtrace module
// tree replaces the one at the same path in LibTorch's module (converted back to the file's
// dtype) where sizes or values differ, and the sizes the code holds as constants are computed
// from the weights instead (Note [Sizes the code holds]). The methods are otherwise the
// file's, so the result loads wherever the file did.
#include "symtrace/torchscript/save.hpp"

#include "symtrace/nn/module.hpp"

#include "torchscript/file.hpp"

#include <fmt/format.h>

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/schema_matching.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <unistd.h>

namespace symtrace::torchscript {

namespace jit = torch::jit;

namespace {

// The file's submodule at `path` ("" for the root, "layer1.0"), or nullopt.
std::optional<jit::Module> submodule(const jit::Module& root, const std::string& path) {
  jit::Module m = root;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t dot = path.find('.', start);
    if (dot == std::string::npos) dot = path.size();
    const std::string part = path.substr(start, dot - start);
    if (!m.hasattr(part)) return std::nullopt;
    const c10::IValue child = m.attr(part);
    if (!child.isModule()) return std::nullopt;
    m = child.toModule();
    start = dot + 1;
  }
  return m;
}

// Note [Sizes the code holds]: TorchScript makes the sizes of torch.nn's layers (`groups`,
// `out_channels`, ...) constants of the layer's class, shared by every layer of the same
// configuration, and folds those its code reads into the methods: a depthwise convolution's
// `groups` is a literal of its `aten::conv2d` call. A cut changes it per layer, so the writer
// rewrites that argument to be computed from the layer's own weight (`weight.size(0)`), which
// holds for every layer sharing the class whatever each keeps (symtrace's loader reads such a
// layer back the same way). The other constants describe the layer and are not read by its
// code (`out_channels`, `in_features`, `num_features`): they are set to what the tensors now
// hold where every layer of the class agrees, and keep the file's values where the layers of
// one class were cut differently. (A layer norm's normalized_shape is a literal of the code
// too, but channels normalised together are never cut: channel_groups.hpp.)
//
// Every node of `graph`, in its blocks too.
std::vector<jit::Node*> all_nodes(jit::Graph& graph) {
  std::vector<jit::Node*> out;
  std::vector<jit::Block*> blocks{graph.block()};
  while (!blocks.empty()) {
    jit::Block* b = blocks.back();
    blocks.pop_back();
    for (jit::Node* n : b->nodes()) {
      out.push_back(n);
      for (jit::Block* inner : n->blocks()) blocks.push_back(inner);
    }
  }
  return out;
}

// The methods of `m`'s class, rewritten so that the groups argument of its convolutions, when
// it is the constant `was`, is the size of dim 0 of the module's weight.
void groups_from_weight(const jit::Module& m, std::int64_t was) {
  for (const jit::Method& method : m.get_methods()) {
    const std::shared_ptr<jit::Graph> graph = method.graph();
    jit::Value* self = graph->inputs().at(0);
    for (jit::Node* n : all_nodes(*graph)) {
      const c10::Symbol kind = n->kind();
      if (kind != c10::aten::conv1d && kind != c10::aten::conv2d && kind != c10::aten::conv3d &&
          kind != c10::aten::_convolution)
        continue;
      const std::size_t at = kind == c10::aten::_convolution ? 8 : 6;
      if (n->inputs().size() <= at) continue;
      const std::optional<c10::IValue> groups = jit::toIValue(n->input(at));
      if (!groups || !groups->isInt() || groups->toInt() != was) continue;
      jit::WithInsertPoint guard(n);
      n->replaceInput(at, graph->insert(c10::aten::size, {graph->insertGetAttr(self, "weight"), 0}));
    }
  }
}

// Note [Heads the code holds]: torch.nn.MultiheadAttention's forward (and the function and
// fused kernel it calls) computes the head size as embed_dim / num_heads from its input, so a
// layer with whole heads cut (fewer heads, the same head size, the same embed_dim) cannot run
// it. The writer gives the class a method computing the same attention with the head size and
// the number of heads its attributes hold (`head_dim`, `num_heads`, set per layer), and makes
// forward call it: what the layer computes is unchanged (analysis/attention_heads.cpp says when a
// cut leaves it unchanged), and symtrace's loader reads such a layer back by those attributes.
constexpr const char* heads_method = "_forward_with_head_dim";
constexpr const char* heads_source = R"(
def _forward_with_head_dim(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor],
                           need_weights: bool, attn_mask: Optional[Tensor],
                           average_attn_weights: bool) -> Tuple[Tensor, Optional[Tensor]]:
    batched = query.dim() == 3
    if {batch_first} and batched:
        query = query.transpose(1, 0)
        key = key.transpose(1, 0)
        value = value.transpose(1, 0)
    if not batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len = query.size(0)
    bsz = query.size(1)
    src_len = key.size(0)
    heads = self.num_heads
    head_dim = self.head_dim
    inner = heads * head_dim
    w = self.in_proj_weight
    b = self.in_proj_bias
    if b is None:
        q = torch.linear(query, w[0:inner])
        k = torch.linear(key, w[inner:2 * inner])
        v = torch.linear(value, w[2 * inner:3 * inner])
    else:
        q = torch.linear(query, w[0:inner], b[0:inner])
        k = torch.linear(key, w[inner:2 * inner], b[inner:2 * inner])
        v = torch.linear(value, w[2 * inner:3 * inner], b[2 * inner:3 * inner])
    q = q.contiguous().view(tgt_len, bsz * heads, head_dim).transpose(0, 1)
    k = k.contiguous().view(src_len, bsz * heads, head_dim).transpose(0, 1)
    v = v.contiguous().view(src_len, bsz * heads, head_dim).transpose(0, 1)
    # The masks merged as torch.nn.functional.multi_head_attention_forward merges them: uint8
    # as bool; a bool attention mask or'd with the padding mask, a float one filled where it
    # pads; then a bool mask as -inf where true.
    mask: Optional[Tensor] = None
    if attn_mask is not None:
        m = attn_mask
        if m.dtype == 0:
            m = m.to(11)
        if m.dim() == 2:
            m = m.unsqueeze(0)
        mask = m
    if key_padding_mask is not None:
        kpm = key_padding_mask
        if kpm.dtype == 0:
            kpm = kpm.to(11)
        kpm = kpm.view(bsz, 1, 1, src_len).expand(-1, heads, -1, -1).reshape(bsz * heads, 1, src_len)
        if mask is None:
            mask = kpm
        elif mask.dtype == 11:
            mask = mask.logical_or(kpm)
        else:
            mask = mask.masked_fill(kpm, float("-inf"))
    if mask is not None:
        if mask.dtype == 11:
            mask = torch.zeros_like(mask, dtype=q.dtype).masked_fill(mask, float("-inf"))
    q = q / (float(head_dim) ** 0.5)
    if mask is None:
        attn = torch.bmm(q, k.transpose(-2, -1))
    else:
        attn = torch.baddbmm(mask, q, k.transpose(-2, -1))
    attn = torch.softmax(attn, -1)
    if self.training and self.dropout > 0.0:
        attn = torch.dropout(attn, self.dropout, True)
    out = torch.bmm(attn, v).transpose(0, 1).contiguous().view(tgt_len * bsz, inner)
    out = torch.linear(out, self.out_proj.weight, self.out_proj.bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not batched:
        out = out.squeeze(1)
    elif {batch_first}:
        out = out.transpose(1, 0)
    weights: Optional[Tensor] = None
    if need_weights:
        aw = attn.view(bsz, heads, tgt_len, src_len)
        if average_attn_weights:
            aw = torch.sum(aw, [1]) / heads
        if not batched:
            aw = aw.squeeze(0)
        weights = aw
    return out, weights
)";

// Gives `m`'s class the method above and makes its forward return what that method returns.
void forward_with_head_dim(jit::Module& m) {
  if (m.type()->findMethod(heads_method) != nullptr) return;  // a file written so before
  // `batch_first` is a constant of the class (folded into PyTorch's forward), or an attribute.
  std::string batch_first = "self.batch_first";
  if (const auto c = m.type()->findConstant("batch_first"); c && c->isBool()) batch_first = c->toBool() ? "True" : "False";
  m.define(fmt::format(fmt::runtime(heads_source), fmt::arg("batch_first", batch_first)));
  const std::shared_ptr<jit::Graph> graph = m.get_method("forward").graph();
  // Given: forward(self, query, ...) with PyTorch's body. Execute: a call of the method on
  // forward's inputs is inserted before the return, which returns it; the old body goes, last
  // node first. Result: forward(self, query, ...) = self._forward_with_head_dim(query, ...).
  jit::Node* ret = graph->return_node();
  const std::vector<jit::Value*> inputs(graph->inputs().begin(), graph->inputs().end());
  jit::Value* result = nullptr;
  {
    jit::WithInsertPoint guard(ret);
    const jit::MatchedSchema call{inputs, {m.get_method(heads_method).function().getSchema().returns().at(0).type()}, {}, heads_method};
    result = graph->insertMethodCall(heads_method, call);
  }
  ret->replaceInput(0, result);
  std::vector<jit::Node*> old;
  for (jit::Node* n : graph->nodes())
    if (n != result->node()) old.push_back(n);
  for (auto it = old.rbegin(); it != old.rend(); ++it) (*it)->destroy();
}

// A torch.nn.MultiheadAttention whose projections lost whole heads: `num_heads` set from them,
// its class rewritten once (Note [Heads the code holds]). The method computes attention with
// packed projections and without bias_k, bias_v or add_zero_attn: every layer sharing the class
// must be such a layer (they are attributes, which layers of one class may hold differently).
void cut_heads(const jit::Module& file, jit::Module& m, std::set<const c10::ClassType*>& rewritten) {
  if (!m.hasattr("num_heads") || !m.hasattr("head_dim") || !m.hasattr("in_proj_weight") || !m.attr("head_dim").isInt() ||
      !m.attr("num_heads").isInt() || !m.attr("in_proj_weight").isTensor() || !m.find_method("forward"))
    return;
  const std::int64_t d = m.attr("head_dim").toInt();
  const at::Tensor w = m.attr("in_proj_weight").toTensor();
  if (d <= 0 || w.dim() != 2 || w.size(0) % (3 * d) != 0) return;
  const std::int64_t heads = w.size(0) / (3 * d);
  if (heads == m.attr("num_heads").toInt()) return;
  if (rewritten.insert(m.type().get()).second) {
    for (const jit::Module& other : file.modules()) {
      if (other.type() != m.type()) continue;
      const auto is = [&](const char* name, auto test) { return other.hasattr(name) && test(other.attr(name)); };
      const bool plain = is("in_proj_weight", [](const c10::IValue& v) { return v.isTensor(); }) &&
                         !is("bias_k", [](const c10::IValue& v) { return v.isTensor(); }) &&
                         !is("bias_v", [](const c10::IValue& v) { return v.isTensor(); }) &&
                         !is("add_zero_attn", [](const c10::IValue& v) { return v.isBool() && v.toBool(); }) &&
                         !is("_qkv_same_embed_dim", [](const c10::IValue& v) { return v.isBool() && !v.toBool(); });
      if (!plain)
        throw std::invalid_argument(fmt::format(
            "the file's attention layers of the class of '{}' include one with bias_k, bias_v, add_zero_attn or "
            "separate projections, which the heads' rewrite does not compute; prune a plan that keeps its heads",
            m.type()->name() ? m.type()->name()->qualifiedName() : std::string("?")));
    }
    forward_with_head_dim(m);
  }
  m.setattr("num_heads", heads);
}

// The value a torch.nn layer's size constant `name` should hold for the layer's tensors, or
// nullopt when it is not one of those (or the tensors do not say). `groups` is the layer's
// number of groups as its code now computes it.
std::optional<std::int64_t> size_constant(const jit::Module& m, const std::string& cls, const std::string& name,
                                          std::int64_t groups) {
  const auto tensor = [&](const char* t) {
    return m.hasattr(t) && m.attr(t).isTensor() ? m.attr(t).toTensor() : at::Tensor();
  };
  const at::Tensor w = tensor("weight");
  if (cls == "Conv1d" || cls == "Conv2d" || cls == "Conv3d") {
    if (!w.defined() || w.dim() < 3) return std::nullopt;
    if (name == "out_channels") return w.size(0);
    if (name == "in_channels") return w.size(1) * groups;
    if (name == "groups") return groups;
  } else if (cls.ends_with("Linear")) {
    if (!w.defined() || w.dim() != 2) return std::nullopt;
    if (name == "out_features") return w.size(0);
    if (name == "in_features") return w.size(1);
  } else if (cls.starts_with("BatchNorm") && name == "num_features") {
    const at::Tensor t = tensor("running_mean").defined() ? tensor("running_mean") : w;
    if (t.defined() && t.dim() == 1) return t.size(0);
  }
  return std::nullopt;
}

// Sets the size constants of `type` (out_channels, in_features, num_features, ...) to what its
// layers' tensors now say, where every layer of the class says the same: a constant is one
// value for the whole class (Note [Sizes the code holds]).
void update_size_constants(const jit::Module& file, const c10::ClassTypePtr& type, bool groups_from_weight) {
  if (!type->name()) return;
  const std::string cls = type->name()->name();
  std::vector<jit::Module> instances;
  for (const jit::Module& m : file.modules())
    if (m.type() == type) instances.push_back(m);
  std::int64_t class_groups = 1;
  if (const auto g = type->findConstant("groups"); g && g->isInt()) class_groups = g->toInt();
  for (const char* name : {"in_channels", "out_channels", "groups", "in_features", "out_features", "num_features"}) {
    const c10::optional<c10::IValue> now = type->findConstant(name);
    if (!now || !now->isInt()) continue;
    std::optional<std::int64_t> value;
    bool agree = true;
    for (const jit::Module& m : instances) {
      std::int64_t groups = class_groups;
      if (groups_from_weight && m.hasattr("weight") && m.attr("weight").isTensor())
        groups = m.attr("weight").toTensor().size(0);
      const std::optional<std::int64_t> v = size_constant(m, cls, name, groups);
      agree = agree && v && (!value || *value == *v);
      value = v;
    }
    if (!agree || !value || *value == now->toInt()) continue;
    type->unsafeRemoveConstant(name);
    type->addConstant(name, *value);
  }
}

}  // namespace

void save_with_tensors(const std::filesystem::path& source, const Module& model, const std::filesystem::path& out) {
  jit::Module file = detail::read_file(source);
  std::set<std::string> resized;                                 // the modules whose tensors changed size
  std::map<std::string, std::vector<std::int64_t>> old_weights;  // their weights' sizes before
  auto replace = [&](const std::string& path, const Tensor& tensor) {
    const std::size_t dot = path.rfind('.');
    const std::string owner = dot == std::string::npos ? std::string() : path.substr(0, dot);
    const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
    std::optional<jit::Module> m = submodule(file, owner);
    if (!m || !m->hasattr(name) || !m->attr(name).isTensor())
      throw std::invalid_argument(fmt::format("{}: the file holds no tensor '{}' of the model; save a model loaded "
                                              "from this file",
                                              source.string(), path));
    const at::Tensor old = m->attr(name).toTensor();
    if (!old.defined() || !tensor.defined() || !tensor.is_concrete()) return;
    at::Tensor now = detail::libtorch_tensor(tensor);
    if (now.sizes() == old.sizes() && now.scalar_type() == old.scalar_type() && now.equal(old)) return;
    if (now.sizes() == old.sizes() && old.is_floating_point() && now.equal(old.to(now.scalar_type()))) return;
    if (now.sizes() != old.sizes()) resized.insert(owner);
    if (now.sizes() != old.sizes() && name == "weight") old_weights.try_emplace(owner, old.sizes().vec());
    now = now.to(old.scalar_type()).set_requires_grad(old.requires_grad());
    m->setattr(name, now);
  };
  for (const NamedTensor& p : model.named_parameters()) replace(p.name, p.tensor);
  for (const NamedTensor& b : model.named_buffers()) replace(b.name, b.tensor);
  // Note [Sizes the code holds]: once per class of a layer whose weight was cut.
  std::set<const c10::ClassType*> rewritten, rewritten_heads;
  std::vector<c10::ClassTypePtr> classes;  // of the layers whose tensors changed size
  std::set<c10::ClassTypePtr> depthwise;   // whose groups the code now computes from the weight
  for (const std::string& path : resized) {
    std::optional<jit::Module> m = submodule(file, path);
    if (m && m->type()->name() && m->type()->name()->name() == "MultiheadAttention") cut_heads(file, *m, rewritten_heads);
    if (!m || !rewritten.insert(m->type().get()).second || !m->hasattr("weight")) continue;
    const c10::ClassTypePtr type = m->type();
    const auto constant = [&](const char* name) { return type->findConstant(name); };
    if (const auto groups = constant("groups"); groups && groups->isInt() && groups->toInt() > 1) {
      const auto in = constant("in_channels"), out = constant("out_channels");
      if (in && out && in->isInt() && out->isInt() && in->toInt() == groups->toInt() && out->toInt() == groups->toInt()) {
        groups_from_weight(*m, groups->toInt());
        depthwise.insert(type);
      }
    }
    // A traced layer has no class constants: its groups is a literal of its code, the number
    // of its old weight's rows when it was depthwise.
    const std::vector<std::int64_t>& before = old_weights[path];
    if (!constant("groups") && before.size() >= 3 && before[1] == 1 && before[0] > 1) {
      groups_from_weight(*m, before[0]);
      depthwise.insert(type);
    }
    classes.push_back(type);
  }
  // The descriptive constants, once the code no longer reads the old ones.
  for (const c10::ClassTypePtr& type : classes) update_size_constants(file, type, depthwise.count(type) > 0);
  // Written beside the target and renamed: a failed save leaves no file.
  const std::filesystem::path partial = out.string() + fmt::format(".partial-{}", ::getpid());
  try {
    file.save(partial.string());
  } catch (const c10::Error& e) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw std::invalid_argument(fmt::format("{}: cannot write the file: {}", out.string(), e.what_without_backtrace()));
  }
  std::error_code ec;
  std::filesystem::rename(partial, out, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    throw std::invalid_argument(fmt::format("{}: cannot write the file: {}", out.string(), ec.message()));
  }
}

}  // namespace symtrace::torchscript

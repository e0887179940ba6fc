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
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

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
// code; they keep the file's values. (A layer norm's normalized_shape is such a literal too,
// but channels normalised together are never cut: channel_groups.hpp.)
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

}  // namespace

void save_with_tensors(const std::filesystem::path& source, const Module& model, const std::filesystem::path& out) {
  jit::Module file = detail::read_file(source);
  std::set<std::string> resized;  // the modules whose tensors changed size
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
    now = now.to(old.scalar_type()).set_requires_grad(old.requires_grad());
    m->setattr(name, now);
  };
  for (const NamedTensor& p : model.named_parameters()) replace(p.name, p.tensor);
  for (const NamedTensor& b : model.named_buffers()) replace(b.name, b.tensor);
  // Note [Sizes the code holds]: once per class of a layer whose weight was cut.
  std::set<const c10::ClassType*> rewritten;
  for (const std::string& path : resized) {
    std::optional<jit::Module> m = submodule(file, path);
    if (!m || !rewritten.insert(m->type().get()).second || !m->hasattr("weight")) continue;
    const c10::ClassTypePtr type = m->type();
    const auto constant = [&](const char* name) { return type->findConstant(name); };
    if (const auto groups = constant("groups"); groups && groups->isInt() && groups->toInt() > 1) {
      const auto in = constant("in_channels"), out = constant("out_channels");
      if (in && out && in->isInt() && out->isInt() && in->toInt() == groups->toInt() && out->toInt() == groups->toInt())
        groups_from_weight(*m, groups->toInt());
    }
  }
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

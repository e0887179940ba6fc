#include "symtrace/ops/registry.hpp"

#include "ops/families.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <stdexcept>

namespace symtrace {

struct OpRegistry::Impl {
  std::map<std::string, OpDef, std::less<>> ops;  // node-based: OpDef addresses are stable
  // Callables, added at run time: read under a shared lock, after the built-in ops.
  mutable std::shared_mutex runtime_mutex;
  mutable std::map<std::string, OpDef, std::less<>> runtime_ops;
};

OpRegistry::OpRegistry() : impl_(std::make_unique<Impl>()) {
  detail::register_pointwise_ops(*this);
  detail::register_reduction_ops(*this);
  detail::register_linalg_ops(*this);
  detail::register_einsum_ops(*this);
  detail::register_convolution_ops(*this);
  detail::register_pooling_ops(*this);
  detail::register_normalization_ops(*this);
  detail::register_dropout_ops(*this);
  detail::register_embedding_ops(*this);
  detail::register_view_ops(*this);
  detail::register_join_ops(*this);
  detail::register_indexing_ops(*this);
  detail::register_sym_int_ops(*this);
  detail::register_number_ops(*this);
  detail::register_sorting_ops(*this);
  detail::register_detection_ops(*this);
  for (const auto& [name, def] : impl_->ops) sorted_.push_back(&def);
}

OpRegistry::~OpRegistry() = default;

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry;
  return registry;
}

void OpRegistry::add(std::string_view schema, MetaFn meta, KernelFn kernel, OpFlags flags) {
  OpDef def{parse_schema(schema), meta, kernel, flags, nullptr};
  if (!meta || !kernel)
    throw std::invalid_argument(fmt::format("op '{}' needs a meta function and a kernel", def.name()));
  const std::string name = def.name();
  if (!impl_->ops.emplace(name, std::move(def)).second)
    throw std::invalid_argument(fmt::format("op '{}' is registered twice", name));
}

namespace {
std::atomic<OpRegistry::Resolver>& resolver() noexcept {
  static std::atomic<OpRegistry::Resolver> r{nullptr};
  return r;
}
}  // namespace

void OpRegistry::set_resolver(Resolver r) noexcept { resolver().store(r, std::memory_order_release); }

const OpDef* OpRegistry::functional_of(const OpDef& inplace) const noexcept {
  const std::string_view target = inplace.name();
  const std::size_t ns = target.find("::");
  const std::size_t dot = target.find('.', ns == std::string_view::npos ? 0 : ns);
  const std::string_view name = target.substr(0, dot);
  if (!name.ends_with('_')) return nullptr;
  try {
    std::string functional(name.substr(0, name.size() - 1));
    if (dot != std::string_view::npos) functional += target.substr(dot);
    const OpDef* op = find(functional);
    if (op == nullptr || op->has(OpFlags::inplace) || op->has(OpFlags::mutates_arguments) ||
        op->schema.args.size() != inplace.schema.args.size())
      return nullptr;
    return op;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

const OpDef* OpRegistry::find(std::string_view name) const noexcept {
  if (const auto it = impl_->ops.find(name); it != impl_->ops.end()) [[likely]]
    return &it->second;
  {
    std::shared_lock lock(impl_->runtime_mutex);
    if (const auto it = impl_->runtime_ops.find(name); it != impl_->runtime_ops.end()) return &it->second;
  }
  const Resolver r = resolver().load(std::memory_order_acquire);
  return r != nullptr ? r(name) : nullptr;
}

const OpDef& OpRegistry::add_runtime(OpDef def, std::source_location where) const {
  const std::string name = def.name();
  if (impl_->ops.contains(name))
    throw_invalid_argument(where, "cannot register '{}': a built-in op has that name; choose another (e.g. "
                                  "qualify it: 'mylib.{}')",
                           name, name);
  std::unique_lock lock(impl_->runtime_mutex);
  const auto [it, inserted] = impl_->runtime_ops.emplace(name, std::move(def));
  if (!inserted)
    throw_invalid_argument(where, "cannot register '{}': a callable of that name is already registered "
                                  "(register each callable once, e.g. at namespace scope)",
                           name);
  return it->second;
}

namespace {
// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

const OpDef& OpRegistry::get(std::string_view name, std::source_location where) const {
  if (const OpDef* def = find(name)) return *def;
  std::vector<std::string_view> close;  // the names at the smallest distance, if it is at most 2
  std::size_t best = 3;
  for (const OpDef* def : sorted_) {
    const std::size_t d = edit_distance(name, def->name());
    if (d < best) close.clear(), best = d;
    if (d == best) close.push_back(def->name());
  }
  if (close.empty())
    throw_op_error(name, where, "unknown op '{}': it is not in the registry (see OpRegistry::ops())", name);
  throw_op_error(name, where, "unknown op '{}': it is not in the registry; did you mean {}?", name,
                 fmt::join(close, " or "));
}

}  // namespace symtrace

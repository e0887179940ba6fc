#pragma once
// Internal (symtrace::detail, not part of the API): running a module eagerly on synthetic inputs of
// the shapes seen at its call: the collection's capture by execution and the analysis tracer's
// output shapes of failed modules.

#include "symtrace/core/factories.hpp"
#include "symtrace/core/random.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/trace/tracer.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace symtrace::detail {

/// Copies of a module's buffers, written back on destruction: a run leaves the module's state
/// (BatchNorm's running statistics in training) as it found it.
class BufferSnapshot {
 public:
  explicit BufferSnapshot(const Module& module) {
    for (NamedTensor& b : module.named_buffers()) {
      if (!b.tensor.defined() || !b.tensor.is_concrete()) continue;
      Tensor copy = Tensor::empty(b.tensor.shape(), b.tensor.dtype());
      (void)copy.copy_(b.tensor);
      saved_.emplace_back(std::move(b.tensor), std::move(copy));
    }
  }
  ~BufferSnapshot() {
    for (auto& [buffer, copy] : saved_) (void)buffer.copy_(copy);
  }
  BufferSnapshot(const BufferSnapshot&) = delete;
  BufferSnapshot& operator=(const BufferSnapshot&) = delete;

 private:
  std::vector<std::pair<Tensor, Tensor>> saved_;
};

/// True when every spec has a known rank and known sizes (each part of a list or dict input).
inline bool fully_known(const std::vector<InputSpec>& specs) {
  return std::all_of(specs.begin(), specs.end(), [](const InputSpec& s) {
    if (s.is_list || s.is_dict) return fully_known(s.elements);
    if (s.is_constant) return true;
    return !s.is_int && s.shape.is_rank_known() &&
           std::all_of(s.shape.begin(), s.shape.end(), [](Dim d) { return d.is_known(); });
  });
}

/// An input of a spec's shape (fully known): standard normal float32 drawn from `gen`, zeros of
/// other dtypes; a list or dict of such for a list or dict input, with its constants as they are.
inline Value synthetic_input(const InputSpec& s, Generator& gen) {
  if (s.is_constant) return s.value;
  if (s.is_list) {
    ValueList items;
    for (const InputSpec& e : s.elements) items.push_back(synthetic_input(e, gen));
    return items;
  }
  if (s.is_dict) {
    ValueDict items;
    for (std::size_t i = 0; i < s.elements.size(); ++i) items.insert_or_assign(s.keys[i], synthetic_input(s.elements[i], gen));
    return items;
  }
  return s.dtype == DType::float32 ? randn(s.shape.sizes(), gen) : zeros(SymIntList(s.shape.sizes()), s.dtype);
}

/// Inputs of the specs' shapes (fully known), drawn from a generator seeded with `seed`.
inline ValueList synthetic_inputs(const std::vector<InputSpec>& specs, std::uint64_t seed) {
  Generator gen(seed);
  ValueList inputs;
  for (const InputSpec& s : specs) inputs.push_back(synthetic_input(s, gen));
  return inputs;
}

}  // namespace symtrace::detail

#pragma once
// Internal to the trace layer: what an op gives when an argument is a tensor of unknown rank
// (Note [Unknown in, unknown out] in unknown_rank.cpp), used by Tracer::record_op and the
// tracer's leaves.

#include "symtrace/core/tensor.hpp"
#include "symtrace/core/value.hpp"
#include "symtrace/ops/op.hpp"

#include <span>

namespace symtrace::detail {

/// True when an argument is (or a list holds) a tensor of unknown rank. Asked for every op a
/// trace records, hence inline.
inline bool has_unknown_rank(std::span<const Value> args) noexcept {
  for (const Value& v : args) {
    if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
      if (t->defined() && !t->impl_ptr()->meta.shape.is_rank_known()) return true;
    } else if (const ValueList* list = boost::variant2::get_if<ValueList>(&v.value)) {
      if (has_unknown_rank(*list)) return true;
    }
  }
  return false;
}

/// The metadata of `call`'s result when an argument has unknown rank (Note [Unknown in, unknown
/// out]): the dtype its meta function gives at a stand-in rank, an unknown rank (a full
/// reduction: 0-dim). TraceError when the number of its outputs depends on the rank.
OutputMeta unknown_rank_meta(const OpCall& call);

}  // namespace symtrace::detail

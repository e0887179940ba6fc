// Note [Unknown in, unknown out] (below): what an op or a leaf gives when an argument is a tensor
// of unknown rank, the output of a module that could not be traced.
#include "unknown_rank.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/nn/module.hpp"
#include "symtrace/ops/op.hpp"
#include "symtrace/trace/tracer.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>

namespace symtrace {

bool Tracer::any_unknown_rank(const ValueList& args) noexcept { return detail::has_unknown_rank(args); }

std::optional<OutputMeta> Tracer::unknown_result(const Module& module, DType dtype) {
  const ForwardSignature* signature = module.forward_signature();
  const ParamType result = signature ? signature->result : ParamType::tensor;
  if (result == ParamType::tensor || result == ParamType::any) {
    return OutputMeta::single(dtype, Shape::unknown_rank());
  }
  if (result == ParamType::tuple) {
    OutputMeta meta;
    meta.is_list = true;
    for (std::size_t i = 0; i < signature->result_arity; ++i) meta.outputs.push_back(TensorMeta{dtype, Shape::unknown_rank()});
    return meta;
  }
  return std::nullopt;
}

OutputMeta Tracer::unknown_result(const Module& module, const ValueList& args, const std::string& path,
                                  std::source_location where) {
  DType dtype = DType::float32;
  for (const Value& a : args) {
    if (a.is_tensor()) {
      dtype = a.to_tensor().dtype();
      break;
    }
  }
  if (std::optional<OutputMeta> meta = unknown_result(module, dtype)) return std::move(*meta);
  const ForwardSignature* signature = module.forward_signature();
  throw_trace_error(where,
                    "the module '{}' ({}) cannot stand in its caller's graph as a leaf of unknown shape: it "
                    "returns {}, whose length is unknown; give its type a LeafMetaFn (register_leaf)",
                    path, module.type_name(), signature ? signature->result_type_name : "?");
}

namespace {

/// `v` with every tensor of unknown rank (also in a list) replaced by a stand-in of rank `rank`
/// whose dims are unknown, of a trace id never given out (it is never recorded).
Value with_rank(const Value& v, std::size_t rank) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    if (!t->defined() || t->shape().is_rank_known()) return v;
    return Tensor::symbolic(TensorMeta{t->dtype(), Shape::unknown(rank)}, SymbolicRef{~std::uint64_t{0}, 0});
  }
  if (const ValueList* list = boost::variant2::get_if<ValueList>(&v.value)) {
    ValueList items;
    items.reserve(list->size());
    for (const Value& item : *list) items.push_back(with_rank(item, rank));
    return items;
  }
  return v;
}

/// The op's meta function on `call` with its tensors of unknown rank given rank `rank`, or
/// nullopt when it refuses them.
std::optional<OutputMeta> meta_at_rank(const OpCall& call, std::size_t rank) {
  ValueList args;
  args.reserve(call.args.size());
  for (const Value& a : call.args) args.push_back(with_rank(a, rank));
  try {
    return call.op.meta(OpCall{call.op, args, call.where, call.style});
  } catch (const std::invalid_argument&) {  // OpError: not an argument of that rank
    return std::nullopt;
  } catch (const TraceError&) {
    return std::nullopt;
  }
}

}  // namespace

/// Note [Unknown in, unknown out]: an op given a tensor of unknown rank (the output of a module
/// that could not be traced) cannot run its meta function on it. Its result's dtype is what the
/// meta function gives when that tensor has rank 1 (a comparison gives bool), or the lowest
/// rank from 2 to 4 it accepts (nms's boxes [N, 4] give int64 indices), else the dtype
/// the op names or that of its first tensor argument. Its shape has an unknown rank too, except
/// where it does not depend on the rank: a full reduction (`x.sum()`) is 0-dim whatever the
/// rank, which the meta function shows by giving the same shape at ranks 1 and 2.
OutputMeta detail::unknown_rank_meta(const OpCall& call) {
  const OpSchema& schema = call.op.schema;
  if (schema.returns_number()) {
    return OutputMeta::number(schema.returns == ReturnType::bool_    ? DType::bool_
                              : schema.returns == ReturnType::float_ ? DType::float32
                                                                     : DType::int64);
  }
  if (schema.returns_list()) {
    // As many outputs at ranks 1 and 2 (topk's two): that many, of those dtypes.
    std::optional<OutputMeta> one = meta_at_rank(call, 1);
    std::optional<OutputMeta> two = meta_at_rank(call, 2);
    if (one && two && one->outputs.size() == two->outputs.size()) {
      OutputMeta meta;
      meta.is_list = true;
      for (const TensorMeta& m : one->outputs) meta.outputs.push_back(TensorMeta{m.dtype, Shape::unknown_rank()});
      return meta;
    }
    throw_trace_error(call.where,
                      "{}(): the number of its outputs depends on the shape of a tensor whose shape is unknown (the "
                      "output of a module that could not be traced); give that module's type a shape function "
                      "(register_leaf with a LeafMetaFn)",
                      call.op.name());
  }
  if (std::optional<OutputMeta> one = meta_at_rank(call, 1); one && one->outputs.size() == 1) {
    if (call.op.has(OpFlags::reduction)) {
      std::optional<OutputMeta> two = meta_at_rank(call, 2);
      if (two && two->outputs.size() == 1 && two->outputs[0] == one->outputs[0] && one->outputs[0].shape.is_fully_known()) {
        return std::move(*one);
      }
    }
    return OutputMeta::single(one->outputs[0].dtype, Shape::unknown_rank());
  }
  for (std::size_t rank = 2; rank <= 4; ++rank) {  // an op that needs more dims (nms: boxes [N, 4])
    if (std::optional<OutputMeta> m = meta_at_rank(call, rank); m && m->outputs.size() == 1)
      return OutputMeta::single(m->outputs[0].dtype, Shape::unknown_rank());
  }
  std::optional<DType> dtype;
  for (const Value& v : call.args) {
    if (v.is_dtype()) return OutputMeta::single(v.to_dtype(), Shape::unknown_rank());
    if (dtype) continue;
    if (v.is_tensor()) dtype = v.to_tensor().dtype();
    else if (v.is_list() && !v.to_list().empty() && v.to_list().front().is_tensor()) dtype = v.to_list().front().to_tensor().dtype();
  }
  return OutputMeta::single(dtype.value_or(DType::float32), Shape::unknown_rank());
}

}  // namespace symtrace

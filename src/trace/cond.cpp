// cond(): eager branching, or both branches recorded by the active trace, which the thread's
// interposer reaches as it reaches op calls (Interposer::call_cond, Tracer::record_cond).
#include "symtrace/trace/cond.hpp"

#include "symtrace/core/error.hpp"
#include "symtrace/core/thread_context.hpp"

namespace symtrace {

Value cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn, const TensorList& operands,
           std::source_location where) {
  if (!pred.defined()) throw_invalid_argument(where, "cond(): the predicate is an undefined Tensor");
  if (pred.dtype() != DType::bool_ || pred.shape().numel().value_or(1) != 1) {
    throw_invalid_argument(where, "cond(): the predicate must be a bool tensor with one element, got {}{}; compare "
                                  "it (x.sum() > 0) or reduce it first",
                           pred.dtype(), pred.shape());
  }
  if (!then_fn || !else_fn) throw_invalid_argument(where, "cond(): give both branches");
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].defined()) throw_invalid_argument(where, "cond(): operand {} is an undefined Tensor", i);
  }
  if (pred.is_concrete()) return pred.to_bool(where) ? then_fn(operands) : else_fn(operands);
  Interposer* interposer = current_interposer();
  if (interposer == nullptr) {
    throw_trace_error(where, "cond() got a symbolic predicate but no trace is active on this thread: a symbolic "
                             "tensor belongs to its trace and cannot be used after the trace ended");
  }
  return interposer->call_cond(pred, then_fn, else_fn, operands, where);
}

}  // namespace symtrace

#include "symtrace/core/thread_context.hpp"

#include "symtrace/core/error.hpp"

#include <stdexcept>

namespace symtrace {

bool Interposer::intercepts(const Tensor&) const { return false; }

void Interposer::on_data_read(DataRead read, std::source_location where) {
  if (outer_ != nullptr) outer_->on_data_read(read, where);
}

void Interposer::assume(const SymFact& fact, std::source_location where) {
  if (outer_ != nullptr) return outer_->assume(fact, where);
  throw_trace_error(where, "an op needs the size fact {} but no trace is active to record it as a guard", fact);
}

Value Interposer::call_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                            const TensorList& operands, std::source_location where) {
  if (outer_ != nullptr) return outer_->call_cond(pred, then_fn, else_fn, operands, where);
  throw_trace_error(where, "cond() got a symbolic predicate but no symbolic trace is active on this thread to record "
                           "it: a symbolic tensor belongs to its trace and cannot be used after the trace ended");
}

bool Interposer::locate(detail::TraceLocation& location) const {
  return outer_ != nullptr && outer_->locate(location);
}

InterposerScope::InterposerScope(Interposer& interposer) : interposer_(interposer), previous_(detail::t_interposer) {
  if (interposer_.installed_.exchange(true, std::memory_order_acq_rel)) {
    throw std::logic_error("symtrace: an interposer (a Tracer, a trace by execution) was installed while it is "
                           "installed already, on this thread or another; use another object for a nested or "
                           "concurrent run");
  }
  interposer_.outer_ = previous_;
  detail::t_interposer = &interposer_;
}

InterposerScope::~InterposerScope() {
  detail::t_interposer = previous_;
  interposer_.outer_ = nullptr;
  interposer_.installed_.store(false, std::memory_order_release);
}

}  // namespace symtrace

#include "symtrace/core/thread_context.hpp"

#include <stdexcept>

namespace symtrace {

bool Interposer::intercepts(const Tensor&) const { return false; }

void Interposer::on_data_read(DataRead read, std::source_location where) {
  if (outer_ != nullptr) outer_->on_data_read(read, where);
}

bool Interposer::locate(detail::TraceLocation& location) const {
  return outer_ != nullptr && outer_->locate(location);
}

InterposerScope::InterposerScope(Interposer& interposer) : interposer_(interposer) {
  for (const Interposer* i = detail::t_interposer; i != nullptr; i = i->outer_) {
    if (i == &interposer) {
      throw std::logic_error("symtrace: an interposer (a Tracer, a trace by execution) was installed on a thread "
                             "where it is installed already; use another object for a nested run");
    }
  }
  interposer_.outer_ = detail::t_interposer;
  detail::t_interposer = &interposer_;
}

InterposerScope::~InterposerScope() {
  detail::t_interposer = interposer_.outer_;
  interposer_.outer_ = nullptr;
}

}  // namespace symtrace

#include "ops/families.hpp"

namespace symtrace {

void detail::register_view_ops(OpRegistry&) {}

}  // namespace symtrace

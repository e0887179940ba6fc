#include "ops/families.hpp"

namespace symtrace {

void detail::register_reduction_ops(OpRegistry&) {}

}  // namespace symtrace
